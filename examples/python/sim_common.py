"""Shared by the sim_*.py examples: where the experiment files are, a table printer, and
`check`, which states a conclusion and fails the program when it does not hold."""

from __future__ import annotations

import pathlib
import sys
from typing import Any

SIM = pathlib.Path(__file__).resolve().parent.parent / "sim"
failures: list[str] = []


def hours(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds / 3600:.2f} h"


def table(comparison: Any, job: str) -> None:
    """One line per variant: what happened to `job`."""
    print(f"  {'variant':<34} {'state':<11} {'queued':>8} {'run':>8} {'done':>8}  span")
    for name, r in comparison.items():
        j = r.job(job)
        level = (j["span"] or "-").rsplit("/", 1)[-1]
        print(f"  {name:<34} {j['state']:<11} {hours(j['queue_delay']):>8} {hours(j['run_time']):>8} "
              f"{hours(j['completion']):>8}  {level} x{j['slowdown'] or 1:g}")


def check(ok: bool, conclusion: str) -> None:
    """Prints the conclusion with its verdict; a false one fails the program (see done)."""
    print(f"  [{'ok' if ok else 'FAILED'}] {conclusion}")
    if not ok:
        failures.append(conclusion)


def done() -> None:
    if failures:
        print(f"\n{len(failures)} conclusion(s) did not hold", file=sys.stderr)
        sys.exit(1)
