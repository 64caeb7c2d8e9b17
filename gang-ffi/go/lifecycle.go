package gang

// #include <stdlib.h>
// #include "gang.h"
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// ReservationID identifies a live reservation of an Inventory. Ids are never reused
// within an inventory and are opaque: an id carries the identity of the inventory that
// made it, so using it on another Inventory is ErrUnknownReservation (the message names
// both), never that inventory's reservation with the same number.
type ReservationID uint64

// Reserve holds a placement's capacity on the inventory: every member is re-checked
// against the inventory as it is now (capacity, cordons, eligibility; a placement made
// before nodes were added, removed or relabelled is matched to the current nodes by
// name) and, if all of it still fits, held under a new id. All of it or nothing.
//
// Errors: ErrConflict when any part no longer fits (the message names the node and
// resource; the inventory is unchanged); ErrClosed or ErrNullArgument for a closed or
// nil inventory or placement.
func (inv *Inventory) Reserve(p *Placement) (ReservationID, error) {
	h, err := inv.lock("Inventory.Reserve")
	if err != nil {
		return 0, err
	}
	defer inv.mu.Unlock()
	pp, err := p.handle("Inventory.Reserve")
	if err != nil {
		return 0, err
	}
	var id C.uint64_t
	var cerr *C.gang_error
	rc := C.gang_inventory_reserve(h, pp, &id, &cerr)
	runtime.KeepAlive(inv)
	runtime.KeepAlive(p)
	if err := fromC(rc, cerr, "gang_inventory_reserve"); err != nil {
		return 0, err
	}
	return ReservationID(id), nil
}

// Release gives back exactly what reservation id holds, and forgets it.
//
// Errors: ErrUnknownReservation when id is not live (never made, or released already:
// nothing is credited, so releasing twice never gives capacity back twice), ErrClosed.
func (inv *Inventory) Release(id ReservationID) error {
	h, err := inv.lock("Inventory.Release")
	if err != nil {
		return err
	}
	defer inv.mu.Unlock()
	var cerr *C.gang_error
	rc := C.gang_inventory_release(h, C.uint64_t(id), &cerr)
	runtime.KeepAlive(inv)
	return fromC(rc, cerr, "gang_inventory_release")
}

// Reservation is a snapshot of a live reservation, taken by Inventory.Reservation.
type Reservation struct {
	ID ReservationID
	// Gang is the reserved gang's name.
	Gang string
	// Domain is where the gang was placed, (level, value) outermost first (empty:
	// cluster-wide); DomainPath its values joined by "/". Replacements stay inside it.
	Domain     []LevelValue
	DomainPath string
	// Members held, per role and node (role as given, then topology order).
	Members []Assignment
	// MemberCount is the total held (lost members not counted).
	MemberCount uint64
	// Usage is what the reservation holds per node and resource: exactly what
	// releasing it gives back.
	Usage []Usage
	// Lost are the members lost with removed or failed nodes and not yet replaced.
	Lost []Lost
}

// Usage is an amount of a resource held on a node, in milli-units.
type Usage struct {
	Node     string
	Resource string
	Millis   uint64
}

// Lost is Count members of Role that Reservation lost with Node (removed or failed).
type Lost struct {
	Reservation ReservationID
	Role        string
	Node        string
	Count       uint32
}

// Reservation returns a snapshot of live reservation id (later changes to the
// inventory do not change it).
//
// Errors: ErrUnknownReservation when id is not live, ErrClosed.
func (inv *Inventory) Reservation(id ReservationID) (Reservation, error) {
	h, err := inv.rlock("Inventory.Reservation")
	if err != nil {
		return Reservation{}, err
	}
	defer inv.mu.RUnlock()
	var r *C.gang_reservation
	var cerr *C.gang_error
	rc := C.gang_inventory_reservation(h, C.uint64_t(id), &r, &cerr)
	runtime.KeepAlive(inv)
	if err := fromC(rc, cerr, "gang_inventory_reservation"); err != nil {
		return Reservation{}, err
	}
	defer C.gang_reservation_free(r)
	return reservationFrom(r), nil
}

func reservationFrom(r *C.gang_reservation) Reservation {
	var out Reservation
	var id C.uint64_t
	var s, t C.gang_str
	var n C.size_t
	var k C.uint32_t
	var m C.uint64_t
	mustOK(C.gang_reservation_id(r, &id), "gang_reservation_id")
	out.ID = ReservationID(id)
	mustOK(C.gang_reservation_gang(r, &s), "gang_reservation_gang")
	out.Gang = goStr(s)
	mustOK(C.gang_reservation_domain_path(r, &s), "gang_reservation_domain_path")
	out.DomainPath = goStr(s)
	mustOK(C.gang_reservation_domain_len(r, &n), "gang_reservation_domain_len")
	out.Domain = make([]LevelValue, int(n))
	for i := range out.Domain {
		mustOK(C.gang_reservation_domain_at(r, C.size_t(i), &s, &t), "gang_reservation_domain_at")
		out.Domain[i] = LevelValue{Level: goStr(s), Value: goStr(t)}
	}
	mustOK(C.gang_reservation_members_len(r, &n), "gang_reservation_members_len")
	out.Members = make([]Assignment, int(n))
	for i := range out.Members {
		mustOK(C.gang_reservation_member_at(r, C.size_t(i), &s, &t, &k), "gang_reservation_member_at")
		out.Members[i] = Assignment{Role: goStr(s), Node: goStr(t), Count: uint32(k)}
	}
	mustOK(C.gang_reservation_member_count(r, &m), "gang_reservation_member_count")
	out.MemberCount = uint64(m)
	mustOK(C.gang_reservation_usage_len(r, &n), "gang_reservation_usage_len")
	out.Usage = make([]Usage, int(n))
	for i := range out.Usage {
		mustOK(C.gang_reservation_usage_at(r, C.size_t(i), &s, &t, &m), "gang_reservation_usage_at")
		out.Usage[i] = Usage{Node: goStr(s), Resource: goStr(t), Millis: uint64(m)}
	}
	mustOK(C.gang_reservation_lost_len(r, &n), "gang_reservation_lost_len")
	out.Lost = make([]Lost, int(n))
	for i := range out.Lost {
		mustOK(C.gang_reservation_lost_at(r, C.size_t(i), &s, &t, &k), "gang_reservation_lost_at")
		out.Lost[i] = Lost{Reservation: out.ID, Role: goStr(s), Node: goStr(t), Count: uint32(k)}
	}
	return out
}

// Reservations returns the ids of the live reservations, in increasing order.
// Errors: ErrClosed.
func (inv *Inventory) Reservations() ([]ReservationID, error) {
	h, err := inv.rlock("Inventory.Reservations")
	if err != nil {
		return nil, err
	}
	defer inv.mu.RUnlock()
	var n C.size_t
	mustOK(C.gang_inventory_reservation_ids(h, nil, 0, &n), "gang_inventory_reservation_ids")
	ids := make([]ReservationID, int(n))
	if n > 0 {
		// ReservationID is a uint64: the slice is the C array of uint64_t it fills.
		mustOK(C.gang_inventory_reservation_ids(h, (*C.uint64_t)(unsafe.Pointer(&ids[0])), n, &n),
			"gang_inventory_reservation_ids")
	}
	runtime.KeepAlive(inv)
	return ids[:int(n)], nil
}

// AddNode adds a node (validated as NewInventory validates nodes). Gangs compiled
// before still place correctly but are compiled again on every placement: compile them
// again for the fast path.
//
// Errors: ErrInvalidInventory (duplicate name, bad label or taint), ErrInvalidQuantity;
// the inventory is then unchanged. ErrClosed.
func (inv *Inventory) AddNode(n Node) error {
	node, err := newCNode(&n, "node")
	if err != nil {
		return err
	}
	defer C.gang_node_free(node)
	h, err := inv.lock("Inventory.AddNode")
	if err != nil {
		return err
	}
	defer inv.mu.Unlock()
	var cerr *C.gang_error
	rc := C.gang_inventory_add_node(h, node, &cerr)
	runtime.KeepAlive(inv)
	return fromC(rc, cerr, "gang_inventory_add_node")
}

// arg is a string argument and the field that names it in an error.
type arg struct{ field, value string }

// change runs method's change, the C function call, which reports through a
// gang_change, and converts the report. The string arguments are passed to f in order.
func (inv *Inventory) change(method, call string, strs []arg,
	f func(h *C.gang_inventory, cs []*C.char, out **C.gang_change, cerr **C.gang_error) C.gang_result,
) (*changeReport, error) {
	var cs cstrings
	defer cs.free()
	args := make([]*C.char, len(strs))
	for i, s := range strs {
		p, err := cs.of(s.value, s.field)
		if err != nil {
			return nil, err
		}
		args[i] = p
	}
	h, err := inv.lock(method)
	if err != nil {
		return nil, err
	}
	defer inv.mu.Unlock()
	var c *C.gang_change
	var cerr *C.gang_error
	rc := f(h, args, &c, &cerr)
	runtime.KeepAlive(inv)
	if err := fromC(rc, cerr, call); err != nil {
		return nil, err
	}
	defer C.gang_change_free(c)
	return changeFrom(c), nil
}

type changeReport struct {
	lost        []Lost
	overcommits []Overcommit
	displaced   []ReservationID
}

// Overcommit is a node whose capacity of Resource no longer covers what is used there
// outside the library plus what Reservations hold (milli-units). The change was
// applied (it is a fact about the node): free capacity there is zero until holders
// release or are replaced.
type Overcommit struct {
	Node           string
	Resource       string
	CapacityMillis uint64
	UsedMillis     uint64
	ReservedMillis uint64
	Reservations   []ReservationID
}

func changeFrom(c *C.gang_change) *changeReport {
	var out changeReport
	var n, holders C.size_t
	var id, capacity, used, reserved C.uint64_t
	var s, t C.gang_str
	var k C.uint32_t
	mustOK(C.gang_change_lost_len(c, &n), "gang_change_lost_len")
	out.lost = make([]Lost, int(n))
	for i := range out.lost {
		mustOK(C.gang_change_lost_at(c, C.size_t(i), &id, &s, &t, &k), "gang_change_lost_at")
		out.lost[i] = Lost{Reservation: ReservationID(id), Role: goStr(s), Node: goStr(t), Count: uint32(k)}
	}
	mustOK(C.gang_change_overcommits_len(c, &n), "gang_change_overcommits_len")
	out.overcommits = make([]Overcommit, int(n))
	for i := range out.overcommits {
		mustOK(C.gang_change_overcommit_at(c, C.size_t(i), &s, &t, &capacity, &used, &reserved, &holders),
			"gang_change_overcommit_at")
		o := Overcommit{Node: goStr(s), Resource: goStr(t), CapacityMillis: uint64(capacity),
			UsedMillis: uint64(used), ReservedMillis: uint64(reserved), Reservations: make([]ReservationID, int(holders))}
		for j := range o.Reservations {
			mustOK(C.gang_change_overcommit_reservation_at(c, C.size_t(i), C.size_t(j), &id),
				"gang_change_overcommit_reservation_at")
			o.Reservations[j] = ReservationID(id)
		}
		out.overcommits[i] = o
	}
	mustOK(C.gang_change_displaced_len(c, &n), "gang_change_displaced_len")
	out.displaced = make([]ReservationID, int(n))
	for i := range out.displaced {
		mustOK(C.gang_change_displaced_at(c, C.size_t(i), &id), "gang_change_displaced_at")
		out.displaced[i] = ReservationID(id)
	}
	return &out
}

// RemoveNode removes node name. Members of reservations on it are lost: each
// reservation keeps its other members and records the lost ones (see Replace); they
// are returned.
//
// Errors: ErrUnknownNode (nothing changes), ErrClosed.
func (inv *Inventory) RemoveNode(name string) ([]Lost, error) {
	r, err := inv.change("Inventory.RemoveNode", "gang_inventory_remove_node", []arg{{"name", name}},
		func(h *C.gang_inventory, a []*C.char, out **C.gang_change, cerr **C.gang_error) C.gang_result {
			return C.gang_inventory_remove_node(h, a[0], out, cerr)
		})
	if err != nil {
		return nil, err
	}
	return r.lost, nil
}

// FailNode marks node name failed: it is cordoned (Uncordon brings it back), and the
// members of reservations on it are lost (their capacity there is given back); they
// are returned.
//
// Errors: ErrUnknownNode (nothing changes), ErrClosed.
func (inv *Inventory) FailNode(name string) ([]Lost, error) {
	r, err := inv.change("Inventory.FailNode", "gang_inventory_fail_node", []arg{{"name", name}},
		func(h *C.gang_inventory, a []*C.char, out **C.gang_change, cerr **C.gang_error) C.gang_result {
			return C.gang_inventory_fail_node(h, a[0], out, cerr)
		})
	if err != nil {
		return nil, err
	}
	return r.lost, nil
}

// cordon is Cordon (on) or Uncordon.
func (inv *Inventory) cordon(name string, on bool) error {
	var cs cstrings
	defer cs.free()
	cn, err := cs.of(name, "name")
	if err != nil {
		return err
	}
	method, call := "Inventory.Uncordon", "gang_inventory_uncordon"
	if on {
		method, call = "Inventory.Cordon", "gang_inventory_cordon"
	}
	h, err := inv.lock(method)
	if err != nil {
		return err
	}
	defer inv.mu.Unlock()
	var cerr *C.gang_error
	var rc C.gang_result
	if on {
		rc = C.gang_inventory_cordon(h, cn, &cerr)
	} else {
		rc = C.gang_inventory_uncordon(h, cn, &cerr)
	}
	runtime.KeepAlive(inv)
	return fromC(rc, cerr, call)
}

// Cordon marks node name unschedulable: nothing new is placed on it; reservations
// there stay. Errors: ErrUnknownNode, ErrClosed.
func (inv *Inventory) Cordon(name string) error { return inv.cordon(name, true) }

// Uncordon makes a cordoned (or failed) node schedulable again. Errors: ErrUnknownNode,
// ErrClosed.
func (inv *Inventory) Uncordon(name string) error { return inv.cordon(name, false) }

// SetLabels replaces all labels of node name. It returns the reservations whose
// constrained members are no longer inside their domain (the library does not move
// them: release and place again, or keep them).
//
// Errors: ErrUnknownNode, ErrInvalidInventory for a bad label (the inventory is then
// unchanged), ErrClosed.
func (inv *Inventory) SetLabels(name string, labels map[string]string) ([]ReservationID, error) {
	keys := sortedKeys(labels)
	strs := make([]arg, 0, 1+2*len(keys))
	strs = append(strs, arg{"name", name})
	for _, k := range keys {
		strs = append(strs, arg{"labels", k})
	}
	for _, k := range keys {
		strs = append(strs, arg{"labels." + k, labels[k]})
	}
	r, err := inv.change("Inventory.SetLabels", "gang_inventory_set_labels", strs,
		func(h *C.gang_inventory, a []*C.char, out **C.gang_change, cerr **C.gang_error) C.gang_result {
			n := len(keys)
			var kp, vp **C.char
			if n > 0 {
				kp, vp = &a[1], &a[1+n]
			}
			return C.gang_inventory_set_labels(h, a[0], kp, vp, C.size_t(n), out, cerr)
		})
	if err != nil {
		return nil, err
	}
	return r.displaced, nil
}

// setAmount is SetCapacity (capacity) or SetUsed.
func (inv *Inventory) setAmount(node, resource string, a Amount, capacity bool) ([]Overcommit, error) {
	method, call, what := "Inventory.SetUsed", "gang_inventory_set_used", "used"
	if capacity {
		method, call, what = "Inventory.SetCapacity", "gang_inventory_set_capacity", "capacity"
	}
	strs := []arg{{"node", node}, {"resource", resource}}
	if !a.exact {
		strs = append(strs, arg{"nodes[" + node + "]." + what + "." + resource, a.text})
	}
	r, err := inv.change(method, call, strs,
		func(h *C.gang_inventory, s []*C.char, out **C.gang_change, cerr **C.gang_error) C.gang_result {
			switch {
			case capacity && a.exact:
				return C.gang_inventory_set_capacity_millis(h, s[0], s[1], C.uint64_t(a.millis), out, cerr)
			case capacity:
				return C.gang_inventory_set_capacity(h, s[0], s[1], s[2], out, cerr)
			case a.exact:
				return C.gang_inventory_set_used_millis(h, s[0], s[1], C.uint64_t(a.millis), out, cerr)
			default:
				return C.gang_inventory_set_used(h, s[0], s[1], s[2], out, cerr)
			}
		})
	if err != nil {
		return nil, err
	}
	return r.overcommits, nil
}

// SetCapacity sets the allocatable capacity of resource on node. It is applied even
// when it falls below what is used and reserved there (a fact about the node); that is
// returned as an Overcommit, and free capacity there is then zero. A resource no node
// had before is added.
//
// Errors: ErrUnknownNode, ErrInvalidQuantity (field "nodes[<node>].capacity.<resource>"),
// ErrInvalidInventory for a malformed new resource name; the inventory is then
// unchanged. ErrClosed.
func (inv *Inventory) SetCapacity(node, resource string, a Amount) ([]Overcommit, error) {
	return inv.setAmount(node, resource, a, true)
}

// SetUsed sets how much of resource is used on node by workloads the library did not
// place (other pods). Overcommitment is reported as by SetCapacity.
//
// Errors: as SetCapacity (field "nodes[<node>].used.<resource>").
func (inv *Inventory) SetUsed(node, resource string, a Amount) ([]Overcommit, error) {
	return inv.setAmount(node, resource, a, false)
}

// Replacement is what Inventory.Replace answered.
type Replacement struct {
	// Status is StatusPlaced (the reservation now holds the members Added; also when
	// nothing was lost) or StatusPending (the domain that binds the gang has no room
	// now, even if others do; nothing was applied and the members stay lost).
	Status Status
	Added  []Assignment
	// Text says why it is pending, one sentence per binding domain ("rack b1/a has no
	// room for 2 worker …; rack b1/b has room, but the gang is bound to rack b1/a.");
	// empty when placed.
	Text string
	// JSON is the answer as data: {"status": "placed", "added": […]} or {"status":
	// "pending", "message", "pending": {"reservation", "gang", "domains": […],
	// "search_exhausted"}}.
	JSON string
}

// Replace places the members reservation id lost (RemoveNode, FailNode) inside the
// gang's original domain at its required level — with slices, inside each lost member's
// slice domain — and nowhere else. "No room there" is not an error: it is a
// Replacement with StatusPending saying which domain binds the gang and what it lacks.
//
// Errors: ErrUnknownReservation, ErrClosed.
func (inv *Inventory) Replace(id ReservationID) (Replacement, error) {
	h, err := inv.lock("Inventory.Replace")
	if err != nil {
		return Replacement{}, err
	}
	defer inv.mu.Unlock()
	var status C.gang_status
	var r *C.gang_replacement
	var cerr *C.gang_error
	rc := C.gang_inventory_replace(h, C.uint64_t(id), &status, &r, &cerr)
	runtime.KeepAlive(inv)
	if err := fromC(rc, cerr, "gang_inventory_replace"); err != nil {
		return Replacement{}, err
	}
	defer C.gang_replacement_free(r)
	out := Replacement{Status: Status(status)}
	var n C.size_t
	var s, t C.gang_str
	var k C.uint32_t
	mustOK(C.gang_replacement_added_len(r, &n), "gang_replacement_added_len")
	out.Added = make([]Assignment, int(n))
	for i := range out.Added {
		mustOK(C.gang_replacement_added_at(r, C.size_t(i), &s, &t, &k), "gang_replacement_added_at")
		out.Added[i] = Assignment{Role: goStr(s), Node: goStr(t), Count: uint32(k)}
	}
	mustOK(C.gang_replacement_text(r, &s), "gang_replacement_text")
	out.Text = goStr(s)
	mustOK(C.gang_replacement_json(r, &s), "gang_replacement_json")
	out.JSON = goStr(s)
	return out, nil
}

// SpreadSpec asks for Replicas replicas of Gang, each satisfying the gang's own
// topology constraint, in pairwise distinct domains of Level (only constrained roles
// are spread).
type SpreadSpec struct {
	Gang     *Gang
	Replicas uint32
	// MinReplicas accepts as few as this many (0: all of them).
	MinReplicas uint32
	Level       string
	// Within keeps every replica inside one domain of this level ("": no such rule).
	Within string
}

// SpreadOutcome is what Inventory.Spread answered. Close it when done (the replicas
// stay reserved: release them with Inventory.Release).
type SpreadOutcome struct {
	// Status is StatusPlaced (each replica reserved) or StatusUnschedulable (fewer
	// than required fit; nothing is held).
	Status Status
	// Fit replicas fit (placed: how many were reserved; unschedulable: the most found)
	// of Needed required.
	Fit, Needed uint32
	// Reservations and Placements, one per replica placed, in order.
	Reservations []ReservationID
	Placements   []*Placement
	// Diagnosis says why the next replica did not fit (nil when all were placed).
	Diagnosis *Diagnosis
}

// Close frees the placements and the diagnosis. It is idempotent.
func (o SpreadOutcome) Close() {
	for _, p := range o.Placements {
		p.Close()
	}
	o.Diagnosis.Close()
}

func newPlacement(p *C.gang_placement) *Placement {
	if p == nil {
		return nil
	}
	out := &Placement{ptr: p}
	runtime.SetFinalizer(out, (*Placement).Close)
	return out
}

func newDiagnosis(d *C.gang_diagnosis) *Diagnosis {
	if d == nil {
		return nil
	}
	out := &Diagnosis{ptr: d}
	runtime.SetFinalizer(out, (*Diagnosis).Close)
	return out
}

// Spread places and reserves replicas of a gang in distinct domains: all of them, at
// least MinReplicas, or nothing. Replicas are placed one at a time by the exact solver
// (not an exact search over all combinations); with Within, every domain of that level
// is tried and the one holding the most replicas wins.
//
// Errors: ErrInvalidRequest (no replicas, MinReplicas above Replicas, a level that is
// not a topology level, an invalid gang), ErrContradictory (Within at or inside Level
// while two or more replicas are required), ErrInvalidQuantity; the inventory is then
// unchanged. ErrClosed or ErrNullArgument for a closed or nil inventory or Gang.
func (inv *Inventory) Spread(spec SpreadSpec) (SpreadOutcome, error) {
	var cs cstrings
	defer cs.free()
	level, err := cs.of(spec.Level, "spread.level")
	if err != nil {
		return SpreadOutcome{}, err
	}
	var within *C.char
	if spec.Within != "" {
		if within, err = cs.of(spec.Within, "spread.within"); err != nil {
			return SpreadOutcome{}, err
		}
	}
	h, err := inv.lock("Inventory.Spread")
	if err != nil {
		return SpreadOutcome{}, err
	}
	defer inv.mu.Unlock()
	gp, err := spec.Gang.handle("Inventory.Spread", "gang")
	if err != nil {
		return SpreadOutcome{}, err
	}
	var status C.gang_status
	var s *C.gang_spread_outcome
	var cerr *C.gang_error
	rc := C.gang_inventory_spread(h, gp, C.uint32_t(spec.Replicas), C.uint32_t(spec.MinReplicas),
		level, within, &status, &s, &cerr)
	runtime.KeepAlive(inv)
	runtime.KeepAlive(spec.Gang)
	if err := fromC(rc, cerr, "gang_inventory_spread"); err != nil {
		return SpreadOutcome{}, err
	}
	defer C.gang_spread_outcome_free(s)
	out := SpreadOutcome{Status: Status(status)}
	var fit, needed C.uint32_t
	mustOK(C.gang_spread_outcome_fit(s, &fit, &needed), "gang_spread_outcome_fit")
	out.Fit, out.Needed = uint32(fit), uint32(needed)
	var n C.size_t
	mustOK(C.gang_spread_outcome_replicas_len(s, &n), "gang_spread_outcome_replicas_len")
	out.Reservations = make([]ReservationID, int(n))
	out.Placements = make([]*Placement, int(n))
	for i := 0; i < int(n); i++ {
		var id C.uint64_t
		var p *C.gang_placement
		mustOK(C.gang_spread_outcome_reservation_at(s, C.size_t(i), &id), "gang_spread_outcome_reservation_at")
		mustOK(C.gang_spread_outcome_placement_at(s, C.size_t(i), &p), "gang_spread_outcome_placement_at")
		out.Reservations[i] = ReservationID(id)
		out.Placements[i] = newPlacement(p)
	}
	var d *C.gang_diagnosis
	mustOK(C.gang_spread_outcome_diagnosis(s, &d), "gang_spread_outcome_diagnosis")
	out.Diagnosis = newDiagnosis(d)
	return out, nil
}

// AdmitMode is how Inventory.Admit treats a gang that does not fit.
type AdmitMode uint32

// Admission modes (gang.h's gang_admit_mode).
const (
	// AdmitFIFO: strict FIFO, the first gang that waits blocks every later one.
	AdmitFIFO AdmitMode = C.GANG_ADMIT_FIFO
	// AdmitBackfill: a later gang may go ahead of the waiting head, but only on nodes
	// where no role of the head fits a member now.
	AdmitBackfill AdmitMode = C.GANG_ADMIT_BACKFILL
)

// Admission is what happened to one gang of an admitted queue. Close it when done.
type Admission struct {
	// Gang is the gang's name.
	Gang string
	// Status is StatusPlaced (placed whole and reserved) or StatusWaiting (holding
	// nothing).
	Status Status
	// Reservation and Placement, when placed.
	Reservation ReservationID
	Placement   *Placement
	// Diagnosis says why a waiting gang does not fit now; nil when placed, or when it
	// waits only because of the head (then BlockedBy names the head).
	Diagnosis *Diagnosis
	BlockedBy string
}

// Close frees the placement or diagnosis. It is idempotent.
func (a Admission) Close() {
	a.Placement.Close()
	a.Diagnosis.Close()
}

// Admit admits a queue of gangs in order: each is placed whole and reserved, or waits
// holding nothing; no gang ever holds part of its members. Every gang is validated
// before anything is placed, so an invalid queue changes nothing. The result has one
// Admission per gang, in queue order.
//
// Errors: those of Compile for the first invalid gang, ErrInvalidArgument for an
// unknown mode; ErrClosed or ErrNullArgument for a closed or nil inventory or gang
// (Field "queue[i]").
func (inv *Inventory) Admit(queue []*Gang, mode AdmitMode) ([]Admission, error) {
	h, err := inv.lock("Inventory.Admit")
	if err != nil {
		return nil, err
	}
	defer inv.mu.Unlock()
	gangs := make([]*C.gang_gang, len(queue))
	for i, g := range queue {
		if gangs[i], err = g.handle("Inventory.Admit", fmt.Sprintf("queue[%d]", i)); err != nil {
			return nil, err
		}
	}
	var gp **C.gang_gang
	if len(gangs) > 0 {
		gp = &gangs[0]
	}
	var a *C.gang_admissions
	var cerr *C.gang_error
	rc := C.gang_inventory_admit(h, gp, C.size_t(len(gangs)), C.uint32_t(mode), &a, &cerr)
	runtime.KeepAlive(inv)
	runtime.KeepAlive(queue)
	if err := fromC(rc, cerr, "gang_inventory_admit"); err != nil {
		return nil, err
	}
	defer C.gang_admissions_free(a)
	var n C.size_t
	mustOK(C.gang_admissions_len(a, &n), "gang_admissions_len")
	out := make([]Admission, int(n))
	for i := range out {
		ci := C.size_t(i)
		var name, blocked C.gang_str
		var status C.gang_status
		var p *C.gang_placement
		var d *C.gang_diagnosis
		mustOK(C.gang_admissions_at(a, ci, &name, &status), "gang_admissions_at")
		ad := Admission{Gang: goStr(name), Status: Status(status)}
		if ad.Status == StatusPlaced {
			var id C.uint64_t
			mustOK(C.gang_admissions_reservation(a, ci, &id), "gang_admissions_reservation")
			ad.Reservation = ReservationID(id)
		}
		mustOK(C.gang_admissions_placement(a, ci, &p), "gang_admissions_placement")
		mustOK(C.gang_admissions_diagnosis(a, ci, &d), "gang_admissions_diagnosis")
		mustOK(C.gang_admissions_blocked_by(a, ci, &blocked), "gang_admissions_blocked_by")
		ad.Placement, ad.Diagnosis, ad.BlockedBy = newPlacement(p), newDiagnosis(d), goStr(blocked)
		out[i] = ad
	}
	return out, nil
}

// NodeJSON describes node name as it stands now, in the node format of the scenario
// files ({"name", "labels", "capacity", "used", "taints", "schedulable"}).
//
// Errors: ErrUnknownNode, ErrClosed.
func (inv *Inventory) NodeJSON(name string) (string, error) {
	var cs cstrings
	defer cs.free()
	cn, err := cs.of(name, "name")
	if err != nil {
		return "", err
	}
	h, err := inv.rlock("Inventory.NodeJSON")
	if err != nil {
		return "", err
	}
	defer inv.mu.RUnlock()
	var js *C.gang_string
	var cerr *C.gang_error
	rc := C.gang_inventory_node_json(h, cn, &js, &cerr)
	runtime.KeepAlive(inv)
	if err := fromC(rc, cerr, "gang_inventory_node_json"); err != nil {
		return "", err
	}
	defer C.gang_string_free(js)
	var v C.gang_str
	mustOK(C.gang_string_view(js, &v), "gang_string_view")
	return goStr(v), nil
}

// Validate checks the inventory's internal invariants (summaries, free = capacity −
// used − reserved, reserved = the sum of live reservations, no partial reservation).
// For tests: it walks the whole inventory. Errors: ErrInternalError naming the first
// broken invariant (a bug), ErrClosed.
func (inv *Inventory) Validate() error {
	h, err := inv.rlock("Inventory.Validate")
	if err != nil {
		return err
	}
	defer inv.mu.RUnlock()
	var cerr *C.gang_error
	rc := C.gang_inventory_validate(h, &cerr)
	runtime.KeepAlive(inv)
	return fromC(rc, cerr, "gang_inventory_validate")
}
