package gang_test

import (
	"errors"
	"fmt"
	"testing"

	gang "example.invalid/gang/gang-ffi/go"
)

// The deepest topology allowed (64 levels) builds, places and is diagnosed through cgo
// without exhausting a stack; 65 levels are refused up front, naming topology.levels.
func TestDeepestTopology(t *testing.T) {
	levels := make([]string, 65)
	for i := range levels {
		levels[i] = fmt.Sprintf("level-%d", i)
	}
	if _, err := gang.NewInventory(levels, nil); !errors.Is(err, gang.ErrInvalidInventory) {
		t.Fatalf("65 levels: %v, want ErrInvalidInventory", err)
	} else {
		var ge *gang.Error
		if errors.As(err, &ge) && ge.Field != "topology.levels" {
			t.Errorf("field %q, want topology.levels", ge.Field)
		}
	}
	levels = levels[:64]
	labels := map[string]string{}
	for _, l := range levels {
		labels[l] = "x"
	}
	nodes := []gang.Node{
		{Name: "n1", Labels: labels, Capacity: map[string]gang.Amount{"gpu": gang.Units(2)}},
		{Name: "n2", Labels: labels, Capacity: map[string]gang.Amount{"gpu": gang.Units(2)}},
	}
	inv, err := gang.NewInventory(levels, nodes)
	if err != nil {
		t.Fatal(err)
	}
	defer inv.Close()
	for members, placed := range map[uint32]bool{4: true, 5: false} {
		g, err := gang.NewGang(gang.GangSpec{
			Name:     "g",
			Roles:    []gang.Role{{Name: "w", Count: members, Requests: map[string]gang.Amount{"gpu": gang.Units(1)}}},
			Required: levels[63],
		})
		if err != nil {
			t.Fatal(err)
		}
		out, err := inv.Place(g)
		if err != nil {
			t.Fatal(err)
		}
		if (out.Placement != nil) != placed {
			t.Errorf("%d members: placed %v, want %v", members, out.Placement != nil, placed)
		}
		out.Close()
		g.Close()
	}
}
