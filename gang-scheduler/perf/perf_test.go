// Package perf runs upstream's scheduler_perf harness
// (k8s.io/kubernetes/test/integration/scheduler_perf) on its TAS workloads, once with the
// native plugins and once with GangPlacement, in one run (performance-config.yaml).
//
//	go test ./perf -run '^$' -bench BenchmarkPerfScheduling -benchtime 1x \
//	    -perf-scheduling-label-filter=integration-test   # 10 and 100 nodes (CI)
//	go test ./perf -run '^$' -bench BenchmarkPerfScheduling -benchtime 1x -timeout 4h \
//	    -perf-scheduling-label-filter=performance        # 5,000 nodes (../README.md)
//
// Only the benchmark entry point takes an out-of-tree plugin registry, so the short
// workloads run through it too.
package perf

import (
	"fmt"
	"os"
	"testing"
	"time"

	_ "k8s.io/component-base/logs/json/register"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"

	"example.invalid/gang/gang-scheduler/internal/etcdbin"
	"example.invalid/gang/gang-scheduler/plugin"
)

func TestMain(m *testing.M) {
	if err := etcdbin.OnPath(".."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := perf.InitTests(); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func BenchmarkPerfScheduling(b *testing.B) {
	registry := frameworkruntime.Registry{plugin.Name: plugin.New}
	perf.RunBenchmarkPerfScheduling(b, "performance-config.yaml", "gang", registry, perf.WithPodsSchedulingTimeout(20*time.Minute))
}
