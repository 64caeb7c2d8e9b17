// Package gang places gangs — groups of members that must all run, each with its own
// resource shape — inside one topology domain (a rack, a block, an NVLink domain…) of
// a cluster, exactly and all or nothing; and when they do not fit, says why.
//
// It wraps the gang C ABI (gang-ffi, a Rust static library linked with cgo; see
// README.md). The package holds no placement logic of its own.
//
// Handles (Inventory, Gang, CompiledGang, Solver, Placement, Diagnosis, Scenario) own
// memory in the library: Close them when done. Close is idempotent, and a finalizer
// frees a forgotten handle, but only when the garbage collector gets to it.
//
// Invalid input is an error (*Error, matched with errors.Is against ErrInvalidRequest
// and the other sentinels); a valid gang that does not fit is not: it is an Outcome
// with StatusUnschedulable and a Diagnosis.
package gang

// #include "gang.h"
import "C"

// Header version: the gang.h this package was compiled against.
const (
	VersionMajor = C.GANG_VERSION_MAJOR
	VersionMinor = C.GANG_VERSION_MINOR
	VersionPatch = C.GANG_VERSION_PATCH
)

// Version returns the version of the linked library ("0.1.0").
func Version() string { return C.GoString(C.gang_version()) }
