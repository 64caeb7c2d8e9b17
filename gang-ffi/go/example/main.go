// Command example places a gang with the gang Go package: first a 4-worker gang that
// must share a rack (it does not fit: the diagnosis says why and what relaxing would
// give), then the same gang with the rack only preferred (placed in the block), which
// it then reserves, loses a node under, tries to replace and releases. Given
// scenario files as arguments, it places each one's gang and prints the result.
//
//	go run ./example
//	go run ./example ../../examples/scenarios/02-seven-free-no-rack-of-four.json
package main

import (
	"errors"
	"fmt"
	"os"

	gang "example.invalid/gang/gang-ffi/go"
)

const (
	block = "topology.example.com/block"
	rack  = "topology.example.com/rack"
	gpu   = "nvidia.com/gpu"
)

func main() {
	if len(os.Args) > 1 {
		for _, path := range os.Args[1:] {
			if err := placeScenario(path); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		return
	}
	if err := tour(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func tour() error {
	node := func(name, r string, used uint64) gang.Node {
		return gang.Node{
			Name:     name,
			Labels:   map[string]string{block: "b1", rack: r},
			Capacity: map[string]gang.Amount{gpu: gang.Units(8), "cpu": gang.Quantity("96")},
			Used:     map[string]gang.Amount{gpu: gang.Units(used)},
		}
	}
	inv, err := gang.NewInventory([]string{block, rack}, []gang.Node{
		node("a1", "a", 6), node("a2", "a", 7), node("b1", "b", 6), node("b2", "b", 8),
	})
	if err != nil {
		return err
	}
	defer inv.Close()

	workers := gang.Role{Name: "worker", Count: 4, Requests: map[string]gang.Amount{
		gpu: gang.Units(1), "cpu": gang.Millis(500),
	}}
	for _, spec := range []gang.GangSpec{
		{Name: "train", Roles: []gang.Role{workers}, Required: rack},
		{Name: "train", Roles: []gang.Role{workers}, Preferred: rack},
	} {
		g, err := gang.NewGang(spec)
		if err != nil {
			return err
		}
		out, err := inv.Place(g)
		g.Close()
		if err != nil {
			return err
		}
		report(out)
		if out.Placement != nil {
			if err := lifecycle(inv, out.Placement); err != nil {
				return err
			}
		}
		out.Close()
	}

	// Invalid input is an error value, matched with errors.Is; never a "does not fit".
	g, _ := gang.NewGang(gang.GangSpec{Name: "train", Roles: []gang.Role{workers}, Required: "zone"})
	defer g.Close()
	if _, err := inv.Place(g); errors.Is(err, gang.ErrInvalidRequest) {
		var ge *gang.Error
		errors.As(err, &ge)
		fmt.Printf("rejected (%s, field %s): %v\n", ge.Kind, ge.Field, err)
	}
	return nil
}

// lifecycle holds the placement, loses a node under it, asks for a replacement inside
// the gang's domain, and gives everything back.
func lifecycle(inv *gang.Inventory, p *gang.Placement) error {
	id, err := inv.Reserve(p) // all of it or nothing (ErrConflict)
	if err != nil {
		return err
	}
	r, err := inv.Reservation(id)
	if err != nil {
		return err
	}
	fmt.Printf("reserved %s as #%d: %d members in %s\n", r.Gang, id, r.MemberCount, r.DomainPath)
	lost, err := inv.FailNode(r.Members[0].Node)
	if err != nil {
		return err
	}
	for _, l := range lost {
		fmt.Printf("node %s failed: #%d lost %d %s\n", l.Node, l.Reservation, l.Count, l.Role)
	}
	rep, err := inv.Replace(id) // inside the gang's domain, or pending
	if err != nil {
		return err
	}
	switch rep.Status {
	case gang.StatusPlaced:
		fmt.Printf("replaced: %v\n", rep.Added)
	case gang.StatusPending:
		fmt.Println(rep.Text)
	}
	if err := inv.Release(id); err != nil {
		return err
	}
	err = inv.Release(id) // twice: an error, nothing credited
	fmt.Printf("released; again: %v (unknown reservation: %v)\n", err, errors.Is(err, gang.ErrUnknownReservation))
	return inv.Uncordon(lost[0].Node)
}

func report(out gang.Outcome) {
	switch out.Status {
	case gang.StatusPlaced:
		p := out.Placement
		fmt.Printf("placed %s in %s %s:", p.Gang(), p.Level(), p.DomainPath())
		for _, a := range p.Assignments() {
			fmt.Printf(" %s×%d on %s", a.Role, a.Count, a.Node)
		}
		fmt.Println()
	default:
		fmt.Printf("%s: %s\n", out.Status, out.Diagnosis.Text())
	}
}

func placeScenario(path string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	sc, err := gang.ParseScenario(text)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer sc.Close()
	fmt.Printf("%s: ", path)
	inv, err := sc.Inventory()
	if err != nil {
		fmt.Println("error:", err)
		return nil
	}
	defer inv.Close()
	g, err := sc.Gang()
	if err != nil {
		return err
	}
	defer g.Close()
	out, err := inv.Place(g)
	if err != nil {
		fmt.Println("error:", err)
		return nil
	}
	defer out.Close()
	report(out)
	return nil
}
