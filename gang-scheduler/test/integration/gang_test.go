package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	configtesting "k8s.io/kubernetes/pkg/scheduler/apis/config/testing"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	testutils "k8s.io/kubernetes/test/integration/util"
	"k8s.io/utils/ptr"

	"example.invalid/gang/gang-scheduler/plugin"
)

const (
	block         = "topology.example.com/block"
	rack          = "topology.example.com/rack"
	gpu           = v1.ResourceName("nvidia.com/gpu")
	schedulerName = "gang-scheduler" // the example profile's
	priority      = 100
	// conditionType and reasonUnschedulable are the PodGroup condition the scheduler sets.
	conditionType       = "PodGroupInitiallyScheduled"
	reasonUnschedulable = "Unschedulable"
)

// env is one API server, etcd namespace and gang-scheduler.
type env struct {
	t   *testing.T
	ctx context.Context
	tc  *testutils.TestContext
	ns  string
}

// start brings up the API server and the gang-scheduler with the example profile (or,
// native, the default profile of kube-scheduler v1.37 under the same scheduler name).
func start(t *testing.T, composite, native bool) *env {
	t.Helper()
	return startWith(t, composite, native, frameworkruntime.Registry{plugin.Name: plugin.New})
}

// startWith is start with the out-of-tree plugins of registry.
func startWith(t *testing.T, composite, native bool, registry frameworkruntime.Registry) *env {
	t.Helper()
	featuregatetesting.SetFeatureGatesDuringTest(t, utilfeature.DefaultFeatureGate, featuregatetesting.FeatureOverrides{
		features.GenericWorkload:                 true,
		features.TopologyAwareWorkloadScheduling: true,
		features.CompositePodGroup:               composite,
	})
	cfg, err := options.LoadConfigFromFile(klog.Background(), filepath.Join("..", "..", "examples", "gang-scheduler-config.yaml"))
	if err != nil {
		t.Fatalf("loading the example profile: %v", err)
	}
	if native {
		cfg = configtesting.V1ToInternalWithDefaults(t, configv1.KubeSchedulerConfiguration{
			Profiles: []configv1.KubeSchedulerProfile{{SchedulerName: ptr.To(schedulerName)}},
		})
	}
	tc := testutils.InitTestAPIServer(t, "gang", nil)
	tc = testutils.InitTestSchedulerWithOptions(t, tc, 0,
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithFrameworkOutOfTreeRegistry(registry),
		scheduler.WithPodInitialBackoffSeconds(0),
		scheduler.WithPodMaxBackoffSeconds(0))
	testutils.SyncSchedulerInformerFactory(tc)
	go tc.Scheduler.Run(tc.SchedulerCtx)
	t.Cleanup(tc.SchedulerCloseFn)
	e := &env{t: t, ctx: tc.Ctx, tc: tc, ns: tc.NS.Name}
	wl := st.MakeWorkload().Name("workload").Namespace(e.ns).
		PodGroupTemplate(st.MakePodGroupTemplate().Name("t1").MinCount(1).Obj()).Obj()
	if _, err := tc.ClientSet.SchedulingV1beta1().Workloads(e.ns).Create(e.ctx, wl, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the workload: %v", err)
	}
	return e
}

// gpuNode is a node of the guides: 8 GPUs, 96 CPUs, 1Ti, 110 pods.
func gpuNode(name, b, r string) *v1.Node { return gpuNodeN(name, b, r, 8) }

func gpuNodeN(name, b, r string, gpus int) *v1.Node {
	return st.MakeNode().Name(name).Label(block, b).Label(rack, r).Label(v1.LabelHostname, name).
		Capacity(map[v1.ResourceName]string{gpu: fmt.Sprint(gpus), v1.ResourceCPU: "96", v1.ResourceMemory: "1Ti", v1.ResourcePods: "110"}).Obj()
}

func (e *env) nodes(nodes ...*v1.Node) {
	e.t.Helper()
	for _, n := range nodes {
		if _, err := e.tc.ClientSet.CoreV1().Nodes().Create(e.ctx, n, metav1.CreateOptions{}); err != nil {
			e.t.Fatalf("creating node %s: %v", n.Name, err)
		}
	}
	if err := testutils.WaitForNodesInCache(e.ctx, e.tc.Scheduler, len(nodes)); err != nil {
		e.t.Fatalf("waiting for the nodes in the scheduler's cache: %v", err)
	}
}

// used binds a pod outside any group using gpus GPUs of node (other work).
func (e *env) used(node string, gpus int) {
	e.t.Helper()
	p := st.MakePod().Namespace(e.ns).Name("used-" + node).Node(node).Priority(priority).
		Req(map[v1.ResourceName]string{gpu: fmt.Sprint(gpus)}).Container("image").ZeroTerminationGracePeriod().Obj()
	e.create(p)
}

func (e *env) create(pods ...*v1.Pod) {
	e.t.Helper()
	for _, p := range pods {
		p.Namespace = e.ns
		// Extended resources (GPUs) need limits equal to requests.
		for i := range p.Spec.Containers {
			c := &p.Spec.Containers[i]
			if q, ok := c.Resources.Requests[gpu]; ok {
				if c.Resources.Limits == nil {
					c.Resources.Limits = v1.ResourceList{}
				}
				c.Resources.Limits[gpu] = q
			}
		}
		if _, err := e.tc.ClientSet.CoreV1().Pods(e.ns).Create(e.ctx, p, metav1.CreateOptions{}); err != nil {
			e.t.Fatalf("creating pod %s: %v", p.Name, err)
		}
	}
}

// podGroup creates a gang PodGroup whose pods must share one domain of key.
func (e *env) podGroup(name, key string, minCount int32, annotations map[string]string) {
	e.t.Helper()
	pg := st.MakePodGroup().Name(name).Namespace(e.ns).WorkloadRef("t1", "workload").
		TopologyKey(key).MinCount(minCount).Priority(priority).Obj()
	pg.Annotations = annotations
	if _, err := e.tc.ClientSet.SchedulingV1beta1().PodGroups(e.ns).Create(e.ctx, pg, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("creating PodGroup %s: %v", name, err)
	}
}

// members makes n pods of group pg requesting gpus GPUs each, named prefix-0….
func members(pg, prefix string, n, gpus int) []*v1.Pod {
	var pods []*v1.Pod
	for i := range n {
		pods = append(pods, st.MakePod().Name(fmt.Sprintf("%s-%d", prefix, i)).SchedulerName(schedulerName).
			Req(map[v1.ResourceName]string{gpu: fmt.Sprint(gpus), v1.ResourceCPU: "1"}).Container("image").
			PodGroupName(pg).Priority(priority).ZeroTerminationGracePeriod().Obj())
	}
	return pods
}

// bindings returns pod name → node name ("" when not bound) for the pods named prefix-*.
func (e *env) bindings(prefix string) map[string]string {
	e.t.Helper()
	list, err := e.tc.ClientSet.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatalf("listing pods: %v", err)
	}
	out := map[string]string{}
	for _, p := range list.Items {
		if strings.HasPrefix(p.Name, prefix+"-") {
			out[p.Name] = p.Spec.NodeName
		}
	}
	return out
}

// waitBound waits until all n pods prefix-* are bound and returns node → pods.
func (e *env) waitBound(prefix string, n int) map[string]int {
	e.t.Helper()
	var last map[string]string
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		last = e.bindings(prefix)
		if len(last) != n {
			return false, nil
		}
		for _, node := range last {
			if node == "" {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		e.t.Fatalf("pods %s-*: not all %d bound: %v (bindings %v)", prefix, n, err, last)
	}
	perNode := map[string]int{}
	for _, node := range last {
		perNode[node]++
	}
	return perNode
}

// noneBound checks that no pod prefix-* is bound.
func (e *env) noneBound(prefix string) {
	e.t.Helper()
	for pod, node := range e.bindings(prefix) {
		if node != "" {
			e.t.Errorf("pod %s is bound to %s: a partial gang", pod, node)
		}
	}
}

// waitUnschedulable waits for the PodGroup's condition to say Unschedulable and returns its message.
func (e *env) waitUnschedulable(name string) string {
	e.t.Helper()
	var msg string
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, wait.ForeverTestTimeout, true, func(ctx context.Context) (bool, error) {
		pg, err := e.tc.ClientSet.SchedulingV1beta1().PodGroups(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := apimeta.FindStatusCondition(pg.Status.Conditions, conditionType)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != reasonUnschedulable {
			return false, nil
		}
		msg = c.Message
		return true, nil
	})
	if err != nil {
		e.t.Fatalf("PodGroup %s: no Unschedulable condition: %v", name, err)
	}
	return msg
}

// inOneDomain checks that the nodes used are all in one domain of key and returns it.
func (e *env) inOneDomain(perNode map[string]int, key string) string {
	e.t.Helper()
	domain := ""
	for name := range perNode {
		n, err := e.tc.ClientSet.CoreV1().Nodes().Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			e.t.Fatalf("getting node %s: %v", name, err)
		}
		d := n.Labels[block] + "/" + n.Labels[key]
		if domain != "" && d != domain {
			e.t.Errorf("the group spans two domains of %s: %s and %s (nodes %v)", key, domain, d, perNode)
		}
		domain = d
	}
	return domain
}

func equalCounts(t *testing.T, got, want map[string]int) {
	t.Helper()
	keys := func(m map[string]int) []string {
		var k []string
		for x := range m {
			k = append(k, x)
		}
		slices.Sort(k)
		return k
	}
	if !slices.Equal(keys(got), keys(want)) {
		t.Errorf("pods per node: got %v, want %v", got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("pods per node: got %v, want %v", got, want)
			return
		}
	}
}

// The guides' first scenario: four 1-GPU workers, rack required; only rack b1/a has
// four free GPUs (2 on a1, 2 on a2).
func TestFourWorkersInOneRack(t *testing.T) {
	e := start(t, false, false)
	e.nodes(gpuNode("a1", "b1", "a"), gpuNode("a2", "b1", "a"), gpuNode("b1", "b1", "b"), gpuNode("c1", "b2", "c"))
	e.used("a1", 6)
	e.used("a2", 6)
	e.used("b1", 5)
	e.used("c1", 7)
	e.podGroup("workers", rack, 4, nil)
	e.create(members("workers", "worker", 4, 1)...)
	perNode := e.waitBound("worker", 4)
	equalCounts(t, perNode, map[string]int{"a1": 2, "a2": 2})
	if d := e.inOneDomain(perNode, rack); d != "b1/a" {
		t.Errorf("domain %s, want b1/a", d)
	}
}

// The guides' second scenario: seven GPUs free but no rack with four. The group stays
// pending, nothing bound, and the PodGroup's condition carries gang's explanation.
func TestSevenFreeNoRackOfFour(t *testing.T) {
	e := start(t, false, false)
	e.nodes(gpuNode("a1", "b1", "a"), gpuNode("a2", "b1", "a"), gpuNode("b1", "b1", "b"), gpuNode("c1", "b2", "c"), gpuNode("c2", "b2", "c"))
	e.used("a1", 6)
	e.used("a2", 7)
	e.used("b1", 6)
	e.used("c1", 7)
	e.used("c2", 7)
	e.podGroup("workers", rack, 4, nil)
	e.create(members("workers", "worker", 4, 1)...)
	msg := e.waitUnschedulable("workers")
	for _, want := range []string{"fits 3 of 4", "nvidia.com/gpu", "block b1 fits all 4"} {
		if !strings.Contains(msg, want) {
			t.Errorf("condition message %q: no %q", msg, want)
		}
	}
	e.noneBound("worker")
}

// Two groups of four compete for the one rack with four free GPUs: one is placed whole
// there, the other binds nothing (no partial placement holds capacity) and says why.
func TestTwoCompetingGroups(t *testing.T) {
	e := start(t, false, false)
	e.nodes(gpuNode("a1", "b1", "a"), gpuNode("a2", "b1", "a"), gpuNode("b1", "b1", "b"), gpuNode("c1", "b2", "c"))
	e.used("a1", 6)
	e.used("a2", 6)
	e.used("b1", 5)
	e.used("c1", 5)
	e.podGroup("first", rack, 4, nil)
	e.podGroup("second", rack, 4, nil)
	e.create(append(members("first", "first", 4, 1), members("second", "second", 4, 1)...)...)
	// Whichever group went first holds rack b1/a; the other must hold nothing.
	var placed, pending string
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		for _, g := range []string{"first", "second"} {
			bound := 0
			for _, node := range e.bindings(g) {
				if node != "" {
					bound++
				}
			}
			if bound == 4 {
				placed = g
			}
		}
		return placed != "", nil
	})
	if err != nil {
		t.Fatalf("neither group was placed: %v", err)
	}
	pending = map[string]string{"first": "second", "second": "first"}[placed]
	perNode := e.waitBound(placed, 4)
	equalCounts(t, perNode, map[string]int{"a1": 2, "a2": 2})
	msg := e.waitUnschedulable(pending)
	if !strings.Contains(msg, "fits 3 of 4") {
		t.Errorf("%s's condition %q does not say the best rack fits 3 of 4", pending, msg)
	}
	e.noneBound(pending)
}

// A group partly bound stays in its domain: two members run in one rack; two more
// added later go to that rack, although another rack is now the tighter fit.
func TestPartlyBoundKeepsItsDomain(t *testing.T) {
	e := start(t, false, false)
	e.nodes(gpuNode("a1", "b1", "a"), gpuNode("b1", "b1", "b"))
	e.podGroup("workers", rack, 2, nil)
	e.create(members("workers", "worker", 2, 1)...)
	first := e.waitBound("worker", 2)
	domain := e.inOneDomain(first, rack)
	var here, other string
	for node := range first {
		here = node
	}
	other = map[string]string{"a1": "b1", "b1": "a1"}[here]
	// The other rack becomes the tighter fit for two more 1-GPU members (3 free < 6).
	e.used(other, 5)
	e.create(st.MakePod().Name("worker-2").SchedulerName(schedulerName).
		Req(map[v1.ResourceName]string{gpu: "1", v1.ResourceCPU: "1"}).Container("image").
		PodGroupName("workers").Priority(priority).ZeroTerminationGracePeriod().Obj(),
		st.MakePod().Name("worker-3").SchedulerName(schedulerName).
			Req(map[v1.ResourceName]string{gpu: "1", v1.ResourceCPU: "1"}).Container("image").
			PodGroupName("workers").Priority(priority).ZeroTerminationGracePeriod().Obj())
	all := e.waitBound("worker", 4)
	equalCounts(t, all, map[string]int{here: 4})
	if d := e.inOneDomain(all, rack); d != domain {
		t.Errorf("the group moved from %s to %s", domain, d)
	}
}

// Block required, rack preferred (PreferredTopologyAnnotation): of block b1's racks a
// (3 free), b (3 free) and c (4 free), gang puts the four workers in rack c alone.
func TestRequiredBlockPreferredRack(t *testing.T) {
	e := start(t, false, false)
	e.nodes(gpuNode("a1", "b1", "a"), gpuNode("b1", "b1", "b"), gpuNode("c1", "b1", "c"), gpuNode("c2", "b1", "c"),
		gpuNode("d1", "b2", "d"))
	e.used("a1", 5)
	e.used("b1", 5)
	e.used("c1", 6)
	e.used("c2", 6)
	e.used("d1", 8)
	e.podGroup("workers", block, 4, map[string]string{plugin.PreferredTopologyAnnotation: rack})
	e.create(members("workers", "worker", 4, 1)...)
	perNode := e.waitBound("worker", 4)
	equalCounts(t, perNode, map[string]int{"c1": 2, "c2": 2})
	if d := e.inOneDomain(perNode, rack); d != "b1/c" {
		t.Errorf("domain %s, want rack b1/c", d)
	}
}

// A node that goes away between cycles: gang's inventory drops it (the snapshot no
// longer lists it), and the next group is placed on the nodes that remain.
func TestNodeGoneAway(t *testing.T) {
	e := start(t, false, false)
	// Rack a: two nodes of 4 GPUs (no pods on them, so a deleted node leaves the cache).
	e.nodes(gpuNodeN("a1", "b1", "a", 4), gpuNodeN("a2", "b1", "a", 4), gpuNode("b1", "b1", "b"), gpuNode("b2", "b1", "b"))
	// A first group, kept to rack b, builds the inventory with every node in it.
	e.podGroup("warmup", rack, 1, nil)
	warmup := members("warmup", "warmup", 1, 1)
	warmup[0].Spec.NodeSelector = map[string]string{rack: "b"}
	e.create(warmup...)
	e.waitBound("warmup", 1)
	// Rack a (8 free) would be the tighter fit for eight 1-GPU members (15 free in rack
	// b), but not without a1.
	if err := e.tc.ClientSet.CoreV1().Nodes().Delete(e.ctx, "a1", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting node a1: %v", err)
	}
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return e.tc.Scheduler.Cache.NodeCount() == 3, nil
	})
	if err != nil {
		t.Fatalf("the scheduler's cache still has node a1: %v", err)
	}
	e.podGroup("workers", rack, 8, nil)
	e.create(members("workers", "worker", 8, 1)...)
	perNode := e.waitBound("worker", 8)
	if _, ok := perNode["a1"]; ok {
		t.Errorf("a pod was bound to the deleted node a1: %v", perNode)
	}
	if d := e.inOneDomain(perNode, rack); d != "b1/b" {
		t.Errorf("domain %s, want b1/b (rack a lost a1)", d)
	}
}

// heterogeneous is the leader + worker case: in rack b1/a, a1 has 96 CPUs and 8 free
// GPUs, a2 8 CPUs and 1 free GPU. The leader (1 GPU) comes first; a pod-by-pod pass
// scores a1 best for it (least allocated), and then the worker (8 GPUs) fits nowhere.
// gang puts the leader on a2 and the worker on a1.
func heterogeneous(e *env) {
	e.nodes(gpuNode("a1", "b1", "a"),
		st.MakeNode().Name("a2").Label(block, "b1").Label(rack, "a").Label(v1.LabelHostname, "a2").
			Capacity(map[v1.ResourceName]string{gpu: "8", v1.ResourceCPU: "8", v1.ResourceMemory: "1Ti", v1.ResourcePods: "110"}).Obj())
	e.used("a2", 7)
}

func leader(pg string) *v1.Pod {
	return st.MakePod().Name("job-leader").SchedulerName(schedulerName).
		Req(map[v1.ResourceName]string{gpu: "1", v1.ResourceCPU: "1"}).Container("image").
		PodGroupName(pg).Priority(priority).ZeroTerminationGracePeriod().Obj()
}

func worker(pg string) *v1.Pod {
	return st.MakePod().Name("job-worker").SchedulerName(schedulerName).
		Req(map[v1.ResourceName]string{gpu: "8", v1.ResourceCPU: "1"}).Container("image").
		PodGroupName(pg).Priority(priority).ZeroTerminationGracePeriod().Obj()
}

// createInOrder creates the pods one after the other, so that the queue orders them so.
func (e *env) createInOrder(pods ...*v1.Pod) {
	e.t.Helper()
	for _, p := range pods {
		e.create(p)
		time.Sleep(200 * time.Millisecond)
	}
}

// A heterogeneous PodGroup (leader + worker) that the native pod-by-pod pass cannot
// place (TestHeterogeneousGroupNative) and gang places.
func TestHeterogeneousGroup(t *testing.T) {
	e := start(t, false, false)
	heterogeneous(e)
	e.podGroup("job", rack, 2, nil)
	e.createInOrder(leader("job"), worker("job"))
	perNode := e.waitBound("job", 2)
	got := e.bindings("job")
	if got["job-leader"] != "a2" || got["job-worker"] != "a1" {
		t.Errorf("bindings %v, want the leader on a2 and the worker on a1 (%v)", got, perNode)
	}
}

// The same group with kube-scheduler's own plugins stays pending: the reason gang is
// there. (If upstream's pass learns to backtrack, this test says so.)
func TestHeterogeneousGroupNative(t *testing.T) {
	e := start(t, false, true)
	heterogeneous(e)
	e.podGroup("job", rack, 2, nil)
	e.createInOrder(leader("job"), worker("job"))
	e.waitUnschedulable("job")
	e.noneBound("job")
}

// A CompositePodGroup (rack required) with two child PodGroups, leader and workers:
// one multi-role gang for gang, placed whole in one rack; the native sequential pass
// over the children fails it as it fails the heterogeneous group.
func TestCompositeGroup(t *testing.T) {
	e := start(t, true, false)
	heterogeneous(e)
	cpg := st.MakeCompositePodGroup().Name("job").Namespace(e.ns).WorkloadRef("cpg", "workload").
		MinGroupCount(2).Priority(priority).TopologyKey(rack).Obj()
	if _, err := e.tc.ClientSet.SchedulingV1alpha3().CompositePodGroups(e.ns).Create(e.ctx, cpg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the CompositePodGroup: %v", err)
	}
	for _, child := range []string{"a-leader", "b-workers"} {
		pg := st.MakePodGroup().Name(child).Namespace(e.ns).WorkloadRef("pg", "workload").MinCount(1).
			Priority(priority).ParentCompositePodGroup("job").Obj()
		if _, err := e.tc.ClientSet.SchedulingV1beta1().PodGroups(e.ns).Create(e.ctx, pg, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating PodGroup %s: %v", child, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.createInOrder(leader("a-leader"), worker("b-workers"))
	e.waitBound("job", 2)
	got := e.bindings("job")
	if got["job-leader"] != "a2" || got["job-worker"] != "a1" {
		t.Errorf("bindings %v, want the leader on a2 and the worker on a1", got)
	}
}
