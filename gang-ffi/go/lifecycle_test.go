package gang_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	gang "example.invalid/gang/gang-ffi/go"
)

// The lifecycle through the package: reserve, inspect, conflict (nothing applied),
// release, release again (nothing credited).
func TestReserveRelease(t *testing.T) {
	node := func(name, r string, used uint64) gang.Node {
		return gang.Node{Name: name, Labels: map[string]string{block: "b1", rack: r},
			Capacity: map[string]gang.Amount{gpu: gang.Units(8)}, Used: map[string]gang.Amount{gpu: gang.Units(used)}}
	}
	inv, err := gang.NewInventory([]string{block, rack}, []gang.Node{node("a1", "a", 4), node("a2", "a", 6), node("b1", "b", 0)})
	if err != nil {
		t.Fatal(err)
	}
	defer inv.Close()
	g, err := gang.NewGang(gang.GangSpec{Name: "train", Required: rack,
		Roles: []gang.Role{{Name: "worker", Count: 4, Requests: map[string]gang.Amount{gpu: gang.Units(1)}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	out, err := inv.Place(g)
	if err != nil || out.Status != gang.StatusPlaced {
		t.Fatalf("place: %v %v", out.Status, err)
	}
	defer out.Close()
	free := func() (uint64, uint64) {
		a1, err1 := inv.Available("a1", gpu)
		a2, err2 := inv.Available("a2", gpu)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		return a1, a2
	}

	id, err := inv.Reserve(out.Placement)
	if err != nil {
		t.Fatal(err)
	}
	if a1, a2 := free(); a1+a2 != 2000 {
		t.Errorf("free after reserve: %d + %d", a1, a2)
	}
	r, err := inv.Reservation(id)
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != id || r.Gang != "train" || r.DomainPath != "b1/a" || r.MemberCount != 4 || len(r.Lost) != 0 ||
		!reflect.DeepEqual(r.Domain, []gang.LevelValue{{Level: block, Value: "b1"}, {Level: rack, Value: "a"}}) {
		t.Errorf("reservation %+v", r)
	}
	var members uint32
	for _, m := range r.Members {
		members += m.Count
	}
	var used uint64
	for _, u := range r.Usage {
		if u.Resource == gpu {
			used += u.Millis
		}
	}
	if members != 4 || used != 4000 {
		t.Errorf("members %d, GPUs held %d", members, used)
	}
	if ids, err := inv.Reservations(); err != nil || !reflect.DeepEqual(ids, []gang.ReservationID{id}) {
		t.Errorf("reservations %v %v", ids, err)
	}
	if err := inv.Validate(); err != nil {
		t.Fatal(err)
	}

	// The same placement again: a conflict; nothing applied.
	a1, a2 := free()
	_, err = inv.Reserve(out.Placement)
	var ge *gang.Error
	if !errors.Is(err, gang.ErrConflict) || !errors.As(err, &ge) || ge.Field != "placement" ||
		!strings.Contains(ge.Message, "the placement needs") {
		t.Errorf("second reserve: %#v", err)
	}
	if b1, b2 := free(); b1 != a1 || b2 != a2 {
		t.Errorf("a conflict changed free capacity: %d,%d -> %d,%d", a1, a2, b1, b2)
	}

	// Release once: exactly what was held; twice: an error that credits nothing.
	if err := inv.Release(id); err != nil {
		t.Fatal(err)
	}
	if a1, a2 := free(); a1 != 4000 || a2 != 2000 {
		t.Errorf("free after release: %d, %d", a1, a2)
	}
	if err := inv.Release(id); !errors.Is(err, gang.ErrUnknownReservation) {
		t.Errorf("second release: %v", err)
	}
	if a1, a2 := free(); a1 != 4000 || a2 != 2000 {
		t.Errorf("a second release credited: %d, %d", a1, a2)
	}
	if _, err := inv.Reservation(id); !errors.Is(err, gang.ErrUnknownReservation) {
		t.Errorf("released reservation: %v", err)
	}
	if ids, err := inv.Reservations(); err != nil || len(ids) != 0 {
		t.Errorf("reservations %v %v", ids, err)
	}
	if err := inv.Validate(); err != nil {
		t.Fatal(err)
	}
}

// Error values of the lifecycle, through errors.Is and errors.As.
func TestLifecycleErrors(t *testing.T) {
	inv := readmeInventory(t)
	defer inv.Close()
	g := readmeGang(t, false)
	defer g.Close()
	check := func(name string, err error, want *gang.Error, field, in string) {
		t.Helper()
		var ge *gang.Error
		if !errors.Is(err, want) || !errors.As(err, &ge) {
			t.Errorf("%s: %v is not %v", name, err, want)
			return
		}
		if field != "" && ge.Field != field {
			t.Errorf("%s: field %q, want %q", name, ge.Field, field)
		}
		if in != "" && !strings.Contains(ge.Error(), in) {
			t.Errorf("%s: %q lacks %q", name, ge.Error(), in)
		}
	}
	err := inv.Release(42)
	check("release unknown", err, gang.ErrUnknownReservation, "reservation", "#42")
	_, err = inv.Replace(42)
	check("replace unknown", err, gang.ErrUnknownReservation, "reservation", "")
	_, err = inv.RemoveNode("zz")
	check("remove unknown", err, gang.ErrUnknownNode, "node", "zz")
	_, err = inv.FailNode("zz")
	check("fail unknown", err, gang.ErrUnknownNode, "node", "zz")
	check("cordon unknown", inv.Cordon("zz"), gang.ErrUnknownNode, "node", "zz")
	check("uncordon unknown", inv.Uncordon("zz"), gang.ErrUnknownNode, "node", "zz")
	_, err = inv.SetLabels("zz", nil)
	check("relabel unknown", err, gang.ErrUnknownNode, "node", "zz")
	_, err = inv.SetCapacity("zz", gpu, gang.Units(1))
	check("capacity unknown", err, gang.ErrUnknownNode, "node", "zz")
	_, err = inv.SetUsed("a1", gpu, gang.Quantity("12 GB"))
	check("bad used", err, gang.ErrInvalidQuantity, "nodes[a1].used."+gpu, "12 GB")
	_, err = inv.SetCapacity("a1", gpu, gang.Quantity("-1"))
	check("bad capacity", err, gang.ErrInvalidQuantity, "nodes[a1].capacity."+gpu, "")
	_, err = inv.SetLabels("a1", map[string]string{"not a key!": "x"})
	check("bad label", err, gang.ErrInvalidInventory, "", "not a key!")
	err = inv.AddNode(gang.Node{Name: "a1"})
	check("duplicate node", err, gang.ErrInvalidInventory, "", "a1")
	_, err = inv.NodeJSON("zz")
	check("node json unknown", err, gang.ErrUnknownNode, "node", "zz")
	_, err = inv.Spread(gang.SpreadSpec{Gang: g, Replicas: 2, Level: block, Within: rack})
	check("contradictory spread", err, gang.ErrContradictory, "spread.within", "")
	_, err = inv.Spread(gang.SpreadSpec{Gang: g, Replicas: 0, Level: rack})
	check("no replicas", err, gang.ErrInvalidRequest, "spread.replicas", "")
	_, err = inv.Spread(gang.SpreadSpec{Gang: g, Replicas: 1, Level: "zone"})
	check("bad spread level", err, gang.ErrInvalidRequest, "spread.level", "zone")
	_, err = inv.Admit([]*gang.Gang{g}, 7)
	check("bad mode", err, gang.ErrInvalidArgument, "mode", "")
	bad, _ := gang.NewGang(gang.GangSpec{Name: "bad", Required: "zone", Roles: []gang.Role{{Name: "w", Count: 1}}})
	defer bad.Close()
	_, err = inv.Admit([]*gang.Gang{g, bad}, gang.AdmitFIFO)
	check("bad gang in queue", err, gang.ErrInvalidRequest, "gang.topology.required", "zone")
	_, err = inv.FailNode("a\x00b")
	check("NUL byte", err, gang.ErrInvalidArgument, "", "NUL")
	// None of these changed anything.
	if ids, _ := inv.Reservations(); len(ids) != 0 || inv.Len() != 4 {
		t.Errorf("errors changed the inventory: %v reservations, %d nodes", ids, inv.Len())
	}
	if free, _ := inv.Available("a1", gpu); free != 2000 {
		t.Errorf("free %d", free)
	}
	if err := inv.Validate(); err != nil {
		t.Error(err)
	}
}

// Every lifecycle call on a closed inventory is ErrClosed, never a crash.
func TestLifecycleClosed(t *testing.T) {
	inv := readmeInventory(t)
	g := readmeGang(t, false)
	defer g.Close()
	out, err := inv.Place(g)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	inv.Close()
	inv.Close()
	calls := map[string]error{}
	_, calls["Reserve"] = inv.Reserve(out.Placement)
	calls["Release"] = inv.Release(0)
	_, calls["Reservation"] = inv.Reservation(0)
	_, calls["Reservations"] = inv.Reservations()
	calls["AddNode"] = inv.AddNode(gang.Node{Name: "x"})
	_, calls["RemoveNode"] = inv.RemoveNode("a1")
	_, calls["FailNode"] = inv.FailNode("a1")
	calls["Cordon"] = inv.Cordon("a1")
	calls["Uncordon"] = inv.Uncordon("a1")
	_, calls["SetLabels"] = inv.SetLabels("a1", nil)
	_, calls["SetCapacity"] = inv.SetCapacity("a1", gpu, gang.Units(1))
	_, calls["SetUsed"] = inv.SetUsed("a1", gpu, gang.Quantity("1"))
	_, calls["Replace"] = inv.Replace(0)
	_, calls["Spread"] = inv.Spread(gang.SpreadSpec{Gang: g, Replicas: 1, Level: rack})
	_, calls["Admit"] = inv.Admit([]*gang.Gang{g}, gang.AdmitFIFO)
	_, calls["NodeJSON"] = inv.NodeJSON("a1")
	calls["Validate"] = inv.Validate()
	for name, err := range calls {
		if !errors.Is(err, gang.ErrClosed) {
			t.Errorf("%s on a closed inventory: %v", name, err)
		}
	}
	// A closed placement or gang is ErrClosed too.
	live := readmeInventory(t)
	defer live.Close()
	out.Close()
	if _, err := live.Reserve(out.Placement); !errors.Is(err, gang.ErrClosed) {
		t.Errorf("closed placement: %v", err)
	}
	closed, _ := gang.NewGang(gang.GangSpec{Name: "g", Roles: []gang.Role{{Name: "w", Count: 1}}})
	closed.Close()
	if _, err := live.Admit([]*gang.Gang{closed}, gang.AdmitFIFO); !errors.Is(err, gang.ErrClosed) {
		t.Errorf("closed gang in a queue: %v", err)
	}
	if _, err := live.Spread(gang.SpreadSpec{Gang: closed, Replicas: 1, Level: rack}); !errors.Is(err, gang.ErrClosed) {
		t.Errorf("closed gang spread: %v", err)
	}
}

// Queries on one shared inventory run while another goroutine reserves, releases and
// changes it (the Inventory's lock keeps them apart); separate inventories run their
// own lifecycles in parallel. Every answer is consistent, and in the end everything is
// released exactly.
func TestConcurrentLifecycle(t *testing.T) {
	const workers = 8
	const rounds = 30
	g := readmeGang(t, false)
	defer g.Close()
	shared := readmeInventory(t)
	defer shared.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 4*workers)
	// Readers on the shared inventory.
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := gang.NewSolver()
			defer s.Close()
			c, err := shared.Compile(g)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for r := 0; r < rounds; r++ {
				out, err := s.Place(shared, c)
				if err != nil {
					errs <- err
					return
				}
				out.Close()
				if _, err := shared.Available("a1", gpu); err != nil {
					errs <- err
					return
				}
				if _, err := shared.Reservations(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	// One writer on the shared inventory.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for r := 0; r < rounds; r++ {
			out, err := shared.Place(g)
			if err != nil {
				errs <- err
				return
			}
			if out.Status == gang.StatusPlaced {
				id, err := shared.Reserve(out.Placement)
				if err != nil {
					errs <- err
				} else if err := shared.Release(id); err != nil {
					errs <- err
				}
			}
			out.Close()
			if err := shared.Cordon("b2"); err != nil {
				errs <- err
			}
			if err := shared.Uncordon("b2"); err != nil {
				errs <- err
			}
		}
	}()
	// Separate inventories, each with its own full cycle.
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			inv := benchInventory(t, 2, 2, 4, seed)
			defer inv.Close()
			before, _ := inv.Available("n00000", gpu)
			for r := 0; r < rounds; r++ {
				out, err := inv.Place(g)
				if err != nil {
					errs <- err
					return
				}
				if out.Status == gang.StatusPlaced {
					id, err := inv.Reserve(out.Placement)
					if err != nil {
						errs <- err
					} else if err := inv.Release(id); err != nil {
						errs <- err
					}
				}
				out.Close()
			}
			after, _ := inv.Available("n00000", gpu)
			if before != after {
				errs <- fmt.Errorf("free %d before, %d after", before, after)
			}
			if err := inv.Validate(); err != nil {
				errs <- err
			}
		}(uint64(w + 1))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if ids, _ := shared.Reservations(); len(ids) != 0 {
		t.Errorf("left reserved: %v", ids)
	}
	if free, _ := shared.Available("a1", gpu); free != 2000 {
		t.Errorf("free %d", free)
	}
	if err := shared.Validate(); err != nil {
		t.Error(err)
	}
}

// ---------------------------------------------------------------- scenario steps

// A lifecycle step of a scenario file (gang-core's Step). Decoded strictly, so an
// expectation this test does not know fails the test instead of being skipped.
// Scenario step ops the Go API cannot run yet (none since Inventory.AddEvictable).
var unsupportedOps = map[string]bool{}

type step struct {
	Op          string            `json:"op"`
	Gang        json.RawMessage   `json:"gang"`
	Node        *string           `json:"node"`
	NodeSpec    *nodeDoc          `json:"node_spec"`
	Resource    *string           `json:"resource"`
	Amount      json.RawMessage   `json:"amount"`
	Reservation *string           `json:"reservation"`
	Queue       []json.RawMessage `json:"queue"`
	Mode        *string           `json:"mode"`
	Spread      *spreadDoc        `json:"spread"`
	Unit        *unitDoc          `json:"unit"`
	As          *string           `json:"as"`
	Expect      *stepExpect       `json:"expect"`
}

type nodeDoc struct {
	Name     string                     `json:"name"`
	Labels   map[string]string          `json:"labels"`
	Capacity map[string]json.RawMessage `json:"capacity"`
	Used     map[string]json.RawMessage `json:"used"`
	Taints   []struct {
		Key    string `json:"key"`
		Value  string `json:"value"`
		Effect string `json:"effect"`
	} `json:"taints"`
	Schedulable *bool `json:"schedulable"`
}

// An evictable unit of a scenario step (gang-core's EvictableUnit document).
type unitDoc struct {
	ID       string                                `json:"id"`
	Priority int32                                 `json:"priority"`
	Nodes    map[string]map[string]json.RawMessage `json:"nodes"`
}

type spreadDoc struct {
	Gang        json.RawMessage `json:"gang"`
	Replicas    uint32          `json:"replicas"`
	MinReplicas *uint32         `json:"min_replicas"`
	Level       string          `json:"level"`
	Within      *string         `json:"within"`
}

type stepExpect struct {
	Status          *string                                `json:"status"`
	ErrorKind       *string                                `json:"error_kind"`
	MessageContains []string                               `json:"message_contains"`
	DomainPath      *string                                `json:"domain_path"`
	Nodes           *map[string]uint32                     `json:"nodes"`
	Lost            *map[string]map[string]uint32          `json:"lost"`
	Overcommitted   *[]string                              `json:"overcommitted"`
	Admitted        *[]string                              `json:"admitted"`
	Waiting         *[]string                              `json:"waiting"`
	Replicas        *uint32                                `json:"replicas"`
	Distinct        *string                                `json:"distinct"`
	Free            *map[string]map[string]json.RawMessage `json:"free"`
	Reservations    *int                                   `json:"reservations"`
	Victims         *[]string                              `json:"victims"`
}

// seen is what a step produced, for checking.
type seen struct {
	status     string
	errorKind  string
	err        error
	message    string
	domainPath *string
	nodes      map[string]uint32
	lost       []gang.Lost
	over       []string
	admitted   []string
	waiting    []string
	replicas   uint32
	occupied   [][2]string // (replica, domain)
	victims    *[]string
}

// amount turns a scenario amount (a JSON number or a quantity string) into an Amount.
func amount(raw json.RawMessage) gang.Amount {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return gang.Quantity(s)
	}
	return gang.Quantity(string(raw))
}

// millis reads an expected amount: a JSON number, or a string of a number with an
// optional "m" or SI suffix the test knows.
func millis(t *testing.T, raw json.RawMessage) uint64 {
	t.Helper()
	text := string(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		text = s
	}
	scale := big.NewRat(1000, 1)
	for suffix, mult := range map[string]int64{"m": 1, "k": 1000 * 1000, "Ki": 1024 * 1000, "Mi": 1 << 20 * 1000, "Gi": 1 << 30 * 1000} {
		if strings.HasSuffix(text, suffix) {
			text = strings.TrimSuffix(text, suffix)
			scale = big.NewRat(mult, 1)
			break
		}
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		t.Fatalf("expected amount %s: not a quantity this test reads", raw)
	}
	r.Mul(r, scale)
	if !r.IsInt() || r.Sign() < 0 {
		t.Fatalf("expected amount %s is not a whole number of milli-units", raw)
	}
	return r.Num().Uint64()
}

func nodeFrom(d *nodeDoc) gang.Node {
	n := gang.Node{Name: d.Name, Labels: d.Labels, Capacity: map[string]gang.Amount{}, Used: map[string]gang.Amount{}}
	for r, a := range d.Capacity {
		n.Capacity[r] = amount(a)
	}
	for r, a := range d.Used {
		n.Used[r] = amount(a)
	}
	effects := map[string]gang.Effect{"NoSchedule": gang.EffectNoSchedule,
		"PreferNoSchedule": gang.EffectPreferNoSchedule, "NoExecute": gang.EffectNoExecute}
	for _, tn := range d.Taints {
		n.Taints = append(n.Taints, gang.Taint{Key: tn.Key, Value: tn.Value, Effect: effects[tn.Effect]})
	}
	n.Unschedulable = d.Schedulable != nil && !*d.Schedulable
	return n
}

// stepRunner runs a scenario's steps through the Go API on one inventory.
type stepRunner struct {
	t      *testing.T
	inv    *gang.Inventory
	gang   json.RawMessage // the scenario's gang, the default of place and reserve
	names  map[string]gang.ReservationID
	labels map[string]map[string]string // node → labels, read through NodeJSON
}

func (r *stepRunner) parseGang(raw json.RawMessage) (*gang.Gang, error) {
	if len(raw) == 0 {
		raw = r.gang
	}
	return gang.ParseGang(raw)
}

func (r *stepRunner) id(name *string) (gang.ReservationID, error) {
	if name == nil {
		return 0, &gang.Error{Code: gang.CodeInvalidScenario, Kind: "invalid_scenario", Message: "steps[].reservation missing"}
	}
	id, ok := r.names[*name]
	if !ok {
		return 0, &gang.Error{Code: gang.CodeInvalidScenario, Kind: "invalid_scenario",
			Message: fmt.Sprintf("no reservation named %q", *name)}
	}
	return id, nil
}

func (r *stepRunner) nameOf(id gang.ReservationID) string {
	for k, v := range r.names {
		if v == id {
			return k
		}
	}
	return fmt.Sprintf("#%d", id)
}

// label reads a node's label through NodeJSON ("" and false when it has none).
func (r *stepRunner) label(node, key string) (string, bool) {
	js, err := r.inv.NodeJSON(node)
	if err != nil {
		r.t.Fatalf("node %s: %v", node, err)
	}
	var doc struct {
		Labels map[string]string `json:"labels"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		r.t.Fatalf("node %s JSON %s: %v", node, js, err)
	}
	v, ok := doc.Labels[key]
	return v, ok
}

func (r *stepRunner) run(s *step) (seen, error) {
	out := seen{status: "ok"}
	inv := r.inv
	switch s.Op {
	case "place", "reserve":
		g, err := r.parseGang(s.Gang)
		if err != nil {
			return out, err
		}
		defer g.Close()
		o, err := inv.Place(g)
		if err != nil {
			return out, err
		}
		defer o.Close()
		out.status = o.Status.String()
		if o.Diagnosis != nil {
			out.message = o.Diagnosis.Text()
		}
		if p := o.Placement; p != nil {
			path := p.DomainPath()
			out.domainPath = &path
			out.nodes = p.NodeCounts()
			if s.Op == "reserve" {
				id, err := inv.Reserve(p)
				if err != nil {
					return out, err
				}
				name := p.Gang()
				if s.As != nil {
					name = *s.As
				}
				r.names[name] = id
			}
		}
	case "add_evictable":
		if s.Unit == nil {
			r.t.Fatalf("add_evictable without a unit")
		}
		var amounts []gang.EvictableAmount
		for node, res := range s.Unit.Nodes {
			for name, raw := range res {
				amounts = append(amounts, gang.EvictableAmount{Node: node, Resource: name, Amount: amount(raw)})
			}
		}
		return out, inv.AddEvictable(s.Unit.ID, s.Unit.Priority, amounts)
	case "preempt", "preempt_reserve":
		g, err := r.parseGang(s.Gang)
		if err != nil {
			return out, err
		}
		defer g.Close()
		var status gang.Status
		var js string
		var id gang.ReservationID
		if s.Op == "preempt" {
			status, js, err = inv.Preempt(g)
		} else {
			status, id, js, err = inv.PreemptReserve(g)
		}
		if err != nil {
			return out, err
		}
		var doc struct {
			Message string `json:"message"`
			Victims []struct {
				ID struct {
					Kind string          `json:"kind"`
					ID   json.RawMessage `json:"id"`
				} `json:"id"`
			} `json:"victims"`
			Placement struct {
				Gang        string            `json:"gang"`
				Domain      map[string]string `json:"domain"`
				Assignments []struct {
					Node  string `json:"node"`
					Count uint32 `json:"count"`
				} `json:"assignments"`
			} `json:"placement"`
		}
		dec := json.NewDecoder(strings.NewReader(js))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return out, err
		}
		out.status = status.String()
		out.message = doc.Message
		if status == gang.StatusPlaced {
			// The domain in the topology's order (the map has lost it): the placement's
			// level keys are a prefix of the topology's levels.
			var raw struct {
				Placement struct {
					Domain json.RawMessage `json:"domain"`
				} `json:"placement"`
			}
			_ = json.Unmarshal([]byte(js), &raw)
			path := orderedValues(raw.Placement.Domain)
			out.domainPath = &path
			out.nodes = map[string]uint32{}
			for _, a := range doc.Placement.Assignments {
				out.nodes[a.Node] += a.Count
			}
			victims := []string{}
			for _, v := range doc.Victims {
				if v.ID.Kind == "reservation" {
					var n uint64
					if err := json.Unmarshal(v.ID.ID, &n); err != nil {
						return out, err
					}
					victims = append(victims, r.nameOf(gang.ReservationID(n)))
				} else {
					var u string
					if err := json.Unmarshal(v.ID.ID, &u); err != nil {
						return out, err
					}
					victims = append(victims, u)
				}
			}
			out.victims = &victims
			if s.Op == "preempt_reserve" {
				name := doc.Placement.Gang
				if s.As != nil {
					name = *s.As
				}
				r.names[name] = id
			}
		}
	case "release":
		id, err := r.id(s.Reservation)
		if err != nil {
			return out, err
		}
		return out, inv.Release(id)
	case "add_node":
		return out, inv.AddNode(nodeFrom(s.NodeSpec))
	case "remove_node", "fail_node":
		var lost []gang.Lost
		var err error
		if s.Op == "remove_node" {
			lost, err = inv.RemoveNode(*s.Node)
		} else {
			lost, err = inv.FailNode(*s.Node)
		}
		out.lost = lost
		return out, err
	case "cordon":
		return out, inv.Cordon(*s.Node)
	case "uncordon":
		return out, inv.Uncordon(*s.Node)
	case "set_capacity", "set_used":
		var over []gang.Overcommit
		var err error
		if s.Op == "set_capacity" {
			over, err = inv.SetCapacity(*s.Node, *s.Resource, amount(s.Amount))
		} else {
			over, err = inv.SetUsed(*s.Node, *s.Resource, amount(s.Amount))
		}
		if err != nil {
			return out, err
		}
		for _, o := range over {
			if o.Node != *s.Node || o.Resource != *s.Resource || o.UsedMillis+o.ReservedMillis <= o.CapacityMillis {
				r.t.Errorf("overcommit %+v after %s %s %s", o, s.Op, *s.Node, *s.Resource)
			}
			for _, id := range o.Reservations {
				out.over = append(out.over, r.nameOf(id))
			}
		}
	case "replace":
		id, err := r.id(s.Reservation)
		if err != nil {
			return out, err
		}
		rep, err := inv.Replace(id)
		if err != nil {
			return out, err
		}
		out.status = rep.Status.String()
		switch rep.Status {
		case gang.StatusPlaced:
			out.nodes = map[string]uint32{}
			for _, a := range rep.Added {
				out.nodes[a.Node] += a.Count
			}
		case gang.StatusPending:
			out.message = rep.Text
			if !strings.Contains(rep.JSON, `"status":"pending"`) {
				r.t.Errorf("pending JSON %s", rep.JSON)
			}
		}
	case "admit":
		mode := gang.AdmitFIFO
		if s.Mode != nil && *s.Mode == "backfill" {
			mode = gang.AdmitBackfill
		} else if s.Mode != nil && *s.Mode != "fifo" {
			r.t.Fatalf("mode %q", *s.Mode)
		}
		queue := make([]*gang.Gang, len(s.Queue))
		for i, raw := range s.Queue {
			g, err := gang.ParseGang(raw)
			if err != nil {
				return out, err
			}
			defer g.Close()
			queue[i] = g
		}
		adm, err := inv.Admit(queue, mode)
		if err != nil {
			return out, err
		}
		for _, a := range adm {
			switch a.Status {
			case gang.StatusPlaced:
				r.names[a.Gang] = a.Reservation
				out.admitted = append(out.admitted, a.Gang)
				if a.Placement == nil || a.Diagnosis != nil {
					r.t.Errorf("admitted %s without a placement", a.Gang)
				}
			case gang.StatusWaiting:
				out.waiting = append(out.waiting, a.Gang)
				if a.Diagnosis != nil {
					out.message += a.Diagnosis.Text()
				}
				if a.BlockedBy != "" {
					out.message += fmt.Sprintf(" %s waits behind %s.", a.Gang, a.BlockedBy)
				}
			default:
				r.t.Errorf("admission status %v", a.Status)
			}
			a.Close()
		}
	case "spread":
		d := s.Spread
		g, err := gang.ParseGang(d.Gang)
		if err != nil {
			return out, err
		}
		defer g.Close()
		spec := gang.SpreadSpec{Gang: g, Replicas: d.Replicas, Level: d.Level}
		if d.MinReplicas != nil {
			spec.MinReplicas = *d.MinReplicas
		}
		if d.Within != nil {
			spec.Within = *d.Within
		}
		o, err := inv.Spread(spec)
		if err != nil {
			return out, err
		}
		defer o.Close()
		out.status = o.Status.String()
		switch o.Status {
		case gang.StatusPlaced:
			out.replicas = uint32(len(o.Reservations))
			var gangName struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(d.Gang, &gangName)
			base := gangName.Name
			if s.As != nil {
				base = *s.As
			}
			for i, id := range o.Reservations {
				r.names[fmt.Sprintf("%s-%d", base, i)] = id
			}
			for i, p := range o.Placements {
				for node := range p.NodeCounts() {
					v, ok := r.label(node, d.Level)
					if !ok {
						v = node
					}
					out.occupied = append(out.occupied, [2]string{fmt.Sprint(i), v})
				}
			}
		case gang.StatusUnschedulable:
			out.replicas = o.Fit
			if o.Diagnosis != nil {
				out.message = o.Diagnosis.Text()
			}
		}
	default:
		r.t.Fatalf("unknown op %q", s.Op)
	}
	return out, nil
}

func (r *stepRunner) check(at string, x *stepExpect, got seen) {
	t := r.t
	no := func(format string, args ...any) { t.Errorf("%s: "+format, append([]any{at}, args...)...) }
	if x.Status != nil && *x.Status != got.status {
		no("status %s, want %s (%s)", got.status, *x.Status, got.message)
	}
	if x.ErrorKind != nil {
		if got.errorKind != *x.ErrorKind {
			no("error kind %q, want %q", got.errorKind, *x.ErrorKind)
		} else if want := kindSentinel[*x.ErrorKind]; want != nil && !errors.Is(got.err, want) {
			no("error %v is not %s", got.err, *x.ErrorKind)
		}
	}
	for _, sub := range x.MessageContains {
		if !strings.Contains(got.message, sub) {
			no("message %q lacks %q", got.message, sub)
		}
	}
	if x.DomainPath != nil && (got.domainPath == nil || *got.domainPath != *x.DomainPath) {
		no("domain %v, want %s", got.domainPath, *x.DomainPath)
	}
	if x.Nodes != nil {
		want, have := *x.Nodes, got.nodes
		if have == nil {
			have = map[string]uint32{}
		}
		if !reflect.DeepEqual(want, have) {
			no("nodes %v, want %v", have, want)
		}
	}
	if x.Lost != nil {
		have := map[string]map[string]uint32{}
		for _, l := range got.lost {
			name := r.nameOf(l.Reservation)
			if have[name] == nil {
				have[name] = map[string]uint32{}
			}
			have[name][l.Role] += l.Count
		}
		if !reflect.DeepEqual(*x.Lost, have) {
			no("lost %v, want %v", have, *x.Lost)
		}
	}
	sameList := func(what string, want *[]string, have []string) {
		if want != nil && !(len(*want) == 0 && len(have) == 0) && !reflect.DeepEqual(*want, have) {
			no("%s %v, want %v", what, have, *want)
		}
	}
	sameList("overcommitted", x.Overcommitted, got.over)
	sameList("admitted", x.Admitted, got.admitted)
	sameList("waiting", x.Waiting, got.waiting)
	if x.Replicas != nil && *x.Replicas != got.replicas {
		no("replicas %d, want %d", got.replicas, *x.Replicas)
	}
	if x.Distinct != nil {
		owner := map[string]string{}
		for _, o := range got.occupied {
			if prev, ok := owner[o[1]]; ok && prev != o[0] {
				no("replicas %s and %s share domain %s", prev, o[0], o[1])
			}
			owner[o[1]] = o[0]
		}
	}
	if x.Free != nil {
		for node, per := range *x.Free {
			for res, raw := range per {
				want := millis(t, raw)
				have, err := r.inv.Available(node, res)
				if err != nil || have != want {
					no("free %s on %s: %d (%v), want %d", res, node, have, err, want)
				}
			}
		}
	}
	if x.Victims != nil && (got.victims == nil || !reflect.DeepEqual(*got.victims, *x.Victims)) {
		no("victims %v, want %v", got.victims, *x.Victims)
	}
	if x.Reservations != nil {
		ids, err := r.inv.Reservations()
		if err != nil || len(ids) != *x.Reservations {
			no("%d live reservations (%v), want %d", len(ids), err, *x.Reservations)
		}
	}
}

// The lifecycle steps of the scenario files, run through the Go API on one inventory,
// with each step's expectations checked here and the inventory validated after every
// step. (TestScenarios checks that the core's own run of the same steps passes.)
func TestScenarioSteps(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "scenarios", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	ran := 0
	for _, path := range files {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var file struct {
			Gang  json.RawMessage   `json:"gang"`
			Steps []json.RawMessage `json:"steps"`
		}
		if err := json.Unmarshal(text, &file); err != nil {
			t.Fatal(err)
		}
		if len(file.Steps) == 0 {
			continue
		}
		ran++
		t.Run(filepath.Base(path), func(t *testing.T) {
			sc, err := gang.ParseScenario(text)
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close()
			inv, err := sc.Inventory()
			if err != nil {
				t.Fatal(err)
			}
			defer inv.Close()
			r := &stepRunner{t: t, inv: inv, gang: file.Gang, names: map[string]gang.ReservationID{}}
			for i, raw := range file.Steps {
				// Not in the Go API yet (issue 22): the steps from the first of these
				// on run in the core's check only (TestScenarios).
				var peek struct {
					Op string `json:"op"`
				}
				if err := json.Unmarshal(raw, &peek); err == nil && unsupportedOps[peek.Op] {
					t.Logf("step %d (%s): not in the Go API yet; the core's check runs the rest", i, peek.Op)
					break
				}
				var s step
				dec := json.NewDecoder(bytes.NewReader(raw))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&s); err != nil {
					t.Fatalf("step %d: %v (a field this test does not know?)", i, err)
				}
				at := fmt.Sprintf("step %d (%s)", i, s.Op)
				got, err := r.run(&s)
				if err != nil {
					var ge *gang.Error
					if !errors.As(err, &ge) {
						t.Fatalf("%s: %v is not an *Error", at, err)
					}
					got = seen{status: "error", errorKind: ge.Kind, err: err, message: err.Error()}
					if errors.Is(err, gang.ErrConflict) {
						got.status = "conflict"
					}
				}
				if err := inv.Validate(); err != nil {
					t.Errorf("%s: %v", at, err)
				}
				if s.Expect != nil {
					r.check(at, s.Expect, got)
				} else if got.status == "error" {
					t.Errorf("%s: unexpected error %v", at, got.err)
				}
			}
		})
	}
	if ran < 6 {
		t.Errorf("only %d scenario files have steps", ran)
	}
}

// A reservation id carries its inventory: releasing it on another inventory (which
// made a reservation with the same serial number) is ErrUnknownReservation naming
// both inventories, and frees nothing in either.
func TestReleaseOnAnotherInventory(t *testing.T) {
	build := func() *gang.Inventory {
		inv, err := gang.NewInventory([]string{rack}, []gang.Node{{Name: "a1", Labels: map[string]string{rack: "a"},
			Capacity: map[string]gang.Amount{gpu: gang.Units(2)}}})
		if err != nil {
			t.Fatal(err)
		}
		return inv
	}
	a, b := build(), build()
	defer a.Close()
	defer b.Close()
	g, err := gang.NewGang(gang.GangSpec{Name: "g",
		Roles: []gang.Role{{Name: "w", Count: 2, Requests: map[string]gang.Amount{gpu: gang.Units(1)}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	reserve := func(inv *gang.Inventory) gang.ReservationID {
		out, err := inv.Place(g)
		if err != nil || out.Status != gang.StatusPlaced {
			t.Fatalf("place: %v", err)
		}
		defer out.Close()
		id, err := inv.Reserve(out.Placement)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	ida, idb := reserve(a), reserve(b)
	if ida == idb {
		t.Fatalf("two inventories handed out the same id %d", ida)
	}
	err = b.Release(ida)
	if !errors.Is(err, gang.ErrUnknownReservation) || !strings.Contains(err.Error(), "holds no such reservation") {
		t.Fatalf("release on another inventory: %v", err)
	}
	for _, inv := range []*gang.Inventory{a, b} {
		if free, err := inv.Available("a1", gpu); err != nil || free != 0 {
			t.Errorf("free after the refused release: %d %v", free, err)
		}
	}
	if err := a.Release(ida); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(idb); err != nil {
		t.Fatal(err)
	}
}

// orderedValues joins the values of a JSON object in the order its keys appear.
func orderedValues(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var parts []string
	if _, err := dec.Token(); err != nil { // {
		return ""
	}
	for dec.More() {
		if _, err := dec.Token(); err != nil { // key
			return ""
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			return ""
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, "/")
}
