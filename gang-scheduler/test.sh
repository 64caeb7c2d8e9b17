#!/usr/bin/env bash
# gang-scheduler's tests (the root ./test.sh runs this): builds the gang C library as
# gang-ffi does (gang-ffi/build.sh: cargo, release, copied to gang-ffi/go/lib), builds
# etcd from the go.etcd.io/etcd/server/v3 module pinned in go.mod into bin/ (gitignored),
# then gofmt, go vet, and go test ./... (the plugin's and the integration tests under
# -race; the integration tests run the gang-scheduler in process against a real
# kube-apiserver and that etcd). Needs Rust, Go >= 1.26 and gcc;
# the Go modules come through the module proxy.
#
#   gang-scheduler/test.sh           the tests
#   gang-scheduler/test.sh --bench   the scheduler_perf side-by-side (5,000 and 10,000
#                                    nodes; about an hour on a loaded 2-core machine)
set -euo pipefail
cd "$(dirname "$0")"

mode=${1:-test}
step() { printf '\n-- gang-scheduler: %s\n' "$*"; }

step "gang C library (gang-ffi/build.sh)"
../gang-ffi/build.sh
# As gang-ffi/test.sh does: the library's hash in the C flags, so Go relinks a new one.
CGO_CFLAGS="-g -O2 -DGANG_FFI_LIB=$(sha256sum ../gang-ffi/go/lib/libgang_ffi.a | cut -c1-16)"
export CGO_CFLAGS

step "etcd (go.etcd.io/etcd/server/v3, the version go.mod pins) into bin/"
if [ ! -x bin/etcd ] || [ go.mod -nt bin/etcd ]; then
    go build -o bin/etcd go.etcd.io/etcd/server/v3
fi
bin/etcd --version | sed -n 1p
export PATH="$PWD/bin:$PATH"

if [ "$mode" = --bench ]; then
    # Each workload with both plugin sets (native first, then GangPlacement) in one
    # go test process of its own, one after the other; the logs go to bin/perf/ and the
    # table (perf/summary.py) to stdout. The native plugins' 1,000-pod groups can take
    # more than upstream's 20 minutes on a loaded 2-core machine: -gang-pods-timeout.
    step "scheduler_perf side-by-side (native vs GangPlacement), one workload at a time"
    mkdir -p bin/perf
    while read -r name pattern; do
        echo "$name: $(uptime)"
        go test ./perf -run '^$' -bench "BenchmarkPerfScheduling/$pattern\$" -benchtime 1x \
            -timeout 4h -gang-pods-timeout 60m -perf-scheduling-label-filter=performance \
            -data-items-dir "$PWD/bin/perf" < /dev/null > "bin/perf/$name.log" 2>&1 ||
            { tail -50 "bin/perf/$name.log"; exit 1; }
        echo "$name: done, $(uptime)"
    done <<'WORKLOADS'
tas750 (TopologyAwareScheduling|GangPlacement)/5000Nodes_750Gangs_3000Pods
tas1500 (TopologyAwareScheduling|GangPlacement)/5000Nodes_1500Gangs_6000Pods
tas2250 (TopologyAwareScheduling|GangPlacement)/5000Nodes_2250Gangs_9000Pods
tas3x1000 (TopologyAwareScheduling|GangPlacement)/5000Nodes_3Gangs_3000Pods_1000PerGroup
tas6x1000 (TopologyAwareScheduling|GangPlacement)/5000Nodes_6Gangs_6000Pods_1000PerGroup
tas9x1000 (TopologyAwareScheduling|GangPlacement)/5000Nodes_9Gangs_9000Pods_1000PerGroup
fragmented FragmentedRacks_(Native|GangPlacement)/Fragmented_5000Nodes_250Gangs_2000Pods
twolevels TwoLevels_(Native|GangPlacement)/TwoLevels_5000Nodes_500Gangs_4000Pods
hetero Heterogeneous_(Native|GangPlacement)/Heterogeneous_5000Nodes_250Groups_1000Pods
tas10k (TopologyAwareScheduling|GangPlacement)/10000Nodes_1500Gangs_6000Pods
WORKLOADS
    cat bin/perf/*.log | perf/summary.py
    exit 0
fi

step "gofmt, go vet"
test -z "$(gofmt -l .)" || { gofmt -l .; echo "gofmt: the files above need formatting" >&2; exit 1; }
go vet ./...

# The plugin's tests and the integration tests run under the race detector (the
# plugin's state is shared by the scheduling loop, the binding goroutines and the pod
# informer). Its cold build costs about 11 CPU-minutes for both packages (README.md,
# "Build, run, test"); the other packages have no tests of their own under -race.
step "go test -race: plugin; go test: scheduler binary, perf harness set-up"
go test -race -count=1 -timeout 30m ./plugin
go test -count=1 -timeout 30m $(go list ./... | grep -v -e /test/integration -e /plugin)

# Alone, so that no other package's tests share the cores: upstream's test API server
# must answer its health check within 10 s of starting (test_server.go), which a
# 2-core machine running two test binaries at once did not always manage.
step "go test -race: integration against kube-apiserver + etcd"
go test -race -count=1 -timeout 30m ./test/integration

step "scheduler_perf: the short workloads (upstream's TAS, the issue's), native and GangPlacement"
go test ./perf -run '^$' -bench BenchmarkPerfScheduling -benchtime 1x -timeout 20m \
    -perf-scheduling-label-filter=integration-test

step "the gang-scheduler binary"
go build -o bin/gang-scheduler ./cmd/gang-scheduler
bin/gang-scheduler --version >/dev/null 2>&1 || bin/gang-scheduler --help >/dev/null
echo "gang-scheduler: all tests passed"
