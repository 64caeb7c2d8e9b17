package gang

// #include <stdlib.h>
// #include "gang.h"
import "C"

import (
	"fmt"
)

// Code is a result code of the C ABI (gang_result). Codes 1–99 are the core library's
// error kinds, one to one; codes from 100 are the C binding's own. Values never change.
type Code uint32

// The result codes (gang.h's GANG_* values).
const (
	CodeOK                 Code = C.GANG_OK
	CodeInvalidQuantity    Code = C.GANG_INVALID_QUANTITY
	CodeInvalidInventory   Code = C.GANG_INVALID_INVENTORY
	CodeInvalidRequest     Code = C.GANG_INVALID_REQUEST
	CodeContradictory      Code = C.GANG_CONTRADICTORY
	CodeInvalidScenario    Code = C.GANG_INVALID_SCENARIO
	CodeConflict           Code = C.GANG_CONFLICT
	CodeUnknownReservation Code = C.GANG_UNKNOWN_RESERVATION
	CodeUnknownNode        Code = C.GANG_UNKNOWN_NODE
	CodeNullArgument       Code = C.GANG_NULL_ARGUMENT
	CodeInvalidUTF8        Code = C.GANG_INVALID_UTF8
	CodeInvalidArgument    Code = C.GANG_INVALID_ARGUMENT
	CodeOutOfRange         Code = C.GANG_OUT_OF_RANGE
	CodeNotFound           Code = C.GANG_NOT_FOUND
	CodeInvalidHandle      Code = C.GANG_INVALID_HANDLE
	CodeUnknownError       Code = C.GANG_UNKNOWN_ERROR
	CodeInternalError      Code = C.GANG_INTERNAL_ERROR
)

// String returns the code's stable snake_case name ("invalid_request").
func (c Code) String() string {
	return C.GoString(C.gang_result_name(C.uint32_t(c)))
}

// Error is why a call failed: a code, the kind's stable name, the field it is about (a
// dotted path such as "nodes[a1].capacity.cpu" or "gang.roles[worker].count") and a
// message naming the value.
//
// Compare with the sentinels using errors.Is, which matches on the code:
//
//	if errors.Is(err, gang.ErrInvalidRequest) { … }
//
// and use errors.As to read the field and message.
type Error struct {
	Code    Code
	Kind    string
	Field   string
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "gang: " + e.Kind
	}
	return "gang: " + e.Message
}

// Is reports whether target is an *Error with the same code (so errors.Is(err,
// gang.ErrInvalidQuantity) holds for every invalid quantity, whatever its message).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func sentinel(c Code) *Error { return &Error{Code: c, Kind: c.String()} }

// Sentinels, one per code, for errors.Is.
var (
	ErrInvalidQuantity    = sentinel(CodeInvalidQuantity)
	ErrInvalidInventory   = sentinel(CodeInvalidInventory)
	ErrInvalidRequest     = sentinel(CodeInvalidRequest)
	ErrContradictory      = sentinel(CodeContradictory)
	ErrInvalidScenario    = sentinel(CodeInvalidScenario)
	ErrConflict           = sentinel(CodeConflict)
	ErrUnknownReservation = sentinel(CodeUnknownReservation)
	ErrUnknownNode        = sentinel(CodeUnknownNode)
	ErrNullArgument       = sentinel(CodeNullArgument)
	ErrInvalidUTF8        = sentinel(CodeInvalidUTF8)
	ErrInvalidArgument    = sentinel(CodeInvalidArgument)
	ErrOutOfRange         = sentinel(CodeOutOfRange)
	ErrNotFound           = sentinel(CodeNotFound)
	ErrInvalidHandle      = sentinel(CodeInvalidHandle)
	ErrUnknownError       = sentinel(CodeUnknownError)
	ErrInternalError      = sentinel(CodeInternalError)
)

// ErrClosed matches the error of a handle used after Close (errors.Is(err,
// gang.ErrClosed)). It has the code CodeInvalidHandle, the C ABI's code for a freed
// handle, so it is ErrInvalidHandle under another name: both match the same errors.
// The error returned names the method and the handle (Field "inventory", "gang", …).
//
// A nil handle (receiver or argument) is ErrNullArgument instead, naming it the same
// way. Neither ever panics, except in the accessors of a Placement or Diagnosis, which
// have no error to return: they panic with such an *Error.
var ErrClosed = &Error{Code: CodeInvalidHandle, Kind: CodeInvalidHandle.String(),
	Message: "use of a closed handle"}

// nilHandle is the error of method given a nil handle, arg (its receiver or an
// argument, named as the C ABI names it: "inventory", "gang", "queue[2]").
func nilHandle(method, arg string) *Error {
	return &Error{Code: CodeNullArgument, Kind: CodeNullArgument.String(), Field: arg,
		Message: fmt.Sprintf("%s: %s is nil", method, arg)}
}

// closedHandle is the error of method given a handle, arg, used after its Close.
func closedHandle(method, arg string) *Error {
	return &Error{Code: CodeInvalidHandle, Kind: CodeInvalidHandle.String(), Field: arg,
		Message: fmt.Sprintf("%s: %s is closed (use of a closed handle)", method, arg)}
}

// argError is the error of a failed call that returns a code alone (no error object
// to say more): it names the field, as a dotted path like the core's ("gang.policy",
// "nodes[a1].taints[0].effect"), and what was wrong with the value passed.
func argError(rc C.gang_result, call, field, format string, args ...any) error {
	c := Code(rc)
	return &Error{Code: c, Kind: c.String(), Field: field,
		Message: fmt.Sprintf("%s: %s: %s", call, field, fmt.Sprintf(format, args...))}
}

// goStr copies a view into a Go string.
func goStr(s C.gang_str) string {
	if s.len == 0 {
		return ""
	}
	return C.GoStringN(s.data, C.int(s.len))
}

// fromC turns a failed call's code and error object into an *Error, freeing the object.
func fromC(rc C.gang_result, cerr *C.gang_error, call string) error {
	if rc == C.GANG_OK {
		return nil
	}
	if cerr == nil {
		c := Code(rc)
		return &Error{Code: c, Kind: c.String(), Message: fmt.Sprintf("%s: %s", call, c)}
	}
	defer C.gang_error_free(cerr)
	var code C.gang_result
	var kind, field, message C.gang_str
	C.gang_error_code(cerr, &code)
	C.gang_error_kind(cerr, &kind)
	C.gang_error_field(cerr, &field)
	C.gang_error_message(cerr, &message)
	return &Error{Code: Code(code), Kind: goStr(kind), Field: goStr(field), Message: goStr(message)}
}

// check turns the code of a call without an error object into an error.
func check(rc C.gang_result, call string) error { return fromC(rc, nil, call) }

// mustOK panics on a failed accessor call: accessors on a live handle only fail on a
// bug, never on input.
func mustOK(rc C.gang_result, call string) {
	if rc != C.GANG_OK {
		panic(fromC(rc, nil, call))
	}
}
