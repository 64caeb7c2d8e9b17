package gang_test

import (
	"fmt"
	"testing"

	gang "example.invalid/gang/gang-ffi/go"
)

// splitMix is the generator the Rust, C and Go timings share (splitmix64).
type splitMix uint64

func (s *splitMix) next() uint64 {
	*s += 0x9E3779B97F4A7C15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// benchInventory builds blocks × racks × nodes nodes of 8 GPUs, each with
// splitmix64(seed) % 9 GPUs used (about half), through the builder calls. With
// (20, 16, 32, 42) it is the 10,240-node cluster of examples/timing.rs and
// tests/c/bench_place.c.
func benchInventory(tb testing.TB, blocks, racks, nodes int, seed uint64) *gang.Inventory {
	tb.Helper()
	rng := splitMix(seed)
	list := make([]gang.Node, 0, blocks*racks*nodes)
	for b := 0; b < blocks; b++ {
		for r := 0; r < racks; r++ {
			for n := 0; n < nodes; n++ {
				i := (b*racks+r)*nodes + n
				used := rng.next() % 9
				list = append(list, gang.Node{
					Name: fmt.Sprintf("n%05d", i),
					Labels: map[string]string{
						block: fmt.Sprintf("b%02d", b), rack: fmt.Sprintf("r%02d", r),
						"nvidia.com/gpu.product": "H200",
					},
					Capacity: map[string]gang.Amount{gpu: gang.Millis(8000)},
					Used:     map[string]gang.Amount{gpu: gang.Millis(used * 1000)},
				})
			}
		}
	}
	inv, err := gang.NewInventory([]string{block, rack}, list)
	if err != nil {
		tb.Fatal(err)
	}
	return inv
}

// benchSetup: the warm 10k-node inventory, the 4 × 8-GPU rack-required gang compiled
// against it, and a solver that has placed it once.
func benchSetup(b *testing.B) (*gang.Inventory, *gang.CompiledGang, *gang.Solver) {
	inv := benchInventory(b, 20, 16, 32, 42)
	g, err := gang.NewGang(gang.GangSpec{
		Name:     "bench",
		Required: rack,
		Roles:    []gang.Role{{Name: "worker", Count: 4, Requests: map[string]gang.Amount{gpu: gang.Millis(8000)}}},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	c, err := inv.Compile(g)
	if err != nil {
		b.Fatal(err)
	}
	s := gang.NewSolver()
	out, err := s.Place(inv, c)
	if err != nil || out.Status != gang.StatusPlaced {
		b.Fatalf("warm-up: %v %v", out.Status, err)
	}
	out.Close()
	return inv, c, s
}

// BenchmarkPlace: one placement query and freeing its result (the hot path).
func BenchmarkPlace(b *testing.B) {
	inv, c, s := benchSetup(b)
	defer inv.Close()
	defer c.Close()
	defer s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := s.Place(inv, c)
		if err != nil {
			b.Fatal(err)
		}
		out.Close()
	}
}

// BenchmarkPlaceInC: the same query b.N times inside one C call: what BenchmarkPlace
// costs without the Go boundary, measured in the same process. BenchmarkPlace minus
// this is the Go package's overhead per query.
func BenchmarkPlaceInC(b *testing.B) {
	inv, c, s := benchSetup(b)
	defer inv.Close()
	defer c.Close()
	defer s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	if err := gang.PlaceLoopInC(s, inv, c, b.N); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPlaceAndRead: the query, then reading the assignments into Go values.
func BenchmarkPlaceAndRead(b *testing.B) {
	inv, c, s := benchSetup(b)
	defer inv.Close()
	defer c.Close()
	defer s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := s.Place(inv, c)
		if err != nil {
			b.Fatal(err)
		}
		if len(out.Placement.Assignments()) == 0 {
			b.Fatal("no assignments")
		}
		out.Close()
	}
}

// BenchmarkPlaceParallel: one solver per goroutine on the shared inventory.
func BenchmarkPlaceParallel(b *testing.B) {
	inv, c, s := benchSetup(b)
	defer inv.Close()
	defer c.Close()
	s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		s := gang.NewSolver()
		defer s.Close()
		for pb.Next() {
			out, err := s.Place(inv, c)
			if err != nil {
				b.Error(err)
				return
			}
			out.Close()
		}
	})
}

// BenchmarkCgoFloor: about the cheapest call into the library (an accessor writing
// one integer), the floor of any cgo call on this machine.
func BenchmarkCgoFloor(b *testing.B) {
	inv := benchInventory(b, 1, 1, 4, 42)
	defer inv.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if inv.Len() != 4 {
			b.Fatal("wrong inventory")
		}
	}
}

// BenchmarkPlaceTiny: the same query on one rack of 4 free nodes, where the solver's
// own work is small and the boundary's cost shows (compare with examples/timing.rs).
func BenchmarkPlaceTiny(b *testing.B) {
	var nodes []gang.Node
	for n := 0; n < 4; n++ {
		nodes = append(nodes, gang.Node{
			Name:     fmt.Sprintf("n%05d", n),
			Labels:   map[string]string{block: "b00", rack: "r00"},
			Capacity: map[string]gang.Amount{gpu: gang.Millis(8000)},
		})
	}
	inv, err := gang.NewInventory([]string{block, rack}, nodes)
	if err != nil {
		b.Fatal(err)
	}
	defer inv.Close()
	g, err := gang.NewGang(gang.GangSpec{
		Name:     "bench",
		Required: rack,
		Roles:    []gang.Role{{Name: "worker", Count: 4, Requests: map[string]gang.Amount{gpu: gang.Millis(8000)}}},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	c, err := inv.Compile(g)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	s := gang.NewSolver()
	defer s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := s.Place(inv, c)
		if err != nil || out.Status != gang.StatusPlaced {
			b.Fatal(out.Status, err)
		}
		out.Close()
	}
}
