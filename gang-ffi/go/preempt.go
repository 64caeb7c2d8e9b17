package gang

// #include <stdlib.h>
// #include "gang.h"
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Preempt says what it would take for g to fit (issue 22): the placement if it fits
// now, otherwise the running work to evict — whole reservations of strictly lower
// priority whose gang is not "preemption_policy": "Never", and evictable units of
// strictly lower priority — and the placement g gets once they are gone, chosen exactly
// (README "Preemption"). Nothing changes. The answer is the core's JSON document
// ({"status": "placed", "message", "victims": [...], "cost", "search_complete", "placement"} or
// the unschedulable / undecided document); Status is StatusPlaced (a plan: no victims
// when g fits now), StatusUnschedulable (no eviction of lower-priority work makes it
// fit) or StatusUndecided (the search ran out first).
//
// Repeated calls on one inventory are cheap: it keeps the candidate victims from one
// query to the next and brings them up to date from what changed (the answer is a
// fresh inventory's; TestPreemptKeptFollowsChanges).
//
// Errors: as Compile's; ErrClosed or ErrNullArgument for a closed or nil inventory or
// gang.
func (inv *Inventory) Preempt(g *Gang) (Status, string, error) {
	h, err := inv.rlock("Inventory.Preempt")
	if err != nil {
		return 0, "", err
	}
	defer inv.mu.RUnlock()
	gp, err := g.handle("Inventory.Preempt", "gang")
	if err != nil {
		return 0, "", err
	}
	var status C.gang_status
	var js *C.gang_string
	var cerr *C.gang_error
	rc := C.gang_inventory_preempt(h, gp, &status, &js, &cerr)
	runtime.KeepAlive(inv)
	runtime.KeepAlive(g)
	if err := fromC(rc, cerr, "gang_inventory_preempt"); err != nil {
		return 0, "", err
	}
	defer C.gang_string_free(js)
	var v C.gang_str
	mustOK(C.gang_string_view(js, &v), "gang_string_view")
	return Status(status), goStr(v), nil
}

// PreemptReserve is Preempt, then the plan applied in one all-or-nothing step: the
// victims evicted (reservations released whole, evictable units withdrawn) and g
// reserved. The ReservationID is g's new reservation (0 unless Status is
// StatusPlaced, in which case nothing changed).
//
// Errors: as Preempt's, and ErrConflict when the plan cannot be applied (nothing
// changed).
func (inv *Inventory) PreemptReserve(g *Gang) (Status, ReservationID, string, error) {
	h, err := inv.lock("Inventory.PreemptReserve")
	if err != nil {
		return 0, 0, "", err
	}
	defer inv.mu.Unlock()
	gp, err := g.handle("Inventory.PreemptReserve", "gang")
	if err != nil {
		return 0, 0, "", err
	}
	var status C.gang_status
	var id C.uint64_t
	var js *C.gang_string
	var cerr *C.gang_error
	rc := C.gang_inventory_preempt_reserve(h, gp, &status, &id, &js, &cerr)
	runtime.KeepAlive(inv)
	runtime.KeepAlive(g)
	if err := fromC(rc, cerr, "gang_inventory_preempt_reserve"); err != nil {
		return 0, 0, "", err
	}
	defer C.gang_string_free(js)
	var v C.gang_str
	mustOK(C.gang_string_view(js, &v), "gang_string_view")
	return Status(status), ReservationID(id), goStr(v), nil
}

// PreemptOptions weigh the work a preemption plan loses, and bound its search
// (gang-core's PreemptOptions; the zero value is the defaults). The objective's second
// key — after the highest victim priority — is the work lost: first the sum of the
// costs given to the victims (ReservationCosts, UnitCosts; work given none costs 0),
// then the amounts evicted of each of CostResources in order; then the fewest victims.
type PreemptOptions struct {
	// CostResources are the resources whose evicted amounts measure the work lost,
	// most important first. nil: "nvidia.com/gpu" alone (the default); an empty,
	// non-nil slice: none (only the given costs, then the number of victims).
	CostResources []string
	// ReservationCosts give running reservations a cost (what evicting one loses, e.g.
	// its GPUs times the seconds since its last checkpoint).
	ReservationCosts map[ReservationID]uint64
	// UnitCosts give evictable units (by id) a cost.
	UnitCosts map[string]uint64
	// MaxWork bounds the victim search (a branch is one unit, a question to the solver
	// 32); 0: DefaultWork. A plan found when it ran out says "search_complete": false.
	MaxWork uint64
}

// options makes the C options for o (the caller frees them with
// gang_preempt_options_free).
func (o PreemptOptions) options(cs *cstrings) (*C.gang_preempt_options, error) {
	var co *C.gang_preempt_options
	mustOK(C.gang_preempt_options_new(&co), "gang_preempt_options_new")
	fail := func(err error) (*C.gang_preempt_options, error) {
		C.gang_preempt_options_free(co)
		return nil, err
	}
	if o.CostResources != nil {
		var arr **C.char
		if n := len(o.CostResources); n > 0 {
			arr = (**C.char)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
			defer C.free(unsafe.Pointer(arr))
			items := unsafe.Slice(arr, n)
			for i, r := range o.CostResources {
				p, err := cs.of(r, fmt.Sprintf("CostResources[%d]", i))
				if err != nil {
					return fail(err)
				}
				items[i] = p
			}
		}
		var cerr *C.gang_error
		rc := C.gang_preempt_options_set_cost_resources(co, arr, C.size_t(len(o.CostResources)), &cerr)
		if err := fromC(rc, cerr, "gang_preempt_options_set_cost_resources"); err != nil {
			return fail(err)
		}
	}
	for id, cost := range o.ReservationCosts {
		mustOK(C.gang_preempt_options_set_reservation_cost(co, C.uint64_t(id), C.uint64_t(cost), nil),
			"gang_preempt_options_set_reservation_cost")
	}
	for unit, cost := range o.UnitCosts {
		p, err := cs.of(unit, fmt.Sprintf("UnitCosts[%q]", unit))
		if err != nil {
			return fail(err)
		}
		var cerr *C.gang_error
		rc := C.gang_preempt_options_set_unit_cost(co, p, C.uint64_t(cost), &cerr)
		if err := fromC(rc, cerr, "gang_preempt_options_set_unit_cost"); err != nil {
			return fail(err)
		}
	}
	if o.MaxWork != 0 {
		mustOK(C.gang_preempt_options_set_max_work(co, C.uint64_t(o.MaxWork), nil),
			"gang_preempt_options_set_max_work")
	}
	return co, nil
}

// PreemptWith is Preempt with o weighing the work lost and bounding the search.
//
// Errors: as Preempt's; ErrInvalidArgument or ErrInvalidUTF8 for a resource name or
// unit id that cannot cross to C (field "CostResources[i]" or "UnitCosts[\"id\"]").
func (inv *Inventory) PreemptWith(g *Gang, o PreemptOptions) (Status, string, error) {
	var cs cstrings
	defer cs.free()
	co, err := o.options(&cs)
	if err != nil {
		return 0, "", err
	}
	defer C.gang_preempt_options_free(co)
	h, err := inv.rlock("Inventory.PreemptWith")
	if err != nil {
		return 0, "", err
	}
	defer inv.mu.RUnlock()
	gp, err := g.handle("Inventory.PreemptWith", "gang")
	if err != nil {
		return 0, "", err
	}
	var status C.gang_status
	var js *C.gang_string
	var cerr *C.gang_error
	rc := C.gang_inventory_preempt_with(h, gp, co, &status, &js, &cerr)
	runtime.KeepAlive(inv)
	runtime.KeepAlive(g)
	if err := fromC(rc, cerr, "gang_inventory_preempt_with"); err != nil {
		return 0, "", err
	}
	defer C.gang_string_free(js)
	var v C.gang_str
	mustOK(C.gang_string_view(js, &v), "gang_string_view")
	return Status(status), goStr(v), nil
}

// PreemptReserveWith is PreemptReserve with o weighing the work lost (as PreemptWith).
//
// Errors: as PreemptReserve's and PreemptWith's.
func (inv *Inventory) PreemptReserveWith(g *Gang, o PreemptOptions) (Status, ReservationID, string, error) {
	var cs cstrings
	defer cs.free()
	co, err := o.options(&cs)
	if err != nil {
		return 0, 0, "", err
	}
	defer C.gang_preempt_options_free(co)
	h, err := inv.lock("Inventory.PreemptReserveWith")
	if err != nil {
		return 0, 0, "", err
	}
	defer inv.mu.Unlock()
	gp, err := g.handle("Inventory.PreemptReserveWith", "gang")
	if err != nil {
		return 0, 0, "", err
	}
	var status C.gang_status
	var id C.uint64_t
	var js *C.gang_string
	var cerr *C.gang_error
	rc := C.gang_inventory_preempt_reserve_with(h, gp, co, &status, &id, &js, &cerr)
	runtime.KeepAlive(inv)
	runtime.KeepAlive(g)
	if err := fromC(rc, cerr, "gang_inventory_preempt_reserve_with"); err != nil {
		return 0, 0, "", err
	}
	defer C.gang_string_free(js)
	var v C.gang_str
	mustOK(C.gang_string_view(js, &v), "gang_string_view")
	return Status(status), ReservationID(id), goStr(v), nil
}

// EvictableAmount is one amount an evictable unit uses: Amount of Resource on Node.
type EvictableAmount struct {
	Node     string
	Resource string
	Amount   Amount
}

// AddEvictable declares an evictable unit (issue 22): running work gang did not
// reserve — the pods of another workload, say — with an id unique among the units, a
// priority (higher wins) and what it uses. From now on its amounts count as used on
// their nodes, on top of each node's Used, as a reservation's do; Preempt may evict it,
// whole, for a gang of strictly higher priority. An amount given twice for one node
// and resource keeps the last; amounts of a resource no node has are ignored. All of
// it or nothing.
//
// Errors: ErrInvalidInventory for an empty id or one already declared (field
// "evictable[<id>].id"), ErrUnknownNode for a node the inventory does not have,
// ErrInvalidArgument or ErrInvalidUTF8 for a string that cannot cross to C (field
// "amounts[i].node" or "amounts[i].resource"), ErrInvalidQuantity for a bad quantity
// (field "evictable[<id>].nodes[<node>].<resource>"); the inventory is then unchanged.
// ErrClosed.
func (inv *Inventory) AddEvictable(id string, priority int32, amounts []EvictableAmount) error {
	var cs cstrings
	defer cs.free()
	cid, err := cs.of(id, "id")
	if err != nil {
		return err
	}
	// The array lives in C memory, as the strings it points to do.
	var arr *C.gang_evictable_amount
	if len(amounts) > 0 {
		arr = (*C.gang_evictable_amount)(C.calloc(C.size_t(len(amounts)), C.size_t(unsafe.Sizeof(C.gang_evictable_amount{}))))
		defer C.free(unsafe.Pointer(arr))
		items := unsafe.Slice(arr, len(amounts))
		for i, a := range amounts {
			node, err := cs.of(a.Node, fmt.Sprintf("amounts[%d].node", i))
			if err != nil {
				return err
			}
			res, err := cs.of(a.Resource, fmt.Sprintf("amounts[%d].resource", i))
			if err != nil {
				return err
			}
			items[i] = C.gang_evictable_amount{node: node, resource: res, millis: C.uint64_t(a.Amount.millis)}
			if !a.Amount.exact {
				q, err := cs.of(a.Amount.text, fmt.Sprintf("evictable[%s].nodes[%s].%s", id, a.Node, a.Resource))
				if err != nil {
					return err
				}
				items[i].quantity = q
			}
		}
	}
	h, err := inv.lock("Inventory.AddEvictable")
	if err != nil {
		return err
	}
	defer inv.mu.Unlock()
	var cerr *C.gang_error
	rc := C.gang_inventory_add_evictable(h, cid, C.int32_t(priority), arr, C.size_t(len(amounts)), &cerr)
	runtime.KeepAlive(inv)
	return fromC(rc, cerr, "gang_inventory_add_evictable")
}

// RemoveEvictable withdraws evictable unit id (it finished, or the caller evicted it),
// giving back what it used.
//
// Errors: ErrInvalidInventory when no unit has this id (field "evictable[<id>]";
// nothing changes), ErrClosed.
func (inv *Inventory) RemoveEvictable(id string) error {
	var cs cstrings
	defer cs.free()
	cid, err := cs.of(id, "id")
	if err != nil {
		return err
	}
	h, err := inv.lock("Inventory.RemoveEvictable")
	if err != nil {
		return err
	}
	defer inv.mu.Unlock()
	var cerr *C.gang_error
	rc := C.gang_inventory_remove_evictable(h, cid, &cerr)
	runtime.KeepAlive(inv)
	return fromC(rc, cerr, "gang_inventory_remove_evictable")
}
