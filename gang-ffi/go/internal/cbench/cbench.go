// Package cbench is the benchmarks' in-process C baseline: a placement query run n
// times inside one C call, so that BenchmarkPlace minus BenchmarkPlaceInC is the cost
// of the Go boundary. Only the gang package's tests import it (through
// export_test.go), so it is never linked into a program that uses the package.
//
// It is a package of its own because cgo cannot be used in _test.go files; for the
// same reason it repeats the cgo flags of ../../cgo.go (the header and the static
// library).
package cbench

/*
#cgo CFLAGS: -I${SRCDIR}/../../../include
#cgo LDFLAGS: ${SRCDIR}/../../lib/libgang_ffi.a -lgcc_s -lutil -lrt -lpthread -lm -ldl
#include "gang.h"

// The same query n times, freeing each result (as Solver.Place followed by
// Outcome.Close would, without leaving C).
static gang_result gang_cbench_place_loop(void *solver, const void *inventory,
                                          const void *compiled, long n) {
    for (long i = 0; i < n; i++) {
        gang_status status = 0;
        gang_placement *p = NULL;
        gang_diagnosis *d = NULL;
        gang_error *err = NULL;
        gang_result rc = gang_solver_place(solver, inventory, compiled, &status, &p, &d, &err);
        if (rc != GANG_OK) {
            gang_error_free(err);
            return rc;
        }
        gang_placement_free(p);
        gang_diagnosis_free(d);
    }
    return GANG_OK;
}
*/
import "C"

import "unsafe"

// PlaceLoop places compiled on inventory n times with solver inside one C call (the
// three are the library's handles, locked by the caller) and returns the first
// failing result code, or 0.
func PlaceLoop(solver, inventory, compiled unsafe.Pointer, n int) uint32 {
	return uint32(C.gang_cbench_place_loop(solver, inventory, compiled, C.long(n)))
}
