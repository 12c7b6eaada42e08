#!/bin/sh
# The guard of TERN_REQ_NM (engine/engine_internal.h): a netmod's overlay
# type that does not fit a request's netmod scratch does not compile, and
# the compiler names the type; one that fits compiles.  Runs from the top
# build directory; CC and the flags come from configure through make check.
set -u
srcdir=${srcdir:-.}
CC=${CC:-cc}
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tern-req-nm.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086
compile() { $CC ${TERN_TEST_CFLAGS:-} -I"$srcdir" -I"$srcdir/include" -c "$1" -o "$tmp/x.o"; }

# overlay WORDS: a netmod's scratch of WORDS 64-bit words, written and read
overlay() {
    cat <<C
#include "engine/engine_internal.h"
typedef struct nm_scratch { uint64_t w[$1]; } nm_scratch_t;
uint64_t touch(tern_request_t *r);
uint64_t touch(tern_request_t *r)
{
    TERN_REQ_NM(r, nm_scratch_t)->w[$1 - 1] = 1;
    return TERN_REQ_NM(r, nm_scratch_t)->w[0];
}
C
}
words=$(sed -n 's/^#define TERN_REQ_NM_SIZE \([0-9]*\).*/\1/p' "$srcdir/engine/engine_internal.h")
[ -n "$words" ] || fail "no TERN_REQ_NM_SIZE in engine/engine_internal.h"
words=$((words / 8))
overlay "$words" >"$tmp/fits.c"
compile "$tmp/fits.c" || fail "a $words-word overlay (the whole scratch) did not compile"
echo "a $words-word overlay compiles"
overlay $((words + 1)) >"$tmp/big.c"
if compile "$tmp/big.c" >"$tmp/big.err" 2>&1; then
    fail "a $((words + 1))-word overlay compiled: TERN_REQ_NM checks no size"
fi
grep -q "nm_scratch_t does not fit the netmod scratch of a request" "$tmp/big.err" ||
    { cat "$tmp/big.err" >&2; fail "the compiler's message does not name the overlay type"; }
echo "a $((words + 1))-word overlay is refused at compile time"
