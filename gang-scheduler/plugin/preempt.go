package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"

	gang "example.invalid/gang/gang-ffi/go"
)

var _ fwk.PodGroupPostFilterPlugin = &GangPlacement{}

// victim is running work gang may evict, whole: the scheduled pods of one PodGroup
// (or of one composite root), or one pod outside any group.
type victim struct {
	id       string
	priority int32
	pods     []*v1.Pod
	// amounts per node and resource, in milli-units.
	amounts map[string]map[string]uint64
}

// podAmounts is what one pod uses, in gang's units (as roleOf1 counts requests), with
// the one pod it takes of a node's "pods" capacity.
func podAmounts(pod *v1.Pod) map[string]uint64 {
	out := map[string]uint64{string(v1.ResourcePods): 1000}
	for name, q := range resource.PodRequests(pod, resource.PodResourcesOptions{}) {
		if q.Sign() <= 0 {
			continue
		}
		if name == v1.ResourceCPU {
			out[string(name)] = uint64(q.MilliValue())
		} else {
			out[string(name)] = uint64(q.Value()) * 1000
		}
	}
	return out
}

// victimKey is the victim a running pod belongs to: its PodGroup's root (the
// composite at the top of its hierarchy, if any), or the pod alone when it is in no
// group or its PodGroup says `disruptionMode: {single: {}}`. Pods of one PodGroup are
// evicted together unless the PodGroup says they may be disrupted one by one: a gang's
// survivors hold capacity and do no work.
func (pl *GangPlacement) victimKey(pod *v1.Pod) string {
	if pod.Spec.SchedulingGroup == nil || pod.Spec.SchedulingGroup.PodGroupName == nil {
		return "pod:" + pod.Namespace + "/" + pod.Name
	}
	name := *pod.Spec.SchedulingGroup.PodGroupName
	pgs, cpgs := pl.handle.SnapshotSharedLister().PodGroups(), pl.handle.SnapshotSharedLister().CompositePodGroups()
	if pgs == nil {
		return "podgroup:" + pod.Namespace + "/" + name
	}
	if pg, err := pgs.Get(pod.Namespace, name); err == nil && pg != nil &&
		pg.Spec.DisruptionMode != nil && pg.Spec.DisruptionMode.Single != nil {
		return "pod:" + pod.Namespace + "/" + pod.Name
	}
	key := "podgroup:" + pod.Namespace + "/" + name
	if cpgs != nil {
		preemption.TraverseHierarchyUp(pod.Namespace, fwk.PodGroupKey(pod.Namespace, name), pgs, cpgs,
			func(k fwk.EntityKey, _ *schedulingv1beta1.PodGroup, cpg *schedulingv1alpha3.CompositePodGroup) bool {
				if cpg != nil {
					key = "compositepodgroup:" + pod.Namespace + "/" + k.Name
				}
				return false
			})
	}
	return key
}

// victims collects the running pods of priority lower than the preemptor's as gang's
// evictable units (by victimKey), and the pods already being deleted (which count as
// gone: their eviction is under way).
func (pl *GangPlacement) victims(nodes []fwk.NodeInfo, preemptor int32) (map[string]*victim, map[string]map[string]uint64) {
	units := map[string]*victim{}
	gone := map[string]map[string]uint64{}
	pgs, cpgs := pl.handle.SnapshotSharedLister().PodGroups(), pl.handle.SnapshotSharedLister().CompositePodGroups()
	for _, ni := range nodes {
		node := ni.Node()
		if node == nil {
			continue
		}
		for _, pi := range ni.GetPods() {
			pod := pi.GetPod()
			prio := preemption.GetPodPriority(pod, pgs, cpgs)
			if prio >= preemptor {
				continue
			}
			amounts := podAmounts(pod)
			if pod.DeletionTimestamp != nil {
				add(gone, node.Name, amounts)
				continue
			}
			key := pl.victimKey(pod)
			u := units[key]
			if u == nil {
				u = &victim{id: key, priority: prio, amounts: map[string]map[string]uint64{}}
				units[key] = u
			}
			u.pods = append(u.pods, pod)
			add(u.amounts, node.Name, amounts)
		}
	}
	return units, gone
}

func add(to map[string]map[string]uint64, node string, amounts map[string]uint64) {
	if to[node] == nil {
		to[node] = map[string]uint64{}
	}
	for r, v := range amounts {
		to[node][r] += v
	}
}

// preemptionAnswer is the part of gang's preemption document the plugin reads.
type preemptionAnswer struct {
	Message string `json:"message"`
	Victims []struct {
		Name string `json:"name"`
	} `json:"victims"`
	SearchComplete bool `json:"search_complete"`
	Placement      struct {
		Assignments []struct {
			Role  string `json:"role"`
			Node  string `json:"node"`
			Count int    `json:"count"`
		} `json:"assignments"`
	} `json:"placement"`
}

// preemptorOf returns the group's priority and whether it may preempt (the PodGroup's
// preemptionPolicy, or, when it has none, any of its pods' preemptionPolicy: Never),
// as the native PodGroup preemption resolves them.
func preemptorOf(pgi fwk.PodGroupInfo) (int32, bool) {
	var prio int32
	var policy *schedulingv1beta1.PreemptionPolicy
	if cpg := pgi.GetCompositePodGroup(); cpg != nil {
		if cpg.Spec.Priority != nil {
			prio = *cpg.Spec.Priority
		}
		if p := cpg.Spec.PreemptionPolicy; p != nil {
			v := schedulingv1beta1.PreemptionPolicy(*p)
			policy = &v
		}
	} else if pg := pgi.GetPodGroup(); pg != nil {
		if pg.Spec.Priority != nil {
			prio = *pg.Spec.Priority
		}
		policy = pg.Spec.PreemptionPolicy
	}
	if policy != nil {
		return prio, *policy != schedulingv1beta1.PreemptNever
	}
	for _, leaf := range leavesOf(pgi) {
		for _, pod := range leaf.GetUnscheduledPods() {
			if p := pod.Spec.PreemptionPolicy; p != nil && *p == v1.PreemptNever {
				return prio, false
			}
		}
	}
	return prio, true
}

// PodGroupPostFilter runs when the group's cycle failed: it asks gang which running
// work of lower priority to evict so that the group fits in one domain (Inventory.Preempt:
// the lowest highest victim priority, then the fewest GPUs evicted, then the fewest
// victims, then gang's placement objective), evicts those pods through the API as
// kube-scheduler's DefaultPreemption does, and nominates each pod of the group to the
// node gang's plan gives it. The group is placed in a later cycle, once the victims
// are gone. When no eviction makes the group fit, the status is
// UnschedulableAndUnresolvable with gang's reason.
func (pl *GangPlacement) PodGroupPostFilter(ctx context.Context, _ fwk.PodGroupCycleState, pgi fwk.PodGroupInfo, _ fwk.PodGroupSchedulingFunc) (*fwk.PodGroupPostFilterResult, *fwk.Status) {
	logger := klog.FromContext(ctx)
	prio, may := preemptorOf(pgi)
	if !may {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "gang: the group's preemptionPolicy is Never: it evicts nothing")
	}

	pl.mu.Lock()
	defer pl.mu.Unlock()
	spec, roleOf, err := pl.request(pgi)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	spec.Priority = prio
	all, err := pl.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	units, gone := pl.victims(all, prio)
	if len(units) == 0 && len(gone) == 0 {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "gang: no running pod has a priority below the group's, so preemption cannot help")
	}
	answer, js, err := pl.preempt(spec, units, gone)
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("gang preemption for %s: %w", pgi.GetKey(), err))
	}
	if answer == nil {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "gang: no eviction of lower-priority pods makes the group fit: "+js)
	}

	// Evict the victims' pods, whole victims, through the API.
	var pods []*v1.Pod
	var names []string
	groups := 0
	for _, v := range answer.Victims {
		u := units[v.Name]
		if u == nil {
			return nil, fwk.AsStatus(fmt.Errorf("gang named victim %q, which the plugin did not declare", v.Name))
		}
		names = append(names, u.id)
		if !strings.HasPrefix(u.id, "pod:") {
			groups++
		}
		pods = append(pods, u.pods...)
	}
	if len(pods) > 0 {
		if st := pl.evict(ctx, pgi, pods, groups, names); !st.IsSuccess() {
			return nil, st
		}
	}

	// Nominate each pod of the group to a node of gang's plan for its role.
	slots := map[string]map[string]int{}
	for _, a := range answer.Placement.Assignments {
		if slots[a.Role] == nil {
			slots[a.Role] = map[string]int{}
		}
		slots[a.Role][a.Node] += a.Count
	}
	nominated := map[types.NamespacedName]*fwk.NominatingInfo{}
	for _, leaf := range leavesOf(pgi) {
		for _, pod := range leaf.GetUnscheduledPods() {
			role := roleOf[pod.UID]
			nodes := make([]string, 0, len(slots[role]))
			for n, k := range slots[role] {
				if k > 0 {
					nodes = append(nodes, n)
				}
			}
			if len(nodes) == 0 {
				continue // an elastic role's member gang did not place
			}
			sort.Strings(nodes)
			slots[role][nodes[0]]--
			nominated[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}] = &fwk.NominatingInfo{
				NominatingMode: fwk.ModeOverride, NominatedNodeName: nodes[0]}
		}
	}
	msg := fmt.Sprintf("gang: preempting %d pods (%s) so that the group fits", len(pods), strings.Join(names, ", "))
	if len(pods) == 0 {
		msg = "gang: the group fits once the pods being deleted are gone"
	}
	if !answer.SearchComplete {
		msg += " (the search ran out of work before proving this the least eviction)"
	}
	logger.V(2).Info("gang preemption", "podGroup", pgi.GetKey(), "victims", names, "pods", len(pods))
	return &fwk.PodGroupPostFilterResult{NominatingInfos: nominated}, fwk.NewStatus(fwk.Success, msg)
}

// preempt declares the victims on gang's inventory (their pods' use moved from each
// node's used amounts to evictable units; the pods being deleted taken off), asks
// gang, and puts the inventory back as it was. It returns gang's plan, or nil and
// gang's reason when no eviction makes the group fit. pl.mu must be held.
func (pl *GangPlacement) preempt(spec gang.GangSpec, units map[string]*victim, gone map[string]map[string]uint64) (_ *preemptionAnswer, reason string, err error) {
	inv := pl.inv
	// What comes off each node's used amounts: the victims' and the departing pods'.
	off := map[string]map[string]uint64{}
	for node, amounts := range gone {
		add(off, node, amounts)
	}
	for _, u := range units {
		for node, amounts := range u.amounts {
			add(off, node, amounts)
		}
	}
	var declared []string
	defer func() {
		// Put the inventory back; if that fails, build it again at the next cycle.
		undo := func() error {
			for _, id := range declared {
				if err := inv.inv.RemoveEvictable(id); err != nil {
					return err
				}
			}
			for node, amounts := range off {
				rec := inv.nodes[node]
				if rec == nil {
					continue
				}
				for r := range amounts {
					if _, ok := rec.capacity[r]; ok {
						if _, err := inv.inv.SetUsed(node, r, gang.Millis(inv.usedNow(node, rec, r))); err != nil {
							return err
						}
					}
				}
			}
			return nil
		}
		if inv.inv != nil && undo() != nil {
			inv.close()
		}
	}()
	for node, amounts := range off {
		rec := inv.nodes[node]
		if rec == nil {
			return nil, "", fmt.Errorf("node %s is not in gang's inventory", node)
		}
		for r, v := range amounts {
			if _, ok := rec.capacity[r]; !ok {
				continue
			}
			cur := inv.usedNow(node, rec, r)
			if _, err := inv.inv.SetUsed(node, r, gang.Millis(cur-min(v, cur))); err != nil {
				return nil, "", err
			}
		}
	}
	ids := make([]string, 0, len(units))
	for id := range units {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		u := units[id]
		var amounts []gang.EvictableAmount
		for node, res := range u.amounts {
			for r, v := range res {
				if _, ok := inv.nodes[node].capacity[r]; ok {
					amounts = append(amounts, gang.EvictableAmount{Node: node, Resource: r, Amount: gang.Millis(v)})
				}
			}
		}
		if err := inv.inv.AddEvictable(id, u.priority, amounts); err != nil {
			return nil, "", err
		}
		declared = append(declared, id)
	}
	g, err := gang.NewGang(spec)
	if err != nil {
		return nil, "", err
	}
	defer g.Close()
	status, js, err := inv.inv.Preempt(g)
	if err != nil {
		return nil, "", err
	}
	var doc preemptionAnswer
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		return nil, "", fmt.Errorf("reading gang's preemption answer: %w", err)
	}
	if status != gang.StatusPlaced {
		return nil, doc.Message, nil
	}
	return &doc, "", nil
}

// evict deletes the victims' pods as kube-scheduler's DefaultPreemption does (the
// upstream executor's PreemptPod: a pod waiting in Permit is rejected in memory, a pod
// in PreBind cancelled, any other pod given the DisruptionTarget condition and
// deleted, with a Preempted event).
func (pl *GangPlacement) evict(ctx context.Context, pgi fwk.PodGroupInfo, pods []*v1.Pod, groups int, names []string) *fwk.Status {
	pl.executorOnce.Do(func() {
		pl.executor = preemption.NewExecutor(pl.handle, feature.Features{})
	})
	c := &candidate{victims: &extenderv1.Victims{Pods: pods}, name: strings.Join(names, ","), groups: groups}
	var who preemption.ExecutorPreemptor
	if cpg := pgi.GetCompositePodGroup(); cpg != nil {
		who = &preemptor{uid: cpg.UID, name: cpg.Name, namespace: cpg.Namespace, obj: cpg, kind: fwk.CompositePodGroupKeyType}
	} else {
		pg := pgi.GetPodGroup()
		who = &preemptor{uid: pg.UID, name: pg.Name, namespace: pg.Namespace, obj: pg, kind: fwk.PodGroupKeyType}
	}
	p := who.(*preemptor)
	for _, leaf := range leavesOf(pgi) {
		p.pods = append(p.pods, leaf.GetUnscheduledPods()...)
	}
	p.priority, _ = preemptorOf(pgi)
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if _, err := pl.executor.PreemptPod(ctx, c, who, pod, Name); err != nil {
			return fwk.AsStatus(fmt.Errorf("evicting pod %s: %w", klog.KObj(pod), err))
		}
	}
	return nil
}

// candidate is the upstream executor's view of gang's plan.
type candidate struct {
	victims *extenderv1.Victims
	name    string
	groups  int
}

func (c *candidate) Victims() *extenderv1.Victims { return c.victims }
func (c *candidate) Name() string                 { return c.name }
func (c *candidate) NumPodGroupDisruptions() int  { return c.groups }

// preemptor is the upstream executor's view of the group that preempts.
type preemptor struct {
	uid             types.UID
	name, namespace string
	obj             runtime.Object
	kind            fwk.EntityKeyType
	pods            []*v1.Pod
	priority        int32
}

func (p *preemptor) UID() types.UID       { return p.uid }
func (p *preemptor) GetName() string      { return p.name }
func (p *preemptor) GetNamespace() string { return p.namespace }
func (p *preemptor) Obj() runtime.Object  { return p.obj }
func (p *preemptor) Priority() int32      { return p.priority }
func (p *preemptor) Type() string         { return string(p.kind) }
func (p *preemptor) SchedulerName() string {
	if len(p.pods) == 0 {
		return ""
	}
	return p.pods[0].Spec.SchedulerName
}
func (p *preemptor) Pods() map[string]*v1.Pod {
	m := make(map[string]*v1.Pod, len(p.pods))
	for _, pod := range p.pods {
		m[pod.Name] = pod
	}
	return m
}
