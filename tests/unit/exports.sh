#!/bin/sh
# libtern.so exports exactly the public API: every function declared in
# include/tern/*.h and nothing else (the version script engine/libtern.map).
# An exported symbol no public header declares fails the test, and so does a
# declared function the library does not export.
#
# The declarations come from the preprocessed headers (static inline helpers
# are definitions, not exports); the exports from the dynamic symbol table
# of the library libtern.la names.  Runs from the top build directory; CC
# and NM come from configure through make check.
set -u
srcdir=${srcdir:-.}
CC=${CC:-cc}
NM=${NM:-nm}
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tern-exports.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

dlname=$(sed -n "s/^dlname='\(.*\)'\$/\1/p" libtern.la 2>/dev/null)
[ -n "$dlname" ] || fail "no shared library named in ./libtern.la"
lib=.libs/$dlname
[ -f "$lib" ] || fail "$lib missing"

# Public functions: top-level declarations of tern_* in the headers' own
# lines (not the system headers they include); brace blocks (enum bodies,
# inline definitions) are dropped, a function's name is the first tern_*
# identifier followed by '('.  extern objects would be public too.
printf '#include <tern/tern.h>\n' >"$tmp/api.c"
# shellcheck disable=SC2086
$CC -E -I"$srcdir/include" "$tmp/api.c" >"$tmp/api.i" || fail "$CC -E failed on <tern/tern.h>"
awk '
    /^# *[0-9]+ "/ { ours = ($0 ~ /include\/tern\/[^\/]*\.h"/); next }
    /^#/ { next }
    ours { text = text " " $0 }
    END {
        depth = 0; stmt = ""
        for (i = 1; i <= length(text); i++) {
            c = substr(text, i, 1)
            if (c == "{") { if (depth++ == 0) stmt = stmt " {}"; continue }
            if (c == "}") { depth--; if (depth == 0 && stmt ~ /\)[ \t]*\{\}$/) { emit(stmt); stmt = "" } continue }
            if (depth > 0) continue
            if (c == ";") { emit(stmt); stmt = ""; continue }
            stmt = stmt c
        }
    }
    function emit(s) {
        sub(/^[ \t]+/, "", s)
        if (s ~ /^(typedef|static)[ \t]/ || s ~ /\{\}$/)
            return
        if (match(s, /tern_[A-Za-z0-9_]*[ \t]*\(/)) {
            s = substr(s, RSTART, RLENGTH); sub(/[ \t]*\($/, "", s); print s
        } else if (s ~ /^extern[ \t]/ && match(s, /tern_[A-Za-z0-9_]*[ \t]*(\[[^]]*\][ \t]*)*$/)) {
            s = substr(s, RSTART, RLENGTH); sub(/[ \t[].*$/, "", s); print s
        }
    }' "$tmp/api.i" | sort -u >"$tmp/declared"
[ -s "$tmp/declared" ] || fail "no tern_* declaration found in $srcdir/include/tern/*.h"

# Exported: defined dynamic symbols, version suffix dropped; the version
# nodes themselves (TERN_0.1, type A) are no symbols.
# shellcheck disable=SC2086
$NM -D --defined-only "$lib" >"$tmp/nm" || fail "$NM -D $lib failed"
awk 'NF >= 3 && $(NF-1) != "A" { s = $NF; sub(/@.*/, "", s); print s }' "$tmp/nm" |
    sort -u >"$tmp/exported"

extra=$(comm -13 "$tmp/declared" "$tmp/exported")
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
echo "$lib: $(wc -l <"$tmp/exported") symbols exported, $(wc -l <"$tmp/declared") declared in include/tern/*.h"
rc=0
if [ -n "$extra" ]; then
    echo "FAIL: $(echo "$extra" | wc -l) exported symbols no public header declares:" >&2
    echo "$extra" | sed 's/^/  /' >&2
    rc=1
fi
if [ -n "$missing" ]; then
    echo "FAIL: $(echo "$missing" | wc -l) public declarations not exported:" >&2
    echo "$missing" | sed 's/^/  /' >&2
    rc=1
fi
[ "$rc" -eq 0 ] && echo "exports match the public headers"
exit "$rc"
