package gang_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	gang "example.invalid/gang/gang-ffi/go"
)

// A solver's limits (Solver.SetLimits; the C test of the same shape is
// tests/c/test_limits.c). The instance: racks of 4 nodes with 3 GPUs each, and roles a
// (4) and b (2) of two GPUs (b also one CPU), rack required — each role alone fits any rack, both never
// (six members, four nodes). It is proven unschedulable only after looking at every
// rack (about 2 work units per node), so the only honest answers are "unschedulable"
// and "undecided". Nothing asserts on times.

// racksOfFour compiles a and b on n nodes in racks of 4.
func racksOfFour(t *testing.T, n int) (*gang.Inventory, *gang.CompiledGang) {
	t.Helper()
	nodes := make([]gang.Node, n)
	for i := range nodes {
		nodes[i] = gang.Node{
			Name:     fmt.Sprintf("n%06d", i),
			Labels:   map[string]string{"rack": fmt.Sprintf("r%05d", i/4)},
			Capacity: map[string]gang.Amount{"gpu": gang.Units(3), "cpu": gang.Units(4)},
		}
	}
	inv, err := gang.NewInventory([]string{"rack"}, nodes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(inv.Close)
	g, err := gang.NewGang(gang.GangSpec{Name: "ab", Required: "rack", Roles: []gang.Role{
		{Name: "a", Count: 4, Requests: map[string]gang.Amount{"gpu": gang.Units(2)}},
		// b needs a CPU too: with one shape, a and b would share each rack's capacity
		// and every rack be ruled out before any work (gang-core's multi_decided).
		{Name: "b", Count: 2, Requests: map[string]gang.Amount{"gpu": gang.Units(2), "cpu": gang.Units(1)}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	c, err := inv.Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return inv, c
}

// status places c with s and returns the status, checking that Find agrees.
func status(t *testing.T, s *gang.Solver, inv *gang.Inventory, c *gang.CompiledGang) gang.Status {
	t.Helper()
	out, err := s.Place(inv, c)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if out.Diagnosis != nil && out.Diagnosis.Status() != out.Status {
		t.Errorf("diagnosis %v, outcome %v", out.Diagnosis.Status(), out.Status)
	}
	p, err := s.Find(inv, c)
	if err != nil {
		t.Fatal(err)
	}
	if (p != nil) != (out.Status == gang.StatusPlaced) {
		t.Errorf("Find: %v, Place: %v", p, out.Status)
	}
	p.Close()
	return out.Status
}

// set calls s.SetLimits, failing the test on an error.
func set(t *testing.T, s *gang.Solver, work uint64, timeout time.Duration) {
	t.Helper()
	if err := s.SetLimits(work, timeout); err != nil {
		t.Fatal(err)
	}
}

func TestSetLimitsWork(t *testing.T) {
	inv, c := racksOfFour(t, 1000)
	s := gang.NewSolver()
	defer s.Close()
	want := func(what string, st gang.Status) {
		t.Helper()
		if got := status(t, s, inv, c); got != st {
			t.Errorf("%s: %v, want %v", what, got, st)
		}
	}
	want("default", gang.StatusUnschedulable)
	set(t, s, 500, 0)
	want("500 units", gang.StatusUndecided)
	want("500 units, the next query", gang.StatusUndecided)
	set(t, s, gang.DefaultWork, 0)
	want("back to the default", gang.StatusUnschedulable)
	set(t, s, 0, 0)
	want("no work", gang.StatusUndecided)
	zero := gang.NewSolverWithBudget(0)
	defer zero.Close()
	if got := status(t, zero, inv, c); got != gang.StatusUndecided {
		t.Errorf("NewSolverWithBudget(0): %v, want undecided as SetLimits(0, 0)", got)
	}
	set(t, zero, gang.DefaultWork, 0)
	if got := status(t, zero, inv, c); got != gang.StatusUnschedulable {
		t.Errorf("NewSolverWithBudget(0) then the default: %v", got)
	}
}

func TestSetLimitsTimeout(t *testing.T) {
	inv, c := racksOfFour(t, 1000)
	s := gang.NewSolver()
	defer s.Close()
	cases := []struct {
		work    uint64
		timeout time.Duration
		want    gang.Status
	}{
		{gang.DefaultWork, time.Microsecond, gang.StatusUndecided},
		{gang.DefaultWork, time.Nanosecond, gang.StatusUndecided}, // rounded up, not 0 (none)
		{gang.DefaultWork, 0, gang.StatusUnschedulable},
		{gang.DefaultWork, time.Minute, gang.StatusUnschedulable},
		{gang.DefaultWork, math.MaxInt64, gang.StatusUnschedulable},
		{500, time.Minute, gang.StatusUndecided}, // the work limit still stops it
	}
	for _, k := range cases {
		set(t, s, k.work, k.timeout)
		for i := 0; i < 2; i++ { // and for the next query
			if got := status(t, s, inv, c); got != k.want {
				t.Errorf("work %d, timeout %v, query %d: %v, want %v", k.work, k.timeout, i, got, k.want)
			}
		}
	}
}

// The timeout counts from each query: set 200 ms, wait 300 ms, then a query decided
// in far less answers. Had the deadline been counted from SetLimits, it would have
// passed before the query's first unit of work (the clock is read at the first unit,
// then every 1024), and the answer been undecided.
func TestSetLimitsTimeoutCountsFromEachQuery(t *testing.T) {
	inv, c := racksOfFour(t, 40)
	s := gang.NewSolver()
	defer s.Close()
	set(t, s, gang.DefaultWork, 200*time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	if got := status(t, s, inv, c); got != gang.StatusUnschedulable {
		t.Errorf("a query 300 ms after a 200 ms timeout was set: %v, want unschedulable", got)
	}
}

// A negative timeout is refused and sets nothing: the work limit set before holds.
// (A nil or closed solver: TestNilAndClosedHandles.)
func TestSetLimitsNegativeTimeout(t *testing.T) {
	inv, c := racksOfFour(t, 1000)
	s := gang.NewSolver()
	defer s.Close()
	set(t, s, 500, 0)
	wantError(t, "negative", s.SetLimits(gang.DefaultWork, -time.Second),
		gang.ErrInvalidArgument, "timeout", "Solver.SetLimits", "-1s is negative")
	if got := status(t, s, inv, c); got != gang.StatusUndecided {
		t.Errorf("after a refused SetLimits: %v, want the 500-unit limit's undecided", got)
	}
}
