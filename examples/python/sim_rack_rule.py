"""Is requiring one rack worth the wait for 8-64 GPU jobs on a 2,048-GPU cluster, and at
what load does it stop paying? Three loads x five policies x three seeds on Dask: one
DataFrame, one plot, one report.   python examples/python/sim_rack_rule.py [OUT_DIR]"""
import pathlib, sys
import distributed
import gang.sim

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
cluster = gang.sim.generated_cluster(racks=32, nodes_per_rack=8)  # 32 racks x 8 nodes x 8 GPUs
policies = ["required(rack)", "timed(rack, 1800)", "preferred(rack)", "unconstrained", "no-gang"]
runs = [{"cluster": cluster, "policy": p, "seed": s, "params": {"load": load, "policy": p, "seed": s},
         "trace": gang.sim.generated_trace(600, seed=s, load=load, max_members=8, single_gpus=[8],
                                           duration_median=7200, sensitivity={"medium": 1})}
        for load in (0.5, 0.7, 0.9) for p in policies for s in (1, 2, 3)]

with distributed.Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as client:
    sweep = gang.sim.sweep(runs, client)  # only summary rows travel back

df = sweep.to_pandas()  # one row per run: load, policy, seed, then its summary (censored statistics)
m = df.groupby(["load", "policy"])[["completion_p50", "completion_p95", "failed", "goodput"]].mean()
print(m.assign(completion_p50=m.completion_p50 / 3600, completion_p95=m.completion_p95 / 3600).round(2))
gang.sim.plot_sweep(sweep).savefig(out / "rack_rule.png")
sweep.report(out / "rack_rule.html", title="Is the rack rule worth its wait?")

p50, p95 = (m[c].unstack("policy") / 3600 for c in ("completion_p50", "completion_p95"))
cost = p50["required(rack)"] - p50["unconstrained"]  # hours the median job loses to the rule
gain = p95["unconstrained"] - p95["required(rack)"]  # hours the slowest jobs win from it
print("\nrack required vs unconstrained, median cost (h):", cost.round(2).to_dict(),
      "\n                                 p95 gain (h):", gain.round(2).to_dict())
assert (m.xs("no-gang", level="policy")["failed"] > 0).all(), "no-gang fails jobs at every load"
assert p95.loc[0.9].idxmax() == "no-gang", "counted honestly, no-gang has the worst tail"
assert cost.loc[0.9] > cost.loc[0.5] > -0.1, "the rule's wait grows with the load"
assert p50.loc[0.9, "timed(rack, 1800)"] < p50.loc[0.9, "required(rack)"], "relaxing after 30 min wins the wait back"
print("conclusions hold")
