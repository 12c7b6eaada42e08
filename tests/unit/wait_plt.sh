#!/bin/sh
# The wait loops poll without a PLT call per spin: tern_wait and tern_test
# reach the netmods' poll through the engine's internal progress step, not
# through the exported tern_progress, which a call from inside libtern.so
# can only reach through the PLT (it may be interposed).  A PLT call costs
# an indirect jump on every poll of a spin-wait, on the 8-byte latency's
# critical path.  Reads the disassembly of the library libtern.la names;
# skipped without objdump.  Runs from the top build directory.
set -u
OBJDUMP=${OBJDUMP:-objdump}
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v "$OBJDUMP" >/dev/null 2>&1 || { echo "SKIP: no $OBJDUMP"; exit 77; }
dlname=$(sed -n "s/^dlname='\(.*\)'\$/\1/p" libtern.la 2>/dev/null)
[ -n "$dlname" ] || fail "no shared library named in ./libtern.la"
lib=.libs/$dlname
[ -f "$lib" ] || fail "$lib missing"
dis=$("$OBJDUMP" -d --no-show-raw-insn "$lib") || fail "$OBJDUMP -d $lib"
for fn in tern_wait tern_test; do
    body=$(printf '%s\n' "$dis" | awk -v f="<$fn>:" '$2 == f { on = 1; next } on && /^$/ { exit } on')
    [ -n "$body" ] || fail "$fn not found in $lib"
    if printf '%s\n' "$body" | grep -q 'call.*<tern_progress@plt>'; then
        fail "$fn calls tern_progress through the PLT: $(printf '%s\n' "$body" | grep 'tern_progress@plt' | head -n 1)"
    fi
done
echo "PASS: tern_wait and tern_test poll without a PLT call"
