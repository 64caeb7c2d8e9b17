package gang_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	gang "example.invalid/gang/gang-ffi/go"
)

// wantError checks that err (from calling name) is an *Error matching want through
// errors.Is, with the given Field and a message containing each of in.
func wantError(t *testing.T, name string, err error, want *gang.Error, field string, in ...string) {
	t.Helper()
	var ge *gang.Error
	if !errors.Is(err, want) || !errors.As(err, &ge) {
		t.Errorf("%s: %v is not %v", name, err, want)
		return
	}
	if ge.Field != field {
		t.Errorf("%s: field %q, want %q (%v)", name, ge.Field, field, err)
	}
	for _, s := range in {
		if !strings.Contains(ge.Error(), s) {
			t.Errorf("%s: %q lacks %q", name, ge.Error(), s)
		}
	}
}

// noPanic runs f, turning a panic into a test failure (so that one nil dereference
// does not hide the other cases).
func noPanic(t *testing.T, name string, f func() error) (err error) {
	t.Helper()
	defer func() {
		if v := recover(); v != nil {
			t.Errorf("%s panicked: %v", name, v)
			err = nil
		}
	}()
	return f()
}

// Every method given a nil or closed handle — its receiver or an argument — returns an
// error naming the method and the handle (ErrNullArgument for nil, ErrClosed for
// closed), never a nil dereference.
func TestNilAndClosedHandles(t *testing.T) {
	inv := readmeInventory(t)
	defer inv.Close()
	g := readmeGang(t, false)
	defer g.Close()
	c, err := inv.Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := gang.NewSolver()
	defer s.Close()
	out, err := inv.Place(g)
	if err != nil || out.Placement == nil {
		t.Fatal(out.Status, err)
	}
	defer out.Close()

	closedInv := readmeInventory(t)
	closedInv.Close()
	closedGang := readmeGang(t, false)
	closedGang.Close()
	closedC, err := inv.Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	closedC.Close()
	closedS := gang.NewSolver()
	closedS.Close()
	closedOut, err := inv.Place(g)
	if err != nil {
		t.Fatal(err)
	}
	closedOut.Close()
	closedP := closedOut.Placement
	closedSc, err := gang.ParseScenario([]byte(`{"topology": {"levels": ["rack"]}, "nodes": [],
		"gang": {"name": "g", "roles": [{"name": "w", "count": 1}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	closedSc.Close()
	var (
		nilInv  *gang.Inventory
		nilGang *gang.Gang
		nilC    *gang.CompiledGang
		nilS    *gang.Solver
		nilP    *gang.Placement
		nilSc   *gang.Scenario
	)

	// Every method of an Inventory, on a nil and on a closed one.
	inventoryCalls := func(inv *gang.Inventory) map[string]func() error {
		return map[string]func() error{
			"Available":    func() error { _, err := inv.Available("a1", gpu); return err },
			"Compile":      func() error { _, err := inv.Compile(g); return err },
			"Place":        func() error { _, err := inv.Place(g); return err },
			"Reserve":      func() error { _, err := inv.Reserve(out.Placement); return err },
			"Release":      func() error { return inv.Release(0) },
			"Reservation":  func() error { _, err := inv.Reservation(0); return err },
			"Reservations": func() error { _, err := inv.Reservations(); return err },
			"AddNode":      func() error { return inv.AddNode(gang.Node{Name: "x"}) },
			"RemoveNode":   func() error { _, err := inv.RemoveNode("a1"); return err },
			"FailNode":     func() error { _, err := inv.FailNode("a1"); return err },
			"Cordon":       func() error { return inv.Cordon("a1") },
			"Uncordon":     func() error { return inv.Uncordon("a1") },
			"SetLabels":    func() error { _, err := inv.SetLabels("a1", nil); return err },
			"SetCapacity":  func() error { _, err := inv.SetCapacity("a1", gpu, gang.Units(1)); return err },
			"SetUsed":      func() error { _, err := inv.SetUsed("a1", gpu, gang.Quantity("1")); return err },
			"Replace":      func() error { _, err := inv.Replace(0); return err },
			"Spread": func() error {
				_, err := inv.Spread(gang.SpreadSpec{Gang: g, Replicas: 1, Level: rack})
				return err
			},
			"Admit":    func() error { _, err := inv.Admit([]*gang.Gang{g}, gang.AdmitFIFO); return err },
			"NodeJSON": func() error { _, err := inv.NodeJSON("a1"); return err },
			"Validate": func() error { return inv.Validate() },
		}
	}
	for name, f := range inventoryCalls(nilInv) {
		m := "Inventory." + name
		wantError(t, "nil "+m, noPanic(t, "nil "+m, f), gang.ErrNullArgument, "inventory", m, "inventory is nil")
	}
	for name, f := range inventoryCalls(closedInv) {
		m := "Inventory." + name
		err := noPanic(t, "closed "+m, f)
		wantError(t, "closed "+m, err, gang.ErrClosed, "inventory", m, "inventory is closed")
		wantError(t, "closed "+m, err, gang.ErrInvalidHandle, "inventory")
	}
	if nilInv.Len() != 0 || closedInv.Len() != 0 {
		t.Error("a nil or closed inventory has nodes")
	}

	// Handle arguments, nil and closed.
	type argCase struct {
		name  string
		call  func() error
		want  *gang.Error
		field string
	}
	cases := []argCase{
		{"Inventory.Compile(nil)", func() error { _, err := inv.Compile(nilGang); return err }, gang.ErrNullArgument, "gang"},
		{"Inventory.Compile(closed)", func() error { _, err := inv.Compile(closedGang); return err }, gang.ErrClosed, "gang"},
		{"Inventory.Place(nil)", func() error { _, err := inv.Place(nil); return err }, gang.ErrNullArgument, "gang"},
		{"Inventory.Place(closed)", func() error { _, err := inv.Place(closedGang); return err }, gang.ErrClosed, "gang"},
		{"Inventory.Reserve(nil)", func() error { _, err := inv.Reserve(nilP); return err }, gang.ErrNullArgument, "placement"},
		{"Inventory.Reserve(closed)", func() error { _, err := inv.Reserve(closedP); return err }, gang.ErrClosed, "placement"},
		{"Inventory.Spread(nil)", func() error {
			_, err := inv.Spread(gang.SpreadSpec{Replicas: 1, Level: rack})
			return err
		}, gang.ErrNullArgument, "gang"},
		{"Inventory.Spread(closed)", func() error {
			_, err := inv.Spread(gang.SpreadSpec{Gang: closedGang, Replicas: 1, Level: rack})
			return err
		}, gang.ErrClosed, "gang"},
		{"Inventory.Admit(nil)", func() error {
			_, err := inv.Admit([]*gang.Gang{g, nil}, gang.AdmitFIFO)
			return err
		}, gang.ErrNullArgument, "queue[1]"},
		{"Inventory.Admit(closed)", func() error {
			_, err := inv.Admit([]*gang.Gang{closedGang}, gang.AdmitFIFO)
			return err
		}, gang.ErrClosed, "queue[0]"},
		{"Solver.Place on nil", func() error { _, err := nilS.Place(inv, c); return err }, gang.ErrNullArgument, "solver"},
		{"Solver.Place on closed", func() error { _, err := closedS.Place(inv, c); return err }, gang.ErrClosed, "solver"},
		{"Solver.Place(nil, c)", func() error { _, err := s.Place(nilInv, c); return err }, gang.ErrNullArgument, "inventory"},
		{"Solver.Place(closed, c)", func() error { _, err := s.Place(closedInv, c); return err }, gang.ErrClosed, "inventory"},
		{"Solver.Place(inv, nil)", func() error { _, err := s.Place(inv, nilC); return err }, gang.ErrNullArgument, "compiled"},
		{"Solver.Place(inv, closed)", func() error { _, err := s.Place(inv, closedC); return err }, gang.ErrClosed, "compiled"},
		{"Solver.Find on nil", func() error { _, err := nilS.Find(inv, c); return err }, gang.ErrNullArgument, "solver"},
		{"Solver.Find on closed", func() error { _, err := closedS.Find(inv, c); return err }, gang.ErrClosed, "solver"},
		{"Solver.Find(nil, c)", func() error { _, err := s.Find(nilInv, c); return err }, gang.ErrNullArgument, "inventory"},
		{"Solver.Find(closed, c)", func() error { _, err := s.Find(closedInv, c); return err }, gang.ErrClosed, "inventory"},
		{"Solver.Find(inv, nil)", func() error { _, err := s.Find(inv, nil); return err }, gang.ErrNullArgument, "compiled"},
		{"Solver.Find(inv, closed)", func() error { _, err := s.Find(inv, closedC); return err }, gang.ErrClosed, "compiled"},
		{"Solver.SetLimits on nil", func() error { return nilS.SetLimits(1, 0) }, gang.ErrNullArgument, "solver"},
		{"Solver.SetLimits on closed", func() error { return closedS.SetLimits(1, 0) }, gang.ErrClosed, "solver"},
		{"Scenario.Inventory on nil", func() error { _, err := nilSc.Inventory(); return err }, gang.ErrNullArgument, "scenario"},
		{"Scenario.Gang on nil", func() error { _, err := nilSc.Gang(); return err }, gang.ErrNullArgument, "scenario"},
		{"Scenario.Check on nil", func() error { _, err := nilSc.Check(); return err }, gang.ErrNullArgument, "scenario"},
		{"Scenario.Inventory on closed", func() error { _, err := closedSc.Inventory(); return err }, gang.ErrClosed, "scenario"},
		{"Scenario.Gang on closed", func() error { _, err := closedSc.Gang(); return err }, gang.ErrClosed, "scenario"},
		{"Scenario.Check on closed", func() error { _, err := closedSc.Check(); return err }, gang.ErrClosed, "scenario"},
	}
	for _, k := range cases {
		method := strings.Fields(k.name)[0]
		method = method[:strings.IndexAny(method+"(", "(")]
		wantError(t, k.name, noPanic(t, k.name, k.call), k.want, k.field, method)
	}
	// The live handles were not disturbed by any of it.
	if again, err := s.Place(inv, c); err != nil || again.Status != out.Status {
		t.Errorf("after the errors: %v %v", again.Status, err)
	} else {
		again.Close()
	}
	if err := inv.Validate(); err != nil {
		t.Error(err)
	}

	// The accessors of a placement or diagnosis have no error to return: on a nil or
	// closed one they panic, with an *Error naming the method, not a nil dereference.
	var nilD *gang.Diagnosis
	required := readmeGang(t, true)
	defer required.Close()
	bad, err := inv.Place(required)
	if err != nil || bad.Diagnosis == nil {
		t.Fatal(bad.Status, err)
	}
	bad.Close()
	closedD := bad.Diagnosis
	accessors := map[string]func(){
		"Placement.Gang":           func() { nilP.Gang() },
		"Placement.Level":          func() { closedP.Level() },
		"Placement.DomainPath":     func() { nilP.DomainPath() },
		"Placement.JSON":           func() { closedP.JSON() },
		"Placement.Domain":         func() { nilP.Domain() },
		"Placement.Assignments":    func() { closedP.Assignments() },
		"Placement.Members":        func() { nilP.Members() },
		"Placement.Placed":         func() { closedP.Placed("worker") },
		"Placement.DomainsUsed":    func() { nilP.DomainsUsed() },
		"Placement.SearchComplete": func() { closedP.SearchComplete() },
		"Diagnosis.Status":         func() { nilD.Status() },
		"Diagnosis.Gang":           func() { closedD.Gang() },
		"Diagnosis.Level":          func() { nilD.Level() },
		"Diagnosis.Text":           func() { closedD.Text() },
		"Diagnosis.JSON":           func() { nilD.JSON() },
	}
	for name, f := range accessors {
		func() {
			defer func() {
				v := recover()
				err, ok := v.(error)
				if !ok {
					t.Errorf("%s: panicked with %v (%T), want an *Error", name, v, v)
					return
				}
				var ge *gang.Error
				if !errors.As(err, &ge) || !strings.Contains(ge.Message, name) ||
					!(errors.Is(err, gang.ErrClosed) || errors.Is(err, gang.ErrNullArgument)) {
					t.Errorf("%s: panicked with %v", name, err)
				}
			}()
			f()
		}()
	}
	// Close stays nil-safe and idempotent.
	nilGang.Close()
	nilC.Close()
	nilS.Close()
	nilP.Close()
	nilD.Close()
	nilSc.Close()
	nilInv.Close()
}

// Errors of calls that the C layer answers with a code alone name the field (as a
// dotted path, like the core's errors) and the value: the Go side passes only strings
// the C layer accepts (UTF-8, no NUL) or says which one is not, and maps an enum the
// C layer refused to the Go field that held it.
func TestArgumentErrorsNameFieldAndValue(t *testing.T) {
	inv := readmeInventory(t)
	defer inv.Close()
	worker := gang.Role{Name: "w", Count: 1}
	newGang := func(spec gang.GangSpec) error {
		g, err := gang.NewGang(spec)
		g.Close()
		return err
	}
	newInventory := func(nodes ...gang.Node) error {
		inv, err := gang.NewInventory([]string{rack}, nodes)
		inv.Close()
		return err
	}

	// Invalid UTF-8, at byte 1 or later, in the names and values the C calls take.
	wantError(t, "node name", newInventory(gang.Node{Name: "ok"}, gang.Node{Name: "a\xffb"}),
		gang.ErrInvalidUTF8, "nodes[1].name", `"a\xffb"`, "offset 1")
	wantError(t, "label value", newInventory(gang.Node{Name: "a1", Labels: map[string]string{rack: "r\xc3"}}),
		gang.ErrInvalidUTF8, "nodes[a1].labels."+rack, `"r\xc3"`, "offset 1")
	wantError(t, "capacity quantity", newInventory(gang.Node{Name: "a1",
		Capacity: map[string]gang.Amount{gpu: gang.Quantity("8\x80")}}),
		gang.ErrInvalidUTF8, "nodes[a1].capacity."+gpu, "offset 1")
	wantError(t, "taint key", newInventory(gang.Node{Name: "a1", Taints: []gang.Taint{{Key: "k\xfe", Effect: gang.EffectNoSchedule}}}),
		gang.ErrInvalidUTF8, "nodes[a1].taints[0].key", "offset 1")
	wantError(t, "AddNode name", inv.AddNode(gang.Node{Name: "héllo\xff"}),
		gang.ErrInvalidUTF8, "node.name", `"héllo\xff"`, "offset 6")
	wantError(t, "role name", newGang(gang.GangSpec{Name: "g", Roles: []gang.Role{worker, {Name: "\xffw", Count: 1}}}),
		gang.ErrInvalidUTF8, "gang.roles[1].name", "offset 0")
	wantError(t, "required level", newGang(gang.GangSpec{Name: "g", Required: "ra\xffck"}),
		gang.ErrInvalidUTF8, "gang.topology.required", "offset 2")
	wantError(t, "selector value", newGang(gang.GangSpec{Name: "g", Roles: []gang.Role{{Name: "w", Count: 1,
		Selector: map[string]string{"zone": "a\xff"}}}}),
		gang.ErrInvalidUTF8, "gang.roles[w].node_selector.zone", "offset 1")
	wantError(t, "match expression value", newGang(gang.GangSpec{Name: "g", Roles: []gang.Role{{Name: "w", Count: 1,
		MatchExpressions: []gang.Requirement{{Key: "zone", Operator: gang.SelectorIn, Values: []string{"a", "b\xff"}}}}}}),
		gang.ErrInvalidUTF8, "gang.roles[w].match_expressions[0].values[1]", "offset 1")
	_, err := inv.RemoveNode("a\xff")
	wantError(t, "RemoveNode", err, gang.ErrInvalidUTF8, "name", "offset 1")
	_, err = inv.SetCapacity("a1", gpu, gang.Quantity("1\xff"))
	wantError(t, "SetCapacity", err, gang.ErrInvalidUTF8, "nodes[a1].capacity."+gpu, "offset 1")
	_, err = inv.Spread(gang.SpreadSpec{Gang: nil, Replicas: 1, Level: "r\xff"})
	wantError(t, "Spread level", err, gang.ErrInvalidUTF8, "spread.level", "offset 1")
	_, err = inv.Available("a\xff", gpu)
	wantError(t, "Available node", err, gang.ErrInvalidUTF8, "node", "offset 1")

	// Enumeration values the C layer refuses: the field and the value.
	wantError(t, "policy", newGang(gang.GangSpec{Name: "g", Policy: 99}),
		gang.ErrInvalidArgument, "gang.policy", "gang_gang_set_policy", "GangSpec.Policy 99")
	wantError(t, "taint effect", newInventory(gang.Node{Name: "a1", Taints: []gang.Taint{{Key: "k", Effect: 9}}}),
		gang.ErrInvalidArgument, "nodes[a1].taints[0].effect", "gang_node_add_taint", "Taint.Effect 9")
	wantError(t, "selector operator", newGang(gang.GangSpec{Name: "g", Roles: []gang.Role{{Name: "w", Count: 1,
		MatchExpressions: []gang.Requirement{{Key: "zone", Operator: 7}}}}}),
		gang.ErrInvalidArgument, "gang.roles[w].match_expressions[0].operator", "Requirement.Operator 7")
	wantError(t, "toleration operator", newGang(gang.GangSpec{Name: "g", Roles: []gang.Role{{Name: "w", Count: 1,
		Tolerations: []gang.Toleration{{Key: "k", Operator: 5}}}}}),
		gang.ErrInvalidArgument, "gang.roles[w].tolerations[0].operator", "Toleration.Operator 5")
	wantError(t, "toleration effect", newGang(gang.GangSpec{Name: "g", Roles: []gang.Role{{Name: "w", Count: 1,
		Tolerations: []gang.Toleration{{Key: "k", Effect: 8}}}}}),
		gang.ErrInvalidArgument, "gang.roles[w].tolerations[0].effect", "Toleration.Effect 8")
	_, err = inv.Admit(nil, 7)
	wantError(t, "admit mode", err, gang.ErrInvalidArgument, "mode", "7")

	// Look-ups that find nothing: which argument, and its value.
	_, err = inv.Available("zz", gpu)
	wantError(t, "unknown node", err, gang.ErrNotFound, "node", `"zz"`)
	_, err = inv.Available("a1", "fpga")
	wantError(t, "unknown resource", err, gang.ErrNotFound, "resource", `"fpga"`)

	// None of it changed the inventory.
	if inv.Len() != 4 {
		t.Errorf("%d nodes", inv.Len())
	}
	if err := inv.Validate(); err != nil {
		t.Error(err)
	}
}

// The C ABI's own checks stand behind the Go ones: the codes the Go package maps are
// the header's, one to one, including the handle check's.
func TestInvalidHandleCode(t *testing.T) {
	if uint32(gang.CodeInvalidHandle) != 105 || gang.CodeInvalidHandle.String() != "invalid_handle" {
		t.Fatalf("CodeInvalidHandle is %d %q", uint32(gang.CodeInvalidHandle), gang.CodeInvalidHandle)
	}
	if !errors.Is(gang.ErrClosed, gang.ErrInvalidHandle) || !errors.Is(gang.ErrInvalidHandle, gang.ErrClosed) {
		t.Error("ErrClosed and ErrInvalidHandle do not match each other")
	}
	if errors.Is(gang.ErrClosed, gang.ErrNullArgument) {
		t.Error("ErrClosed matches ErrNullArgument")
	}
	if !errors.Is(fmt.Errorf("wrapped: %w", gang.ErrClosed), gang.ErrClosed) {
		t.Error("a wrapped ErrClosed does not match")
	}
}
