#!/usr/bin/env bash
# Builds the gang Python package into a virtual environment and runs its checks:
#   the stub check (mypy's stubtest against the built extension), pytest (scenarios,
#   errors, API, pickling, GIL, brute-force oracle, CP-SAT cross-check, numpy/pandas
#   inputs, DataFrame outputs, doctests of the docstrings and README), mypy --strict over
#   the typed checks, and the Python examples.
# Needs only Python >= 3.10 with venv + pip, and Rust. The root ./test.sh calls it.
#   PYTHON=python3.12 gang-py/test.sh          another interpreter
#   GANG_CPSAT_INSTANCES=1000 gang-py/test.sh  a longer CP-SAT cross-check
set -euo pipefail
cd "$(dirname "$0")"

step() { printf '\n== gang-py: %s\n' "$*"; }

PYTHON="${PYTHON:-python3}"
VENV="${GANG_PY_VENV:-.venv}"

step "virtual environment ($VENV)"
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
PY="$(cd "$VENV" && pwd)/bin/python"
# The build backend runs the venv's `maturin` executable.
export PATH="$(dirname "$PY"):$PATH"
"$PY" -c 'import sys; assert sys.version_info >= (3, 10), sys.version'
# The same set as [project.optional-dependencies] test, plus the build backend.
"$PY" -m pip install --quiet --disable-pip-version-check \
    "maturin>=1.9.4,<2" "pytest>=7" "hypothesis>=6" "ortools>=9.8" "mypy>=1.8" \
    "numpy>=1.24" "pandas>=1.5" "polars>=0.20" "pyarrow>=12"

# gang.sim and gang.kube (tests/test_sim*.py, test_kube.py): the extras sim, dask and
# frames, and Debian's chromium for the report's headless-browser test (installed here,
# as root or through sudo, when missing: CI starts from a fresh machine).
"$PY" -m pip install --quiet --disable-pip-version-check \
    "matplotlib>=3.8" "tqdm>=4.66" "distributed>=2024.1" "pandas>=2.1" "polars>=1.0" "pyarrow>=14"
if [ ! -x "${GANG_CHROMIUM:-/usr/bin/chromium}" ]; then
    step "install chromium (for the report's browser test)"
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

step "build and install (pip install ./gang-py)"
# No build isolation: the venv's maturin builds the wheel (an abi3 wheel, release
# profile) and pip installs it like any other.
"$PY" -m pip install --quiet --disable-pip-version-check --no-build-isolation \
    --force-reinstall --no-deps .
# Run from outside the source tree so that the installed package is what is tested.
cd tests
"$PY" -c 'import gang, sys; print("gang from", gang.__file__)'

step "stubs match the extension (stubtest); mypy --strict over the package and a typed use of it"
"$PY" -m mypy.stubtest gang
"$PY" -m mypy --strict -p gang
"$PY" -m mypy --strict typed_usage.py
"$PY" typed_usage.py

step "pytest"
"$PY" -m pytest -q -p no:cacheprovider . || rc=$?
if [ "${rc:-0}" -ne 0 ]; then
    # 5 is "no tests collected": as much a failure as a failing test.
    echo "pytest failed (exit ${rc})" >&2
    exit "$rc"
fi

step "examples/python"
EX=../../examples/python
"$PY" "$EX/quickstart.py" >/dev/null
"$PY" "$EX/what_if.py" ../../examples/scenarios/02-seven-free-no-rack-of-four.json >/dev/null
"$PY" "$EX/compare_cpsat.py" --instances 20 >/dev/null

step "gang.sim, gang.kube: mypy --strict, examples with their conclusions checked"
(cd ../python && "$PY" -m mypy --strict gang/sim.py gang/_sim gang/kube.py gang/_report)
REPORT_DIR="$(mktemp -d /tmp/pysim-report.XXXXXX)"
"$PY" "$EX/sim_small_experiment.py" --report "$REPORT_DIR/report.html" >/dev/null
rm -rf "$REPORT_DIR"
"$PY" "$EX/sim_validation_suite.py" >/dev/null

printf '\ngang-py: all checks passed\n'
