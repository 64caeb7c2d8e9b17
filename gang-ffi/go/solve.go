package gang

/*
#include <stdlib.h>
#include "gang.h"

// The outputs of a placement query, returned by value so that Go passes no pointers to
// its own memory (each would escape to the heap: four allocations per query).
typedef struct {
    gang_result rc;
    gang_status status;
    gang_placement *placement;
    gang_diagnosis *diagnosis;
    gang_error *error;
} gang_go_outcome;

static gang_go_outcome gang_go_solver_place(gang_solver *s, const gang_inventory *inv,
                                            const gang_compiled *c) {
    gang_go_outcome o = {0, 0, NULL, NULL, NULL};
    o.rc = gang_solver_place(s, inv, c, &o.status, &o.placement, &o.diagnosis, &o.error);
    return o;
}

// The outputs of gang_solver_find, returned by value for the same reason.
typedef struct {
    gang_result rc;
    gang_placement *placement;
    gang_error *error;
} gang_go_found;

static gang_go_found gang_go_solver_find(gang_solver *s, const gang_inventory *inv,
                                         const gang_compiled *c) {
    gang_go_found f = {0, NULL, NULL};
    f.rc = gang_solver_find(s, inv, c, &f.placement, &f.error);
    return f;
}

static gang_go_outcome gang_go_inventory_place(const gang_inventory *inv, const gang_gang *g) {
    gang_go_outcome o = {0, 0, NULL, NULL, NULL};
    o.rc = gang_inventory_place(inv, g, &o.status, &o.placement, &o.diagnosis, &o.error);
    return o;
}
*/
import "C"

import (
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// CompiledGang is a gang validated and compiled against an inventory, for repeated
// placement with a Solver. It is immutable and may be shared between goroutines.
// Placing it on another inventory (or one changed since) compiles it again on the fly.
type CompiledGang struct {
	ptr *C.gang_compiled
}

// handle returns the compiled gang's C handle for method, or the error of a nil
// (ErrNullArgument) or closed (ErrClosed) one.
func (c *CompiledGang) handle(method string) (*C.gang_compiled, error) {
	if c == nil {
		return nil, nilHandle(method, "compiled")
	}
	if c.ptr == nil {
		return nil, closedHandle(method, "compiled")
	}
	return c.ptr, nil
}

// Close frees the compiled gang. It is idempotent; it must not race with other uses.
func (c *CompiledGang) Close() {
	if c == nil || c.ptr == nil {
		return
	}
	C.gang_compiled_free(c.ptr)
	c.ptr = nil
	runtime.SetFinalizer(c, nil)
}

// Solver owns reusable scratch space so that repeated placement queries do not
// allocate beyond their result. A Solver serialises its own queries (it holds a
// mutex); for parallel queries use one Solver per goroutine.
type Solver struct {
	mu  sync.Mutex
	ptr *C.gang_solver
}

// DefaultWork is the work units a query may spend unless told otherwise (NewSolver;
// pass it to SetLimits to go back to the default).
const DefaultWork uint64 = C.GANG_DEFAULT_WORK

// NewSolver returns a solver with the default limits: DefaultWork work units per query
// and no deadline (see SetLimits).
func NewSolver() *Solver {
	var p *C.gang_solver
	mustOK(C.gang_solver_new(&p), "gang_solver_new")
	return newSolver(p)
}

// NewSolverWithBudget returns a solver whose multi-role work may spend at most budget
// work units per query (nodes looked at, bounds, search patterns), and no deadline; an
// exhausted budget is StatusUndecided, never a false "does not fit". The same as
// NewSolver then SetLimits(budget, 0).
func NewSolverWithBudget(budget uint64) *Solver {
	var p *C.gang_solver
	mustOK(C.gang_solver_new_with_budget(C.uint64_t(budget), &p), "gang_solver_new_with_budget")
	return newSolver(p)
}

func newSolver(p *C.gang_solver) *Solver {
	s := &Solver{ptr: p}
	runtime.SetFinalizer(s, (*Solver).Close)
	return s
}

// Close frees the solver. It is idempotent.
func (s *Solver) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ptr == nil {
		return
	}
	C.gang_solver_free(s.ptr)
	s.ptr = nil
	runtime.SetFinalizer(s, nil)
}

// SetLimits sets the limits of every later Place and Find of s, until set again: at
// most work work units per query (nodes looked at, bounds and search patterns alike;
// DefaultWork is the default, 0 allows none, as in NewSolverWithBudget), and, unless
// timeout is 0 (no deadline, the default), a deadline timeout after the start of each
// query — counted from each Place or Find, not from this call, as Python's timeout= is.
// For a limit on one query only, set it before that query and set it back after.
//
// A query stopped by either limit answers StatusUndecided (or a Placement whose
// SearchComplete is false), never a false "does not fit". With a deadline the answer
// depends on the machine's speed; without one it is deterministic. The deadline is
// checked every 1024 work units; a timeout is rounded up to whole microseconds.
// Single-role gangs do no such work and are never undecided.
//
// Errors: ErrInvalidArgument for a negative timeout (nothing set); ErrClosed or
// ErrNullArgument for a closed or nil solver.
func (s *Solver) SetLimits(work uint64, timeout time.Duration) error {
	const method = "Solver.SetLimits"
	if s == nil {
		return nilHandle(method, "solver")
	}
	if timeout < 0 {
		return argError(C.GANG_INVALID_ARGUMENT, method, "timeout", "%v is negative", timeout)
	}
	// Rounded up, so that a positive timeout never becomes 0 (none).
	us := uint64(timeout / time.Microsecond)
	if timeout%time.Microsecond != 0 {
		us++
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ptr == nil {
		return closedHandle(method, "solver")
	}
	rc := C.gang_solver_set_limits(s.ptr, C.uint64_t(work), C.uint64_t(us))
	runtime.KeepAlive(s)
	return check(rc, "gang_solver_set_limits")
}

// Place places a compiled gang on inv: all of it (or each role's MinCount), or
// nothing. "Does not fit" is not an error: it is an Outcome with a Diagnosis.
//
// Errors: those of recompiling (when c was compiled for another inventory, or before
// nodes were added, removed or relabelled); ErrClosed or ErrNullArgument for a closed
// or nil solver, inventory or compiled gang.
func (s *Solver) Place(inv *Inventory, c *CompiledGang) (Outcome, error) {
	sp, h, cp, err := s.begin("Solver.Place", inv, c)
	if err != nil {
		return Outcome{}, err
	}
	defer s.mu.Unlock()
	defer inv.mu.RUnlock()
	o := C.gang_go_solver_place(sp, h, cp)
	runtime.KeepAlive(s)
	runtime.KeepAlive(inv)
	runtime.KeepAlive(c)
	if err := fromC(o.rc, o.error, "gang_solver_place"); err != nil {
		return Outcome{}, err
	}
	return newOutcome(o.status, o.placement, o.diagnosis), nil
}

// Find places a compiled gang like Place, but answers "not now" with a nil Placement
// instead of building a Diagnosis: for a scheduler that asks again every cycle about
// gangs that keep waiting (a diagnosis costs far more than the answer). Nil covers
// StatusUnschedulable and StatusUndecided alike; call Place for the reason. A
// placement found is the one Place returns.
//
// Errors: as Place.
func (s *Solver) Find(inv *Inventory, c *CompiledGang) (*Placement, error) {
	sp, h, cp, err := s.begin("Solver.Find", inv, c)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	defer inv.mu.RUnlock()
	f := C.gang_go_solver_find(sp, h, cp)
	runtime.KeepAlive(s)
	runtime.KeepAlive(inv)
	runtime.KeepAlive(c)
	if err := fromC(f.rc, f.error, "gang_solver_find"); err != nil {
		return nil, err
	}
	return newPlacement(f.placement), nil
}

// begin starts a query of method: it locks the solver and read-locks the inventory,
// and returns the three handles. For a nil or closed solver, inventory or compiled
// gang it returns the error and leaves nothing locked; else the caller unlocks both.
func (s *Solver) begin(method string, inv *Inventory, c *CompiledGang) (
	*C.gang_solver, *C.gang_inventory, *C.gang_compiled, error) {
	if s == nil {
		return nil, nil, nil, nilHandle(method, "solver")
	}
	cp, err := c.handle(method)
	if err != nil {
		return nil, nil, nil, err
	}
	s.mu.Lock()
	if s.ptr == nil {
		s.mu.Unlock()
		return nil, nil, nil, closedHandle(method, "solver")
	}
	h, err := inv.rlock(method)
	if err != nil {
		s.mu.Unlock()
		return nil, nil, nil, err
	}
	return s.ptr, h, cp, nil
}

// placeOnInventory is gang_inventory_place on h, inv's handle read-locked by the caller,
// and gp, g's (the C helper lives in this file's preamble).
func placeOnInventory(h *C.gang_inventory, inv *Inventory, gp *C.gang_gang, g *Gang) C.gang_go_outcome {
	o := C.gang_go_inventory_place(h, gp)
	runtime.KeepAlive(inv)
	runtime.KeepAlive(g)
	return o
}

// Status is what a placement query answered.
type Status uint32

// Statuses (gang.h's gang_status).
const (
	StatusPlaced        Status = C.GANG_STATUS_PLACED
	StatusUnschedulable Status = C.GANG_STATUS_UNSCHEDULABLE
	StatusUndecided     Status = C.GANG_STATUS_UNDECIDED
	// StatusPending: a replacement has no room inside the domain that binds the gang
	// (Inventory.Replace); nothing was applied.
	StatusPending Status = C.GANG_STATUS_PENDING
	// StatusWaiting: a gang of an admitted queue was not placed and holds nothing
	// (Inventory.Admit).
	StatusWaiting Status = C.GANG_STATUS_WAITING
)

func (s Status) String() string {
	switch s {
	case StatusPlaced:
		return "placed"
	case StatusUnschedulable:
		return "unschedulable"
	case StatusUndecided:
		return "undecided"
	case StatusPending:
		return "pending"
	case StatusWaiting:
		return "waiting"
	}
	return "unknown"
}

// Outcome is what a placement query answered: a Placement (StatusPlaced) or a
// Diagnosis (StatusUnschedulable, StatusUndecided). Close it when done.
type Outcome struct {
	Status    Status
	Placement *Placement
	Diagnosis *Diagnosis
}

// Close frees the placement or diagnosis. It is idempotent.
func (o Outcome) Close() {
	o.Placement.Close()
	o.Diagnosis.Close()
}

func newOutcome(status C.gang_status, p *C.gang_placement, d *C.gang_diagnosis) Outcome {
	return Outcome{Status: Status(status), Placement: newPlacement(p), Diagnosis: newDiagnosis(d)}
}

// Placement says where a gang goes: the level and domain, and how many members of each
// role on which node. Its methods copy what they return out of the library. They have
// no error to return, so on a nil or closed Placement they panic — with an *Error
// (errors.Is(v, ErrClosed) or ErrNullArgument on the recovered value), never a nil
// dereference. Immutable: may be read from many goroutines.
type Placement struct {
	ptr *C.gang_placement
}

// Close frees the placement. It is idempotent; it must not race with other uses.
func (p *Placement) Close() {
	if p == nil || p.ptr == nil {
		return
	}
	C.gang_placement_free(p.ptr)
	p.ptr = nil
	runtime.SetFinalizer(p, nil)
}

// handle returns the placement's C handle for method, or the error of a nil
// (ErrNullArgument) or closed (ErrClosed) placement.
func (p *Placement) handle(method string) (*C.gang_placement, error) {
	if p == nil {
		return nil, nilHandle(method, "placement")
	}
	if p.ptr == nil {
		return nil, closedHandle(method, "placement")
	}
	return p.ptr, nil
}

// live is the handle for an accessor, which has no error to return: a nil or closed
// placement panics with the *Error that handle returns (like a closed channel).
func (p *Placement) live(method string) *C.gang_placement {
	h, err := p.handle(method)
	if err != nil {
		panic(err)
	}
	return h
}

func (p *Placement) str(f func(*C.gang_placement, *C.gang_str) C.gang_result, method, call string) string {
	var s C.gang_str
	mustOK(f(p.live(method), &s), call)
	out := goStr(s)
	runtime.KeepAlive(p)
	return out
}

// Gang returns the gang's name.
func (p *Placement) Gang() string {
	return p.str(func(h *C.gang_placement, s *C.gang_str) C.gang_result { return C.gang_placement_gang(h, s) }, "Placement.Gang", "gang_placement_gang")
}

// Level returns the level whose single domain holds the constrained members ("" when
// placed cluster-wide).
func (p *Placement) Level() string {
	return p.str(func(h *C.gang_placement, s *C.gang_str) C.gang_result { return C.gang_placement_level(h, s) }, "Placement.Level", "gang_placement_level")
}

// DomainPath returns the domain's values joined by "/" ("b1/r1"; "" cluster-wide).
func (p *Placement) DomainPath() string {
	return p.str(func(h *C.gang_placement, s *C.gang_str) C.gang_result {
		return C.gang_placement_domain_path(h, s)
	}, "Placement.DomainPath", "gang_placement_domain_path")
}

// JSON returns the placement as the core's JSON document ({"status": "placed", …}).
func (p *Placement) JSON() string {
	return p.str(func(h *C.gang_placement, s *C.gang_str) C.gang_result { return C.gang_placement_json(h, s) }, "Placement.JSON", "gang_placement_json")
}

// LevelValue is one level of a domain, or a level with a count of domains used.
type LevelValue struct {
	Level string
	Value string
}

// Domain returns the domain as (level, value) pairs, outermost first.
func (p *Placement) Domain() []LevelValue {
	h := p.live("Placement.Domain")
	var n C.size_t
	mustOK(C.gang_placement_domain_len(h, &n), "gang_placement_domain_len")
	out := make([]LevelValue, int(n))
	for i := range out {
		var k, v C.gang_str
		mustOK(C.gang_placement_domain_at(h, C.size_t(i), &k, &v), "gang_placement_domain_at")
		out[i] = LevelValue{Level: goStr(k), Value: goStr(v)}
	}
	runtime.KeepAlive(p)
	return out
}

// Assignment is Count members of Role on Node.
type Assignment struct {
	Role  string
	Node  string
	Count uint32
}

// Assignments returns the per-role per-node member counts, ordered by role (as given)
// then node (topology order).
func (p *Placement) Assignments() []Assignment {
	h := p.live("Placement.Assignments")
	var n C.size_t
	mustOK(C.gang_placement_assignments_len(h, &n), "gang_placement_assignments_len")
	out := make([]Assignment, int(n))
	for i := range out {
		var role, node C.gang_str
		var k C.uint32_t
		mustOK(C.gang_placement_assignment_at(h, C.size_t(i), &role, &node, &k), "gang_placement_assignment_at")
		out[i] = Assignment{Role: goStr(role), Node: goStr(node), Count: uint32(k)}
	}
	runtime.KeepAlive(p)
	return out
}

// NodeCounts returns the members per node, summed over roles.
func (p *Placement) NodeCounts() map[string]uint32 {
	out := map[string]uint32{}
	for _, a := range p.Assignments() {
		out[a.Node] += a.Count
	}
	return out
}

// Members returns the total number of members placed.
func (p *Placement) Members() uint64 {
	var m C.uint64_t
	mustOK(C.gang_placement_members(p.live("Placement.Members"), &m), "gang_placement_members")
	runtime.KeepAlive(p)
	return uint64(m)
}

// Placed returns the members placed for role (below its count only for elastic
// roles); false when the gang has no such role.
func (p *Placement) Placed(role string) (uint32, bool) {
	h := p.live("Placement.Placed")
	cr := C.CString(role)
	defer C.free(unsafe.Pointer(cr))
	var k C.uint32_t
	rc := C.gang_placement_placed(h, cr, &k)
	runtime.KeepAlive(p)
	if rc == C.GANG_NOT_FOUND {
		return 0, false
	}
	mustOK(rc, "gang_placement_placed")
	return uint32(k), true
}

// LevelCount is how many distinct domains of Level a placement uses.
type LevelCount struct {
	Level string
	Count uint32
}

// DomainsUsed returns the number of distinct domains used at each level, outermost
// first, the node level ("kubernetes.io/hostname") last.
func (p *Placement) DomainsUsed() []LevelCount {
	h := p.live("Placement.DomainsUsed")
	var n C.size_t
	mustOK(C.gang_placement_domains_used_len(h, &n), "gang_placement_domains_used_len")
	out := make([]LevelCount, int(n))
	for i := range out {
		var k C.gang_str
		var c C.uint32_t
		mustOK(C.gang_placement_domains_used_at(h, C.size_t(i), &k, &c), "gang_placement_domains_used_at")
		out[i] = LevelCount{Level: goStr(k), Count: uint32(c)}
	}
	runtime.KeepAlive(p)
	return out
}

// SearchComplete is false when the exact multi-role search ran out of budget at a
// tighter level first (so a tighter placement might exist).
func (p *Placement) SearchComplete() bool {
	var b C.bool
	mustOK(C.gang_placement_search_complete(p.live("Placement.SearchComplete"), &b), "gang_placement_search_complete")
	runtime.KeepAlive(p)
	return bool(b)
}

// Diagnosis says why a valid gang does not fit now: the best domain and how many
// members it takes, what it is short of, exclusions by reason, what relaxing the
// constraint would give. Like a Placement's, its methods panic with an *Error on a nil
// or closed Diagnosis. Immutable.
type Diagnosis struct {
	ptr *C.gang_diagnosis
}

// Close frees the diagnosis. It is idempotent; it must not race with other uses.
func (d *Diagnosis) Close() {
	if d == nil || d.ptr == nil {
		return
	}
	C.gang_diagnosis_free(d.ptr)
	d.ptr = nil
	runtime.SetFinalizer(d, nil)
}

// live is the handle for an accessor: a nil or closed diagnosis panics with an *Error
// (ErrNullArgument or ErrClosed) naming method, as a Placement's accessors do.
func (d *Diagnosis) live(method string) *C.gang_diagnosis {
	if d == nil {
		panic(nilHandle(method, "diagnosis"))
	}
	if d.ptr == nil {
		panic(closedHandle(method, "diagnosis"))
	}
	return d.ptr
}

func (d *Diagnosis) str(f func(*C.gang_diagnosis, *C.gang_str) C.gang_result, method, call string) string {
	var s C.gang_str
	mustOK(f(d.live(method), &s), call)
	out := goStr(s)
	runtime.KeepAlive(d)
	return out
}

// Status is StatusUnschedulable or StatusUndecided.
func (d *Diagnosis) Status() Status {
	var s C.gang_status
	mustOK(C.gang_diagnosis_status(d.live("Diagnosis.Status"), &s), "gang_diagnosis_status")
	runtime.KeepAlive(d)
	return Status(s)
}

// Gang returns the gang's name.
func (d *Diagnosis) Gang() string {
	return d.str(func(h *C.gang_diagnosis, s *C.gang_str) C.gang_result { return C.gang_diagnosis_gang(h, s) }, "Diagnosis.Gang", "gang_diagnosis_gang")
}

// Level returns the level the gang was asked to fit in ("" when unconstrained).
func (d *Diagnosis) Level() string {
	return d.str(func(h *C.gang_diagnosis, s *C.gang_str) C.gang_result { return C.gang_diagnosis_level(h, s) }, "Diagnosis.Level", "gang_diagnosis_level")
}

// Text returns the diagnosis as one readable paragraph.
func (d *Diagnosis) Text() string {
	return d.str(func(h *C.gang_diagnosis, s *C.gang_str) C.gang_result { return C.gang_diagnosis_text(h, s) }, "Diagnosis.Text", "gang_diagnosis_text")
}

// String is Text.
func (d *Diagnosis) String() string { return d.Text() }

// JSON returns the diagnosis as data: {"status": "unschedulable" | "undecided",
// "message", "diagnosis": {…}}, the core's JSON document.
func (d *Diagnosis) JSON() string {
	return d.str(func(h *C.gang_diagnosis, s *C.gang_str) C.gang_result { return C.gang_diagnosis_json(h, s) }, "Diagnosis.JSON", "gang_diagnosis_json")
}
