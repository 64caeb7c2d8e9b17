package gang_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	gang "example.invalid/gang/gang-ffi/go"
)

const (
	block = "topology.example.com/block"
	rack  = "topology.example.com/rack"
	gpu   = "nvidia.com/gpu"
)

func TestVersion(t *testing.T) {
	want := fmt.Sprintf("%d.%d.%d", gang.VersionMajor, gang.VersionMinor, gang.VersionPatch)
	if got := gang.Version(); got != want {
		t.Fatalf("library %s, header %s", got, want)
	}
}

// The README's cluster: rack a has 2+1 free GPUs, rack b 2 (b1 tainted) + 0.
func readmeInventory(t testing.TB) *gang.Inventory {
	t.Helper()
	node := func(name, r string, used uint64) gang.Node {
		return gang.Node{
			Name: name,
			Labels: map[string]string{
				block: "b1", rack: r, "nvidia.com/gpu.product": "H200",
			},
			Capacity: map[string]gang.Amount{
				gpu: gang.Units(8), "cpu": gang.Quantity("96"), "memory": gang.Quantity("1Ti"),
			},
			Used: map[string]gang.Amount{gpu: gang.Units(used)},
		}
	}
	b1 := node("b1", "b", 6)
	b1.Taints = []gang.Taint{{Key: "dedicated", Value: "training", Effect: gang.EffectNoSchedule}}
	inv, err := gang.NewInventory([]string{block, rack},
		[]gang.Node{node("a1", "a", 6), node("a2", "a", 7), b1, node("b2", "b", 8)})
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func readmeGang(t testing.TB, required bool) *gang.Gang {
	t.Helper()
	spec := gang.GangSpec{
		Name: "train",
		Roles: []gang.Role{{
			Name:        "worker",
			Count:       4,
			Requests:    map[string]gang.Amount{gpu: gang.Units(1), "cpu": gang.Millis(500)},
			Selector:    map[string]string{"nvidia.com/gpu.product": "H200"},
			Tolerations: []gang.Toleration{{Key: "dedicated", Value: "training"}},
		}},
	}
	if required {
		spec.Required = rack
	} else {
		spec.Preferred = rack
	}
	g, err := gang.NewGang(spec)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestReadmeTour(t *testing.T) {
	inv := readmeInventory(t)
	defer inv.Close()
	if inv.Len() != 4 {
		t.Fatalf("len %d", inv.Len())
	}
	if free, err := inv.Available("a1", gpu); err != nil || free != 2000 {
		t.Fatalf("available %d %v", free, err)
	}

	g := readmeGang(t, true)
	defer g.Close()
	out, err := inv.Place(g)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != gang.StatusUnschedulable || out.Placement != nil || out.Diagnosis == nil {
		t.Fatalf("outcome %+v", out)
	}
	d := out.Diagnosis
	for _, want := range []string{"rack b1/a fits 3 of 4 worker", "Relaxing to block: block b1 fits all 4 now"} {
		if !strings.Contains(d.Text(), want) {
			t.Errorf("diagnosis %q lacks %q", d.Text(), want)
		}
	}
	if d.Status() != gang.StatusUnschedulable || d.Gang() != "train" || d.Level() != rack {
		t.Errorf("diagnosis status %v gang %q level %q", d.Status(), d.Gang(), d.Level())
	}
	var data map[string]any
	if err := json.Unmarshal([]byte(d.JSON()), &data); err != nil || data["status"] != "unschedulable" {
		t.Errorf("diagnosis JSON %v %v", data, err)
	}
	out.Close()

	pg := readmeGang(t, false)
	defer pg.Close()
	out, err = inv.Place(pg)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	p := out.Placement
	if out.Status != gang.StatusPlaced || p == nil || out.Diagnosis != nil {
		t.Fatalf("outcome %+v", out)
	}
	if p.Gang() != "train" || p.Level() != block || p.DomainPath() != "b1" || p.Members() != 4 {
		t.Errorf("placement %s %s %s %d", p.Gang(), p.Level(), p.DomainPath(), p.Members())
	}
	if got := p.Domain(); !reflect.DeepEqual(got, []gang.LevelValue{{Level: block, Value: "b1"}}) {
		t.Errorf("domain %v", got)
	}
	var sum uint32
	for _, a := range p.Assignments() {
		if a.Role != "worker" {
			t.Errorf("assignment %+v", a)
		}
		sum += a.Count
	}
	if sum != 4 {
		t.Errorf("assignments sum to %d", sum)
	}
	if n, ok := p.Placed("worker"); !ok || n != 4 {
		t.Errorf("placed %d %v", n, ok)
	}
	if _, ok := p.Placed("launcher"); ok {
		t.Error("placed reports an unknown role")
	}
	used := p.DomainsUsed()
	if len(used) != 3 || used[0] != (gang.LevelCount{Level: block, Count: 1}) ||
		used[1] != (gang.LevelCount{Level: rack, Count: 2}) || used[2].Level != "kubernetes.io/hostname" {
		t.Errorf("domains used %v", used)
	}
	if !p.SearchComplete() {
		t.Error("search incomplete")
	}
	if !strings.Contains(p.JSON(), `"status":"placed"`) {
		t.Errorf("json %s", p.JSON())
	}
}

func TestSolverReuseIsDeterministic(t *testing.T) {
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
	var first string
	for i := 0; i < 20; i++ {
		out, err := s.Place(inv, c)
		if err != nil {
			t.Fatal(err)
		}
		js := out.Placement.JSON()
		out.Close()
		if i == 0 {
			first = js
		} else if js != first {
			t.Fatalf("run %d differs:\n%s\n%s", i, js, first)
		}
	}
}

func TestUndecided(t *testing.T) {
	// A two-role gang that greedy packing misses (see the C test of the same name).
	cpu, mem := []string{"1", "2", "4"}, []string{"4", "2", "5"}
	var nodes []gang.Node
	for i := range cpu {
		nodes = append(nodes, gang.Node{
			Name:     fmt.Sprintf("n%d", i),
			Labels:   map[string]string{rack: "a"},
			Capacity: map[string]gang.Amount{"cpu": gang.Quantity(cpu[i]), "memory": gang.Quantity(mem[i])},
		})
	}
	inv, err := gang.NewInventory([]string{rack}, nodes)
	if err != nil {
		t.Fatal(err)
	}
	defer inv.Close()
	g, err := gang.NewGang(gang.GangSpec{Name: "tight", Required: rack, Roles: []gang.Role{
		{Name: "x", Count: 2, Requests: map[string]gang.Amount{"cpu": gang.Units(2), "memory": gang.Units(2)}},
		{Name: "y", Count: 1, Requests: map[string]gang.Amount{"cpu": gang.Units(2), "memory": gang.Units(3)}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	c, err := inv.Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	full, none := gang.NewSolver(), gang.NewSolverWithBudget(0)
	defer full.Close()
	defer none.Close()
	out, err := full.Place(inv, c)
	if err != nil || out.Status != gang.StatusPlaced {
		t.Fatalf("full budget: %v %v", out.Status, err)
	}
	out.Close()
	out, err = none.Place(inv, c)
	if err != nil || out.Status != gang.StatusUndecided || out.Diagnosis.Status() != gang.StatusUndecided {
		t.Fatalf("no budget: %v %v", out.Status, err)
	}
	out.Close()
}

// Every error kind maps to its code, its sentinel (errors.Is) and an *Error (errors.As).
func TestErrorMapping(t *testing.T) {
	sentinels := []*gang.Error{
		gang.ErrInvalidQuantity, gang.ErrInvalidInventory, gang.ErrInvalidRequest,
		gang.ErrContradictory, gang.ErrInvalidScenario, gang.ErrConflict,
		gang.ErrUnknownReservation, gang.ErrUnknownNode, gang.ErrNullArgument,
		gang.ErrInvalidUTF8, gang.ErrInvalidArgument, gang.ErrOutOfRange, gang.ErrNotFound,
		gang.ErrInvalidHandle, gang.ErrUnknownError, gang.ErrInternalError,
	}
	codes := map[gang.Code]uint32{
		gang.CodeOK: 0, gang.CodeInvalidQuantity: 1, gang.CodeInvalidInventory: 2,
		gang.CodeInvalidRequest: 3, gang.CodeContradictory: 4, gang.CodeInvalidScenario: 5,
		gang.CodeConflict: 6, gang.CodeUnknownReservation: 7, gang.CodeUnknownNode: 8,
		gang.CodeNullArgument: 100, gang.CodeInvalidUTF8: 101, gang.CodeInvalidArgument: 102,
		gang.CodeOutOfRange: 103, gang.CodeNotFound: 104, gang.CodeInvalidHandle: 105,
		gang.CodeUnknownError:  198,
		gang.CodeInternalError: 199,
	}
	for c, n := range codes {
		if uint32(c) != n {
			t.Errorf("%s is %d, want %d", c, uint32(c), n)
		}
	}
	for _, s := range sentinels {
		if s.Kind == "" || s.Kind == "unknown" {
			t.Errorf("sentinel %d has kind %q", s.Code, s.Kind)
		}
	}
	inv := readmeInventory(t)
	defer inv.Close()

	type errCase struct {
		name  string
		err   error
		want  *gang.Error
		field string
		in    string
	}
	var cases []errCase
	add := func(name string, err error, want *gang.Error, field, in string) {
		cases = append(cases, errCase{name, err, want, field, in})
	}
	_, err := gang.NewInventory([]string{rack}, []gang.Node{{Name: "a1", Capacity: map[string]gang.Amount{"memory": gang.Quantity("12 GB")}}})
	add("bad quantity", err, gang.ErrInvalidQuantity, "nodes[a1].capacity.memory", "12 GB")
	_, err = gang.NewInventory([]string{rack}, []gang.Node{{Name: "a1"}, {Name: "a1"}})
	add("duplicate node", err, gang.ErrInvalidInventory, "", "a1")
	_, err = gang.NewInventory([]string{rack, rack}, nil)
	add("repeated level", err, gang.ErrInvalidInventory, "topology.levels[1]", "repeated")
	compile := func(spec gang.GangSpec) error {
		g, err := gang.NewGang(spec)
		if err != nil {
			return err
		}
		defer g.Close()
		c, err := inv.Compile(g)
		c.Close()
		return err
	}
	worker := gang.Role{Name: "worker", Count: 4, Requests: map[string]gang.Amount{gpu: gang.Units(1)}}
	add("unknown level", compile(gang.GangSpec{Name: "g", Roles: []gang.Role{worker}, Required: "block"}),
		gang.ErrInvalidRequest, "gang.topology.required", "block")
	elastic := worker
	elastic.MinCount = gang.Ptr(uint32(5))
	add("min above count", compile(gang.GangSpec{Name: "g", Roles: []gang.Role{elastic}}),
		gang.ErrInvalidRequest, "gang.roles[worker].min_count", "")
	badReq := worker
	badReq.Requests = map[string]gang.Amount{gpu: gang.Quantity("one")}
	add("bad request", compile(gang.GangSpec{Name: "g", Roles: []gang.Role{badReq}}),
		gang.ErrInvalidQuantity, "", "one")
	add("slice above required", compile(gang.GangSpec{Name: "g", Roles: []gang.Role{worker}, Required: rack,
		Slices: []gang.Slice{{Level: block, Size: 2}}}), gang.ErrContradictory, "", "")
	add("max per node zero", compile(gang.GangSpec{Name: "g", Roles: []gang.Role{{Name: "w", Count: 1, MaxPerNode: gang.Ptr(uint32(0))}}}),
		gang.ErrInvalidRequest, "gang.roles[w].max_per_node", "")
	_, err = gang.ParseGang([]byte(`{"name": "g", "roles": [], "colour": 1}`))
	add("unknown field", err, gang.ErrInvalidScenario, "", "colour")
	_, err = gang.ParseInventory([]byte(`{"topology": {"levels": []}, "nodes": [{"name": 7}]}`))
	add("bad document", err, gang.ErrInvalidScenario, "nodes[0].name", "")
	_, err = gang.ParseScenario(nil)
	add("empty document", err, gang.ErrInvalidScenario, "", "")
	_, err = gang.ParseGang([]byte{0xff, 0xfe})
	add("bad utf-8", err, gang.ErrInvalidUTF8, "json", "")
	_, err = gang.NewGang(gang.GangSpec{Name: "g\x00x"})
	add("NUL byte", err, gang.ErrInvalidArgument, "gang.name", "NUL")
	_, err = gang.NewInventory([]string{rack}, []gang.Node{{Name: "a1", Taints: []gang.Taint{{Key: "k", Effect: 9}}}})
	add("bad effect", err, gang.ErrInvalidArgument, "", "")
	_, err = gang.NewGang(gang.GangSpec{Name: "g", Policy: 7})
	add("bad policy", err, gang.ErrInvalidArgument, "", "")
	_, err = inv.Available("zz", gpu)
	add("unknown node", err, gang.ErrNotFound, "", "")

	for _, c := range cases {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v is not %v", c.name, c.err, c.want)
			continue
		}
		var ge *gang.Error
		if !errors.As(c.err, &ge) {
			t.Errorf("%s: not an *Error", c.name)
			continue
		}
		if ge.Code != c.want.Code || ge.Kind != c.want.Kind {
			t.Errorf("%s: code %v kind %q", c.name, ge.Code, ge.Kind)
		}
		if c.field != "" && ge.Field != c.field {
			t.Errorf("%s: field %q, want %q", c.name, ge.Field, c.field)
		}
		if c.in != "" && !strings.Contains(ge.Error(), c.in) {
			t.Errorf("%s: %q lacks %q", c.name, ge.Error(), c.in)
		}
		for _, other := range sentinels {
			if other.Code != c.want.Code && errors.Is(c.err, other) {
				t.Errorf("%s: also matches %v", c.name, other)
			}
		}
		// Wrapped errors still match.
		if !errors.Is(fmt.Errorf("scheduling: %w", c.err), c.want) {
			t.Errorf("%s: wrapped error does not match", c.name)
		}
	}
}

// Close twice (and on nil) is harmless for every handle; use after Close is an error
// (or, for accessors of a placement or diagnosis, a panic with that error), never a
// crash. (handles_test.go has every method.)
func TestCloseTwice(t *testing.T) {
	inv := readmeInventory(t)
	g := readmeGang(t, false)
	c, err := inv.Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	s := gang.NewSolver()
	out, err := s.Place(inv, c)
	if err != nil {
		t.Fatal(err)
	}
	rg := readmeGang(t, true)
	bad, err := inv.Place(rg)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := gang.ParseScenario([]byte(`{"topology": {"levels": ["rack"]}, "nodes": [],
		"gang": {"name": "g", "roles": [{"name": "w", "count": 1}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	p := out.Placement
	d := bad.Diagnosis
	for i := 0; i < 2; i++ {
		out.Close()
		bad.Close()
		s.Close()
		c.Close()
		g.Close()
		rg.Close()
		inv.Close()
		sc.Close()
	}
	var nilInv *gang.Inventory
	nilInv.Close()
	var nilPlacement *gang.Placement
	nilPlacement.Close()
	gang.Outcome{}.Close()

	if _, err := inv.Place(g); !errors.Is(err, gang.ErrClosed) {
		t.Errorf("place on a closed inventory: %v", err)
	}
	if _, err := s.Place(inv, c); !errors.Is(err, gang.ErrClosed) {
		t.Errorf("closed solver: %v", err)
	}
	if _, err := s.Find(inv, c); !errors.Is(err, gang.ErrClosed) {
		t.Errorf("Find after Close: %v", err)
	}
	if _, err := inv.Available("a1", gpu); !errors.Is(err, gang.ErrClosed) {
		t.Errorf("available on a closed inventory: %v", err)
	}
	if _, err := sc.Check(); !errors.Is(err, gang.ErrClosed) {
		t.Errorf("closed scenario: %v", err)
	}
	if inv.Len() != 0 {
		t.Error("closed inventory has nodes")
	}
	mustPanic := func(name string, f func()) {
		defer func() {
			if err, _ := recover().(error); !errors.Is(err, gang.ErrClosed) {
				t.Errorf("%s after Close: want a panic with ErrClosed, got %v", name, err)
			}
		}()
		f()
	}
	mustPanic("Placement.JSON", func() { _ = p.JSON() })
	mustPanic("Diagnosis.Text", func() { _ = d.Text() })
}

// Many goroutines place at once, each on its own inventory with its own solver, and
// also all on one shared inventory (queries run in parallel) through Inventory.Place.
// Each must get exactly the answer of a sequential run.
func TestConcurrentPlacement(t *testing.T) {
	const workers = 16
	const rounds = 25
	type instance struct {
		inv  *gang.Inventory
		want string
	}
	g := readmeGang(t, false)
	defer g.Close()
	instances := make([]instance, workers)
	for w := range instances {
		inv := benchInventory(t, 8, 4, 8, uint64(w+1))
		out, err := inv.Place(g)
		if err != nil {
			t.Fatal(err)
		}
		instances[w] = instance{inv: inv, want: outcomeJSON(out)}
		out.Close()
	}
	shared := readmeInventory(t)
	defer shared.Close()
	sharedOut, err := shared.Place(g)
	if err != nil {
		t.Fatal(err)
	}
	sharedWant := outcomeJSON(sharedOut)
	sharedOut.Close()

	var wg sync.WaitGroup
	errs := make(chan error, workers*2)
	for w := 0; w < workers; w++ {
		wg.Add(2)
		go func(in instance) {
			defer wg.Done()
			c, err := in.inv.Compile(g)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			s := gang.NewSolver()
			defer s.Close()
			for r := 0; r < rounds; r++ {
				out, err := s.Place(in.inv, c)
				if err != nil {
					errs <- err
					return
				}
				got := outcomeJSON(out)
				out.Close()
				if got != in.want {
					errs <- fmt.Errorf("concurrent result differs:\n%s\n%s", got, in.want)
					return
				}
			}
		}(instances[w])
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				out, err := shared.Place(g)
				if err != nil {
					errs <- err
					return
				}
				got := outcomeJSON(out)
				out.Close()
				if got != sharedWant {
					errs <- fmt.Errorf("shared result differs:\n%s\n%s", got, sharedWant)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, in := range instances {
		in.inv.Close()
	}
}

func outcomeJSON(o gang.Outcome) string {
	if o.Placement != nil {
		return o.Placement.JSON()
	}
	return o.Diagnosis.JSON()
}

// expect is the part of a scenario's expect block this test checks itself (the core's
// own check covers the rest).
type expect struct {
	Status          *string                      `json:"status"`
	Level           *string                      `json:"level"`
	Domain          map[string]string            `json:"domain"`
	Nodes           map[string]uint32            `json:"nodes"`
	Placed          map[string]uint32            `json:"placed"`
	DomainsUsed     map[string]uint32            `json:"domains_used"`
	MessageContains []string                     `json:"message_contains"`
	ErrorKind       *string                      `json:"error_kind"`
	ErrorField      *string                      `json:"error_field"`
	DomainCounts    map[string]map[string]uint32 `json:"domain_counts"`
}

type scenarioFile struct {
	Topology json.RawMessage `json:"topology"`
	Nodes    json.RawMessage `json:"nodes"`
	Gang     json.RawMessage `json:"gang"`
	Expect   *expect         `json:"expect"`
}

var kindSentinel = map[string]*gang.Error{
	"invalid_quantity":    gang.ErrInvalidQuantity,
	"invalid_inventory":   gang.ErrInvalidInventory,
	"invalid_request":     gang.ErrInvalidRequest,
	"contradictory":       gang.ErrContradictory,
	"invalid_scenario":    gang.ErrInvalidScenario,
	"conflict":            gang.ErrConflict,
	"unknown_reservation": gang.ErrUnknownReservation,
	"unknown_node":        gang.ErrUnknownNode,
}

// The shared scenario files through Go: the core's check passes; the scenario run
// through this package (scenario handles, and separately the cluster and gang
// documents) gives the core's document byte for byte; and the expectations hold when
// checked here from the Go side.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "scenarios", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("found only %d scenario files", len(files))
	}
	sort.Strings(files)
	for _, path := range files {
		path := path
		t.Run(filepath.Base(path), func(t *testing.T) {
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var file scenarioFile
			if err := json.Unmarshal(text, &file); err != nil {
				t.Fatal(err)
			}
			sc, err := gang.ParseScenario(text)
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close()
			report, err := sc.Check()
			if err != nil {
				t.Fatal(err)
			}
			if !report.Passed {
				t.Errorf("core check failed: %v", report.Failures)
			}

			// Through the scenario handle.
			got, out, runErr := runScenario(t, sc)
			defer out.Close()
			if runErr != nil {
				// The core's error document, field by field.
				var doc map[string]string
				if err := json.Unmarshal([]byte(report.Outcome), &doc); err != nil {
					t.Fatalf("core outcome %s: %v", report.Outcome, err)
				}
				var ge *gang.Error
				if !errors.As(runErr, &ge) || doc["status"] != "error" || doc["kind"] != ge.Kind ||
					doc["field"] != ge.Field || doc["message"] != ge.Message {
					t.Errorf("through Go: %#v\ncore: %s", runErr, report.Outcome)
				}
			} else if got != report.Outcome {
				t.Errorf("through Go:\n%s\ncore:\n%s", got, report.Outcome)
			}

			// Through the cluster and gang documents.
			cluster, _ := json.Marshal(map[string]json.RawMessage{"topology": file.Topology, "nodes": file.Nodes})
			if inv, err := gang.ParseInventory(cluster); err != nil {
				if got := errorJSONKind(err); !strings.Contains(report.Outcome, got) {
					t.Errorf("cluster document: %v; core: %s", err, report.Outcome)
				}
			} else {
				g, err := gang.ParseGang(file.Gang)
				if err != nil {
					t.Fatal(err)
				}
				o, err := inv.Place(g)
				if err == nil {
					if s := outcomeJSON(o); s != report.Outcome {
						t.Errorf("documents:\n%s\ncore:\n%s", s, report.Outcome)
					}
					o.Close()
				} else if !strings.Contains(report.Outcome, errorJSONKind(err)) {
					t.Errorf("documents: %v; core: %s", err, report.Outcome)
				}
				g.Close()
				inv.Close()
			}

			if file.Expect != nil {
				checkExpect(t, file.Expect, out, runErr)
			}
			// The golden paragraph beside the scenario is the diagnosis's Text, as it is
			// the library's Display and Python's str().
			if golden, err := os.ReadFile(strings.TrimSuffix(path, ".json") + ".txt"); err == nil {
				if out.Diagnosis == nil {
					t.Fatalf("golden text but no diagnosis")
				}
				if got, want := out.Diagnosis.Text(), strings.TrimRight(string(golden), "\n"); got != want {
					t.Errorf("Text:\n%s\ngolden:\n%s", got, want)
				}
			}
		})
	}
}

func errorJSONKind(err error) string {
	var ge *gang.Error
	if errors.As(err, &ge) {
		return `"kind":"` + ge.Kind + `"`
	}
	return err.Error()
}

// runScenario places the scenario's gang through the package and returns the result's
// JSON document, or the error.
func runScenario(t *testing.T, sc *gang.Scenario) (string, gang.Outcome, error) {
	inv, err := sc.Inventory()
	if err != nil {
		return "", gang.Outcome{}, err
	}
	defer inv.Close()
	g, err := sc.Gang()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	c, err := inv.Compile(g)
	if err != nil {
		return "", gang.Outcome{}, err
	}
	defer c.Close()
	s := gang.NewSolver()
	defer s.Close()
	out, err := s.Place(inv, c)
	if err != nil {
		t.Fatal(err)
	}
	// The diagnosis-free query finds the same placement, or nil.
	found, err := s.Find(inv, c)
	if err != nil {
		t.Fatal(err)
	}
	if (found == nil) != (out.Placement == nil) {
		t.Errorf("Find: %v, Place: %v", found, out.Status)
	} else if found != nil && found.JSON() != out.Placement.JSON() {
		t.Errorf("Find:\n%s\nPlace:\n%s", found.JSON(), out.Placement.JSON())
	}
	found.Close()
	return outcomeJSON(out), out, nil
}

func checkExpect(t *testing.T, e *expect, out gang.Outcome, err error) {
	t.Helper()
	status := "error"
	message := ""
	if err == nil {
		status = out.Status.String()
		if out.Diagnosis != nil {
			message = out.Diagnosis.Text()
		}
	} else {
		message = err.Error()
	}
	if e.Status != nil && *e.Status != status {
		t.Errorf("status %s, want %s (%v)", status, *e.Status, err)
	}
	for _, sub := range e.MessageContains {
		if !strings.Contains(message, sub) {
			t.Errorf("message %q lacks %q", message, sub)
		}
	}
	if err != nil {
		var ge *gang.Error
		if !errors.As(err, &ge) {
			t.Fatalf("not an *Error: %v", err)
		}
		if e.ErrorKind != nil {
			if want := kindSentinel[*e.ErrorKind]; want == nil || !errors.Is(err, want) {
				t.Errorf("error %v is not %s", err, *e.ErrorKind)
			}
			if ge.Kind != *e.ErrorKind {
				t.Errorf("kind %s, want %s", ge.Kind, *e.ErrorKind)
			}
		}
		if e.ErrorField != nil && ge.Field != *e.ErrorField {
			t.Errorf("field %s, want %s", ge.Field, *e.ErrorField)
		}
		return
	}
	if e.ErrorKind != nil || e.ErrorField != nil {
		t.Errorf("an error was expected, got %s", out.Status)
	}
	p := out.Placement
	if p == nil {
		return
	}
	if e.Level != nil && *e.Level != p.Level() {
		t.Errorf("level %q, want %q", p.Level(), *e.Level)
	}
	if e.Domain != nil {
		got := map[string]string{}
		for _, lv := range p.Domain() {
			got[lv.Level] = lv.Value
		}
		if !reflect.DeepEqual(got, e.Domain) {
			t.Errorf("domain %v, want %v", got, e.Domain)
		}
	}
	if e.Nodes != nil {
		if got := p.NodeCounts(); !reflect.DeepEqual(got, e.Nodes) {
			t.Errorf("nodes %v, want %v", got, e.Nodes)
		}
	}
	for role, want := range e.Placed {
		if got, ok := p.Placed(role); !ok || got != want {
			t.Errorf("placed %s: %d, want %d", role, got, want)
		}
	}
	if e.DomainsUsed != nil {
		got := map[string]uint32{}
		for _, lc := range p.DomainsUsed() {
			got[lc.Level] = lc.Count
		}
		for lvl, want := range e.DomainsUsed {
			if got[lvl] != want {
				t.Errorf("domains used at %s: %d, want %d", lvl, got[lvl], want)
			}
		}
	}
	var sum uint32
	for _, a := range p.Assignments() {
		sum += a.Count
	}
	if uint64(sum) != p.Members() {
		t.Errorf("assignments sum to %d, members %d", sum, p.Members())
	}
}
