"""Shared fixtures and helpers for the gang Python tests."""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

SCENARIOS = HERE.parent.parent / "examples" / "scenarios"

# The plain-Python reference (rules, brute force, CP-SAT model) lives with the examples.
EXAMPLES = HERE.parent.parent / "examples" / "python"
sys.path.insert(0, str(EXAMPLES))
