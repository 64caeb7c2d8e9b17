package plugin

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	gang "example.invalid/gang/gang-ffi/go"
)

// PreferredTopologyAnnotation on a PodGroup names a node label key, finer than the
// PodGroup's schedulingConstraints.topology key, that gang tries first: with
// `topology.example.com/block` required and this annotation set to
// `topology.example.com/rack`, the group lands in one rack if one rack fits it, and
// otherwise in as few racks of one block as possible. (The PodGroup API has one
// topology key; this is the rest of gang's request.) It is the annotation Kueue uses
// for the same purpose on its pod sets.
const PreferredTopologyAnnotation = "kueue.x-k8s.io/podset-preferred-topology"

// Args are GangPlacement's arguments in a KubeSchedulerConfiguration profile
// (pluginConfig, name GangPlacement):
//
//	pluginConfig:
//	- name: GangPlacement
//	  args:
//	    levels: [topology.example.com/block, topology.example.com/rack]
//	    work: 1000000
//	    timeout: 50ms
type Args struct {
	// Levels are the topology label keys gang knows, outermost first. A PodGroup's
	// topology key (or preferred key) that is not among them is added as the innermost
	// level the first time it is seen (the inventory is then built again, once).
	Levels []string `json:"levels,omitempty"`
	// Work bounds each placement query in gang's work units (gang.DefaultWork when 0).
	Work uint64 `json:"work,omitempty"`
	// Timeout bounds each placement query in time (none when 0). A query cut short by
	// Work or Timeout leaves the group pending with an "undecided" message; it never
	// claims "does not fit".
	Timeout metav1.Duration `json:"timeout,omitempty"`
}

// decodeArgs reads the profile's arguments (nil: the defaults).
func decodeArgs(obj runtime.Object) (Args, error) {
	var args Args
	if obj != nil {
		if err := frameworkruntime.DecodeInto(obj, &args); err != nil {
			return Args{}, fmt.Errorf("%s args: %w", Name, err)
		}
	}
	if args.Work == 0 {
		args.Work = gang.DefaultWork
	}
	if args.Timeout.Duration < 0 {
		return Args{}, fmt.Errorf("%s args: timeout %v is negative", Name, args.Timeout.Duration)
	}
	seen := map[string]bool{}
	for _, l := range args.Levels {
		if l == "" || seen[l] {
			return Args{}, fmt.Errorf("%s args: levels %q: empty or repeated level", Name, args.Levels)
		}
		seen[l] = true
	}
	return args, nil
}
