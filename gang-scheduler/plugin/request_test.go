package plugin

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// pgInfo is the PodGroupInfo of a PodGroup (pg set) or of a composite (children set)
// and its queued pods.
type pgInfo struct {
	fwk.PodGroupInfo
	name     string
	pg       *schedulingv1beta1.PodGroup
	pods     []*v1.Pod
	children []fwk.PodGroupInfo
}

func (p *pgInfo) GetName() string                          { return p.name }
func (p *pgInfo) GetNamespace() string                     { return "ns" }
func (p *pgInfo) GetKey() string                           { return "ns/" + p.name }
func (p *pgInfo) GetPodGroup() *schedulingv1beta1.PodGroup { return p.pg }
func (p *pgInfo) GetCompositePodGroup() *schedulingv1alpha3.CompositePodGroup {
	if p.children == nil {
		return nil
	}
	return &schedulingv1alpha3.CompositePodGroup{}
}
func (p *pgInfo) GetUnscheduledPods() []*v1.Pod   { return p.pods }
func (p *pgInfo) GetChildren() []fwk.PodGroupInfo { return p.children }

// pods makes n pods named prefix-i requesting gpus GPUs each.
func pods(prefix string, n int, gpus string) []*v1.Pod {
	var out []*v1.Pod
	for i := range n {
		out = append(out, st.MakePod().Name(fmt.Sprintf("%s-%d", prefix, i)).UID(fmt.Sprintf("%s-%d", prefix, i)).
			Req(map[v1.ResourceName]string{"nvidia.com/gpu": gpus}).Obj())
	}
	return out
}

// A group's minimum becomes its role's MinCount when the group (or the composite's
// child) is one role; a child of several shapes is placed whole, since "any m of n" has
// no one split onto its roles; a child whose minimum is all its pods stays whole.
func TestMinCountOntoRoles(t *testing.T) {
	leader := &pgInfo{name: "leader", pods: pods("leader", 1, "1")}
	workers := &pgInfo{name: "workers", pods: pods("worker", 4, "8")}
	mixed := &pgInfo{name: "mixed", pods: append(pods("small", 2, "1"), pods("big", 2, "8")...)}
	job := &pgInfo{name: "job", children: []fwk.PodGroupInfo{leader, workers, mixed}}
	leaves := leavesOf(job)
	if len(leaves) != 3 {
		t.Fatalf("leaves %d, want 3", len(leaves))
	}
	// leader: 1 of 1; workers: 2 of 4; mixed: 3 of 4 (two shapes).
	spec, roleOf, err := buildGang(job, leaves, rackKey, "", nil, []int{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range spec.Roles {
		m := "all"
		if r.MinCount != nil {
			m = fmt.Sprint(*r.MinCount)
		}
		got[r.Name] = fmt.Sprintf("%d/%s", r.Count, m)
	}
	want := map[string]string{"leader": "1/all", "workers": "4/2", "mixed[0]": "2/all", "mixed[1]": "2/all"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("roles %v, want %v", got, want)
	}
	if roleOf[types.UID("worker-3")] != "workers" || roleOf[types.UID("big-1")] != "mixed[1]" {
		t.Errorf("roleOf %v", roleOf)
	}
	// A single PodGroup of one shape: its minimum; "all" (-1) leaves the role whole.
	spec, _, err = buildGang(workers, []fwk.PodGroupInfo{workers}, rackKey, "", nil, []int{3})
	if err != nil || spec.Roles[0].MinCount == nil || *spec.Roles[0].MinCount != 3 {
		t.Errorf("single group, minimum 3: %+v %v", spec.Roles, err)
	}
	spec, _, err = buildGang(workers, []fwk.PodGroupInfo{workers}, rackKey, "", nil, []int{-1})
	if err != nil || spec.Roles[0].MinCount != nil {
		t.Errorf("single group, all: %+v %v", spec.Roles, err)
	}
}
