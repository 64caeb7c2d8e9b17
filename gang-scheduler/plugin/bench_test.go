package plugin

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	gang "example.invalid/gang/gang-ffi/go"
)

// tasNodes is upstream's TAS perf cluster: n nodes of 4 CPUs, 32Gi, 110 pods, racks
// and zones of 100 nodes.
func tasNodes(n int) ([]*framework.NodeInfo, []fwk.NodeInfo) {
	nis := make([]*framework.NodeInfo, n)
	all := make([]fwk.NodeInfo, n)
	for i := range nis {
		node := st.MakeNode().Name(fmt.Sprintf("node-%d", i)).
			Label(v1.LabelHostname, fmt.Sprintf("node-%d", i)).
			Label("topology.kubernetes.io/zone", fmt.Sprintf("zone-%d", i/100)).
			Label("topology.kubernetes.io/rack", fmt.Sprintf("rack-%d", i/100)).
			Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "32Gi", v1.ResourcePods: "110"}).Obj()
		nis[i] = nodeInfo(node)
		all[i] = nis[i]
	}
	return nis, all
}

// BenchmarkCycle is GangPlacement's share of one PodGroup cycle at 5,000 nodes (the
// TAS workload's gang of four 100m pods): the inventory sync after four nodes changed,
// the request compiled and placed. The framework's own work is not in it.
func BenchmarkCycle(b *testing.B) {
	nis, all := tasNodes(5000)
	s := newInventoryState([]string{"topology.kubernetes.io/zone", "topology.kubernetes.io/rack"})
	defer s.close()
	if err := s.sync(all); err != nil {
		b.Fatal(err)
	}
	solver := gang.NewSolver()
	defer solver.Close()
	spec := gang.GangSpec{Name: "g", Required: "topology.kubernetes.io/rack", Roles: []gang.Role{{
		Name: "w", Count: 4, Requests: map[string]gang.Amount{"cpu": gang.Millis(100), "memory": gang.Quantity("100Mi"), "pods": gang.Units(1)}}}}
	b.ResetTimer()
	for i := range b.N {
		for k := range 4 {
			nis[(i*4+k)%len(nis)].AddPod(st.MakePod().Name(fmt.Sprintf("p-%d-%d", i, k)).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1m"}).Obj())
		}
		if err := s.sync(all); err != nil {
			b.Fatal(err)
		}
		g, err := gang.NewGang(spec)
		if err != nil {
			b.Fatal(err)
		}
		c, err := s.inv.Compile(g)
		if err != nil {
			b.Fatal(err)
		}
		out, err := solver.Place(s.inv, c)
		if err != nil || out.Status != gang.StatusPlaced {
			b.Fatalf("place: %v %v", err, out.Status)
		}
		_ = out.Placement.Assignments()
		out.Close()
		c.Close()
		g.Close()
	}
}
