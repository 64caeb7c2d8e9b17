package plugin

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	gang "example.invalid/gang/gang-ffi/go"
)

// The preemption question is asked on the live inventory with the victims' use moved
// from the nodes' used amounts to evictable units; the plan names the least eviction
// (7 GPUs of one pod in rack b rather than 12 of a two-pod group in rack a), and the
// inventory is afterwards exactly as it was, whatever the answer. Pods being deleted
// count as gone: a group that fits once they are gone needs no victim.
func TestPreemptAsksGangAndPutsTheInventoryBack(t *testing.T) {
	s := newInventoryState([]string{rackKey})
	defer s.close()
	batch0, batch1, solo := gpuPod("batch-0", "a1", "6"), gpuPod("batch-1", "a2", "6"), gpuPod("solo", "b1", "7")
	nodes := list(nodeInfo(testNode("a1", "a"), batch0), nodeInfo(testNode("a2", "a"), batch1), nodeInfo(testNode("b1", "b"), solo))
	if err := s.sync(nodes); err != nil {
		t.Fatal(err)
	}
	snapshot := func() map[string]string {
		out := map[string]string{}
		for _, n := range []string{"a1", "a2", "b1"} {
			js, err := s.inv.NodeJSON(n)
			if err != nil {
				t.Fatal(err)
			}
			out[n] = js
		}
		return out
	}
	before := snapshot()
	unchanged := func(when string) {
		t.Helper()
		if err := s.inv.Validate(); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		after := snapshot()
		for n, js := range before {
			if after[n] != js {
				t.Errorf("%s: node %s is %s, was %s", when, n, after[n], js)
			}
		}
	}
	pl := &GangPlacement{inv: s}
	units := map[string]*victim{
		"podgroup:ns/batch": {id: "podgroup:ns/batch", priority: 1, pods: []*v1.Pod{batch0, batch1},
			amounts: map[string]map[string]uint64{"a1": podAmounts(batch0), "a2": podAmounts(batch1)}},
		"pod:ns/solo": {id: "pod:ns/solo", priority: 1, pods: []*v1.Pod{solo},
			amounts: map[string]map[string]uint64{"b1": podAmounts(solo)}},
	}
	spec := func(prio int32) gang.GangSpec {
		return gang.GangSpec{Name: "urgent", Required: rackKey, Priority: prio, Roles: []gang.Role{{
			Name: "w", Count: 2, Requests: map[string]gang.Amount{"nvidia.com/gpu": gang.Units(4)}}}}
	}

	ans, reason, err := pl.preempt(spec(5), units, nil)
	if err != nil || ans == nil {
		t.Fatalf("preempt: %v %v %q", ans, err, reason)
	}
	if len(ans.Victims) != 1 || ans.Victims[0].Name != "pod:ns/solo" {
		t.Errorf("victims %+v, want only pod:ns/solo", ans.Victims)
	}
	if a := ans.Placement.Assignments; len(a) != 1 || a[0].Node != "b1" || a[0].Count != 2 || a[0].Role != "w" {
		t.Errorf("assignments %+v, want 2 w on b1", a)
	}
	unchanged("after a plan")

	// Equal priority evicts nothing: no plan, gang's reason.
	ans, reason, err = pl.preempt(spec(1), units, nil)
	if err != nil || ans != nil || reason == "" {
		t.Fatalf("equal priority: %v %v %q", ans, err, reason)
	}
	unchanged("after no plan")

	// solo is being deleted: the group fits on b1 once it is gone, with no victim.
	ans, _, err = pl.preempt(spec(5), map[string]*victim{}, map[string]map[string]uint64{"b1": podAmounts(solo)})
	if err != nil || ans == nil || len(ans.Victims) != 0 {
		t.Fatalf("with solo departing: %+v %v", ans, err)
	}
	unchanged("after the departing pods")
}

// The preemptor's priority is its PodGroup's; it may not preempt when the PodGroup, or
// (when the PodGroup says nothing) any of its pods, has preemptionPolicy Never.
func TestPreemptorOf(t *testing.T) {
	never := v1.PreemptNever
	pgNever := schedulingv1beta1.PreemptNever
	pgLower := schedulingv1beta1.PreemptLowerPriority
	pod := func(p *v1.PreemptionPolicy) *v1.Pod {
		q := st.MakePod().Name("x").Priority(7).Obj()
		q.Spec.PreemptionPolicy = p
		return q
	}
	for _, c := range []struct {
		name   string
		policy *schedulingv1beta1.PreemptionPolicy
		pod    *v1.PreemptionPolicy
		may    bool
	}{
		{"defaults", nil, nil, true},
		{"a pod says Never", nil, &never, false},
		{"the group says Never", &pgNever, nil, false},
		{"the group's word wins", &pgLower, &never, true},
	} {
		pg := st.MakePodGroup().Name("g").Priority(50).Obj()
		pg.Spec.PreemptionPolicy = c.policy
		prio, may := preemptorOf(&pgInfo{pg: pg, pods: []*v1.Pod{pod(c.pod)}})
		if prio != 50 || may != c.may {
			t.Errorf("%s: priority %d may %v, want 50 %v", c.name, prio, may, c.may)
		}
	}
}
