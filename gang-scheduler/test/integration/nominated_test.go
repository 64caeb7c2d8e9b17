package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"example.invalid/gang/gang-scheduler/plugin"
)

// nominate creates a pod of the given priority requesting gpus GPUs that the scheduler
// holds back (a scheduling gate), nominates it to node through its status, as
// preemption does, and waits until the scheduler's nominator has it there.
func (e *env) nominate(h func() fwk.Handle, name, node string, prio int32, gpus string) {
	e.t.Helper()
	p := st.MakePod().Name(name).SchedulerName(schedulerName).Priority(prio).
		Req(map[v1.ResourceName]string{gpu: gpus}).Container("image").ZeroTerminationGracePeriod().Obj()
	p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/held"}}
	e.create(p)
	got, err := e.tc.ClientSet.CoreV1().Pods(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("getting pod %s: %v", name, err)
	}
	got.Status.NominatedNodeName = node
	if _, err := e.tc.ClientSet.CoreV1().Pods(e.ns).UpdateStatus(e.ctx, got, metav1.UpdateOptions{}); err != nil {
		e.t.Fatalf("nominating pod %s to %s: %v", name, node, err)
	}
	if err := wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		for _, pi := range h().NominatedPodsForNode(node) {
			if pi.GetPod().Name == name {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		e.t.Fatalf("the scheduler never had pod %s nominated to %s: %v", name, node, err)
	}
}

// Pods nominated to nodes (after preemption) count as used there for gang, as for
// kube-scheduler's filters: those of a priority at least the group's. Four 1-GPU
// workers would go to a1 (4 GPUs: one node, gang's most compact answer) rather than to
// rack b's four 1-GPU nodes, but a priority-1000 pod is nominated to a1 with 2 GPUs:
// the group goes whole to rack b. Priority-10 pods nominated to b1…b4 with their GPU
// do not count (the group may take what was promised to lower priorities). Without
// counting the first, gang keeps choosing a1 and the framework's filter keeps refusing
// two of the pods there, so nothing binds; counting the others, nothing fits.
func TestNominatedPodsCountAsUsed(t *testing.T) {
	var handle fwk.Handle
	registry := frameworkruntime.Registry{plugin.Name: func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		handle = h
		return plugin.New(ctx, obj, h)
	}}
	e := startWith(t, false, false, registry)
	e.nodes(gpuNodeN("a1", "b1", "a", 4),
		gpuNodeN("b1", "b1", "b", 1), gpuNodeN("b2", "b1", "b", 1), gpuNodeN("b3", "b1", "b", 1), gpuNodeN("b4", "b1", "b", 1))
	h := func() fwk.Handle { return handle }
	e.nominate(h, "promised-high", "a1", highPriority, "2")
	for i := 1; i <= 4; i++ {
		e.nominate(h, fmt.Sprintf("promised-low-%d", i), fmt.Sprintf("b%d", i), lowPriority, "1")
	}
	e.podGroup("workers", rack, 4, nil)
	e.create(members("workers", "worker", 4, 1)...)
	perNode := e.waitBound("worker", 4)
	equalCounts(t, perNode, map[string]int{"b1": 1, "b2": 1, "b3": 1, "b4": 1})
	if d := e.inOneDomain(perNode, rack); d != "b1/b" {
		t.Errorf("domain %s, want b1/b (a1's GPUs are promised to a pod of higher priority); pods per node %v", d, perNode)
	}
}
