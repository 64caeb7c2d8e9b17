#!/usr/bin/env bash
# Builds the gang C library with cargo (static and shared, release), puts the static
# library where the Go package's cgo flags look for it (go/lib/libgang_ffi.a), then
# builds the Go package and its example. From a fresh clone, this one command is all
# the Go package needs (Rust, Go and a C compiler installed):
#
#   gang-ffi/build.sh
#
# PROFILE=debug builds the debug library instead. The library is built in cargo's
# target directory (CARGO_TARGET_DIR if set); the header is include/gang.h.
set -euo pipefail
cd "$(dirname "$0")"

profile=${PROFILE:-release}
flags=(--locked -p gang-ffi)
if [ "$profile" = release ]; then
    flags+=(--release)
fi
cargo build "${flags[@]}"
target_dir=$(cargo metadata --format-version 1 --no-deps --locked |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
mkdir -p go/lib
cp "$target_dir/$profile/libgang_ffi.a" go/lib/libgang_ffi.a
echo "gang-ffi: $target_dir/$profile/libgang_ffi.a -> gang-ffi/go/lib/libgang_ffi.a"

# Go does not notice when a library named in #cgo LDFLAGS changes: put its hash in the
# C flags, which are part of Go's build cache key, so that a new library relinks.
# (Run your own go commands the same way, or with -a, after rebuilding the library.)
CGO_CFLAGS="-g -O2 -DGANG_FFI_LIB=$(sha256sum go/lib/libgang_ffi.a | cut -c1-16)"
export CGO_CFLAGS
(cd go && go build ./... && go build -o /dev/null ./example)
echo "gang-ffi: Go package built; try: cd gang-ffi/go && go run ./example"
