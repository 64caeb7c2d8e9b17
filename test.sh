#!/usr/bin/env bash
# Runs every test of the project. This is the README's test command; .ci/run calls it.
#   ./test.sh            everything
#   FUZZ_SECONDS=60 ./test.sh   longer fuzzing (default 15 s per target)
set -euo pipefail
cd "$(dirname "$0")"

step() { printf '\n== %s\n' "$*"; }

step "format"
cargo fmt --all -- --check

step "clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "gang-core without its serde feature"
cargo clippy -p gang-core --all-targets --no-default-features --locked -- -D warnings
cargo test -p gang-core --no-default-features --locked --lib

step "docs"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

step "rust tests (unit, property vs oracle, scenarios, examples, doctests)"
cargo test --workspace --locked

step "examples run"
cargo run --locked --quiet -p gang-cli -- demo >/dev/null   # the README's main job
cargo run --locked --quiet --example quickstart >/dev/null
cargo run --locked --quiet --example place -- --check examples/scenarios/*.json

# Bindings: each has its own script, run when its directory exists.
for sub in gang-py gang-ffi gang-scheduler; do
    if [ -x "$sub/test.sh" ]; then
        step "$sub"
        "$sub/test.sh"
    fi
done

step "fuzz (short, bounded)"
fuzz/run.sh "${FUZZ_SECONDS:-15}"

printf '\nall tests passed\n'
