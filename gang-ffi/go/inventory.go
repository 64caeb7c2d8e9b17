package gang

// #include <stdlib.h>
// #include "gang.h"
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"strconv"
	"sync"
)

// Amount is a resource amount: whole units, milli-units, or a Kubernetes quantity
// ("1.5", "16Gi", "500m"). Quantities are validated when the inventory is built or the
// gang compiled, so that the error names the field.
type Amount struct {
	text   string
	millis uint64
	exact  bool
}

// Units is n whole units (8 GPUs: Units(8)).
func Units(n uint64) Amount {
	if n > math.MaxUint64/1000 {
		// Too large for milli-units: let the core reject it, naming the field.
		return Amount{text: strconv.FormatUint(n, 10)}
	}
	return Amount{millis: n * 1000, exact: true}
}

// Millis is m milli-units (1.5 CPUs: Millis(1500)).
func Millis(m uint64) Amount { return Amount{millis: m, exact: true} }

// Quantity is a Kubernetes quantity string ("96", "1.5", "16Gi", "500m").
func Quantity(text string) Amount { return Amount{text: text} }

func (a Amount) String() string {
	if a.exact {
		return strconv.FormatUint(a.millis, 10) + "m"
	}
	return a.text
}

// Effect is a taint effect; EffectAny is for tolerations only (match every effect).
type Effect uint32

// Taint effects (gang.h's gang_effect).
const (
	EffectAny              Effect = C.GANG_EFFECT_ANY
	EffectNoSchedule       Effect = C.GANG_EFFECT_NO_SCHEDULE
	EffectPreferNoSchedule Effect = C.GANG_EFFECT_PREFER_NO_SCHEDULE
	EffectNoExecute        Effect = C.GANG_EFFECT_NO_EXECUTE
)

// Taint is a node taint key=value:effect.
type Taint struct {
	Key    string
	Value  string
	Effect Effect
}

// Node describes one node: name, labels (topology levels among them), allocatable
// capacity, use from outside the library, taints, and whether it is cordoned.
type Node struct {
	Name     string
	Labels   map[string]string
	Capacity map[string]Amount
	// Used is what other pods use; free = capacity − used, never below zero.
	Used          map[string]Amount
	Taints        []Taint
	Unschedulable bool
}

// Inventory is a validated cluster, ready for placement queries, that holds
// reservations and follows node changes (the lifecycle: Reserve, Release, AddNode,
// RemoveNode, FailNode, Cordon, SetCapacity, Replace, Spread, Admit, …).
//
// It is safe for concurrent use: queries (Place, Compile, Available, Reservation, …)
// run in parallel on many goroutines (each Solver with its own goroutine), and changes
// take the inventory exclusively (an internal sync.RWMutex), so a change never races a
// query in the library. Close it when done; a finalizer frees it if you forget, but only
// at the garbage collector's pace.
type Inventory struct {
	mu  sync.RWMutex
	ptr *C.gang_inventory
}

func newInventory(p *C.gang_inventory) *Inventory {
	inv := &Inventory{ptr: p}
	runtime.SetFinalizer(inv, (*Inventory).Close)
	return inv
}

// Close frees the inventory and the reservations it holds. It is idempotent; it waits
// for calls in progress on other goroutines, and later calls return ErrClosed. Compiled
// gangs, placements and diagnoses made from the inventory stay valid.
func (inv *Inventory) Close() {
	if inv == nil {
		return
	}
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if inv.ptr == nil {
		return
	}
	C.gang_inventory_free(inv.ptr)
	inv.ptr = nil
	runtime.SetFinalizer(inv, nil)
}

// rlock read-locks the inventory for a query by method and returns its handle; the
// caller calls inv.mu.RUnlock. A nil inventory (ErrNullArgument) or a closed one
// (ErrClosed) is an error naming method, and then nothing is left locked.
func (inv *Inventory) rlock(method string) (*C.gang_inventory, error) {
	if inv == nil {
		return nil, nilHandle(method, "inventory")
	}
	inv.mu.RLock()
	if inv.ptr == nil {
		inv.mu.RUnlock()
		return nil, closedHandle(method, "inventory")
	}
	return inv.ptr, nil
}

// lock write-locks the inventory for a change by method and returns its handle; the
// caller calls inv.mu.Unlock. Errors as rlock.
func (inv *Inventory) lock(method string) (*C.gang_inventory, error) {
	if inv == nil {
		return nil, nilHandle(method, "inventory")
	}
	inv.mu.Lock()
	if inv.ptr == nil {
		inv.mu.Unlock()
		return nil, closedHandle(method, "inventory")
	}
	return inv.ptr, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// NewInventory builds an inventory over topology levels (label keys, outermost first,
// e.g. "topology.example.com/block", "topology.example.com/rack") from nodes, through
// the C builder calls (no JSON).
//
// Errors: ErrInvalidInventory (bad level, duplicate or malformed node, label or taint),
// ErrInvalidQuantity (bad capacity or used amount), with the field naming the node.
func NewInventory(levels []string, nodes []Node) (*Inventory, error) {
	var cs cstrings
	defer cs.free()
	clevels := make([]*C.char, len(levels))
	for i, l := range levels {
		p, err := cs.of(l, fmt.Sprintf("levels[%d]", i))
		if err != nil {
			return nil, err
		}
		clevels[i] = p
	}
	var levelsPtr **C.char
	if len(clevels) > 0 {
		levelsPtr = &clevels[0]
	}
	var b *C.gang_inventory_builder
	var cerr *C.gang_error
	rc := C.gang_inventory_builder_new(levelsPtr, C.size_t(len(clevels)), &b, &cerr)
	if err := fromC(rc, cerr, "gang_inventory_builder_new"); err != nil {
		return nil, err
	}
	defer C.gang_inventory_builder_free(b)
	for i := range nodes {
		if err := addNode(b, &nodes[i], fmt.Sprintf("nodes[%d]", i)); err != nil {
			return nil, err
		}
	}
	var p *C.gang_inventory
	rc = C.gang_inventory_builder_build(b, &p, &cerr)
	if err := fromC(rc, cerr, "gang_inventory_builder_build"); err != nil {
		return nil, err
	}
	return newInventory(p), nil
}

func addNode(b *C.gang_inventory_builder, n *Node, at string) error {
	node, err := newCNode(n, at)
	if err != nil {
		return err
	}
	defer C.gang_node_free(node)
	return check(C.gang_inventory_builder_add_node(b, node), "gang_inventory_builder_add_node")
}

// newCNode describes n to the library; the caller frees the node with gang_node_free.
// at names the node where its name is unusable ("nodes[3]"); other fields are named
// by the node's name, as the core names them ("nodes[a1].labels").
func newCNode(n *Node, at string) (*C.gang_node, error) {
	var cs cstrings
	defer cs.free()
	field := "nodes[" + n.Name + "]"
	name, err := cs.of(n.Name, at+".name")
	if err != nil {
		return nil, err
	}
	var node *C.gang_node
	if err := check(C.gang_node_new(name, &node), "gang_node_new"); err != nil {
		return nil, err
	}
	if err := fillCNode(&cs, node, n, field); err != nil {
		C.gang_node_free(node)
		return nil, err
	}
	return node, nil
}

func fillCNode(cs *cstrings, node *C.gang_node, n *Node, field string) error {
	for _, k := range sortedKeys(n.Labels) {
		ck, err := cs.of(k, field+".labels")
		if err != nil {
			return err
		}
		cv, err := cs.of(n.Labels[k], field+".labels."+k)
		if err != nil {
			return err
		}
		if err := check(C.gang_node_add_label(node, ck, cv), "gang_node_add_label"); err != nil {
			return err
		}
	}
	set := func(m map[string]Amount, what string,
		text func(*C.gang_node, *C.char, *C.char) C.gang_result,
		millis func(*C.gang_node, *C.char, C.uint64_t) C.gang_result) error {
		for _, r := range sortedKeys(m) {
			cr, err := cs.of(r, field+"."+what)
			if err != nil {
				return err
			}
			a := m[r]
			if a.exact {
				err = check(millis(node, cr, C.uint64_t(a.millis)), "gang_node_set_"+what+"_millis")
			} else {
				var cq *C.char
				if cq, err = cs.of(a.text, field+"."+what+"."+r); err == nil {
					err = check(text(node, cr, cq), "gang_node_set_"+what)
				}
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := set(n.Capacity, "capacity",
		func(n *C.gang_node, r, q *C.char) C.gang_result { return C.gang_node_set_capacity(n, r, q) },
		func(n *C.gang_node, r *C.char, m C.uint64_t) C.gang_result {
			return C.gang_node_set_capacity_millis(n, r, m)
		}); err != nil {
		return err
	}
	if err := set(n.Used, "used",
		func(n *C.gang_node, r, q *C.char) C.gang_result { return C.gang_node_set_used(n, r, q) },
		func(n *C.gang_node, r *C.char, m C.uint64_t) C.gang_result {
			return C.gang_node_set_used_millis(n, r, m)
		}); err != nil {
		return err
	}
	for i, t := range n.Taints {
		what := fmt.Sprintf("%s.taints[%d]", field, i)
		ck, err := cs.of(t.Key, what+".key")
		if err != nil {
			return err
		}
		cv, err := cs.of(t.Value, what+".value")
		if err != nil {
			return err
		}
		rc := C.gang_node_add_taint(node, ck, cv, C.uint32_t(t.Effect))
		if rc == C.GANG_INVALID_ARGUMENT {
			return argError(rc, "gang_node_add_taint", what+".effect",
				"Taint.Effect %d is not EffectNoSchedule (1), EffectPreferNoSchedule (2) or EffectNoExecute (3)",
				uint32(t.Effect))
		}
		if err := check(rc, "gang_node_add_taint"); err != nil {
			return err
		}
	}
	if n.Unschedulable {
		if err := check(C.gang_node_set_schedulable(node, false), "gang_node_set_schedulable"); err != nil {
			return err
		}
	}
	return nil
}

// ParseInventory builds an inventory from a cluster JSON document:
// {"topology": {"levels": [...]}, "nodes": [...]}, nodes as in the scenario files.
//
// Errors: ErrInvalidScenario when the document does not parse (the field is the JSON
// path), otherwise as NewInventory.
func ParseInventory(json []byte) (*Inventory, error) {
	data, n := doc(json)
	var p *C.gang_inventory
	var cerr *C.gang_error
	rc := C.gang_inventory_from_json(data, n, &p, &cerr)
	runtime.KeepAlive(json)
	if err := fromC(rc, cerr, "gang_inventory_from_json"); err != nil {
		return nil, err
	}
	return newInventory(p), nil
}

// Len returns the number of nodes (0 after Close, and for a nil inventory).
func (inv *Inventory) Len() int {
	h, err := inv.rlock("Inventory.Len")
	if err != nil {
		return 0
	}
	defer inv.mu.RUnlock()
	var n C.size_t
	mustOK(C.gang_inventory_node_count(h, &n), "gang_inventory_node_count")
	runtime.KeepAlive(inv)
	return int(n)
}

// Available returns the free amount (capacity − external use − reservations, never
// below zero) of resource on node, in milli-units. Errors: ErrNotFound for an unknown
// node (Field "node") or resource (Field "resource"), ErrClosed.
func (inv *Inventory) Available(node, resource string) (uint64, error) {
	h, err := inv.rlock("Inventory.Available")
	if err != nil {
		return 0, err
	}
	defer inv.mu.RUnlock()
	var cs cstrings
	defer cs.free()
	cn, err := cs.of(node, "node")
	if err != nil {
		return 0, err
	}
	cr, err := cs.of(resource, "resource")
	if err != nil {
		return 0, err
	}
	var m C.uint64_t
	rc := C.gang_inventory_available_millis(h, cn, cr, &m)
	if rc == C.GANG_NOT_FOUND {
		// The call has no error object to say which: the node, if the inventory has
		// no node of that name, else the resource.
		var js *C.gang_string
		if C.gang_inventory_node_json(h, cn, &js, nil) != C.GANG_OK {
			runtime.KeepAlive(inv)
			return 0, argError(rc, "gang_inventory_available_millis", "node", "no node named %q", node)
		}
		C.gang_string_free(js)
		runtime.KeepAlive(inv)
		return 0, argError(rc, "gang_inventory_available_millis", "resource", "no resource named %q", resource)
	}
	runtime.KeepAlive(inv)
	if err := check(rc, "gang_inventory_available_millis"); err != nil {
		return 0, err
	}
	return uint64(m), nil
}

// Compile validates g against the inventory and compiles it for repeated placement
// with a Solver. The compiled gang does not keep the inventory or g alive.
//
// Errors: ErrInvalidRequest, ErrInvalidQuantity, ErrContradictory (with the field
// named, e.g. "gang.roles[worker].count"); ErrClosed or ErrNullArgument for a closed
// or nil inventory or gang.
func (inv *Inventory) Compile(g *Gang) (*CompiledGang, error) {
	h, err := inv.rlock("Inventory.Compile")
	if err != nil {
		return nil, err
	}
	defer inv.mu.RUnlock()
	gp, err := g.handle("Inventory.Compile", "gang")
	if err != nil {
		return nil, err
	}
	var p *C.gang_compiled
	var cerr *C.gang_error
	rc := C.gang_inventory_compile(h, gp, &p, &cerr)
	runtime.KeepAlive(inv)
	runtime.KeepAlive(g)
	if err := fromC(rc, cerr, "gang_inventory_compile"); err != nil {
		return nil, err
	}
	c := &CompiledGang{ptr: p}
	runtime.SetFinalizer(c, (*CompiledGang).Close)
	return c, nil
}

// Place compiles and places g in one call (with a fresh solver). For repeated queries,
// Compile once and use a Solver.
//
// "Does not fit" is not an error: it is an Outcome with a Diagnosis. Errors are as
// Compile's.
func (inv *Inventory) Place(g *Gang) (Outcome, error) {
	h, err := inv.rlock("Inventory.Place")
	if err != nil {
		return Outcome{}, err
	}
	defer inv.mu.RUnlock()
	gp, err := g.handle("Inventory.Place", "gang")
	if err != nil {
		return Outcome{}, err
	}
	o := placeOnInventory(h, inv, gp, g)
	if err := fromC(o.rc, o.error, "gang_inventory_place"); err != nil {
		return Outcome{}, err
	}
	return newOutcome(o.status, o.placement, o.diagnosis), nil
}
