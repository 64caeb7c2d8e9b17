package gang

import (
	"runtime"
	"unsafe"

	"example.invalid/gang/gang-ffi/go/internal/cbench"
)

// PlaceLoopInC places c on inv n times with s inside one C call, holding the locks
// Solver.Place holds: the benchmarks' in-process baseline for the cost of the Go
// boundary (BenchmarkPlaceInC). Exported to the tests only; the C loop is in
// internal/cbench (cgo cannot be used in a _test.go file).
func PlaceLoopInC(s *Solver, inv *Inventory, c *CompiledGang, n int) error {
	sp, h, cp, err := s.begin("PlaceLoopInC", inv, c)
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	defer inv.mu.RUnlock()
	rc := Code(cbench.PlaceLoop(unsafe.Pointer(sp), unsafe.Pointer(h), unsafe.Pointer(cp), n))
	runtime.KeepAlive(s)
	runtime.KeepAlive(inv)
	runtime.KeepAlive(c)
	if rc != CodeOK {
		return &Error{Code: rc, Kind: rc.String(), Message: "gang_solver_place: " + rc.String()}
	}
	return nil
}
