#!/usr/bin/env bash
# gang-ffi's tests (the root ./test.sh runs this): the header drift check against a
# pinned cbindgen, the C tests under AddressSanitizer (with its leak checker) and
# UndefinedBehaviorSanitizer, a C++ compile of the header, go vet, go test -race, and
# the Go example. Needs Rust, Go >= 1.22 and gcc; installs the pinned cbindgen into the
# cargo target directory when it is missing.
#
#   gang-ffi/test.sh                      the tests
#   gang-ffi/test.sh --regenerate-header  rewrite include/gang.h, then the tests
#   gang-ffi/test.sh --bench              the timings only (Rust, C, Go; measured, not asserted)
set -euo pipefail
cd "$(dirname "$0")"

CBINDGEN_VERSION=0.29.4
mode=${1:-test}
step() { printf '\n-- gang-ffi: %s\n' "$*"; }

target_dir=$(cargo metadata --format-version 1 --no-deps --locked |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
build=$target_dir/gang-ffi-tests
mkdir -p "$build"
native_libs=(-lgcc_s -lutil -lrt -lpthread -lm -ldl)

if [ "$mode" = --bench ]; then
    step "timings (measured, not asserted)"
    cargo build --locked --release -p gang-ffi
    gcc -std=c11 -O2 -Wall -Wextra -Werror -Iinclude tests/c/bench_place.c \
        "$target_dir/release/libgang_ffi.a" "${native_libs[@]}" -o "$build/bench_place"
    echo "\$ cargo run --release -p gang-ffi --example timing"
    cargo run --locked --release -q -p gang-ffi --example timing
    echo "\$ bench_place   (tests/c/bench_place.c, the C timing loop)"
    "$build/bench_place"
    ./build.sh >/dev/null
    CGO_CFLAGS="-g -O2 -DGANG_FFI_LIB=$(sha256sum go/lib/libgang_ffi.a | cut -c1-16)"
    export CGO_CFLAGS
    echo "\$ go test -run '^\$' -bench . -benchmem -count 5 ./"
    (cd go && go test -run '^$' -bench . -benchmem -count 5 ./ | grep -E '^(Benchmark|ok|PASS|goos|goarch|cpu)')
    exit 0
fi

step "header: include/gang.h against cbindgen $CBINDGEN_VERSION"
cbindgen=$(command -v cbindgen || true)
if [ -z "$cbindgen" ] || [ "$("$cbindgen" --version)" != "cbindgen $CBINDGEN_VERSION" ]; then
    cbindgen=$target_dir/tools/bin/cbindgen
    if [ ! -x "$cbindgen" ] || [ "$("$cbindgen" --version)" != "cbindgen $CBINDGEN_VERSION" ]; then
        echo "installing cbindgen $CBINDGEN_VERSION into $target_dir/tools"
        cargo install cbindgen --locked --version "$CBINDGEN_VERSION" --root "$target_dir/tools"
    fi
fi
if [ "$mode" = --regenerate-header ]; then
    "$cbindgen" -q --config cbindgen.toml --crate gang-ffi --output include/gang.h
fi
"$cbindgen" -q --config cbindgen.toml --crate gang-ffi --output "$build/gang.h"
if ! diff -u include/gang.h "$build/gang.h"; then
    echo "include/gang.h is out of date with src/: run gang-ffi/test.sh --regenerate-header" >&2
    exit 1
fi
echo "include/gang.h matches the source"
gcc -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only -x c include/gang.h
if command -v g++ >/dev/null; then
    g++ -std=c++11 -Wall -Wextra -Werror -fsyntax-only -x c++ include/gang.h
fi

step "C tests (-Wall -Wextra -Werror -fsanitize=address,undefined; leaks checked)"
# Every function of the header is exercised by the C tests.
c_tests=(tests/c/test_gang.c tests/c/test_lifecycle.c tests/c/test_limits.c)
for f in $(grep -oE '\bgang_[a-z0-9_]+\(' include/gang.h | tr -d '(' | sort -u); do
    grep -q "$f(" "${c_tests[@]}" || { echo "the C tests never call $f" >&2; exit 1; }
done
cargo build --locked -p gang-ffi
gcc -std=c11 -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror -pedantic \
    -fsanitize=address,undefined -fno-sanitize-recover=all -Iinclude \
    "${c_tests[@]}" "$target_dir/debug/libgang_ffi.a" "${native_libs[@]}" \
    -o "$build/test_gang"
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$build/test_gang" ../examples/scenarios
# The C quickstart (examples/c) runs clean and answers as the Rust one does.
gcc -std=c11 -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror -pedantic \
    -fsanitize=address,undefined -fno-sanitize-recover=all -Iinclude \
    ../examples/c/quickstart.c "$target_dir/debug/libgang_ffi.a" "${native_libs[@]}" \
    -o "$build/quickstart"
quickstart_out=$(ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 "$build/quickstart")
for want in "placed in b1/a: 2 worker on a1 2 worker on a2" \
    "Best rack: rack b1/a fits 3 of 4 worker" "placed in b1: 2 worker on a1"; do
    grep -qF "$want" <<<"$quickstart_out" ||
        { echo "examples/c/quickstart.c: no \"$want\" in:" >&2; echo "$quickstart_out" >&2; exit 1; }
done
echo "examples/c/quickstart.c: ok"
# Handle checks (tests/c/test_handles.c, a program of its own): wrong-type handles, a
# double free, a freed handle passed again. Run under ASan/UBSan (only the C side is
# instrumented: the library's read of a freed block's tag is not reported, and ASan's
# quarantine keeps the block from being reused, which makes the check deterministic),
# and again without sanitizers, on glibc's allocator. See the file's comment.
gcc -std=c11 -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror -pedantic \
    -fsanitize=address,undefined -fno-sanitize-recover=all -Iinclude \
    tests/c/test_handles.c "$target_dir/debug/libgang_ffi.a" "${native_libs[@]}" \
    -o "$build/test_handles"
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$build/test_handles"
gcc -std=c11 -g -O1 -Wall -Wextra -Werror -pedantic -Iinclude \
    tests/c/test_handles.c "$target_dir/debug/libgang_ffi.a" "${native_libs[@]}" \
    -o "$build/test_handles_plain"
"$build/test_handles_plain"
# The timing loop must keep compiling (it is run by --bench).
gcc -std=c11 -O2 -Wall -Wextra -Werror -Iinclude -fsyntax-only tests/c/bench_place.c

step "Go package (go vet, go test -race, example)"
./build.sh
CGO_CFLAGS="-g -O2 -DGANG_FFI_LIB=$(sha256sum go/lib/libgang_ffi.a | cut -c1-16)"
export CGO_CFLAGS
(
    cd go
    test -z "$(gofmt -l .)" || { gofmt -l .; echo "gofmt: the files above need formatting" >&2; exit 1; }
    go vet ./...
    go test -race -count=1 ./...
    go run ./example >/dev/null
)
echo "gang-ffi: all tests passed"
