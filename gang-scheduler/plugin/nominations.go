package plugin

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// nominations follows, from the scheduler's pod informer, the nodes that pods not yet
// bound are nominated to (status.nominatedNodeName, which kube-scheduler writes after
// preemption): the only nodes whose nominated pods GangPlacement asks the scheduler's
// nominator about, so that a cycle does not ask about every node of the cluster.
// (A nomination the scheduler has made in memory and not yet written to the pod is
// not seen until it is; the framework's filters count it all the same, so the worst
// case is a cycle that fails and is tried again.)
type nominations struct {
	mu    sync.Mutex
	node  map[types.UID]string
	count map[string]int
}

func newNominations() *nominations {
	return &nominations{node: map[types.UID]string{}, count: map[string]int{}}
}

// set records where pod is nominated (nowhere once it is bound or has no nomination).
func (n *nominations) set(pod *v1.Pod) {
	to := ""
	if pod.Spec.NodeName == "" {
		to = pod.Status.NominatedNodeName
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.move(pod.UID, to)
}

func (n *nominations) forget(pod *v1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.move(pod.UID, "")
}

// move records that pod uid is nominated to node to ("": none). n.mu must be held.
func (n *nominations) move(uid types.UID, to string) {
	from, ok := n.node[uid]
	if ok && from == to {
		return
	}
	if ok {
		if n.count[from]--; n.count[from] <= 0 {
			delete(n.count, from)
		}
		delete(n.node, uid)
	}
	if to != "" {
		n.node[uid] = to
		n.count[to]++
	}
}

// nodes returns the nodes with a nominated pod.
func (n *nominations) nodes() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.count))
	for node := range n.count {
		out = append(out, node)
	}
	return out
}

// handler keeps n in step with a pod informer.
func (n *nominations) handler() cache.ResourceEventHandler {
	podOf := func(obj any) *v1.Pod {
		switch o := obj.(type) {
		case *v1.Pod:
			return o
		case cache.DeletedFinalStateUnknown:
			p, _ := o.Obj.(*v1.Pod)
			return p
		}
		return nil
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if p := podOf(obj); p != nil {
				n.set(p)
			}
		},
		UpdateFunc: func(_, obj any) {
			if p := podOf(obj); p != nil {
				n.set(p)
			}
		},
		DeleteFunc: func(obj any) {
			if p := podOf(obj); p != nil {
				n.forget(p)
			}
		},
	}
}
