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
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/test/utils/client-go/ktesting"

	_ "k8s.io/component-base/logs/json/register"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"

	"example.invalid/gang/gang-scheduler/internal/etcdbin"
	"example.invalid/gang/gang-scheduler/plugin"
)

// podsTimeout is how long a workload may take to schedule its pods: upstream's TAS
// tests use 20 minutes; the native plugins' 1,000-pod groups at 5,000 nodes can take
// longer on a loaded 2-core machine (README.md, "Side by side").
var podsTimeout = flag.Duration("gang-pods-timeout", 20*time.Minute, "how long a workload may take to schedule its pods")

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
	perf.RunBenchmarkPerfScheduling(b, "performance-config.yaml", "gang", registry,
		perf.WithPodsSchedulingTimeout(*podsTimeout), perf.WithPrepareFn(reportGroups))
}

// reportGroups registers, before each workload runs, a cleanup that runs first (while
// the API server is still up) and prints one line for perf/summary.py:
//
//	GANGPERF <benchmark name> groups=<n> placed=<n> partial=<n> bound=<pods> domains=<mean> racks=<mean> nodes=<mean> pending=<ns/name,...> cycles=<n/p50/p99/avg> generate=<n/p50/p99/avg>
//
// placed: PodGroups with every pod bound; partial: some but not all bound (never
// expected: neither plugin set binds part of a gang); bound: the groups' pods bound
// (summary.py's pods/s when a run is too short for the throughput metric); domains, racks and nodes: the mean
// number of distinct domains of the group's topology key (rack when it has none), of
// racks (topology.kubernetes.io/rack: finer than the key in the two-level workloads)
// and of nodes per placed group; pending: the groups not placed, by name, so that summary.py can
// list the groups one plugin set left pending and the other placed; cycles and
// generate: the workload's own PodGroup cycles (cycles_test.go: the harness's figure
// for the algorithm's duration also holds the earlier workloads' cycles), as
// count/p50/p99/average in ms, cycles= for the PodGroup scheduling algorithm
// (scheduler_podgroup_scheduling_algorithm_duration_seconds), generate= for the
// PlacementGenerate extension point within it (GangPlacement, or the native
// TopologyPlacementGenerator).
func reportGroups(tCtx ktesting.TContext) error {
	client := tCtx.Client()
	name := tCtx.TB().Name()
	generate := map[string]string{"extension_point": "PlacementGenerate"}
	cyclesBefore, err := gatherSnapshot(algorithmMetric, nil)
	if err != nil {
		return err
	}
	generateBefore, err := gatherSnapshot(generateMetric, generate)
	if err != nil {
		return err
	}
	tCtx.TB().Cleanup(func() {
		ctx := context.Background()
		line, err := groupLine(ctx, client)
		if err == nil {
			var cycles, gen cycleSnapshot
			var c, g cycleStats
			if cycles, err = gatherSnapshot(algorithmMetric, nil); err == nil {
				if c, err = cycles.since(cyclesBefore); err == nil {
					if gen, err = gatherSnapshot(generateMetric, generate); err == nil {
						g, err = gen.since(generateBefore)
					}
				}
			}
			line += fmt.Sprintf(" cycles=%s generate=%s", c, g)
		}
		if err != nil {
			fmt.Printf("GANGPERF %s error=%q\n", name, err.Error())
			return
		}
		fmt.Printf("GANGPERF %s %s\n", name, line)
	})
	return nil
}

func groupLine(ctx context.Context, client clientset.Interface) (string, error) {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	labels := map[string]map[string]string{}
	for _, n := range nodes.Items {
		labels[n.Name] = n.Labels
	}
	pgs, err := client.SchedulingV1beta1().PodGroups("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	key := map[string]string{}
	for _, pg := range pgs.Items {
		k := "topology.kubernetes.io/rack"
		if c := pg.Spec.SchedulingConstraints; c != nil && len(c.Topology) > 0 {
			k = c.Topology[0].Key
		}
		key[pg.Namespace+"/"+pg.Name] = k
	}
	pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	type group struct {
		pods, bound           int
		domains, racks, nodes map[string]bool
	}
	groups := map[string]*group{}
	for _, p := range pods.Items {
		if p.Spec.SchedulingGroup == nil || p.Spec.SchedulingGroup.PodGroupName == nil {
			continue
		}
		id := p.Namespace + "/" + *p.Spec.SchedulingGroup.PodGroupName
		g := groups[id]
		if g == nil {
			g = &group{domains: map[string]bool{}, racks: map[string]bool{}, nodes: map[string]bool{}}
			groups[id] = g
		}
		g.pods++
		if p.Spec.NodeName != "" {
			g.bound++
			g.nodes[p.Spec.NodeName] = true
			g.domains[labels[p.Spec.NodeName][key[id]]] = true
			g.racks[labels[p.Spec.NodeName]["topology.kubernetes.io/rack"]] = true
		}
	}
	ids := make([]string, 0, len(groups))
	for id := range groups {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var placed, partial, bound, domains, racks, used int
	var pending []string
	for _, id := range ids {
		g := groups[id]
		bound += g.bound
		switch {
		case g.bound == g.pods:
			placed++
			domains += len(g.domains)
			racks += len(g.racks)
			used += len(g.nodes)
		case g.bound > 0:
			partial++
			pending = append(pending, id)
		default:
			pending = append(pending, id)
		}
	}
	mean := func(sum int) string {
		if placed == 0 {
			return "-"
		}
		return strconv.FormatFloat(float64(sum)/float64(placed), 'f', 3, 64)
	}
	return fmt.Sprintf("groups=%d placed=%d partial=%d bound=%d domains=%s racks=%s nodes=%s pending=%s",
		len(ids), placed, partial, bound, mean(domains), mean(racks), mean(used), strings.Join(pending, ",")), nil
}
