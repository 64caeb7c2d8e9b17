"""Per-call overhead of `place` from Python versus the same query in Rust.

    gang-py/.venv/bin/python gang-py/bench/overhead.py [--nodes 10000] [--iterations 20000]

Writes a synthetic cluster (blocks of racks of 8-GPU nodes, partly used) and a gang
(12 workers x 8 GPUs, one rack required) to a temporary directory, runs the Rust side
(`cargo run --release -p gang-py --example overhead`) on the same files, then times the
same query from Python on a warm inventory:

- compiled: `inventory.place(compiled)` vs `Solver::place(&inv, &compiled)`;
- gang:     `inventory.place(gang)`     vs `inv.compile(&gang)` + `Solver::place`.

The difference is what the binding adds per call (argument handling, releasing and
re-taking the GIL, converting the placement into Python objects). Measured, not
asserted.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import tempfile
import time

import gang

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cluster(n):
    nodes = []
    for i in range(n):
        rack = i // 32
        nodes.append({
            "name": f"n{i:05d}",
            "labels": {"topology.example.com/block": f"b{rack // 16:02d}",
                       "topology.example.com/rack": f"r{rack:04d}",
                       "nvidia.com/gpu.product": "H100"},
            "capacity": {"nvidia.com/gpu": 8, "cpu": "96", "memory": "1Ti", "pods": 110},
            "used": {"nvidia.com/gpu": [0, 0, 8, 4][(i * 7919) % 4], "cpu": str((i * 13) % 64)},
        })
    return {"topology": {"levels": ["topology.example.com/block", "topology.example.com/rack"]},
            "nodes": nodes}


GANG = {"name": "train",
        "roles": [{"name": "worker", "count": 12,
                   "requests": {"nvidia.com/gpu": 8, "cpu": "8", "memory": "64Gi", "pods": 1},
                   "node_selector": {"nvidia.com/gpu.product": "H100"}}],
        "topology": {"required": "topology.example.com/rack"}}


def per_call_ns(fn, iterations, repeats=5):
    for _ in range(iterations // 10):
        fn()
    samples = []
    for _ in range(repeats):
        t = time.perf_counter_ns()
        for _ in range(iterations):
            fn()
        samples.append((time.perf_counter_ns() - t) / iterations)
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--iterations", type=int, default=20_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        cpath, gpath = os.path.join(d, "cluster.json"), os.path.join(d, "gang.json")
        with open(cpath, "w") as f:
            json.dump(cluster(args.nodes), f)
        with open(gpath, "w") as f:
            json.dump(GANG, f)
        rust = json.loads(subprocess.run(
            ["cargo", "run", "--quiet", "--release", "-p", "gang-py", "--example", "overhead", "--",
             cpath, gpath, str(args.iterations)],
            cwd=ROOT, check=True, capture_output=True, text=True).stdout)
        with open(cpath) as f:
            inv = gang.Inventory.from_json(f.read())
    g = gang.Gang.from_dict(GANG)
    compiled = inv.compile(g)
    p = inv.place(compiled)
    py_compiled = per_call_ns(lambda: inv.place(compiled), args.iterations)
    py_gang = per_call_ns(lambda: inv.place(g), args.iterations)
    print(f"warm inventory of {len(inv)} nodes; query: {GANG['roles'][0]['count']} workers x 8 GPUs, "
          f"one rack required -> {p.domain} ({rust['placed']=})")
    print(f"{'':10s} {'Rust ns':>10s} {'Python ns':>10s} {'added ns':>10s}")
    for name, r, py in (("compiled", rust["compiled_ns"], py_compiled), ("gang", rust["gang_ns"], py_gang)):
        print(f"{name:10s} {r:10.0f} {py:10.0f} {py - r:10.0f}")


if __name__ == "__main__":
    main()
