package gang

// #include <stdlib.h>
// #include "gang.h"
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// cstrings allocates C copies of Go strings and frees them all at once.
type cstrings struct{ ptrs []*C.char }

// of returns a C copy of s. A Go string holding a NUL byte cannot cross as a C string
// without being cut short, so it is an error (what names it, `what`) rather than a
// silently different name.
func (c *cstrings) of(s, what string) (*C.char, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, &Error{
			Code:    CodeInvalidArgument,
			Kind:    CodeInvalidArgument.String(),
			Field:   what,
			Message: fmt.Sprintf("%s %q contains a NUL byte", what, s),
		}
	}
	p := C.CString(s)
	c.ptrs = append(c.ptrs, p)
	return p, nil
}

func (c *cstrings) free() {
	for _, p := range c.ptrs {
		C.free(unsafe.Pointer(p))
	}
	c.ptrs = c.ptrs[:0]
}

// doc returns a pointer to a document's bytes and its length, without copying: the C
// side only reads them during the call.
func doc(b []byte) (*C.char, C.size_t) {
	if len(b) == 0 {
		return nil, 0
	}
	return (*C.char)(unsafe.Pointer(&b[0])), C.size_t(len(b))
}
