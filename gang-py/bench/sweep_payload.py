"""What a sweep's results cost on their way back from Dask workers: JSON text against
Arrow (issue 26 item 5).

    gang-py/.venv/bin/python gang-py/bench/sweep_payload.py [--rounds 3] [--workers 2]

The runs are those of examples/python/sim_rack_rule.py (three loads x five policies x
three seeds, 600 jobs each, on 32 racks of 8 nodes), with ``keep="jobs"``: every job
record and the timeline travel back. Prints, per form:

- bytes: each run's answer as pickled for the way back (what Dask sends), summed;
- seconds handling the answers, in this one process (A B A B…): packing on the worker,
  pickling there and back, one ``to_pandas("jobs")`` on the client — the simulations
  themselves, the same for both forms, left out;
- seconds: the whole sweep on a LocalCluster of worker processes, plus reading every
  job (``to_pandas("jobs")``) on the client, the two forms run alternately (A B A B…,
  ``--rounds`` each) in one process so that the machine's load hits both alike.

JSON is the form without pyarrow on the workers (``running._pack`` returning the text). Measured,
not asserted; the numbers and the load average go to benches/README.md.
"""

import argparse
import os
import pickle
import statistics
import time

import distributed

import gang.sim
from gang._sim import documents, results, running
from gang._sim.sweeps import Sweep


def runs():
    cluster = gang.sim.generated_cluster(racks=32, nodes_per_rack=8)
    policies = ["required(rack)", "timed(rack, 1800)", "preferred(rack)", "unconstrained", "no-gang"]
    return [{"cluster": cluster, "policy": p, "seed": s, "params": {"load": load, "policy": p, "seed": s},
             "trace": gang.sim.generated_trace(600, seed=s, load=load, max_members=8, single_gpus=[8],
                                               duration_median=7200, sensitivity={"medium": 1})}
            for load in (0.5, 0.7, 0.9) for p in policies for s in (1, 2, 3)]


def payloads():
    """Every run's answer as JSON text (the simulation is the same for both forms)."""
    return [running._run_text(doc, "jobs") for doc, _, _ in (running_doc(c) for c in runs())]


def payload_bytes(texts):
    return {"json": sum(len(pickle.dumps(t)) for t in texts),
            "arrow": sum(len(pickle.dumps(results._pack(t))) for t in texts)}


def handling(texts, form):
    """Seconds spent on the answers besides simulating, one process, one thread: the
    worker's packing, pickling there and back, then the client's one jobs table."""
    t0 = time.perf_counter()
    shipped = [pickle.loads(pickle.dumps(results._pack(t) if form == "arrow" else t)) for t in texts]
    sw = Sweep([results.SimResult(o, {}, f"r{i}") for i, o in enumerate(shipped)])
    frame = sw.to_pandas("jobs")
    assert len(frame) == 45 * 600
    return time.perf_counter() - t0


def running_doc(c):
    from gang._sim.sweeps import _sweep_document
    doc, name, params = _sweep_document(c, 0)
    return documents._json(doc), name, params


def as_json(text):
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    texts = payloads()
    sizes = payload_bytes(texts)
    stages = {"json": [], "arrow": []}
    for _ in range(args.rounds):
        for form in ("json", "arrow"):
            stages[form].append(handling(texts, form))
    for form, ts in stages.items():
        print(f"{form:>5}: handling the 45 answers (pack, pickle both ways, one jobs table) median "
              f"{statistics.median(ts):.2f} s (rounds {', '.join(f'{t:.2f}' for t in ts)})")
    print(f"payload, 45 runs: JSON {sizes['json'] / 1e6:.1f} MB, Arrow {sizes['arrow'] / 1e6:.1f} MB "
          f"({sizes['json'] / sizes['arrow']:.1f}x smaller)")
    cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None, host="127.0.0.1")
    client = distributed.Client(cluster)
    pack = running._pack
    times = {"json": [], "arrow": []}
    try:
        for _ in range(args.rounds):
            for form in ("json", "arrow"):
                # The workers read `_pack` from their own import of gang: switch it there.
                client.run(lambda f=form: setattr(running, "_pack", pack if f == "arrow" else as_json))
                t0 = time.perf_counter()
                sw = gang.sim.sweep(runs(), client, keep="jobs")
                frame = sw.to_pandas("jobs")
                times[form].append(time.perf_counter() - t0)
                assert len(frame) == 45 * 600
    finally:
        client.close()
        cluster.close()
    load = os.getloadavg()[0]
    for form, ts in times.items():
        print(f"{form:>5}: sweep + to_pandas('jobs') median {statistics.median(ts):.2f} s "
              f"(rounds {', '.join(f'{t:.2f}' for t in ts)})")
    print(f"load average {load:.1f}; {args.workers} worker processes")


if __name__ == "__main__":
    main()
