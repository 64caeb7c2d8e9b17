#!/usr/bin/env bash
# Builds every fuzz target and runs each for a bounded time (default 20 s).
# Usage: fuzz/run.sh [SECONDS] [TARGET...]. Needs a nightly toolchain (cargo-fuzz uses
# sanitizers); installs cargo-fuzz if missing. Long fuzzing is not CI's job: run it by
# hand with a larger SECONDS.
#
# Each target starts from fuzz/corpus/<target> (kept between runs, not committed) plus
# the committed inputs of fuzz/regressions/<target>, which therefore run first every
# time; scenario_json also starts from examples/scenarios and uses a dictionary.
# FUZZ_CORPUS=DIR keeps the corpora under DIR/<target> instead; with a new empty DIR
# each target starts from those seeds alone, which is how the numbers in fuzz/README.md
# were measured: FUZZ_CORPUS="$(mktemp -d)" fuzz/run.sh 300.
# Per target it prints libFuzzer's last status line and a summary: executions, exec/s,
# cov (edges covered) and ft (features), corpus size; for scenario_json also the largest
# document and the most topology levels among its corpus documents (needs python3).
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-20}"
shift || true
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    echo "fuzz: no nightly toolchain here; skipping (the oracle property tests still ran)"
    exit 0
fi
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked --version 0.13.2
fi
# The fuzz workspace's own Cargo.lock is committed: fail if it would change.
cargo +nightly metadata --locked --format-version 1 >/dev/null

# libFuzzer options per target. The structure-aware targets bound the work of an input
# by its own length prefixes, so they start at full length instead of growing it slowly
# (-len_control=0); scenario_json keeps libFuzzer's defaults and gets the dictionary.
options() {
    case "$1" in
        operations) echo "-len_control=0 -max_len=1024" ;;
        solver_oracle) echo "-len_control=0 -max_len=256" ;;
        scenario_json) echo "-dict=scenario_json.dict" ;;
        sim_input) echo "-max_len=20000" ;;
        kube_objects) echo "-max_len=20000" ;;
        *) echo "" ;;
    esac
}

targets=("$@")
[ ${#targets[@]} -eq 0 ] && mapfile -t targets < <(cargo +nightly fuzz list)
cargo +nightly fuzz build 2>&1 | tail -n 1
base="${FUZZ_CORPUS:-corpus}"
for t in "${targets[@]}"; do
    corpus="$base/$t"
    mkdir -p "$corpus" "artifacts/$t"
    # Regression inputs run first.
    if [ -d "regressions/$t" ]; then
        find "regressions/$t" -maxdepth 1 -type f -exec cp {} "$corpus"/ \;
    fi
    [ "$t" = scenario_json ] && cp ../examples/scenarios/*.json "$corpus"/
    # kube_objects: the Kubernetes objects of the examples and gang-kube's fixtures.
    if [ "$t" = kube_objects ]; then
        find ../examples ../gang-kube/tests -name '*.yaml' -size -20k -exec cp {} "$corpus"/ \; 2>/dev/null || true
    fi
    # sim_input: the first byte picks the reader (0: run document, 1: JSON Lines); the
    # guides' experiments become run documents with their files inlined.
    if [ "$t" = sim_input ] && command -v python3 >/dev/null 2>&1; then
        python3 - "$corpus" <<'SEEDS'
import glob, json, os, sys
out = sys.argv[1]
for p in glob.glob("../examples/sim/*.json"):
    doc = json.load(open(p))
    run = doc.get("run", doc)
    if not isinstance(run, dict) or "cluster" not in run or "trace" not in run:
        continue
    here = os.path.dirname(p)
    c, t = run["cluster"], run["trace"]
    if "file" in c:
        c = {"inline": json.load(open(os.path.join(here, c["file"])))}
    if "file" in t:
        t = {"jsonl": open(os.path.join(here, t["file"]["path"])).read()}
    seed = {"cluster": c, "trace": t, "config": run.get("config", {})}
    name = os.path.join(out, "seed-" + os.path.basename(p))
    open(name, "wb").write(b"\x00" + json.dumps(seed).encode())
for p in glob.glob("../examples/sim/*.jsonl"):
    open(os.path.join(out, "seed-" + os.path.basename(p)), "wb").write(b"\x01" + open(p, "rb").read())
SEEDS
    fi
    echo "fuzz: $t for ${secs}s"
    log="$(mktemp)"
    # shellcheck disable=SC2046
    if ! cargo +nightly fuzz run "$t" "$corpus" -- -max_total_time="$secs" \
        -rss_limit_mb=2048 -print_final_stats=1 $(options "$t") >"$log" 2>&1; then
        tail -n 60 "$log"
        echo "fuzz: $t FAILED; the input is under fuzz/artifacts/$t (see fuzz/README.md)"
        rm -f "$log"
        exit 1
    fi
    last="$(grep -E '^#[0-9]+' "$log" | tail -n 1)"
    echo "  $last"
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
    rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")"
    cov="$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")"
    ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")"
    files="$(find "$corpus" -type f | wc -l)"
    echo "  summary: $t ${runs} runs in ${secs}s, ${rate} exec/s, cov ${cov}, ft ${ft}, corpus ${files} inputs"
    if [ "$t" = scenario_json ] && command -v python3 >/dev/null 2>&1; then
        python3 - "$corpus" <<'EOF'
import json, os, sys
d = sys.argv[1]
big, deep = 0, 0
for f in os.listdir(d):
    p = os.path.join(d, f)
    big = max(big, os.path.getsize(p))
    try:
        doc = json.loads(open(p, "rb").read())
        levels = doc["topology"]["levels"]
        if isinstance(levels, list):
            deep = max(deep, len(levels))
    except Exception:
        pass
print(f"  corpus: largest document {big} bytes, most topology levels {deep}")
EOF
    fi
    rm -f "$log"
done
