package plugin

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
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

// benchHandle is the part of the scheduler's handle GeneratePlacements uses: the
// snapshot's node infos (no PodGroup states: nothing bound yet) and the nominator
// (nothing nominated).
type benchHandle struct {
	fwk.Handle
	lister benchLister
}

func (h *benchHandle) SnapshotSharedLister() fwk.SharedLister    { return h.lister }
func (h *benchHandle) NominatedPodsForNode(string) []fwk.PodInfo { return nil }
func (h *benchHandle) SharedInformerFactory() informers.SharedInformerFactory {
	return nil
}

type benchLister struct {
	fwk.SharedLister
	nodes benchNodes
}

func (l benchLister) NodeInfos() fwk.NodeInfoLister           { return l.nodes }
func (l benchLister) PodGroupStates() fwk.PodGroupStateLister { return benchStates{} }

type benchNodes struct {
	fwk.NodeInfoLister
	all    []fwk.NodeInfo
	byName map[string]fwk.NodeInfo
}

func (n benchNodes) List() ([]fwk.NodeInfo, error) { return n.all, nil }
func (n benchNodes) Get(name string) (fwk.NodeInfo, error) {
	if ni, ok := n.byName[name]; ok {
		return ni, nil
	}
	return nil, errNoState
}

type benchStates struct{ fwk.PodGroupStateLister }

func (benchStates) Get(string, string) (fwk.PodGroupState, error) { return nil, errNoState }

var errNoState = fmt.Errorf("no pod group state")

// BenchmarkGeneratePlacements is GangPlacement's whole share of a PodGroup cycle at
// 5,000 nodes, through the plugin's own entry point: the inventory sync after four
// nodes changed, the nominated pods' scan, the group's pods turned into a request,
// gang's answer, and the answer turned into the placement (its nodes picked out of the
// parent placement of all 5,000) and the plan.
func BenchmarkGeneratePlacements(b *testing.B) { benchmarkGeneratePlacements(b, 4) }

// BenchmarkGeneratePlacements1000 is the same for a group of 1,000 pods (upstream's
// 5000Nodes_*Gangs_*Pods_1000PerGroup workloads): gang packs it on 25 nodes of a rack.
func BenchmarkGeneratePlacements1000(b *testing.B) { benchmarkGeneratePlacements(b, 1000) }

func benchmarkGeneratePlacements(b *testing.B, size int) {
	nis, all := tasNodes(5000)
	byName := map[string]fwk.NodeInfo{}
	for _, ni := range all {
		byName[ni.Node().Name] = ni
	}
	pl, err := New(context.Background(), nil, &benchHandle{lister: benchLister{nodes: benchNodes{all: all, byName: byName}}})
	if err != nil {
		b.Fatal(err)
	}
	gp := pl.(*GangPlacement)
	gp.args.Levels = []string{"topology.kubernetes.io/zone", "topology.kubernetes.io/rack"}
	gp.inv = newInventoryState(gp.args.Levels)
	gp.noms = newNominations() // as with the scheduler's pod informer: nothing nominated
	var members []*v1.Pod
	for i := range size {
		members = append(members, st.MakePod().Namespace("ns").Name(fmt.Sprintf("m-%d", i)).UID(fmt.Sprintf("m-%d", i)).
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m", v1.ResourceMemory: "100Mi"}).Obj())
	}
	pg := st.MakePodGroup().Name("g").Namespace("ns").TopologyKey("topology.kubernetes.io/rack").MinCount(int32(size)).Obj()
	pgi := &pgInfo{name: "g", pg: pg, pods: members}
	parent := &fwk.Placement{Nodes: all}
	ctx := context.Background()
	if _, st := gp.GeneratePlacements(ctx, framework.NewCycleState(), pgi, parent); !st.IsSuccess() {
		b.Fatal(st)
	}
	b.ResetTimer()
	for i := range b.N {
		for k := range 4 {
			nis[(i*4+k)%len(nis)].AddPod(st.MakePod().Name(fmt.Sprintf("p-%d-%d", i, k)).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1m"}).Obj())
		}
		res, status := gp.GeneratePlacements(ctx, framework.NewCycleState(), pgi, parent)
		if !status.IsSuccess() || len(res.Placements) != 1 || len(res.Placements[0].Nodes) == 0 {
			b.Fatalf("GeneratePlacements: %v", status)
		}
	}
}

// BenchmarkSync is the inventory sync alone at 5,000 nodes after n nodes changed (a
// pod of 100m CPU and 100Mi added to each: three resources set per node, one cgo
// SetUsed call each). It sizes what batching SetUsed into one call could save: the
// TAS workloads change 1 to 25 nodes per cycle with GangPlacement (it packs a group's
// pods), a cycle after a large batch of other pods was bound changes more.
func BenchmarkSync(b *testing.B) {
	for _, n := range []int{4, 100, 1000} {
		b.Run(fmt.Sprintf("changed=%d", n), func(b *testing.B) {
			nis, all := tasNodes(5000)
			s := newInventoryState([]string{"topology.kubernetes.io/zone", "topology.kubernetes.io/rack"})
			defer s.close()
			if err := s.sync(all); err != nil {
				b.Fatal(err)
			}
			pod := st.MakePod().Name("p").Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m", v1.ResourceMemory: "100Mi"}).Obj()
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer() // the pods added are the scheduler's work, not the sync's
				for k := range n {
					nis[(i*n+k)%len(nis)].AddPod(pod)
				}
				b.StartTimer()
				if err := s.sync(all); err != nil {
					b.Fatal(err)
				}
				if s.updated != n {
					b.Fatalf("%d nodes updated, want %d", s.updated, n)
				}
			}
		})
	}
}
