"""Random small simulation cases for the cross-check against the reference simulator
(``sim_reference.py``): a seeded generator of a cluster, a trace and a configuration."""

from __future__ import annotations

import random
from typing import Any

from sim_reference import Config

RACK = "topology.example.com/rack"
BLOCK = "topology.example.com/block"


def case(seed: int) -> tuple[dict[str, Any], list[dict[str, Any]], Config, dict[str, Any]]:
    """(cluster document, jobs, reference config, gang-sim config) for one seed."""
    rnd = random.Random(seed)
    two_levels = rnd.random() < 0.4
    levels = [BLOCK, RACK] if two_levels else [RACK]
    nodes = []
    for i in range(rnd.randint(2, 6)):
        labels = {RACK: rnd.choice("ab" if rnd.random() < 0.5 else "abc")}
        if two_levels:
            labels[BLOCK] = rnd.choice(["b1", "b2"])
        node: dict[str, Any] = {"name": f"n{i}", "labels": labels,
                                "capacity": {"nvidia.com/gpu": rnd.choice([2, 4, 4, 8])}}
        if rnd.random() < 0.2:
            node["used"] = {"nvidia.com/gpu": 1}
        nodes.append(node)
    cluster = {"topology": {"levels": levels}, "nodes": nodes}
    policies = ["required(rack)", "preferred(rack)", "unconstrained", "timed(rack, 300)", "timed(rack, 1000)"]
    if two_levels:
        policies += ["required(block)", "preferred(block)", "timed(block, 500)"]
    times = sorted(rnd.sample(range(0, 4000, 20), 6)) + [0]
    jobs = []
    for i in range(rnd.randint(3, 25)):
        j: dict[str, Any] = {"id": f"j{i}", "submit": rnd.choice(times),
                             "duration": rnd.choice([60, 300, 600, 1000, 1234, 3600]),
                             "members": rnd.randint(1, 8), "gpus": rnd.choice([1, 1, 2, 4])}
        if rnd.random() < 0.7:
            j["policy"] = rnd.choice(policies)
        if rnd.random() < 0.5:
            j["sensitivity"] = rnd.choice(["low", "medium", "high"])
        elif rnd.random() < 0.2:
            j["slowdown"] = [1, 1.3]
        if rnd.random() < 0.15:
            j["priority"] = rnd.choice([1, 2, -1])
        if rnd.random() < 0.15:
            j["cancel"] = j["submit"] + rnd.choice([0, 1, 30, 60, 100, 120, 700, 2000])
        if rnd.random() < 0.1:
            j["failing_members"] = 1
        if rnd.random() < 0.1:
            j["min_members"] = rnd.randint(1, j["members"])
        if rnd.random() < 0.3:
            j["checkpoint"] = rnd.choice([100, 300, 600])
        if rnd.random() < 0.2:
            j["recovery"] = rnd.choice(["restart", "replace"])
        jobs.append(j)
    ref = Config(policy=rnd.choice(policies), init_time=rnd.choice([0, 30, 60, 60, 120]),
                 timeout=rnd.choice([None, 300, 300, 120, 60, 30]), backoff_base=rnd.choice([0, 60]),
                 backoff_factor=rnd.choice([1, 2]), backoff_max=rnd.choice([100, 3600]),
                 max_attempts=rnd.choice([1, 2, 3]),
                 default_sensitivity=rnd.choice(["low", "medium", "high"]),
                 horizon=rnd.choice([None, None, None, 5000]),
                 discipline=rnd.choice(["fifo", "backfill"]),
                 failures=[(f"n{rnd.randrange(len(nodes))}", at) for at in
                           sorted(rnd.sample(range(100, 6000, 50), rnd.choice([0, 0, 1, 2, 3])))],
                 repair_time=rnd.choice([300, 2000, 10000]),
                 recovery=rnd.choice(["restart", "replace"]), replace_timeout=rnd.choice([None, None, 500]))
    config = {"policy": ref.policy, "seed": seed, "check_invariants": True,
              "queue": {"discipline": ref.discipline, "via_admit": rnd.random() < 0.3},
              "readiness": {"init_time": ref.init_time, "timeout": ref.timeout,
                            "backoff_base": ref.backoff_base, "backoff_factor": ref.backoff_factor,
                            "backoff_max": ref.backoff_max, "max_attempts": ref.max_attempts},
              "default_sensitivity": ref.default_sensitivity, "horizon": ref.horizon,
              "recovery": {"mode": ref.recovery, "replace_timeout": ref.replace_timeout},
              "failures": {"repair_time": ref.repair_time,
                           "scheduled": [{"node": n, "at": at} for n, at in ref.failures]}}
    return cluster, jobs, ref, config
