// Package plugin is GangPlacement, a kube-scheduler (v1.37) plugin that asks gang's
// exact solver (through the gang-ffi Go package) where a PodGroup fits inside one
// topology domain, and steers the framework's own pod-by-pod pass onto that answer.
//
// How it fits the v1.37 PodGroup cycle (pkg/scheduler/schedule_one_podgroup.go):
//
//   - PlacementGenerate: the inventory is brought in step with the snapshot (only nodes
//     whose generation changed are updated), the PodGroup's pods become gang roles
//     (pods with equal requests, selector, required node affinity and tolerations form
//     one role; requests counted with k8s.io/component-helpers/resource.PodRequests, as
//     NodeResourcesFit counts them), the PodGroup's topology key is the required level
//     (PreferredTopologyAnnotation a preferred one), gang.minCount the role's minimum,
//     and the pods already bound pin the group to their domain. gang's placement is
//     returned as the one candidate Placement (its nodes), and its per-role, per-node
//     counts are kept in the PodGroup cycle state. When nothing fits, the cycle fails
//     with gang's diagnosis as the message: it becomes the PodGroup's
//     PodGroupInitiallyScheduled condition and the pods' events.
//   - PreFilter: each pod of the group may go only to the nodes where gang put a
//     member of its role that is not taken yet; Reserve takes one, Unreserve gives it
//     back (per Placement, in the placement cycle state). So the framework's filters,
//     scoring, Permit (GangScheduling) and binding all still run, on gang's answer.
//   - PlacementScore: gang's placement scores MaxScore (it is the only candidate when
//     GangPlacement replaces TopologyPlacementGenerator, as the example profile does).
//   - CompositePodGroup: the children's pods are the roles of one multi-role gang under
//     the composite's constraint; each child's own PlacementGenerate reuses that plan.
//     A child PodGroup of one role gets its gang.minCount as the role's minimum; a
//     PodGroup of several roles is placed whole (see buildGang).
//   - PodGroupPostFilter (preempt.go): when the group's cycle failed, gang chooses the
//     running work of lower priority to evict, whole PodGroups or single pods, and the
//     plugin evicts it through the API and nominates the group's pods.
//   - A node deleted after the snapshot (the node informer no longer has it) fails the
//     pods gang sent there in PreFilter or Reserve: the group is placed again. Deleted
//     after Reserve, while the group's pods wait at Permit, it makes Permit refuse the
//     group whole (this pod and the waiting ones); PreBind refuses to bind to it.
//   - Pods nominated to nodes (after preemption) of a priority at least the group's
//     count as used in gang's inventory, as the framework's filters count them.
//
// Limits (documented, not silent): a required node affinity with several terms (OR),
// the Gt/Lt operators, inter-pod (anti-)affinity, topology spread, volumes and DRA are
// not modelled by gang; the framework's filters still run on gang's nodes and reject
// the pod if one of them does not hold.
package plugin

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"

	gang "example.invalid/gang/gang-ffi/go"
)

// Name is the plugin's name in the registry and in profiles.
const Name = "GangPlacement"

const (
	planKey  fwk.StateKey = Name + "/plan"
	takenKey fwk.StateKey = Name + "/taken"
)

// GangPlacement is the plugin. One instance serves one profile; the scheduler calls
// its placement extension points from one goroutine, and a mutex guards the inventory
// all the same.
type GangPlacement struct {
	handle fwk.Handle
	args   Args

	mu     sync.Mutex
	inv    *inventory
	solver *gang.Solver

	// executor evicts preemption victims (made at the first preemption).
	executorOnce sync.Once
	executor     *preemption.Executor
	// nodes is the node informer's lister (nil without an informer factory): a node it
	// no longer has was deleted after the cycle's snapshot was taken.
	nodes corelisters.NodeLister
	// noms are the nodes pods are nominated to, from the pod informer (nil without an
	// informer factory: every node is asked about).
	noms *nominations
}

var (
	_ fwk.PlacementGeneratePlugin = &GangPlacement{}
	_ fwk.PlacementScorePlugin    = &GangPlacement{}
	_ fwk.PreFilterPlugin         = &GangPlacement{}
	_ fwk.ReservePlugin           = &GangPlacement{}
	_ fwk.PermitPlugin            = &GangPlacement{}
	_ fwk.PreBindPlugin           = &GangPlacement{}
	_ fwk.SignPlugin              = &GangPlacement{}
)

// New builds the plugin from its profile arguments (Args).
func New(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	args, err := decodeArgs(obj)
	if err != nil {
		return nil, err
	}
	s := gang.NewSolver()
	if err := s.SetLimits(args.Work, args.Timeout.Duration); err != nil {
		s.Close()
		return nil, fmt.Errorf("%s args: %w", Name, err)
	}
	pl := &GangPlacement{handle: h, args: args, inv: newInventoryState(args.Levels), solver: s}
	if h != nil && h.SharedInformerFactory() != nil {
		pl.nodes = h.SharedInformerFactory().Core().V1().Nodes().Lister()
		pl.noms = newNominations()
		if _, err := h.SharedInformerFactory().Core().V1().Pods().Informer().AddEventHandler(pl.noms.handler()); err != nil {
			s.Close()
			return nil, fmt.Errorf("%s: following pod nominations: %w", Name, err)
		}
	}
	return pl, nil
}

// gone reports whether node was deleted after the cycle's snapshot was taken: gang's
// plan (made on the snapshot) must not send a pod there.
func (pl *GangPlacement) gone(node string) bool {
	if pl.nodes == nil {
		return false
	}
	_, err := pl.nodes.Get(node)
	return apierrors.IsNotFound(err)
}

// Name returns the plugin's name.
func (pl *GangPlacement) Name() string { return Name }

// plan is gang's answer for one PodGroup cycle: the placement's name (its domain
// path), per role the nodes and member counts, and each pod's role. It is not changed
// once written.
type plan struct {
	name   string
	slots  map[string]map[string]int
	roleOf map[types.UID]string
	gate   *gate
}

// gate is what the group's pods brought through Permit in the cycle: the nodes they
// were reserved on, the pods (which wait there for the rest of the group), and why the
// group was refused, once it was.
type gate struct {
	mu      sync.Mutex
	pods    []types.UID
	nodes   sets.Set[string]
	refused string
}

func (p *plan) Clone() fwk.StateData { return p }

// taken counts, per placement, the members of each role already reserved per node.
type taken struct {
	mu sync.Mutex
	n  map[string]map[string]int
}

func (t *taken) Clone() fwk.StateData { return t }

func readPlan(s interface {
	Read(fwk.StateKey) (fwk.StateData, error)
}) *plan {
	if s == nil {
		return nil
	}
	d, err := s.Read(planKey)
	if err != nil {
		return nil
	}
	p, _ := d.(*plan)
	return p
}

// topologyOf returns the required key of a PodGroup or CompositePodGroup ("" if none)
// and the preferred key from PreferredTopologyAnnotation.
func topologyOf(pgi fwk.PodGroupInfo) (required, preferred string) {
	if pg := pgi.GetPodGroup(); pg != nil {
		if c := pg.Spec.SchedulingConstraints; c != nil && len(c.Topology) > 0 {
			required = c.Topology[0].Key
		}
		preferred = pg.Annotations[PreferredTopologyAnnotation]
	} else if cpg := pgi.GetCompositePodGroup(); cpg != nil {
		if c := cpg.Spec.SchedulingConstraints; c != nil && len(c.Topology) > 0 {
			required = c.Topology[0].Key
		}
		preferred = cpg.Annotations[PreferredTopologyAnnotation]
	}
	return required, preferred
}

// GeneratePlacements asks gang where the group fits and returns that one placement.
func (pl *GangPlacement) GeneratePlacements(ctx context.Context, state fwk.PodGroupCycleState, pgi fwk.PodGroupInfo, parent *fwk.Placement) (*fwk.GeneratePlacementsResult, *fwk.Status) {
	// A child of a composite group: the composite's plan already covers its pods.
	if pps := state.GetParentPlacementCycleState(); pps != nil && pgi.GetCompositePodGroup() == nil {
		if p := readPlan(pps.GetPodGroupSchedulingCycle()); p != nil {
			state.Write(planKey, p)
			return &fwk.GeneratePlacementsResult{Placements: []*fwk.Placement{parent}}, nil
		}
	}
	logger := klog.FromContext(ctx)

	pl.mu.Lock()
	defer pl.mu.Unlock()
	spec, roleOf, err := pl.request(pgi)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	g, err := gang.NewGang(spec)
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("gang request for %s: %w", pgi.GetKey(), err))
	}
	defer g.Close()
	c, err := pl.inv.inv.Compile(g)
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("gang request for %s: %w", pgi.GetKey(), err))
	}
	defer c.Close()
	out, err := pl.solver.Place(pl.inv.inv, c)
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("gang placement of %s: %w", pgi.GetKey(), err))
	}
	defer out.Close()
	logger.V(4).Info("gang answered", "podGroup", pgi.GetKey(), "status", out.Status, "nodesUpdated", pl.inv.updated)
	if out.Status != gang.StatusPlaced {
		return nil, fwk.NewStatus(fwk.Unschedulable, "gang: "+out.Diagnosis.Text())
	}

	p := &plan{name: out.Placement.DomainPath(), slots: map[string]map[string]int{}, roleOf: roleOf,
		gate: &gate{nodes: sets.New[string]()}}
	if p.name == "" {
		p.name = "gang"
	}
	placement := &fwk.Placement{Name: p.name}
	var used []string
	for _, a := range out.Placement.Assignments() {
		if p.slots[a.Role] == nil {
			p.slots[a.Role] = map[string]int{}
		}
		if _, ok := p.slots[a.Role][a.Node]; !ok && !slices.Contains(used, a.Node) {
			used = append(used, a.Node)
		}
		p.slots[a.Role][a.Node] += int(a.Count)
	}
	placement.Nodes = pl.placementNodes(used, parent)
	state.Write(planKey, p)
	return &fwk.GeneratePlacementsResult{Placements: []*fwk.Placement{placement}}, nil
}

// placementNodes returns the NodeInfos of the nodes gang used (in that order) that
// are in the parent placement. A root group's parent is the whole snapshot (as many
// nodes as gang's inventory, which follows it): its NodeInfos are looked up by name;
// otherwise the parent is scanned once for the few names.
func (pl *GangPlacement) placementNodes(used []string, parent *fwk.Placement) []fwk.NodeInfo {
	out := make([]fwk.NodeInfo, 0, len(used))
	if parent != nil && len(parent.Nodes) == pl.inv.inv.Len() {
		lister := pl.handle.SnapshotSharedLister().NodeInfos()
		for _, name := range used {
			if ni, err := lister.Get(name); err == nil && ni.Node() != nil {
				out = append(out, ni)
			}
		}
		if len(out) == len(used) {
			return out
		}
		out = out[:0]
	}
	if parent == nil {
		return out
	}
	want := make(map[string]int, len(used))
	for i, name := range used {
		want[name] = i
	}
	found := make([]fwk.NodeInfo, len(used))
	for _, ni := range parent.Nodes {
		if n := ni.Node(); n != nil {
			if i, ok := want[n.Name]; ok {
				found[i] = ni
			}
		}
	}
	for _, ni := range found {
		if ni != nil {
			out = append(out, ni)
		}
	}
	return out
}

// leavesOf returns the PodGroups whose pods the group places: the group itself, or
// the leaves of a composite group.
func leavesOf(pgi fwk.PodGroupInfo) []fwk.PodGroupInfo {
	if pgi.GetCompositePodGroup() == nil {
		return []fwk.PodGroupInfo{pgi}
	}
	var leaves []fwk.PodGroupInfo
	var walk func(fwk.PodGroupInfo)
	walk = func(g fwk.PodGroupInfo) {
		if g.GetCompositePodGroup() == nil {
			leaves = append(leaves, g)
			return
		}
		for _, c := range g.GetChildren() {
			walk(c)
		}
	}
	walk(pgi)
	return leaves
}

// request brings the inventory in step with the snapshot and turns the group's queued
// pods into gang's request (and each pod's role). pl.mu must be held.
func (pl *GangPlacement) request(pgi fwk.PodGroupInfo) (gang.GangSpec, map[types.UID]string, error) {
	required, preferred := topologyOf(pgi)
	leaves := leavesOf(pgi)
	pl.inv.ensureLevel(required)
	pl.inv.ensureLevel(preferred)
	all, err := pl.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return gang.GangSpec{}, nil, err
	}
	if err := pl.inv.sync(all); err != nil {
		return gang.GangSpec{}, nil, err
	}
	if err := pl.inv.nominate(pl.nominatedUse(all, leaves)); err != nil {
		return gang.GangSpec{}, nil, err
	}
	pin, err := pl.pinnedDomain(leaves, required)
	if err != nil {
		return gang.GangSpec{}, nil, err
	}
	return buildGang(pgi, leaves, required, preferred, pin, pl.minMembers(leaves))
}

// nominatedUse is, per node, the use of the pods nominated there (by preemption, this
// plugin's or DefaultPreemption's) that kube-scheduler's filters count against the
// group's pods (RunFilterPluginsWithNominatedPods): those of a priority at least the
// group's — its lowest pod priority, when its pods differ — other than the group's
// own. nil when there are none. Only the nodes the pod informer shows a nomination to
// are asked about (nominations).
func (pl *GangPlacement) nominatedUse(nodes []fwk.NodeInfo, leaves []fwk.PodGroupInfo) map[string]map[string]uint64 {
	own := map[types.UID]bool{}
	prio := int32(math.MaxInt32)
	for _, leaf := range leaves {
		for _, pod := range leaf.GetUnscheduledPods() {
			own[pod.UID] = true
			prio = min(prio, corev1helpers.PodPriority(pod))
		}
	}
	var names []string
	if pl.noms != nil {
		names = pl.noms.nodes()
	} else {
		for _, ni := range nodes {
			if node := ni.Node(); node != nil {
				names = append(names, node.Name)
			}
		}
	}
	var out map[string]map[string]uint64
	for _, name := range names {
		if pl.inv.nodes[name] == nil {
			continue // not a node of the snapshot
		}
		for _, pi := range pl.handle.NominatedPodsForNode(name) {
			pod := pi.GetPod()
			if own[pod.UID] || corev1helpers.PodPriority(pod) < prio {
				continue
			}
			if out == nil {
				out = map[string]map[string]uint64{}
			}
			add(out, name, podAmounts(pod))
		}
	}
	return out
}

// pinnedDomain returns the labels (levels down to the required one) of the domain the
// group's bound or assumed pods are in, or nil when none is bound.
func (pl *GangPlacement) pinnedDomain(leaves []fwk.PodGroupInfo, required string) (map[string]string, error) {
	if required == "" {
		return nil, nil
	}
	var pin map[string]string
	var from string
	for _, leaf := range leaves {
		st, err := pl.handle.SnapshotSharedLister().PodGroupStates().Get(leaf.GetNamespace(), leaf.GetName())
		if err != nil {
			continue
		}
		for _, pod := range st.ScheduledPods() {
			ni, err := pl.handle.SnapshotSharedLister().NodeInfos().Get(pod.Spec.NodeName)
			if err != nil || ni.Node() == nil {
				continue
			}
			labels := map[string]string{}
			for _, level := range pl.inv.levels {
				v, ok := ni.Node().Labels[level]
				if !ok {
					return nil, fmt.Errorf("pod %s of the group runs on node %s, which has no %s label", klog.KObj(pod), pod.Spec.NodeName, level)
				}
				labels[level] = v
				if level == required {
					break
				}
			}
			if pin == nil {
				pin, from = labels, pod.Spec.NodeName
				continue
			}
			for k, v := range labels {
				if pin[k] != v {
					return nil, fmt.Errorf("the group's pods run in two domains: node %s (%s=%s) and node %s (%s=%s)", from, k, pin[k], pod.Spec.NodeName, k, v)
				}
			}
		}
	}
	return pin, nil
}

// minMembers returns, per leaf PodGroup, the members its gang.minCount still needs
// (its pods already scheduled count; at least 1), 1 for a basic PodGroup, and -1
// ("all") for a leaf that is not a PodGroup.
func (pl *GangPlacement) minMembers(leaves []fwk.PodGroupInfo) []int {
	out := make([]int, len(leaves))
	for i, leaf := range leaves {
		pg := leaf.GetPodGroup()
		switch {
		case pg == nil:
			out[i] = -1
		case pg.Spec.SchedulingPolicy.Gang == nil:
			out[i] = 1
		default:
			need := int(pg.Spec.SchedulingPolicy.Gang.MinCount)
			if st, err := pl.handle.SnapshotSharedLister().PodGroupStates().Get(pg.Namespace, pg.Name); err == nil {
				need -= st.ScheduledPodsCount()
			}
			out[i] = max(need, 1)
		}
	}
	return out
}

// buildGang turns the queued pods into gang roles: per leaf PodGroup, pods with equal
// requests, selector, required node affinity and tolerations are one role. A leaf's
// minimum (minMembers) becomes its role's MinCount when the leaf is one role; a leaf
// of several roles whose minimum is below its pods is placed whole (gang's minimums
// are per role, and a group-level "any m of n" has no one split onto roles — all its
// members satisfy it). A composite's minGroupCount is not modelled: every child is
// placed (whole, or down to its own minimum).
func buildGang(pgi fwk.PodGroupInfo, leaves []fwk.PodGroupInfo, required, preferred string, pin map[string]string, minMembers []int) (gang.GangSpec, map[types.UID]string, error) {
	spec := gang.GangSpec{Name: pgi.GetNamespace() + "/" + pgi.GetName(), Required: required}
	if preferred != required {
		spec.Preferred = preferred
	}
	roleOf := map[types.UID]string{}
	for li, leaf := range leaves {
		index := map[string]int{}
		var members [][]types.UID
		first := len(spec.Roles)
		for _, pod := range leaf.GetUnscheduledPods() {
			r, sig := roleOf1(pod, pin)
			i, ok := index[sig]
			if !ok {
				i = len(members)
				index[sig] = i
				members = append(members, nil)
				spec.Roles = append(spec.Roles, r)
			}
			spec.Roles[first+i].Count++
			members[i] = append(members[i], pod.UID)
		}
		// Role names: the pod group's name, with an index when it has several shapes.
		for i, uids := range members {
			name := leaf.GetName()
			if len(members) > 1 {
				name = fmt.Sprintf("%s[%d]", name, i)
			}
			spec.Roles[first+i].Name = name
			for _, uid := range uids {
				roleOf[uid] = name
			}
		}
		if len(members) == 1 && li < len(minMembers) && minMembers[li] > 0 && uint32(minMembers[li]) < spec.Roles[first].Count {
			spec.Roles[first].MinCount = gang.Ptr(uint32(minMembers[li]))
		}
	}
	if len(spec.Roles) == 0 {
		return spec, nil, fmt.Errorf("pod group %s has no pods to place", pgi.GetKey())
	}
	return spec, roleOf, nil
}

// roleOf1 returns the gang role (without name and count) of one pod and its
// signature: pods with the same signature are members of one role.
func roleOf1(pod *v1.Pod, pin map[string]string) (gang.Role, string) {
	var sig strings.Builder
	r := gang.Role{Requests: map[string]gang.Amount{}, Selector: map[string]string{}}
	reqs := resource.PodRequests(pod, resource.PodResourcesOptions{})
	names := make([]string, 0, len(reqs))
	for name := range reqs {
		names = append(names, string(name))
	}
	sort.Strings(names)
	for _, name := range names {
		q := reqs[v1.ResourceName(name)]
		var a uint64
		if name == string(v1.ResourceCPU) {
			a = uint64(q.MilliValue())
		} else {
			a = uint64(q.Value()) * 1000
		}
		if q.Sign() <= 0 || a == 0 {
			continue
		}
		r.Requests[name] = gang.Millis(a)
		fmt.Fprintf(&sig, "r:%s=%d;", name, a)
	}
	r.Requests[string(v1.ResourcePods)] = gang.Units(1)
	for k, v := range pod.Spec.NodeSelector {
		r.Selector[k] = v
	}
	for k, v := range pin {
		r.Selector[k] = v
	}
	keys := make([]string, 0, len(r.Selector))
	for k := range r.Selector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&sig, "s:%s=%s;", k, r.Selector[k])
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		if len(terms) == 1 {
			for _, e := range terms[0].MatchExpressions {
				var op gang.SelectorOperator
				switch e.Operator {
				case v1.NodeSelectorOpIn:
					op = gang.SelectorIn
				case v1.NodeSelectorOpNotIn:
					op = gang.SelectorNotIn
				case v1.NodeSelectorOpExists:
					op = gang.SelectorExists
				case v1.NodeSelectorOpDoesNotExist:
					op = gang.SelectorDoesNotExist
				default:
					continue // Gt, Lt: left to the NodeAffinity filter
				}
				r.MatchExpressions = append(r.MatchExpressions, gang.Requirement{Key: e.Key, Operator: op, Values: e.Values})
				fmt.Fprintf(&sig, "a:%s%s%v;", e.Key, e.Operator, e.Values)
			}
		}
	}
	for _, t := range pod.Spec.Tolerations {
		tol := gang.Toleration{Key: t.Key, Value: t.Value, Operator: gang.TolerationEqual}
		if t.Operator == v1.TolerationOpExists {
			tol.Operator = gang.TolerationExists
		}
		switch t.Effect {
		case v1.TaintEffectNoSchedule:
			tol.Effect = gang.EffectNoSchedule
		case v1.TaintEffectNoExecute:
			tol.Effect = gang.EffectNoExecute
		case v1.TaintEffectPreferNoSchedule:
			tol.Effect = gang.EffectPreferNoSchedule
		default:
			tol.Effect = gang.EffectAny
		}
		r.Tolerations = append(r.Tolerations, tol)
		fmt.Fprintf(&sig, "t:%s%s%s:%s;", t.Key, t.Operator, t.Value, t.Effect)
	}
	return r, sig.String()
}

// ScorePlacement gives gang's placement MaxScore and any other candidate MinScore.
func (pl *GangPlacement) ScorePlacement(_ context.Context, state fwk.PlacementCycleState, _ fwk.PodGroupInfo, a *fwk.PodGroupAssignments) (int64, *fwk.Status) {
	if p := readPlan(state.GetPodGroupSchedulingCycle()); p != nil && a.Placement != nil && a.Placement.Name == p.name {
		return fwk.MaxScore, nil
	}
	return fwk.MinScore, nil
}

// PlacementScoreExtensions returns nil: scores are already in range.
func (pl *GangPlacement) PlacementScoreExtensions() fwk.PlacementScoreExtensions { return nil }

// planFor returns the plan and the placement's taken counts for a pod in a PodGroup
// cycle (nil, nil outside one or without a plan).
func planFor(cs fwk.CycleState) (*plan, *taken) {
	if cs == nil || !cs.IsPodGroupSchedulingCycle() {
		return nil, nil
	}
	p := readPlan(cs.GetPodGroupSchedulingCycle())
	pcs := cs.GetPlacementCycleState()
	if p == nil || pcs == nil {
		return nil, nil
	}
	if d, err := pcs.Read(takenKey); err == nil {
		if t, ok := d.(*taken); ok {
			return p, t
		}
	}
	t := &taken{n: map[string]map[string]int{}}
	pcs.Write(takenKey, t)
	return p, t
}

// PreFilter keeps a pod of a placed group to the nodes where gang put a member of its
// role that no other pod has taken yet.
func (pl *GangPlacement) PreFilter(_ context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	p, t := planFor(cs)
	if p == nil {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	role, ok := p.roleOf[pod.UID]
	if !ok {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "gang's placement of the group has no member for this pod")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	names := sets.New[string]()
	var deleted []string
	for node, n := range p.slots[role] {
		if n > t.n[role][node] {
			if pl.gone(node) {
				deleted = append(deleted, node)
				continue
			}
			names.Insert(node)
		}
	}
	if names.Len() == 0 {
		if len(deleted) > 0 {
			sort.Strings(deleted)
			return nil, fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("gang's placement of the group used node %s, deleted during the cycle: the group is placed again", strings.Join(deleted, ", ")))
		}
		return nil, fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("gang placed every member of role %s it could", role))
	}
	return &fwk.PreFilterResult{NodeNames: names}, nil
}

// PreFilterExtensions returns nil.
func (pl *GangPlacement) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Reserve takes the pod's member on nodeName in the current placement.
func (pl *GangPlacement) Reserve(_ context.Context, cs fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	p, t := planFor(cs)
	if p == nil {
		return nil
	}
	role, ok := p.roleOf[pod.UID]
	if !ok {
		return nil
	}
	if pl.gone(nodeName) {
		return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("node %s was deleted during the cycle: the group is placed again", nodeName))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n[role] == nil {
		t.n[role] = map[string]int{}
	}
	t.n[role][nodeName]++
	return nil
}

// Unreserve gives the pod's member on nodeName back.
func (pl *GangPlacement) Unreserve(_ context.Context, cs fwk.CycleState, pod *v1.Pod, nodeName string) {
	p, t := planFor(cs)
	if p == nil {
		return
	}
	role, ok := p.roleOf[pod.UID]
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n[role][nodeName] > 0 {
		t.n[role][nodeName]--
	}
}

// planAfterCycle returns the plan of the group a pod was placed with, after the
// PodGroup cycle (Permit, PreBind: the pod's own cycle state no longer marks a PodGroup
// cycle, its placement's state still holds the plan), or nil.
func planAfterCycle(cs fwk.CycleState) *plan {
	if cs == nil {
		return nil
	}
	pcs := cs.GetPlacementCycleState()
	if pcs == nil {
		return nil
	}
	return readPlan(pcs.GetPodGroupSchedulingCycle())
}

// Permit refuses the group whole when a node gang placed one of its pods on was
// deleted after the cycle's snapshot: each pod of the group checks the nodes of every
// pod of the group that reached Permit before it (they wait there, in GangScheduling's
// Permit, for the rest of the group), and if one is gone this pod and every waiting pod
// of the group are rejected — none binds, and the group is placed again. The check has
// to run before GangScheduling's Permit, which lets the waiting pods go when the last
// pod arrives: the example profile enables GangPlacement at permit for that (a plugin
// enabled at an extension point runs before those enabled only by multiPoint).
func (pl *GangPlacement) Permit(_ context.Context, cs fwk.CycleState, pod *v1.Pod, nodeName string) (*fwk.Status, time.Duration) {
	p := planAfterCycle(cs)
	if p == nil || p.gate == nil {
		return nil, 0
	}
	if _, ok := p.roleOf[pod.UID]; !ok {
		return nil, 0
	}
	g := p.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.refused != "" {
		return fwk.NewStatus(fwk.Unschedulable, g.refused), 0
	}
	g.nodes.Insert(nodeName)
	var deleted []string
	for node := range g.nodes {
		if pl.gone(node) {
			deleted = append(deleted, node)
		}
	}
	if len(deleted) == 0 {
		g.pods = append(g.pods, pod.UID)
		return nil, 0
	}
	sort.Strings(deleted)
	g.refused = fmt.Sprintf("gang's placement of the group used node %s, deleted before the group was bound: the group is placed again", strings.Join(deleted, ", "))
	if pl.handle != nil {
		for _, uid := range g.pods {
			if wp := pl.handle.GetWaitingPod(uid); wp != nil {
				wp.Reject(Name, g.refused)
			}
		}
	}
	return fwk.NewStatus(fwk.Unschedulable, g.refused), 0
}

// PreBindPreFlight says PreBind has work for the pods gang placed.
func (pl *GangPlacement) PreBindPreFlight(_ context.Context, cs fwk.CycleState, _ *v1.Pod, _ string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	if planAfterCycle(cs) == nil {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	return nil, nil
}

// PreBind refuses to bind a pod gang placed to a node deleted since: the pod is not
// bound there and goes back to the queue. (Once Permit has let the group go, its pods
// bind one by one through the API; those already bound stay, as pods of a failed node
// would, and the pod sent back is placed in their domain.)
func (pl *GangPlacement) PreBind(_ context.Context, cs fwk.CycleState, _ *v1.Pod, nodeName string) *fwk.Status {
	if planAfterCycle(cs) != nil && pl.gone(nodeName) {
		return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("node %s was deleted before the pod was bound", nodeName))
	}
	return nil
}

// SignPod refuses to sign pods of a pod group (their PreFilter answer depends on the
// group's placement, so no result may be reused for another pod) and signs the others
// with nothing (GangPlacement does not look at them).
func (pl *GangPlacement) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	if pod.Spec.SchedulingGroup != nil {
		return nil, fwk.NewStatus(fwk.Unschedulable, "pods of a pod group are placed by gang")
	}
	return nil, nil
}
