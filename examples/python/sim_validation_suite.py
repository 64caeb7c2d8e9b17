"""The guides' validation suite for gang scheduling, as simulated scenarios with their
metrics checked (gang.sim over the experiment files examples/sim/03*.json): a gang that
fits; one that cannot fit; two competing gangs on 8 GPUs (and the no-gang deadlock); a
member that fails to initialise; cancellation while waiting; interruption after start
(replacement in the domain vs restart from a checkpoint); one repeatedly failing
workload that must not consume the queue.

    python examples/python/sim_validation_suite.py
"""

import gang.sim
from sim_common import SIM, check, done

GPU_H = 1 / 3600


def close(a, b):
    return abs(a - b) < 1e-9


def job(file, variant, id):
    return gang.sim.experiment(SIM / file)[variant].job(id)


print("A complete gang that fits")
j = job("03a-fits.json", "gang", "fits")
check(j["state"] == "completed" and (j["queue_delay"], j["time_to_ready"]) == (0.0, 60.0),
      "admitted at once, all 8 members ready after init_time (60 s)")
check(close(j["gpu_hours_before_progress"], 8 * 60 * GPU_H),
      f"held {j['gpu_hours_before_progress']:.3f} GPU-h before useful progress (start-up only)")

print("A gang that cannot fit")
c = gang.sim.experiment(SIM / "03b-never-fits.json")["gang"]
big = c.job("too-big")
check(big["state"] == "never_fits" and big["attempts"] == 0 and big["gpu_hours_held"] == 0.0,
      "never starts and holds nothing")
check("Cluster-wide 2 of 4 worker fit" in big["reason"], "reported with gang-core's diagnosis")
check(c.job("small")["queue_delay"] == 0.0, "and is not retried: the job behind it runs at once")

print("Two competing gangs on 8 GPUs")
comp = gang.sim.experiment(SIM / "03c-competing.json")
a, b = comp["gang (FIFO)"].job("A"), comp["gang (FIFO)"].job("B")
check(a["completion"] == 3660.0 and b["queue_delay"] == 3660.0, "one runs whole, the other waits")
check(close(b["gpu_hours_held"], 8 * 3660 * GPU_H), "holding nothing while it waits")
ng = [comp["no gang, no readiness timeout"].job(i) for i in "AB"]
check(all(j["state"] == "unfinished" and "deadlocked: holds 4 of 8 members" in j["reason"] for j in ng),
      "without gang scheduling: 4 + 4 members, a deadlock")
nt = [comp["no gang, readiness timeout 300 s"].job(i) for i in "AB"]
check(all(j["state"] == "failed" and j["attempts"] == 5 and close(j["gpu_hours_wasted"], 5 * 300 * 4 * GPU_H)
          for j in nt), "with a readiness timeout they retry together, deadlock again and fail, GPU-hours wasted")

print("A member that fails to initialise")
broken = job("03d-init-failure.json", "gang", "broken")
check((broken["state"], broken["attempts"], broken["readiness_failures"]) == ("failed", 3, 3),
      "readiness timeout, release, backoff, retry; failed after max_attempts (3)")
check((broken["admitted"], broken["end"]) == (780.0, 1080.0), "retries at 360 and 780 s (backoff 60 s, 120 s)")
check(close(broken["gpu_hours_before_progress"], 1.0) and close(broken["gpu_hours_wasted"], 1.0),
      "1 GPU-hour held before any progress, all wasted, reported")

print("Cancellation")
cancel = gang.sim.experiment(SIM / "03e-cancel.json")["gang (FIFO)"]
w = cancel.job("waiter")
check(w["state"] == "cancelled" and w["gpu_hours_held"] == 0.0 and "while waiting" in w["reason"],
      "cancelled while waiting: nothing held, nothing released")
check(cancel.job("big")["end"] == 1000.0 and cancel.job("after")["queue_delay"] == 980.0,
      "cancelled while running: everything released, the next job starts at once")

print("Interruption after start: a node fails under a running gang")
fail = gang.sim.experiment(SIM / "03f-node-failure.json")
rep, res = fail["replace in domain"].job("train"), fail["restart from checkpoint"].job("train")
check(all(close(j["lost_work_hours"], 540 * GPU_H) for j in (rep, res)), "work since the last checkpoint (9 min) lost, counted")
check(rep["replacements"] == 1 and rep["completion"] == 90660.0, "replacement waits inside rack a until the node is back")
check(res["restarts"] == 1 and res["completion"] == 13320.0, "restart from the checkpoint takes rack b when it frees")
seen = fail["replace in domain, seen at 20000 s"].job("train")
check("rack b has room, but the gang is bound to rack a" in seen["reason"], "pending, bound to its domain, even with room elsewhere")

print("One repeatedly failing workload")
flood = gang.sim.experiment(SIM / "03g-failing-workload.json")
with_timeout = flood["readiness timeout 300 s, 5 attempts"]
others = with_timeout.summary["by_tenant"]["others"]
bound = 300 + 2 * 660
check(with_timeout.job("broken")["state"] == "failed", "the broken workload fails after 5 attempts")
check(others["states"]["completed"] == 24 and others["queue_delay"]["p95"] <= bound,
      f"the others' p95 wait ({others['queue_delay']['p95']:.0f} s) stays within {bound} s")
check(flood["no readiness timeout"].summary["by_tenant"]["others"]["states"].get("unfinished") == 24,
      "without a readiness timeout it holds the cluster and starves everyone")
done()
