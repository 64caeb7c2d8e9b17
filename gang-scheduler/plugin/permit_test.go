package plugin

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// nodeLister is a node informer's lister holding the named nodes.
func nodeLister(t *testing.T, names ...string) corelisters.NodeLister {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, n := range names {
		if err := idx.Add(testNode(n, "a")); err != nil {
			t.Fatal(err)
		}
	}
	return corelisters.NewNodeLister(idx)
}

// boundCycle is a pod's cycle state after the PodGroup cycle placed it with p: the pod's
// own state no longer marks a PodGroup cycle; its placement's state holds the plan.
func boundCycle(p *plan) fwk.CycleState {
	group := framework.NewCycleState()
	group.Write(planKey, p)
	placement := framework.NewCycleState()
	placement.SetPodGroupSchedulingCycle(group)
	cs := framework.NewCycleState()
	cs.SetPlacementCycleState(placement)
	return cs
}

func podUID(name string) *v1.Pod {
	p := gpuPod(name, "", "1")
	p.UID = types.UID(name)
	return p
}

// Permit lets a group's pods through while every node gang put them on is there, and
// refuses the group (this pod, the ones after it) once one of those nodes is gone,
// naming it; pods gang did not place, and pods outside a PodGroup cycle, pass.
func TestPermitRefusesTheGroupWhenANodeIsGone(t *testing.T) {
	p := &plan{name: "a", roleOf: map[types.UID]string{"w0": "w", "w1": "w", "w2": "w"},
		gate: &gate{nodes: sets.New[string]()}}
	cs := boundCycle(p)
	pl := &GangPlacement{nodes: nodeLister(t, "a2", "a3")}
	ctx := context.Background()
	if st, _ := pl.Permit(ctx, cs, podUID("w0"), "a2"); !st.IsSuccess() {
		t.Fatalf("w0 on a2 (there): %v", st)
	}
	st, _ := pl.Permit(ctx, cs, podUID("w1"), "a1")
	if st.Code() != fwk.Unschedulable || !strings.Contains(st.Message(), "a1") {
		t.Fatalf("w1 on a1 (deleted): %v, want Unschedulable naming a1", st)
	}
	if st, _ := pl.Permit(ctx, cs, podUID("w2"), "a3"); st.Code() != fwk.Unschedulable {
		t.Fatalf("w2 after the group was refused: %v, want Unschedulable", st)
	}
	if st, _ := pl.Permit(ctx, cs, podUID("other"), "a1"); !st.IsSuccess() {
		t.Errorf("a pod gang did not place: %v, want success", st)
	}
	if st, _ := pl.Permit(ctx, framework.NewCycleState(), podUID("w0"), "a1"); !st.IsSuccess() {
		t.Errorf("a pod outside a PodGroup cycle: %v, want success", st)
	}

	// The same group, its nodes all there: every pod passes.
	p2 := &plan{name: "a", roleOf: p.roleOf, gate: &gate{nodes: sets.New[string]()}}
	for _, w := range []string{"w0", "w1", "w2"} {
		if st, _ := pl.Permit(ctx, boundCycle(p2), podUID(w), "a3"); !st.IsSuccess() {
			t.Errorf("%s on a3: %v", w, st)
		}
	}
}

// PreBind refuses to bind a pod gang placed to a node deleted since; other nodes and
// pods gang did not place pass (PreBindPreFlight skips them).
func TestPreBindRefusesADeletedNode(t *testing.T) {
	p := &plan{name: "a", roleOf: map[types.UID]string{"w0": "w"}, gate: &gate{nodes: sets.New[string]()}}
	pl := &GangPlacement{nodes: nodeLister(t, "a2")}
	ctx := context.Background()
	if _, st := pl.PreBindPreFlight(ctx, boundCycle(p), podUID("w0"), "a1"); !st.IsSuccess() {
		t.Errorf("PreBindPreFlight of a pod gang placed: %v, want success", st)
	}
	if _, st := pl.PreBindPreFlight(ctx, framework.NewCycleState(), podUID("x"), "a1"); !st.IsSkip() {
		t.Errorf("PreBindPreFlight of another pod: %v, want skip", st)
	}
	if st := pl.PreBind(ctx, boundCycle(p), podUID("w0"), "a1"); st.Code() != fwk.Unschedulable {
		t.Errorf("PreBind to deleted a1: %v, want Unschedulable", st)
	}
	if st := pl.PreBind(ctx, boundCycle(p), podUID("w0"), "a2"); !st.IsSuccess() {
		t.Errorf("PreBind to a2: %v, want success", st)
	}
}

// Pods nominated to a node count as used there on top of the node's own pods, through
// later syncs of that node, until the next cycle counts other nominations.
func TestNominatedUseOnTop(t *testing.T) {
	s := newInventoryState([]string{rackKey})
	defer s.close()
	a1 := nodeInfo(testNode("a1", "a"), gpuPod("p", "a1", "2"))
	a2 := nodeInfo(testNode("a2", "a"))
	if err := s.sync(list(a1, a2)); err != nil {
		t.Fatal(err)
	}
	if err := s.nominate(map[string]map[string]uint64{"a1": {"nvidia.com/gpu": 3000, "pods": 1000}}); err != nil {
		t.Fatal(err)
	}
	if got := free(t, s, "a1"); got != 3 {
		t.Errorf("a1 free GPUs %d with 3 nominated, want 3", got)
	}
	a1.AddPod(gpuPod("q", "a1", "1"))
	if err := s.sync(list(a1, a2)); err != nil {
		t.Fatal(err)
	}
	if got := free(t, s, "a1"); got != 2 {
		t.Errorf("a1 free GPUs %d after one more pod, want 2", got)
	}
	if err := s.nominate(map[string]map[string]uint64{"a2": {"nvidia.com/gpu": 8000}}); err != nil {
		t.Fatal(err)
	}
	if got, got2 := free(t, s, "a1"), free(t, s, "a2"); got != 5 || got2 != 0 {
		t.Errorf("free GPUs a1 %d a2 %d after the nominations moved, want 5 0", got, got2)
	}
	if err := s.nominate(nil); err != nil {
		t.Fatal(err)
	}
	if got := free(t, s, "a2"); got != 8 {
		t.Errorf("a2 free GPUs %d with nothing nominated, want 8", got)
	}
	if err := s.inv.Validate(); err != nil {
		t.Error(err)
	}
}

// TestNominationsFromTheInformerWhileACycleReads: the pod informer's handler writes the
// nominations while the scheduling loop reads them (nominatedUse): under -race (as
// test.sh runs this package) an unguarded access fails the test. The counts stay
// right: each pod nominated to one of three nodes, then bound, leaves nothing.
func TestNominationsFromTheInformerWhileACycleReads(t *testing.T) {
	n := newNominations()
	h := n.handler()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 300 {
			pod := st.MakePod().Name(fmt.Sprintf("p-%d", i)).UID(fmt.Sprintf("p-%d", i)).Obj()
			pod.Status.NominatedNodeName = fmt.Sprintf("n%d", i%3)
			h.OnAdd(pod, false)
			bound := pod.DeepCopy()
			bound.Spec.NodeName = pod.Status.NominatedNodeName
			h.OnUpdate(pod, bound)
		}
	}()
	for reading := true; reading; {
		select {
		case <-done:
			reading = false
		default:
		}
		if got := n.nodes(); len(got) > 3 {
			t.Fatalf("nominated nodes %v: more than the three used", got)
		}
	}
	if got := n.nodes(); len(got) != 0 {
		t.Fatalf("every pod was bound, yet nodes %v still have nominations", got)
	}
}
