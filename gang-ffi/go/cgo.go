package gang

// The cgo flags of the package, and only here. The static library is built by cargo
// and copied to lib/ by ../build.sh (see README.md); the native libraries after it are
// those `rustc --print native-static-libs` lists for a Rust staticlib on Linux.

// #cgo CFLAGS: -I${SRCDIR}/../include
// #cgo LDFLAGS: ${SRCDIR}/lib/libgang_ffi.a -lgcc_s -lutil -lrt -lpthread -lm -ldl
import "C"
