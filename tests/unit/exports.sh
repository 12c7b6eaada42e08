#!/bin/sh
# libtern.so exports exactly the public API: every function declared in
# include/tern/*.h and nothing else (the version script engine/libtern.map).
# An exported symbol of a public version node (TERN_<n>.<m>) that no public
# header declares fails the test, and so does a declared function the
# library does not export there.  The private node (TERN_PRIVATE_*: tern's
# own programs' access to internals) is checked apart: it exports exactly
# the names the map lists in it, none of them declared in a public header,
# and no symbol is exported under any other version.
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

# Exported: defined dynamic symbols by version node ("name node"); the
# version nodes themselves (TERN_0.1, type A) are no symbols.
# shellcheck disable=SC2086
$NM -D --defined-only "$lib" >"$tmp/nm" || fail "$NM -D $lib failed"
awk 'NF >= 3 && $(NF-1) != "A" {
        s = $NF; v = s
        if (sub(/@.*/, "", s)) sub(/^[^@]*@+/, "", v); else v = "(none)"
        print s, v
    }' "$tmp/nm" | sort -u >"$tmp/versioned"
awk '$2 ~ /^TERN_[0-9]+\.[0-9]+$/ { print $1 }' "$tmp/versioned" | sort -u >"$tmp/exported"
awk '$2 ~ /^TERN_PRIVATE_/ { print $1 }' "$tmp/versioned" | sort -u >"$tmp/private"
other=$(awk '$2 !~ /^TERN_[0-9]+\.[0-9]+$/ && $2 !~ /^TERN_PRIVATE_/' "$tmp/versioned")
# The private node's names as engine/libtern.map lists them
map=$srcdir/engine/libtern.map
[ -f "$map" ] || fail "$map missing"
sed 's:/\*.*\*/::g' "$map" | awk '
    /^TERN_PRIVATE_[^ ]* *\{/ { inside = 1; next }
    inside && /^\}/ { inside = 0 }
    inside && /^[ \t]*[A-Za-z_][A-Za-z0-9_]*;[ \t]*$/ { gsub(/[ \t;]/, ""); print }
    ' | sort -u >"$tmp/private_map"
[ -s "$tmp/private_map" ] || fail "no TERN_PRIVATE_* node with names in $map"

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
if [ -n "$other" ]; then
    echo "FAIL: exported under no known version node (TERN_<n>.<m> or TERN_PRIVATE_*):" >&2
    echo "$other" | sed 's/^/  /' >&2
    rc=1
fi
[ "$rc" -eq 0 ] && echo "exports match the public headers"

# the private node: what the map lists, exported, and nothing public
echo "$lib: $(wc -l <"$tmp/private") private symbols exported, $(wc -l <"$tmp/private_map") listed in TERN_PRIVATE_* of $map"
pextra=$(comm -13 "$tmp/private_map" "$tmp/private")
pmissing=$(comm -23 "$tmp/private_map" "$tmp/private")
ppublic=$(comm -12 "$tmp/declared" "$tmp/private")
if [ -n "$pextra" ]; then
    echo "FAIL: private symbols exported that the map's private node does not list:" >&2
    echo "$pextra" | sed 's/^/  /' >&2
    rc=1
fi
if [ -n "$pmissing" ]; then
    echo "FAIL: names of the map's private node not exported (misspelt, or gone):" >&2
    echo "$pmissing" | sed 's/^/  /' >&2
    rc=1
fi
if [ -n "$ppublic" ]; then
    echo "FAIL: private symbols a public header declares (they belong in TERN_0.x):" >&2
    echo "$ppublic" | sed 's/^/  /' >&2
    rc=1
fi
[ "$rc" -eq 0 ] && echo "private exports match the map's private node"
exit "$rc"
