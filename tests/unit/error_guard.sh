#!/bin/sh
# The guard of engine/log.h: an internal file that hands tern_last_error()
# to tern_error as an argument (the thread's message formatted into itself:
# undefined, garbled) does not compile, and the compiler's error is the
# guard's: tern_last_error there is an object, not a function; the two right ways compile with the project's flags:
# tern_error_wrap, which nests the previous message, and tern_error with an
# ordinary argument.  Runs from the top build directory; CC and the flags
# come from configure through make check.
set -u
srcdir=${srcdir:-.}
CC=${CC:-cc}
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tern-error-guard.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086
compile() { $CC ${TERN_TEST_CFLAGS:-} -I"$srcdir" -I"$srcdir/include" -c "$1" -o "$tmp/x.o"; }

cat >"$tmp/nested.c" <<'C'
#include "engine/log.h"
tern_status_t nested(const char *job);
tern_status_t nested(const char *job)
{
    return tern_error(TERN_ERR_NOT_FOUND, "job %s: unknown (%s)", job, tern_last_error());
}
C
if compile "$tmp/nested.c" >"$tmp/nested.err" 2>&1; then
    fail "tern_error(..., tern_last_error()) compiled: the guard in engine/log.h is gone"
fi
# the diagnostic itself, not the compiler's echo of the source line (which
# names tern_last_error whatever the error on that line is): gcc calls the
# object by its name, clang by its type, the struct that names the fix
diag='called object .*(tern_last_error|tern_error_nests_last_error_with_tern_error_wrap).* is not a function'
grep -Eq "$diag" "$tmp/nested.err" ||
    { cat "$tmp/nested.err" >&2; fail "the compiler's message is not the guard's (calling tern_last_error, an object)"; }
echo "refused at compile time:"
grep -E -m 1 "$diag" "$tmp/nested.err"

cat >"$tmp/right.c" <<'C'
#include "engine/log.h"
tern_status_t right(const char *job, int how);
tern_status_t right(const char *job, int how)
{
    if (how == 0)
        return tern_error_wrap(TERN_ERR_NOT_FOUND, "job %s: unknown", job);
    return how > 0 ? tern_error(TERN_ERR_NOT_FOUND, "job %s: unknown", job)
                   : tern_error(TERN_ERR_INVALID_PARAM, "no job");
}
C
compile "$tmp/right.c" || fail "tern_error_wrap / tern_error with plain arguments did not compile"
echo "tern_error_wrap and plain tern_error compile"
