"""Is a hard same-rack rule worth the wait? Two of the guides' questions, simulated with
gang.sim on the experiment files in examples/sim/ (the same files gang-sim's own tests
run), their conclusions checked:

1. a small experiment (4 workers, low sensitivity) on a busy cluster: rack required
   waits longer than it saves; unconstrained or timed relaxation completes sooner;
2. a communication-bound job (64 workers, high sensitivity): block required wins
   despite the wait.

    python examples/python/sim_small_experiment.py [--report report.html]
"""

import argparse

import gang.sim
from sim_common import SIM, check, done, table

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--report", help="also write an HTML report of both experiments (needs gang[sim])")
args = parser.parse_args()

small = gang.sim.experiment(SIM / "01-small-experiment.json")
print(f"1. {small.description}\n")
table(small, "experiment")
e = {name: r.job("experiment") for name, r in small.items()}
rack, timed, anywhere = e["rack required"], e["timed: rack for 10 min"], e["unconstrained"]
saved = anywhere["run_time"] - rack["run_time"]
print(f"\n  rack required saves {saved / 60:.0f} min of run time and waits {rack['queue_delay'] / 3600:.1f} h for it")
check(rack["run_time"] < anywhere["run_time"], "the rack run is faster once it runs")
check(rack["queue_delay"] > saved, "but it waits longer than it saves")
check(anywhere["completion"] < rack["completion"], "unconstrained completes sooner from submission")
check(timed["completion"] < rack["completion"], "timed relaxation (rack for 10 min, then block) completes sooner too")
check(e["rack preferred"]["completion"] == anywhere["completion"], "rack preferred walks up at once: the same placement")

comm = gang.sim.experiment(SIM / "02-communication-bound.json")
print(f"\n2. {comm.description}\n")
table(comm, "train64")
t = {name: r.job("train64") for name, r in comm.items()}
block, anywhere = t["block required"], t["unconstrained"]
check(t["rack required"]["state"] == "never_fits" and "Relaxing to block" in t["rack required"]["reason"],
      "one rack can never hold it; the diagnosis says a block would")
check(block["queue_delay"] > anywhere["queue_delay"], "block required waits for a whole block")
check(block["completion"] < anywhere["completion"] and block["completion"] < t["timed: block for 1 h"]["completion"],
      f"and still completes {(anywhere['completion'] - block['completion']) / 3600:.0f} h sooner than unconstrained "
      "(x6 beyond a block) and than timed relaxation")

if args.report:
    both = gang.sim.Comparison({**{f"small: {n}": r for n, r in small.items()},
                                **{f"64 workers: {n}": r for n, r in comm.items()}})
    print(f"\nreport: {gang.sim.report(both, args.report, title='Is a hard same-rack rule worth the wait?')}")
done()
