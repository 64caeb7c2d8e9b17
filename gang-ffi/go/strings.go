package gang

// #include <stdlib.h>
// #include "gang.h"
import "C"

import (
	"fmt"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// cstrings allocates C copies of Go strings and frees them all at once.
type cstrings struct{ ptrs []*C.char }

// of returns a C copy of s. A Go string holding a NUL byte cannot cross as a C string
// without being cut short, so it is an error (ErrInvalidArgument) rather than a
// silently different name; one that is not UTF-8 is what the C layer would refuse
// (ErrInvalidUTF8), refused here so that the error names the field (`what`), the
// value and the offset of the first invalid byte.
func (c *cstrings) of(s, what string) (*C.char, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, &Error{
			Code:    CodeInvalidArgument,
			Kind:    CodeInvalidArgument.String(),
			Field:   what,
			Message: fmt.Sprintf("%s %q contains a NUL byte", what, s),
		}
	}
	if !utf8.ValidString(s) {
		return nil, &Error{
			Code:  CodeInvalidUTF8,
			Kind:  CodeInvalidUTF8.String(),
			Field: what,
			Message: fmt.Sprintf("%s %q is not valid UTF-8 (invalid byte at offset %d)",
				what, s, invalidAt(s)),
		}
	}
	p := C.CString(s)
	c.ptrs = append(c.ptrs, p)
	return p, nil
}

// invalidAt is the byte offset of the first invalid UTF-8 sequence in s (len(s) if
// none), as the C layer reports it.
func invalidAt(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return i
			}
		}
	}
	return len(s)
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
