#!/usr/bin/env python3
"""Summarises `go test ./perf -bench ...` output: one row per workload and plugin set.

From the benchmark lines: pods/s (SchedulingThroughput/Average; a run too short for
that metric: the pods bound over SchedulingDuration, marked *).
From the GANGPERF lines perf_test.go prints after each workload: the workload's own
PodGroup cycles (how many, and the scheduling algorithm's p50/p99/average in ms) and the
PlacementGenerate extension point's p50/p99 within them; PodGroups placed (every pod
bound) of all, groups partly bound (never expected), the mean number of domains of the
group's topology key, of racks and of nodes per placed group, and the groups this
plugin set left pending that the other set of the same workload placed ("pending here
only"). The harness's own scheduler_podgroup_scheduling_algorithm_duration figure is
not used: in one process it also holds every earlier workload's cycles
(perf/cycles_test.go); for a log without the cycles= field it is shown, marked "(h)".

Usage: perf/summary.py < log
"""
import re
import sys

bench = {}
groups = {}
for line in sys.stdin:
    m = re.match(r"^BenchmarkPerfScheduling/([^/]+)/(\S+?)-\d+\s+\d+\s+(.*)$", line)
    if m:
        case, workload, rest = m.groups()
        metrics = {name: float(v) for v, name in re.findall(r"([0-9.e+-]+) (\S+)", rest)}
        bench[(workload, case)] = metrics
        continue
    m = re.match(r"^GANGPERF BenchmarkPerfScheduling/([^/\s]+)/(\S+) (.*)$", line.strip())
    if m:
        case, workload, rest = m.groups()
        fields = dict(kv.split("=", 1) for kv in rest.split())
        pending = fields.get("pending", "")
        fields["pending"] = set(pending.split(",")) if pending else set()
        groups[(workload, case)] = fields


def fmt(v):
    return "-" if v is None else f"{v:g}"


def ms(v):
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def quantile(v):
    """A cycle quantile (ms); the histogram's last finite bucket ends at 16,384 ms, and
    testutil answers that bound for any quantile in the +Inf bucket."""
    return "> 16384" if abs(v - 16384) < 20 else ms(v)


def stats(field):
    """n/p50/p99/avg (ms) from a GANGPERF field, or None."""
    if not field or field == "0":
        return None
    n, p50, p99, avg = field.split("/")
    return int(n), float(p50), float(p99), float(avg)


print("| workload | plugins | pods/s | PodGroup cycles | cycle p50 (ms) | cycle p99 (ms) | cycle avg (ms) "
      "| PlacementGenerate p50 / p99 (ms) "
      "| groups placed | partly bound | domains / placed group | racks / placed group "
      "| nodes / placed group | pending here only |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for workload, case in sorted(set(bench) | set(groups)):
    m = bench.get((workload, case), {})
    g = groups.get((workload, case))
    placed = partial = domains = racks = nodes = only = "-"
    ncycles = p50 = p99 = avg = gen = "-"
    if g:
        placed = f"{g.get('placed', '-')} / {g.get('groups', '-')}"
        partial, domains, nodes = g.get("partial", "-"), g.get("domains", "-"), g.get("nodes", "-")
        racks = g.get("racks", "-")
        others = [v for (w, c), v in groups.items() if w == workload and c != case]
        if others:
            only = str(sum(len(g["pending"] - o["pending"]) for o in others))
        c = stats(g.get("cycles"))
        if c:
            ncycles, p50, p99, avg = str(c[0]), quantile(c[1]), quantile(c[2]), ms(c[3])
        gs = stats(g.get("generate"))
        if gs:
            gen = f"{quantile(gs[1])} / {quantile(gs[2])}"
    if g is None or "cycles" not in g:
        p50 = fmt(m.get("scheduler_podgroup_scheduling_algorithm_duration_ms/Perc50")) + " (h)"
        p99 = fmt(m.get("scheduler_podgroup_scheduling_algorithm_duration_ms/Perc99")) + " (h)"
    rate = fmt(m.get("SchedulingThroughput/Average"))
    if rate == "-" and g and m.get("SchedulingDuration/Duration") and g.get("bound"):
        rate = f"{int(g['bound']) / m['SchedulingDuration/Duration']:.3g}*"
    print(f"| {workload} | {case} | {rate} | {ncycles} | {p50} | {p99} | {avg} | {gen} "
          f"| {placed} | {partial} | {domains} | {racks} | {nodes} | {only} |")
