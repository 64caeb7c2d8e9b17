#!/usr/bin/env bash
# gang's warm Solver and Kueue's TAS placement code side by side, on the same generated
# clusters, in alternating rounds. Not part of CI. See README.md beside this script.
#
#   benches/peers/kueue/run.sh [--rounds N] [--budget-ms MS] [--only Q,Q] [--out FILE] [CLUSTER...]
#
# CLUSTER: hgx-1k-50, hgx-10k-85, hgx-100k-50, nvl72-10k-85 ... (default: hgx-1k-50
# hgx-10k-50). --only: query names (required-block-256, preferred-rack-512, ...).
# Work files (exports, the Kueue copy, the test binary, raw lines) go to
# $GANG_SBS_WORK (default: target/peers-kueue in the repository).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
kueue_version=${KUEUE_VERSION:-v0.17.0}
work=${GANG_SBS_WORK:-$root/target/peers-kueue}
target=${CARGO_TARGET_DIR:-$root/target}

rounds=5
budget=300
only=""
out=""
clusters=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --budget-ms) budget=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) clusters+=("$1"); shift ;;
  esac
done
[ ${#clusters[@]} -gt 0 ] || clusters=(hgx-1k-50 hgx-10k-50)
mkdir -p "$work/clusters"

# The commit measured (taken before building, so edits made during a run do not show).
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ]; then commit="$commit (dirty)"; fi

# 1. gang's side: the peers binary (export + timing).
echo "== building gang's peers binary" >&2
(cd "$root" && cargo build --release -q -p gang-benches --bin peers)
peers="$target/release/peers"

# 2. The clusters as JSON (deterministic: kept between runs).
for c in "${clusters[@]}"; do
  f="$work/clusters/$c.json"
  if [ ! -s "$f" ]; then
    echo "== exporting $c" >&2
    "$peers" export "$c" "$f.tmp"
    mv "$f.tmp" "$f"
  fi
done

# 3. Kueue's side: the served module, copied writable, with our test file in the package
#    that holds the TAS snapshot (its own tests left out: they need more modules).
echo "== sigs.k8s.io/kueue@$kueue_version from the Go module proxy" >&2
mod_dir=$(go mod download -json "sigs.k8s.io/kueue@$kueue_version" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')
src="$work/kueue-$kueue_version"
if [ ! -f "$src/go.mod" ]; then
  rm -rf "$src.tmp"
  cp -r "$mod_dir" "$src.tmp"
  chmod -R u+w "$src.tmp"
  rm -f "$src.tmp"/pkg/cache/scheduler/*_test.go
  mv "$src.tmp" "$src"
fi
cp "$here/tas_side_by_side_test.go.txt" "$src/pkg/cache/scheduler/zz_gang_side_by_side_test.go"
echo "== building Kueue's pkg/cache/scheduler test binary" >&2
(cd "$src" && go test -c -o "$work/kueue-tas.test" ./pkg/cache/scheduler)

# 4. Alternating rounds: odd rounds gang first, even rounds Kueue first; one process per
#    side, cluster and round.
raw="$work/raw-$(date -u +%Y%m%dT%H%M%SZ).tsv"
: > "$raw"
run_gang() {
  "$peers" gang "$1" --round "$2" --budget-ms "$budget" ${only:+--only "$only"} >> "$raw"
}
run_kueue() {
  local log="$work/kueue-round.log"
  if ! GANG_SBS_CLUSTER="$work/clusters/$1.json" GANG_SBS_ROUND="$2" \
      GANG_SBS_BUDGET_MS="$budget" GANG_SBS_ONLY="$only" \
      "$work/kueue-tas.test" -test.run '^TestGangSideBySide$' -test.count 1 > "$log" 2>&1; then
    cat "$log" >&2
    echo "run.sh: the Kueue harness failed on $1" >&2
    exit 1
  fi
  grep -E '^(kueue|#setup)' "$log" >> "$raw"
}
for r in $(seq 1 "$rounds"); do
  for c in "${clusters[@]}"; do
    echo "== round $r/$rounds, $c (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    printf '#load\t%s\t%s\t%s\n' "$r" "$c" "$(cat /proc/loadavg)" >> "$raw"
    if [ $((r % 2)) -eq 1 ]; then
      run_gang "$c" "$r"; run_kueue "$c" "$r"
    else
      run_kueue "$c" "$r"; run_gang "$c" "$r"
    fi
  done
done

# 5. The table.
table=$(python3 "$here/table.py" "$raw" --commit "$commit" --kueue-version "$kueue_version")
echo "raw lines: $raw" >&2
if [ -n "$out" ]; then
  printf '%s\n' "$table" > "$out"
  echo "table: $out" >&2
fi
printf '%s\n' "$table"
