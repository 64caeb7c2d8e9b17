#!/usr/bin/env python3
"""Summarises `go test ./perf -bench ...` output: one row per workload and plugin set
(pods/s, PodGroup scheduling algorithm p50/p99 in ms). Usage: perf/summary.py < log"""
import re
import sys

rows = []
for line in sys.stdin:
    m = re.match(r"^BenchmarkPerfScheduling/([^/]+)/(\S+?)-\d+\s+\d+\s+(.*)$", line)
    if not m:
        continue
    case, workload, rest = m.groups()
    metrics = {name: float(v) for v, name in re.findall(r"([0-9.e+-]+) (\S+)", rest)}
    rows.append((workload, case,
                 metrics.get("SchedulingThroughput/Average"),
                 metrics.get("scheduler_podgroup_scheduling_algorithm_duration_ms/Perc50"),
                 metrics.get("scheduler_podgroup_scheduling_algorithm_duration_ms/Perc99")))
fmt = lambda v: "-" if v is None else f"{v:g}"
print("| workload | plugins | pods/s | PodGroup algorithm p50 (ms) | p99 (ms) |")
print("|---|---|---|---|---|")
for w, c, t, p50, p99 in sorted(rows):
    print(f"| {w} | {c} | {fmt(t)} | {fmt(p50)} | {fmt(p99)} |")
