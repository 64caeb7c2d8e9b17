package plugin

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	gang "example.invalid/gang/gang-ffi/go"
)

// nodeRecord is what the gang inventory holds for one node, and the snapshot
// generation it was taken from.
type nodeRecord struct {
	generation int64
	epoch      uint64
	labels     map[string]string
	taints     []gang.Taint
	cordoned   bool
	capacity   map[string]uint64 // milli-units
	used       map[string]uint64 // milli-units
}

// inventory keeps a gang.Inventory in step with the scheduler's snapshot: built once
// from the NodeInfos, then, every cycle, only the nodes whose generation changed are
// updated (SetUsed/SetCapacity for resources, remove and add again for labels, taints
// and cordoning), nodes gone are removed and new ones added. The snapshot's NodeInfos
// count assumed pods as requested, so assumed-but-not-bound pods count as used.
type inventory struct {
	levels []string
	inv    *gang.Inventory
	nodes  map[string]*nodeRecord
	epoch  uint64
	// last is the snapshot's node list as the last sync saw it and lastRecs the record
	// of each entry (nil: no node): the scheduler's snapshot keeps each node's NodeInfo
	// in place (the same pointer, its contents replaced when the node changes) and its
	// list in order while no node is added or removed, so a sync compares entries by
	// identity and generation, without looking names up.
	last     []*framework.NodeInfo
	lastRecs []*nodeRecord
	// nominated is, per node and resource (milli-units), the use of the pods nominated
	// there that the last cycle counted (nominate): it is on top of each record's used.
	nominated map[string]map[string]uint64
	// stats, for tests and logs: nodes updated by the last sync, and full builds.
	updated int
	builds  int
}

func newInventoryState(levels []string) *inventory {
	return &inventory{levels: slices.Clone(levels), nodes: map[string]*nodeRecord{}}
}

// ensureLevel adds level as the innermost level if it is not known; the inventory is
// then rebuilt at the next sync.
func (s *inventory) ensureLevel(level string) {
	if level == "" || slices.Contains(s.levels, level) {
		return
	}
	s.levels = append(s.levels, level)
	s.close()
}

func (s *inventory) close() {
	if s.inv != nil {
		s.inv.Close()
		s.inv = nil
	}
	s.nodes = map[string]*nodeRecord{}
	s.nominated = nil
	s.last, s.lastRecs = nil, nil
}

// millis converts a snapshot Resource into milli-units per gang resource name: cpu in
// millicores, memory and ephemeral storage in bytes, pods, and the scalar (extended,
// hugepages) resources in their units, as NodeResourcesFit compares them.
func millis(r fwk.Resource, pods int) map[string]uint64 {
	out := map[string]uint64{}
	put := func(name string, milli int64) {
		if milli > 0 {
			out[name] = uint64(milli)
		}
	}
	put(string(v1.ResourceCPU), r.GetMilliCPU())
	put(string(v1.ResourceMemory), r.GetMemory()*1000)
	put(string(v1.ResourceEphemeralStorage), r.GetEphemeralStorage()*1000)
	if pods >= 0 {
		put(string(v1.ResourcePods), int64(pods)*1000)
	}
	for name, v := range r.GetScalarResources() {
		put(string(name), v*1000)
	}
	return out
}

func recordOf(ni fwk.NodeInfo) *nodeRecord {
	node := ni.Node()
	rec := &nodeRecord{
		generation: ni.GetGeneration(),
		labels:     maps.Clone(node.Labels),
		cordoned:   node.Spec.Unschedulable,
		capacity:   millis(ni.GetAllocatable(), ni.GetAllocatable().GetAllowedPodNumber()),
		used:       millis(ni.GetRequested(), len(ni.GetPods())),
	}
	if rec.labels == nil {
		rec.labels = map[string]string{}
	}
	// Use of a resource the node does not have is nothing gang can count.
	for res := range rec.used {
		if _, ok := rec.capacity[res]; !ok {
			delete(rec.used, res)
		}
	}
	for _, t := range node.Spec.Taints {
		var e gang.Effect
		switch t.Effect {
		case v1.TaintEffectNoSchedule:
			e = gang.EffectNoSchedule
		case v1.TaintEffectNoExecute:
			e = gang.EffectNoExecute
		default:
			// PreferNoSchedule does not keep a pod off a node.
			continue
		}
		rec.taints = append(rec.taints, gang.Taint{Key: t.Key, Value: t.Value, Effect: e})
	}
	return rec
}

func amounts(m map[string]uint64) map[string]gang.Amount {
	out := make(map[string]gang.Amount, len(m))
	for k, v := range m {
		out[k] = gang.Millis(v)
	}
	return out
}

// gangNode is the node as gang holds it; extra (the nominated pods' use) is counted as
// used on top of the record's own, for the resources the node has.
func (r *nodeRecord) gangNode(name string, extra map[string]uint64) gang.Node {
	used := r.used
	if len(extra) > 0 {
		used = maps.Clone(r.used)
		for res, v := range extra {
			if _, ok := r.capacity[res]; ok {
				used[res] += v
			}
		}
	}
	return gang.Node{
		Name:          name,
		Labels:        r.labels,
		Capacity:      amounts(r.capacity),
		Used:          amounts(used),
		Taints:        r.taints,
		Unschedulable: r.cordoned,
	}
}

// usedNow is what gang holds as used of res on the node: the record's use plus the
// nominated pods' (0 for a resource the node does not have).
func (s *inventory) usedNow(name string, rec *nodeRecord, res string) uint64 {
	if _, ok := rec.capacity[res]; !ok {
		return 0
	}
	return rec.used[res] + s.nominated[name][res]
}

// sync brings the gang inventory in step with the snapshot's nodes.
func (s *inventory) sync(nodes []fwk.NodeInfo) error {
	s.epoch++
	s.updated = 0
	if s.inv == nil {
		gnodes := make([]gang.Node, 0, len(nodes))
		s.nodes = make(map[string]*nodeRecord, len(nodes))
		for _, ni := range nodes {
			if ni.Node() == nil {
				continue
			}
			rec := recordOf(ni)
			rec.epoch = s.epoch
			s.nodes[ni.Node().Name] = rec
			gnodes = append(gnodes, rec.gangNode(ni.Node().Name, nil))
		}
		s.nominated = nil
		inv, err := gang.NewInventory(s.levels, gnodes)
		if err != nil {
			s.nodes = map[string]*nodeRecord{}
			return fmt.Errorf("building gang's inventory from %d nodes: %w", len(gnodes), err)
		}
		s.inv = inv
		s.builds++
		s.updated = len(gnodes)
		s.remember(nodes)
		return nil
	}
	same := len(nodes) == len(s.last)
	seen := 0
	for i, ni := range nodes {
		if same {
			if p, ok := ni.(*framework.NodeInfo); !ok || p != s.last[i] {
				same = false
			} else if old := s.lastRecs[i]; old != nil && old.generation == p.GetGeneration() {
				old.epoch = s.epoch
				seen++
				continue
			}
		}
		node := ni.Node()
		if node == nil {
			continue
		}
		seen++
		old, ok := s.nodes[node.Name]
		if ok && old.generation == ni.GetGeneration() {
			old.epoch = s.epoch
			continue
		}
		rec := recordOf(ni)
		rec.epoch = s.epoch
		if err := s.update(node.Name, old, rec); err != nil {
			// Start again from the snapshot at the next cycle.
			s.close()
			return err
		}
		s.nodes[node.Name] = rec
		s.updated++
		if same {
			s.lastRecs[i] = rec
		}
	}
	if !same {
		s.remember(nodes)
	}
	if seen != len(s.nodes) {
		for name, rec := range s.nodes {
			if rec.epoch == s.epoch {
				continue
			}
			if _, err := s.inv.RemoveNode(name); err != nil {
				s.close()
				return fmt.Errorf("removing node %s from gang's inventory: %w", name, err)
			}
			delete(s.nodes, name)
			delete(s.nominated, name)
			s.updated++
		}
	}
	return nil
}

// remember keeps the snapshot's list as this sync saw it, with each entry's record.
func (s *inventory) remember(nodes []fwk.NodeInfo) {
	s.last = make([]*framework.NodeInfo, len(nodes))
	s.lastRecs = make([]*nodeRecord, len(nodes))
	for i, ni := range nodes {
		p, ok := ni.(*framework.NodeInfo)
		if !ok || p == nil || p.Node() == nil {
			continue
		}
		s.last[i] = p
		s.lastRecs[i] = s.nodes[p.Node().Name]
	}
}

// update applies one node's change (old is nil for a new node).
func (s *inventory) update(name string, old, rec *nodeRecord) error {
	extra := s.nominated[name]
	structural := old == nil || !maps.Equal(old.labels, rec.labels) ||
		!slices.Equal(old.taints, rec.taints) || old.cordoned != rec.cordoned
	if structural {
		if old != nil {
			if _, err := s.inv.RemoveNode(name); err != nil {
				return fmt.Errorf("removing node %s from gang's inventory: %w", name, err)
			}
		}
		if err := s.inv.AddNode(rec.gangNode(name, extra)); err != nil {
			return fmt.Errorf("adding node %s to gang's inventory: %w", name, err)
		}
		return nil
	}
	for res, v := range rec.capacity {
		if old.capacity[res] != v {
			if _, err := s.inv.SetCapacity(name, res, gang.Millis(v)); err != nil {
				return fmt.Errorf("node %s: %w", name, err)
			}
		}
	}
	for res := range old.capacity {
		if _, ok := rec.capacity[res]; !ok {
			if _, err := s.inv.SetCapacity(name, res, gang.Millis(0)); err != nil {
				return fmt.Errorf("node %s: %w", name, err)
			}
		}
	}
	for res, v := range rec.used {
		if old.used[res] != v {
			if _, err := s.inv.SetUsed(name, res, gang.Millis(v+extra[res])); err != nil {
				return fmt.Errorf("node %s: %w", name, err)
			}
		}
	}
	for res := range old.used {
		if _, ok := rec.used[res]; !ok {
			if _, err := s.inv.SetUsed(name, res, gang.Millis(extra[res])); err != nil {
				return fmt.Errorf("node %s: %w", name, err)
			}
		}
	}
	return nil
}

// nominate counts, on top of each node's own use, the use of the pods nominated to it
// (next, per node and resource in milli-units; nil for none), replacing what the last
// call counted: only the nodes and resources whose amount changed are set again.
func (s *inventory) nominate(next map[string]map[string]uint64) error {
	if len(next) == 0 && len(s.nominated) == 0 {
		return nil
	}
	prev := s.nominated
	s.nominated = next
	set := func(name string) error {
		rec := s.nodes[name]
		if rec == nil {
			return nil
		}
		for res := range rec.capacity {
			if prev[name][res] == next[name][res] {
				continue
			}
			if _, err := s.inv.SetUsed(name, res, gang.Millis(s.usedNow(name, rec, res))); err != nil {
				return fmt.Errorf("node %s: %w", name, err)
			}
		}
		return nil
	}
	for name := range next {
		if err := set(name); err != nil {
			s.close()
			return err
		}
	}
	for name := range prev {
		if _, ok := next[name]; ok {
			continue
		}
		if err := set(name); err != nil {
			s.close()
			return err
		}
	}
	return nil
}
