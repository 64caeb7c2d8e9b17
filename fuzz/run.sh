#!/usr/bin/env bash
# Builds every fuzz target and runs each for a bounded time (default 20 s).
# Usage: fuzz/run.sh [SECONDS]. Needs a nightly toolchain (cargo-fuzz uses sanitizers);
# installs cargo-fuzz if missing. Long fuzzing is not CI's job: run it by hand with a
# larger SECONDS.
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-20}"
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    echo "fuzz: no nightly toolchain here; skipping (the oracle property tests still ran)"
    exit 0
fi
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked --version 0.13.2
fi
for t in $(cargo +nightly fuzz list); do
    mkdir -p "corpus/$t"
    [ "$t" = scenario_json ] && cp ../examples/scenarios/*.json "corpus/$t"/
    echo "fuzz: $t for ${secs}s"
    cargo +nightly fuzz run "$t" "corpus/$t" -- -max_total_time="$secs" -rss_limit_mb=2048 2>&1 | tail -n 3
done
