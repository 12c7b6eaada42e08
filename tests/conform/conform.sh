#!/bin/sh
# Every built netmod (tern_info's registry) through every conformance case
# of nm_conform, one 2-rank job per case: a netmod gets all of it by being
# registered.  netmods/<name>/test.env gives per-netmod test settings.
. "${srcdir:-.}/tests/engine/lib.sh"
INFO=${TERN_INFO:-./tern_info}
CONFORM=${CONFORM:-./tests/conform/nm_conform}
netmods=$("$INFO" --netmods | sed -n 's/^netmods: *\([^(]*\).*/\1/p')
[ -n "$netmods" ] || fail "tern_info lists no netmod"
failed=0
for nm in $netmods; do
    for case in stream backpressure terminate destroy lmt memreg; do
        out=$(mktemp)
        (if [ -f "${srcdir:-.}/netmods/$nm/test.env" ]; then
             set -a; . "${srcdir:-.}/netmods/$nm/test.env"; set +a
         fi
         TERN_NETMODS=$nm timeout 300 "$TERNRUN" -n 2 --bind-to none "$CONFORM" "$case" \
             </dev/null) >"$out" 2>&1
        rc=$?
        if [ "$rc" -eq 0 ] && [ "$(grep -c "^ok $case" "$out")" -eq 2 ]; then
            echo "ok $nm $case: $(grep -v '^ok\|^#' "$out" | grep -v 'warning' | tr '\n' ' ')"
        else
            cat "$out"
            echo "FAIL: $nm $case"
            failed=$((failed + 1))
        fi
        rm -f "$out"
    done
done
[ "$failed" -eq 0 ] || fail "$failed conformance case(s) failed"
