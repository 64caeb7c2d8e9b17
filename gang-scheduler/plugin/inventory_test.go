package plugin

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	gang "example.invalid/gang/gang-ffi/go"
)

const rackKey = "topology.example.com/rack"

func testNode(name, rack string) *v1.Node {
	return st.MakeNode().Name(name).Label(rackKey, rack).
		Capacity(map[v1.ResourceName]string{"nvidia.com/gpu": "8", v1.ResourceCPU: "4"}).Obj()
}

func nodeInfo(n *v1.Node, pods ...*v1.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(n)
	return ni
}

func gpuPod(name, node string, gpus string) *v1.Pod {
	return st.MakePod().Name(name).Node(node).Req(map[v1.ResourceName]string{"nvidia.com/gpu": gpus}).Obj()
}

func list(nis ...*framework.NodeInfo) []fwk.NodeInfo {
	out := make([]fwk.NodeInfo, len(nis))
	for i, ni := range nis {
		out[i] = ni
	}
	return out
}

func free(t *testing.T, s *inventory, node string) uint64 {
	t.Helper()
	a, err := s.inv.Available(node, "nvidia.com/gpu")
	if err != nil {
		t.Fatalf("Available(%s): %v", node, err)
	}
	return a / 1000
}

// The inventory is built once, then only the nodes whose generation changed are
// updated; pods on a node (bound or assumed: the snapshot does not tell them apart)
// count as used; nodes gone are removed; relabelled nodes move domain.
func TestInventoryFollowsTheSnapshot(t *testing.T) {
	s := newInventoryState([]string{rackKey})
	defer s.close()
	a1 := nodeInfo(testNode("a1", "a"), gpuPod("p", "a1", "6"))
	a2 := nodeInfo(testNode("a2", "a"))
	b1 := nodeInfo(testNode("b1", "b"))
	if err := s.sync(list(a1, a2, b1)); err != nil {
		t.Fatal(err)
	}
	if s.builds != 1 || s.updated != 3 || s.inv.Len() != 3 {
		t.Fatalf("first sync: builds %d updated %d len %d, want 1 3 3", s.builds, s.updated, s.inv.Len())
	}
	if got := free(t, s, "a1"); got != 2 {
		t.Errorf("a1 free GPUs %d, want 2", got)
	}

	if err := s.sync(list(a1, a2, b1)); err != nil {
		t.Fatal(err)
	}
	if s.updated != 0 || s.builds != 1 {
		t.Errorf("unchanged snapshot: updated %d builds %d, want 0 1", s.updated, s.builds)
	}

	a2.AddPod(gpuPod("q", "a2", "3"))
	if err := s.sync(list(a1, a2, b1)); err != nil {
		t.Fatal(err)
	}
	if s.updated != 1 || s.builds != 1 {
		t.Errorf("one pod added: updated %d builds %d, want 1 1", s.updated, s.builds)
	}
	if got := free(t, s, "a2"); got != 5 {
		t.Errorf("a2 free GPUs %d, want 5", got)
	}

	// b1 goes away; a2 moves to rack b.
	a2.SetNode(testNode("a2", "b"))
	if err := s.sync(list(a1, a2)); err != nil {
		t.Fatal(err)
	}
	if s.updated != 2 || s.inv.Len() != 2 || s.builds != 1 {
		t.Errorf("b1 removed, a2 relabelled: updated %d len %d builds %d, want 2 2 1", s.updated, s.inv.Len(), s.builds)
	}
	if err := s.inv.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	// Four 1-GPU members in one rack: rack a (a1: 2 free) cannot, rack b (a2: 5 free) can.
	g, err := gang.NewGang(gang.GangSpec{Name: "g", Required: rackKey, Roles: []gang.Role{{
		Name: "w", Count: 4, Requests: map[string]gang.Amount{"nvidia.com/gpu": gang.Units(1)}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	out, err := s.inv.Place(g)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if out.Status != gang.StatusPlaced || out.Placement.DomainPath() != "b" {
		t.Fatalf("placement: status %v, want placed in rack b", out.Status)
	}
	if got := out.Placement.NodeCounts(); got["a2"] != 4 {
		t.Errorf("node counts %v, want a2: 4", got)
	}
}

// A new topology level rebuilds the inventory once.
func TestNewLevelRebuilds(t *testing.T) {
	s := newInventoryState(nil)
	defer s.close()
	nodes := list(nodeInfo(testNode("a1", "a")))
	if err := s.sync(nodes); err != nil {
		t.Fatal(err)
	}
	s.ensureLevel(rackKey)
	s.ensureLevel(rackKey)
	if err := s.sync(nodes); err != nil {
		t.Fatal(err)
	}
	if s.builds != 2 || len(s.levels) != 1 {
		t.Errorf("builds %d levels %v, want 2 [rack]", s.builds, s.levels)
	}
}

// Pods with the same requests form one role; requests are counted as
// NodeResourcesFit counts them, plus one pod each.
func TestRolesFromPods(t *testing.T) {
	small := st.MakePod().Name("s").UID("s").Req(map[v1.ResourceName]string{v1.ResourceCPU: "500m", "nvidia.com/gpu": "1"}).Obj()
	small2 := st.MakePod().Name("s2").UID("s2").Req(map[v1.ResourceName]string{v1.ResourceCPU: "500m", "nvidia.com/gpu": "1"}).Obj()
	big := st.MakePod().Name("b").UID("b").Req(map[v1.ResourceName]string{"nvidia.com/gpu": "8"}).Obj()
	r1, sig1 := roleOf1(small, nil)
	_, sig2 := roleOf1(small2, nil)
	_, sig3 := roleOf1(big, map[string]string{rackKey: "a"})
	if sig1 != sig2 || sig1 == sig3 {
		t.Errorf("signatures %q %q %q: want the first two equal, the third different", sig1, sig2, sig3)
	}
	if got := r1.Requests[string(v1.ResourceCPU)].String(); got != "500m" {
		t.Errorf("cpu request %s, want 500m", got)
	}
	if got := r1.Requests[string(v1.ResourcePods)].String(); got != "1000m" {
		t.Errorf("pods request %s, want 1000m (one pod)", got)
	}
}
