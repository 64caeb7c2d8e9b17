package gang

// #include <stdlib.h>
// #include "gang.h"
import "C"

import (
	"fmt"
	"runtime"
)

// TolerationOperator is how a toleration matches a taint.
type TolerationOperator uint32

// Toleration operators (gang.h's gang_toleration_operator). The zero value means
// TolerationEqual, as in the scenario format.
const (
	TolerationEqual  TolerationOperator = C.GANG_TOLERATION_EQUAL
	TolerationExists TolerationOperator = C.GANG_TOLERATION_EXISTS
)

// Toleration tolerates taints: Equal matches key and value; Exists matches the key
// whatever the value, and with an empty key every taint. Effect EffectAny (the zero
// value) matches every effect.
type Toleration struct {
	Key      string
	Operator TolerationOperator
	Value    string
	Effect   Effect
}

// SelectorOperator is a label requirement operator (Kubernetes node affinity).
type SelectorOperator uint32

// Label requirement operators (gang.h's gang_selector_operator).
const (
	SelectorIn           SelectorOperator = C.GANG_SELECTOR_IN
	SelectorNotIn        SelectorOperator = C.GANG_SELECTOR_NOT_IN
	SelectorExists       SelectorOperator = C.GANG_SELECTOR_EXISTS
	SelectorDoesNotExist SelectorOperator = C.GANG_SELECTOR_DOES_NOT_EXIST
)

// Requirement is a label requirement: Key Operator Values.
type Requirement struct {
	Key      string
	Operator SelectorOperator
	Values   []string
}

// Policy chooses among feasible domains.
type Policy uint32

// Policies (gang.h's gang_policy). The zero value leaves the default, best-fit.
const (
	PolicyBestFit  Policy = C.GANG_POLICY_BEST_FIT
	PolicyMostFree Policy = C.GANG_POLICY_MOST_FREE
	PolicyBalanced Policy = C.GANG_POLICY_BALANCED
)

// Role is one role of a gang: Count members, each needing all of Requests on one node.
type Role struct {
	Name  string
	Count uint32
	// MinCount makes the role elastic: at least *MinCount members, up to Count, as many
	// as fit. Nil: all Count members.
	MinCount *uint32
	Requests map[string]Amount
	// Selector requires node labels to equal these values.
	Selector         map[string]string
	MatchExpressions []Requirement
	Tolerations      []Toleration
	// MaxPerNode puts at most *MaxPerNode members of the role on one node. Nil: no limit.
	MaxPerNode *uint32
	// Unconstrained roles may run anywhere (still all-or-nothing with the rest).
	Unconstrained bool
}

// Slice cuts members into slices of Size, each inside one domain of Level.
type Slice struct {
	Level string
	Size  uint32
}

// GangSpec describes a gang request: roles, topology constraint and policy.
type GangSpec struct {
	Name  string
	Roles []Role
	// Required: every constrained member in one domain of this level ("" for none).
	Required string
	// Preferred: try one domain of this level first, then walk up ("" for none).
	Preferred string
	// Slices, outermost first.
	Slices []Slice
	Policy Policy
	// Priority (Kubernetes PriorityClass semantics: higher wins; 0 by default):
	// Inventory.Preempt evicts only work of strictly lower priority for the gang.
	Priority int32
}

// Ptr returns a pointer to v (for Role.MinCount and Role.MaxPerNode).
func Ptr[T any](v T) *T { return &v }

// Gang is a gang request held by the library. It is validated when compiled or placed.
// Close it when done (idempotent; a finalizer is the safety net).
type Gang struct {
	ptr *C.gang_gang
}

func newGang(p *C.gang_gang) *Gang {
	g := &Gang{ptr: p}
	runtime.SetFinalizer(g, (*Gang).Close)
	return g
}

// handle returns the gang's C handle for method, or the error of a nil gang
// (ErrNullArgument) or a closed one (ErrClosed); arg names it ("gang", "queue[2]").
func (g *Gang) handle(method, arg string) (*C.gang_gang, error) {
	if g == nil {
		return nil, nilHandle(method, arg)
	}
	if g.ptr == nil {
		return nil, closedHandle(method, arg)
	}
	return g.ptr, nil
}

// Close frees the gang. It is idempotent. Compiled gangs and placements made from it
// stay valid.
func (g *Gang) Close() {
	if g == nil || g.ptr == nil {
		return
	}
	C.gang_gang_free(g.ptr)
	g.ptr = nil
	runtime.SetFinalizer(g, nil)
}

// NewGang builds a gang from spec, through the C builder calls (no JSON). Only what
// cannot cross into C fails here — a string with a NUL byte (ErrInvalidArgument) or
// not UTF-8 (ErrInvalidUTF8), a Policy, operator or effect outside its type
// (ErrInvalidArgument) — with the field and value named; everything else is validated
// when the gang is compiled or placed.
func NewGang(spec GangSpec) (*Gang, error) {
	var cs cstrings
	defer cs.free()
	name, err := cs.of(spec.Name, "gang.name")
	if err != nil {
		return nil, err
	}
	var p *C.gang_gang
	if err := check(C.gang_gang_new(name, &p), "gang_gang_new"); err != nil {
		return nil, err
	}
	g := newGang(p)
	if err := g.fill(&cs, spec); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

func (g *Gang) fill(cs *cstrings, spec GangSpec) error {
	for i := range spec.Roles {
		if err := g.addRole(cs, &spec.Roles[i], i); err != nil {
			return err
		}
	}
	if spec.Required != "" {
		l, err := cs.of(spec.Required, "gang.topology.required")
		if err != nil {
			return err
		}
		if err := check(C.gang_gang_set_required(g.ptr, l), "gang_gang_set_required"); err != nil {
			return err
		}
	}
	if spec.Preferred != "" {
		l, err := cs.of(spec.Preferred, "gang.topology.preferred")
		if err != nil {
			return err
		}
		if err := check(C.gang_gang_set_preferred(g.ptr, l), "gang_gang_set_preferred"); err != nil {
			return err
		}
	}
	for i, s := range spec.Slices {
		l, err := cs.of(s.Level, fmt.Sprintf("gang.topology.slices[%d].level", i))
		if err != nil {
			return err
		}
		if err := check(C.gang_gang_add_slice(g.ptr, l, C.uint32_t(s.Size)), "gang_gang_add_slice"); err != nil {
			return err
		}
	}
	if spec.Priority != 0 {
		if err := check(C.gang_gang_set_priority(g.ptr, C.int32_t(spec.Priority)), "gang_gang_set_priority"); err != nil {
			return err
		}
	}
	if spec.Policy != 0 {
		rc := C.gang_gang_set_policy(g.ptr, C.uint32_t(spec.Policy))
		if rc == C.GANG_INVALID_ARGUMENT {
			return argError(rc, "gang_gang_set_policy", "gang.policy",
				"GangSpec.Policy %d is not PolicyBestFit (1), PolicyMostFree (2) or PolicyBalanced (3)",
				uint32(spec.Policy))
		}
		if err := check(rc, "gang_gang_set_policy"); err != nil {
			return err
		}
	}
	runtime.KeepAlive(g)
	return nil
}

func (g *Gang) addRole(cs *cstrings, r *Role, index int) error {
	field := "gang.roles[" + r.Name + "]"
	name, err := cs.of(r.Name, fmt.Sprintf("gang.roles[%d].name", index))
	if err != nil {
		return err
	}
	var role *C.gang_role
	if err := check(C.gang_role_new(name, C.uint32_t(r.Count), &role), "gang_role_new"); err != nil {
		return err
	}
	defer C.gang_role_free(role)
	if r.MinCount != nil {
		if err := check(C.gang_role_set_min_count(role, C.uint32_t(*r.MinCount)), "gang_role_set_min_count"); err != nil {
			return err
		}
	}
	if r.MaxPerNode != nil {
		if err := check(C.gang_role_set_max_per_node(role, C.uint32_t(*r.MaxPerNode)), "gang_role_set_max_per_node"); err != nil {
			return err
		}
	}
	for _, res := range sortedKeys(r.Requests) {
		cr, err := cs.of(res, field+".requests")
		if err != nil {
			return err
		}
		a := r.Requests[res]
		if a.exact {
			err = check(C.gang_role_set_request_millis(role, cr, C.uint64_t(a.millis)), "gang_role_set_request_millis")
		} else {
			var cq *C.char
			if cq, err = cs.of(a.text, field+".requests."+res); err == nil {
				err = check(C.gang_role_set_request(role, cr, cq), "gang_role_set_request")
			}
		}
		if err != nil {
			return err
		}
	}
	for _, k := range sortedKeys(r.Selector) {
		ck, err := cs.of(k, field+".node_selector")
		if err != nil {
			return err
		}
		cv, err := cs.of(r.Selector[k], field+".node_selector."+k)
		if err != nil {
			return err
		}
		if err := check(C.gang_role_add_selector(role, ck, cv), "gang_role_add_selector"); err != nil {
			return err
		}
	}
	for i, e := range r.MatchExpressions {
		what := fmt.Sprintf("%s.match_expressions[%d]", field, i)
		ck, err := cs.of(e.Key, what+".key")
		if err != nil {
			return err
		}
		values := make([]*C.char, len(e.Values))
		for j, v := range e.Values {
			if values[j], err = cs.of(v, fmt.Sprintf("%s.values[%d]", what, j)); err != nil {
				return err
			}
		}
		var vp **C.char
		if len(values) > 0 {
			vp = &values[0]
		}
		rc := C.gang_role_add_match_expression(role, ck, C.uint32_t(e.Operator), vp, C.size_t(len(values)))
		if rc == C.GANG_INVALID_ARGUMENT {
			return argError(rc, "gang_role_add_match_expression", what+".operator",
				"Requirement.Operator %d is not SelectorIn (1), SelectorNotIn (2), SelectorExists (3) or SelectorDoesNotExist (4)",
				uint32(e.Operator))
		}
		if err := check(rc, "gang_role_add_match_expression"); err != nil {
			return err
		}
	}
	for i, t := range r.Tolerations {
		what := fmt.Sprintf("%s.tolerations[%d]", field, i)
		ck, err := cs.of(t.Key, what+".key")
		if err != nil {
			return err
		}
		cv, err := cs.of(t.Value, what+".value")
		if err != nil {
			return err
		}
		op := t.Operator
		if op == 0 {
			op = TolerationEqual
		}
		rc := C.gang_role_add_toleration(role, ck, C.uint32_t(op), cv, C.uint32_t(t.Effect))
		if rc == C.GANG_INVALID_ARGUMENT {
			// The call checks the operator first, then the effect.
			if op != TolerationEqual && op != TolerationExists {
				return argError(rc, "gang_role_add_toleration", what+".operator",
					"Toleration.Operator %d is not TolerationEqual (1) or TolerationExists (2)", uint32(op))
			}
			return argError(rc, "gang_role_add_toleration", what+".effect",
				"Toleration.Effect %d is not EffectAny (0), EffectNoSchedule (1), EffectPreferNoSchedule (2) or EffectNoExecute (3)",
				uint32(t.Effect))
		}
		if err := check(rc, "gang_role_add_toleration"); err != nil {
			return err
		}
	}
	if r.Unconstrained {
		if err := check(C.gang_role_set_constrained(role, false), "gang_role_set_constrained"); err != nil {
			return err
		}
	}
	rc := C.gang_gang_add_role(g.ptr, role)
	runtime.KeepAlive(g)
	return check(rc, "gang_gang_add_role")
}

// ParseGang parses a gang JSON document (the "gang" object of a scenario file).
// Errors: ErrInvalidScenario naming the JSON path. The gang is validated when compiled
// or placed.
func ParseGang(json []byte) (*Gang, error) {
	data, n := doc(json)
	var p *C.gang_gang
	var cerr *C.gang_error
	rc := C.gang_gang_from_json(data, n, &p, &cerr)
	runtime.KeepAlive(json)
	if err := fromC(rc, cerr, "gang_gang_from_json"); err != nil {
		return nil, err
	}
	return newGang(p), nil
}
