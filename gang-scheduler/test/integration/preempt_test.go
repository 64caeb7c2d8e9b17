package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// Priorities of the preemption cases: the group that preempts, the running work below
// it, and running work above it.
const (
	urgentPriority = 100
	lowPriority    = 10
	highPriority   = 1000
)

// running creates a PodGroup of the given priority whose pods (one GPU each) already
// run where perNode says, named name-0, name-1, … in node order.
func (e *env) running(name string, prio int32, perNode map[string]int) {
	e.t.Helper()
	n := 0
	for _, c := range perNode {
		n += c
	}
	pg := st.MakePodGroup().Name(name).Namespace(e.ns).WorkloadRef("t1", "workload").MinCount(int32(n)).Priority(prio).Obj()
	if _, err := e.tc.ClientSet.SchedulingV1beta1().PodGroups(e.ns).Create(e.ctx, pg, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("creating PodGroup %s: %v", name, err)
	}
	nodes := make([]string, 0, len(perNode))
	for node := range perNode {
		nodes = append(nodes, node)
	}
	slices.Sort(nodes)
	i := 0
	for _, node := range nodes {
		for range perNode[node] {
			e.create(st.MakePod().Name(fmt.Sprintf("%s-%d", name, i)).Node(node).SchedulerName(schedulerName).
				Req(map[v1.ResourceName]string{gpu: "1", v1.ResourceCPU: "1"}).Container("image").
				PodGroupName(name).Priority(prio).ZeroTerminationGracePeriod().Obj())
			i++
		}
	}
}

// preemptionCluster is three racks of two 2-GPU nodes, all twelve GPUs but two in use:
//
//	rack a: a1 runs group low2 (2 × 1 GPU, priority 10); a2 runs pod lone-0 (1 GPU,
//	        priority 10, in no group): 1 free
//	rack b: group low4 (4 × 1 GPU, priority 10) fills b1 and b2: 0 free
//	rack c: c1 runs group high2 (2 × 1 GPU, priority 1000); c2 is empty: 2 free
//
// A group of four 1-GPU pods with rack required fits nowhere. Evicting low2 and lone-0
// (3 GPUs, 2 victims) frees rack a; evicting low4 (4 GPUs, 1 victim) frees rack b;
// rack c would need high2 gone (2 GPUs, the cheapest, but of higher priority).
func preemptionCluster(e *env) {
	e.nodes(gpuNodeN("a1", "b1", "a", 2), gpuNodeN("a2", "b1", "a", 2), gpuNodeN("b1", "b1", "b", 2),
		gpuNodeN("b2", "b1", "b", 2), gpuNodeN("c1", "b2", "c", 2), gpuNodeN("c2", "b2", "c", 2))
	e.running("low2", lowPriority, map[string]int{"a1": 2})
	e.create(st.MakePod().Name("lone-0").Node("a2").SchedulerName(schedulerName).
		Req(map[v1.ResourceName]string{gpu: "1", v1.ResourceCPU: "1"}).Container("image").
		Priority(lowPriority).ZeroTerminationGracePeriod().Obj())
	e.running("low4", lowPriority, map[string]int{"b1": 2, "b2": 2})
	e.running("high2", highPriority, map[string]int{"c1": 2})
	if err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		n, err := e.tc.Scheduler.Cache.PodCount()
		return n == 9, err
	}); err != nil {
		e.t.Fatalf("the scheduler's cache does not hold the running pods: %v", err)
	}
}

// urgent creates the preempting group: four 1-GPU pods of priority 100, rack required.
func (e *env) urgent(policy *v1.PreemptionPolicy) {
	e.t.Helper()
	pg := st.MakePodGroup().Name("urgent").Namespace(e.ns).WorkloadRef("t1", "workload").
		TopologyKey(rack).MinCount(4).Priority(urgentPriority).Obj()
	if _, err := e.tc.ClientSet.SchedulingV1beta1().PodGroups(e.ns).Create(e.ctx, pg, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("creating PodGroup urgent: %v", err)
	}
	pods := members("urgent", "urgent", 4, 1)
	for _, p := range pods {
		p.Spec.Priority = ptrTo(int32(urgentPriority))
		p.Spec.PreemptionPolicy = policy
	}
	e.create(pods...)
}

func ptrTo[T any](v T) *T { return &v }

// podNames lists the pods of the namespace that exist and are not being deleted.
func (e *env) podNames() []string {
	e.t.Helper()
	list, err := e.tc.ClientSet.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatalf("listing pods: %v", err)
	}
	var names []string
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	return names
}

// Preemption (issue 22): the group fits only once lower-priority work in one rack is
// evicted. gang evicts the least: group low2 and pod lone-0 in rack a (3 GPUs), not
// group low4 in rack b (4 GPUs, one victim, as kube-scheduler's ordering by victim
// count would choose), and never group high2 (higher priority, 2 GPUs). Exactly those
// three pods are deleted, whole group low2 with them, and the group is then bound whole
// in rack a.
func TestPreemptEvictsTheLeast(t *testing.T) {
	e := start(t, false, false)
	preemptionCluster(e)
	e.urgent(nil)
	perNode := e.waitBound("urgent", 4)
	equalCounts(t, perNode, map[string]int{"a1": 2, "a2": 2})
	if d := e.inOneDomain(perNode, rack); d != "b1/a" {
		t.Errorf("domain %s, want rack b1/a", d)
	}
	want := []string{"high2-0", "high2-1", "low4-0", "low4-1", "low4-2", "low4-3",
		"urgent-0", "urgent-1", "urgent-2", "urgent-3"}
	if got := e.podNames(); !slices.Equal(got, want) {
		t.Errorf("pods left %v, want %v (low2-0, low2-1 and lone-0 evicted, nothing else)", got, want)
	}
}

// A group whose pods say preemptionPolicy: Never evicts nothing (kube-scheduler's
// meaning of Never: it does not preempt others); it stays pending, bound nowhere, and
// its condition says why.
func TestPreemptNeverEvictsNothing(t *testing.T) {
	e := start(t, false, false)
	preemptionCluster(e)
	e.urgent(ptrTo(v1.PreemptNever))
	msg := e.waitUnschedulable("urgent")
	if !strings.Contains(msg, "preemptionPolicy is Never") {
		t.Errorf("condition %q does not say the group may not preempt", msg)
	}
	e.noneBound("urgent")
	// PodGroupPostFilter evicts before the cycle writes the condition: had it evicted
	// anything, it would be gone by now.
	want := []string{"high2-0", "high2-1", "lone-0", "low2-0", "low2-1", "low4-0", "low4-1", "low4-2", "low4-3",
		"urgent-0", "urgent-1", "urgent-2", "urgent-3"}
	if got := e.podNames(); !slices.Equal(got, want) {
		t.Errorf("pods left %v, want all of %v", got, want)
	}
}
