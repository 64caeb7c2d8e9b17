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
#   gang-scheduler/test.sh --bench   the scheduler_perf side-by-side (5,000 nodes; long)
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
    step "scheduler_perf side-by-side (native vs GangPlacement)"
    go test ./perf -run '^$' -bench BenchmarkPerfScheduling -benchtime 1x -timeout 4h \
        -perf-scheduling-label-filter=performance -data-items-dir "$PWD/bin/perf" 
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
