package integration

import (
	"context"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"example.invalid/gang/gang-scheduler/plugin"
)

// deleting is GangPlacement with one change: the first time it has answered a
// PlacementGenerate, it deletes a node through the API and waits until the scheduler's
// node informer no longer has it — a node that goes away between gang's answer and the
// binding of the group's pods.
type deleting struct {
	*plugin.GangPlacement
	once  sync.Once
	del   func()
	after chan struct{}
}

func (d *deleting) GeneratePlacements(ctx context.Context, state fwk.PodGroupCycleState, pgi fwk.PodGroupInfo, parent *fwk.Placement) (*fwk.GeneratePlacementsResult, *fwk.Status) {
	res, st := d.GangPlacement.GeneratePlacements(ctx, state, pgi, parent)
	d.once.Do(func() {
		d.del()
		close(d.after)
	})
	return res, st
}

// A node deleted during the cycle, after gang placed the group on it: no pod is bound
// to it (PreFilter and Reserve check gang's nodes against the node informer, fresher
// than the cycle's snapshot), the group is not partly bound, and the next cycle places
// it whole in the other rack.
func TestNodeDeletedMidCycle(t *testing.T) {
	d := &deleting{after: make(chan struct{})}
	registry := frameworkruntime.Registry{plugin.Name: func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		p, err := plugin.New(ctx, obj, h)
		if err != nil {
			return nil, err
		}
		d.GangPlacement = p.(*plugin.GangPlacement)
		lister := h.SharedInformerFactory().Core().V1().Nodes().Lister()
		d.del = func() {
			if err := h.ClientSet().CoreV1().Nodes().Delete(context.Background(), "a1", metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting node a1: %v", err)
				return
			}
			if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
				_, err := lister.Get("a1")
				return apierrors.IsNotFound(err), nil
			}); err != nil {
				t.Errorf("the node informer still has a1: %v", err)
			}
		}
		return d, nil
	}}
	e := startWith(t, false, false, registry)
	// Four 1-GPU pods: rack a holds them on two nodes of 2 GPUs (2 + 2), rack b on four
	// nodes of 1 GPU — gang's objective (fewest nodes) puts them in rack a first.
	e.nodes(gpuNodeN("a1", "b1", "a", 2), gpuNodeN("a2", "b1", "a", 2),
		gpuNodeN("b1", "b1", "b", 1), gpuNodeN("b2", "b1", "b", 1), gpuNodeN("b3", "b1", "b", 1), gpuNodeN("b4", "b1", "b", 1))
	e.podGroup("workers", rack, 4, nil)
	e.create(members("workers", "worker", 4, 1)...)
	select {
	case <-d.after:
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("the group never reached PlacementGenerate")
	}
	perNode := e.waitBound("worker", 4)
	equalCounts(t, perNode, map[string]int{"b1": 1, "b2": 1, "b3": 1, "b4": 1})
	if d := e.inOneDomain(perNode, rack); d != "b1/b" {
		t.Errorf("domain %s, want b1/b (rack a lost a1 during the first cycle); pods per node %v", d, perNode)
	}
	for _, n := range []string{"a1", "a2"} {
		if perNode[n] > 0 {
			t.Errorf("%d pods bound to %s: %v", perNode[n], n, perNode)
		}
	}
}

// permitDeleting is GangPlacement with one change: when the first pod of a group has
// passed its Permit (it then waits in GangScheduling's Permit for the rest of the
// group), it deletes that pod's node through the API and waits until the scheduler's
// node informer no longer has it — a node that goes away after the group's pods were
// reserved, before any is bound.
type permitDeleting struct {
	*plugin.GangPlacement
	once    sync.Once
	del     func(node string)
	deleted chan string
}

func (d *permitDeleting) Permit(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeName string) (*fwk.Status, time.Duration) {
	status, timeout := d.GangPlacement.Permit(ctx, cs, pod, nodeName)
	if pod.Spec.SchedulingGroup != nil {
		d.once.Do(func() {
			d.del(nodeName)
			d.deleted <- nodeName
		})
	}
	return status, timeout
}

// A node deleted after the group's pods were reserved on gang's nodes, while they wait
// at Permit for the rest of the group: the next pods' Permit sees it gone and refuses
// the group whole (the waiting pods are rejected), no pod is bound to the deleted node
// nor anywhere else in that cycle, and the next cycle places the group whole in the
// other rack.
func TestNodeDeletedAfterReserve(t *testing.T) {
	d := &permitDeleting{deleted: make(chan string, 1)}
	registry := frameworkruntime.Registry{plugin.Name: func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		p, err := plugin.New(ctx, obj, h)
		if err != nil {
			return nil, err
		}
		d.GangPlacement = p.(*plugin.GangPlacement)
		lister := h.SharedInformerFactory().Core().V1().Nodes().Lister()
		d.del = func(node string) {
			if err := h.ClientSet().CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting node %s: %v", node, err)
				return
			}
			if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
				_, err := lister.Get(node)
				return apierrors.IsNotFound(err), nil
			}); err != nil {
				t.Errorf("the node informer still has %s: %v", node, err)
			}
		}
		return d, nil
	}}
	e := startWith(t, false, false, registry)
	// Four 1-GPU pods: rack a holds them on two nodes of 2 GPUs (2 + 2), rack b on four
	// nodes of 1 GPU — gang's objective (fewest nodes) puts them in rack a.
	e.nodes(gpuNodeN("a1", "b1", "a", 2), gpuNodeN("a2", "b1", "a", 2),
		gpuNodeN("b1", "b1", "b", 1), gpuNodeN("b2", "b1", "b", 1), gpuNodeN("b3", "b1", "b", 1), gpuNodeN("b4", "b1", "b", 1))
	e.podGroup("workers", rack, 4, nil)
	e.create(members("workers", "worker", 4, 1)...)
	var gone string
	select {
	case gone = <-d.deleted:
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("no pod of the group reached Permit")
	}
	if gone != "a1" && gone != "a2" {
		t.Fatalf("gang placed the first pod on %s, not in rack a", gone)
	}
	perNode := e.waitBound("worker", 4)
	equalCounts(t, perNode, map[string]int{"b1": 1, "b2": 1, "b3": 1, "b4": 1})
	if d := e.inOneDomain(perNode, rack); d != "b1/b" {
		t.Errorf("domain %s, want b1/b (rack a lost %s after the pods were reserved); pods per node %v", d, gone, perNode)
	}
}
