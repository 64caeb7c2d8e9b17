package integration

import (
	"context"
	"sync"
	"testing"
	"time"

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
	// Rack a (two nodes of 2 GPUs) is the exact fit for four 1-GPU pods; rack b has 16.
	e.nodes(gpuNodeN("a1", "b1", "a", 2), gpuNodeN("a2", "b1", "a", 2), gpuNode("b1", "b1", "b"), gpuNode("b2", "b1", "b"))
	e.podGroup("workers", rack, 4, nil)
	e.create(members("workers", "worker", 4, 1)...)
	select {
	case <-d.after:
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("the group never reached PlacementGenerate")
	}
	perNode := e.waitBound("worker", 4)
	if d := e.inOneDomain(perNode, rack); d != "b1/b" {
		t.Errorf("domain %s, want b1/b (rack a lost a1 during the first cycle); pods per node %v", d, perNode)
	}
	for _, n := range []string{"a1", "a2"} {
		if perNode[n] > 0 {
			t.Errorf("%d pods bound to %s: %v", perNode[n], n, perNode)
		}
	}
}
