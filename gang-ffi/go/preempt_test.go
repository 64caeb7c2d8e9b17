package gang_test

// Preemption through the Go API (issue 22): priorities, evictable units, Preempt and
// PreemptReserve. Kept apart from lifecycle_test.go (reserve, release, the scenario
// step runner), which it shares nothing with.

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	gang "example.invalid/gang/gang-ffi/go"
)

// Preemption through the Go API (issue 22): at equal priority, the two small jobs are
// evicted rather than the big one; an evictable unit declared in the cluster document
// counts as used and can be a victim; PreemptReserve applies the plan whole.
func TestPreempt(t *testing.T) {
	inv, err := gang.ParseInventory([]byte(`{"topology": {"levels": ["rack"]},
		"nodes": [
			{"name": "a1", "labels": {"rack": "a", "node": "a1"}, "capacity": {"nvidia.com/gpu": 8}},
			{"name": "a2", "labels": {"rack": "a", "node": "a2"}, "capacity": {"nvidia.com/gpu": 8}}],
		"evictable": [{"id": "notebook", "priority": 1, "nodes": {"a2": {"nvidia.com/gpu": 2}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer inv.Close()
	job := func(name string, count, gpus, prio int, node string) *gang.Gang {
		g, err := gang.ParseGang([]byte(fmt.Sprintf(`{"name": %q, "priority": %d, "roles": [{"name": "w",
			"count": %d, "requests": {"nvidia.com/gpu": %d}, "node_selector": {"node": %q}}]}`,
			name, prio, count, gpus, node)))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	names := map[uint64]string{}
	for _, j := range []struct {
		name              string
		count, gpus, prio int
		node              string
	}{{"big", 4, 2, 10, "a1"}, {"small-a", 1, 2, 10, "a2"}, {"small-b", 1, 2, 10, "a2"}} {
		g := job(j.name, j.count, j.gpus, j.prio, j.node)
		out, err := inv.Place(g)
		if err != nil || out.Status != gang.StatusPlaced {
			t.Fatalf("%s: %v %v", j.name, out.Status, err)
		}
		id, err := inv.Reserve(out.Placement)
		if err != nil {
			t.Fatal(err)
		}
		names[uint64(id)] = j.name
		out.Close()
		g.Close()
	}
	urgent, err := gang.ParseGang([]byte(`{"name": "urgent", "priority": 100, "roles": [{"name": "w",
		"count": 4, "requests": {"nvidia.com/gpu": 2}}], "topology": {"required": "rack"}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer urgent.Close()
	type doc struct {
		Status  string `json:"status"`
		Victims []struct {
			ID struct {
				Kind string          `json:"kind"`
				ID   json.RawMessage `json:"id"`
			} `json:"id"`
			Name string `json:"name"`
		} `json:"victims"`
	}
	status, js, err := inv.Preempt(urgent)
	if err != nil || status != gang.StatusPlaced {
		t.Fatalf("preempt: %v %v %s", status, err, js)
	}
	var d doc
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatal(err)
	}
	// a2 has 8 - 2 - 2 - 2 = 2 free: evicting both small jobs and the notebook frees it
	// (6 GPUs evicted); evicting the big job (one victim, same priority) would cost 8.
	var got []string
	for _, v := range d.Victims {
		got = append(got, v.ID.Kind+":"+v.Name)
	}
	if want := []string{"reservation:small-a", "reservation:small-b", "unit:notebook"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("victims %v, want %v (%s)", got, want, js)
	}
	status, id, _, err := inv.PreemptReserve(urgent)
	if err != nil || status != gang.StatusPlaced || id == 0 {
		t.Fatalf("preempt reserve: %v %v %v", status, id, err)
	}
	if err := inv.Validate(); err != nil {
		t.Fatal(err)
	}
	// Nothing of lower priority is left that helps: unschedulable, with the reason.
	peer := job("peer", 1, 8, 10, "a1")
	defer peer.Close()
	status, js, err = inv.Preempt(peer)
	if err != nil || status != gang.StatusUnschedulable || !strings.Contains(js, `"message"`) {
		t.Fatalf("peer: %v %v %s", status, err, js)
	}
}

// Evictable units declared on a live inventory through the Go API (issue 22): they
// count as used (in milli-units or as quantities); Preempt evicts a unit whole for a
// gang of strictly higher priority and not for one of equal priority; RemoveEvictable
// gives back what it used; bad declarations are typed errors naming the field and
// change nothing.
func TestAddEvictable(t *testing.T) {
	inv, err := gang.ParseInventory([]byte(`{"topology": {"levels": ["rack"]},
		"nodes": [
			{"name": "a1", "labels": {"rack": "a"}, "capacity": {"nvidia.com/gpu": 8, "memory": "64Gi"}},
			{"name": "a2", "labels": {"rack": "a"}, "capacity": {"nvidia.com/gpu": 8}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer inv.Close()
	const gpu = "nvidia.com/gpu"
	free := func(node, res string) uint64 {
		t.Helper()
		n, err := inv.Available(node, res)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	err = inv.AddEvictable("batch", 5, []gang.EvictableAmount{
		{Node: "a1", Resource: gpu, Amount: gang.Millis(6000)},
		{Node: "a1", Resource: "memory", Amount: gang.Quantity("16Gi")},
		{Node: "a2", Resource: gpu, Amount: gang.Units(2)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if a1, a2, mem := free("a1", gpu), free("a2", gpu), free("a1", "memory"); a1 != 2000 || a2 != 6000 || mem != 48<<30*1000 {
		t.Fatalf("free after declaring: a1 %d a2 %d memory %d", a1, a2, mem)
	}
	for _, c := range []struct {
		id      string
		amounts []gang.EvictableAmount
		is      error
		field   string
	}{
		{"batch", nil, gang.ErrInvalidInventory, "evictable[batch].id"},
		{"", nil, gang.ErrInvalidInventory, "evictable[].id"},
		{"x", []gang.EvictableAmount{{Node: "z9", Resource: gpu, Amount: gang.Units(1)}}, gang.ErrUnknownNode, ""},
		{"x", []gang.EvictableAmount{{Node: "a2", Resource: gpu, Amount: gang.Quantity("two")}}, gang.ErrInvalidQuantity, "evictable[x].nodes[a2]." + gpu},
		{"x", []gang.EvictableAmount{{Node: "a2", Resource: gpu, Amount: gang.Units(1)}, {Node: "a\x00", Resource: gpu, Amount: gang.Units(1)}}, gang.ErrInvalidArgument, "amounts[1].node"},
	} {
		err := inv.AddEvictable(c.id, 1, c.amounts)
		var ge *gang.Error
		if !errors.Is(err, c.is) || !errors.As(err, &ge) || (c.field != "" && ge.Field != c.field) {
			t.Errorf("AddEvictable(%q, %v) = %v, want %v with field %q", c.id, c.amounts, err, c.is, c.field)
		}
	}
	if a1, a2 := free("a1", gpu), free("a2", gpu); a1 != 2000 || a2 != 6000 {
		t.Fatalf("a refused declaration changed the inventory: a1 %d a2 %d", a1, a2)
	}
	whole := func(name string, prio int) *gang.Gang {
		g, err := gang.ParseGang([]byte(fmt.Sprintf(`{"name": %q, "priority": %d, "roles": [{"name": "w",
			"count": 1, "requests": {"nvidia.com/gpu": 8}}]}`, name, prio)))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	peer := whole("peer", 5)
	// The same gang built with GangSpec.Priority 6.
	urgent, err := gang.NewGang(gang.GangSpec{Name: "urgent", Priority: 6, Roles: []gang.Role{{Name: "w", Count: 1,
		Requests: map[string]gang.Amount{gpu: gang.Units(8)}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	defer urgent.Close()
	if status, js, err := inv.Preempt(peer); err != nil || status != gang.StatusUnschedulable {
		t.Fatalf("equal priority: %v %v %s", status, err, js)
	}
	status, js, err := inv.Preempt(urgent)
	if err != nil || status != gang.StatusPlaced || !strings.Contains(js, `"id":{"kind":"unit","id":"batch"}`) {
		t.Fatalf("higher priority: %v %v %s", status, err, js)
	}
	if err := inv.RemoveEvictable("batch"); err != nil {
		t.Fatal(err)
	}
	if a1, a2 := free("a1", gpu), free("a2", gpu); a1 != 8000 || a2 != 8000 {
		t.Fatalf("free after withdrawing: a1 %d a2 %d", a1, a2)
	}
	var ge *gang.Error
	if err := inv.RemoveEvictable("batch"); !errors.Is(err, gang.ErrInvalidInventory) || !errors.As(err, &ge) || ge.Field != "evictable[batch]" {
		t.Fatalf("second RemoveEvictable: %v", err)
	}
	if err := inv.Validate(); err != nil {
		t.Fatal(err)
	}
	inv.Close()
	if err := inv.AddEvictable("late", 1, nil); !errors.Is(err, gang.ErrClosed) {
		t.Fatalf("on a closed inventory: %v", err)
	}
}
