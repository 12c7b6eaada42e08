#!/bin/sh
# --bind-to core pins each rank to its own core (rank % ncores); -v prints
# each binding; --bind-to none leaves the inherited affinity alone.
. "$(dirname "$0")/lib.sh"

ncpu=$(nproc 2>/dev/null || echo 1)
if [ "$ncpu" -lt 2 ]; then
    echo "SKIP: needs at least 2 CPUs"
    exit 77
fi

run -v -n 2 --bind-to core "$PROBE" affinity
expect_rc 0 "--bind-to core"
a0=$(sed -n 's/^affinity 0 //p' "$OUT")
a1=$(sed -n 's/^affinity 1 //p' "$OUT")
[ -n "$a0" ] && [ -n "$a1" ] || fail "--bind-to core: missing affinity lines"
[ "$a0" != "$a1" ] || fail "--bind-to core: ranks 0 and 1 share cpus $a0"
for a in "$a0" "$a1"; do
    n=$(echo "$a" | tr ',' '\n' | grep -c .)
    [ "$n" -lt "$ncpu" ] || fail "--bind-to core: a rank is not restricted ($a of $ncpu cpus)"
done
expect_err 'rank 0 .*bound to core 0' "-v prints rank 0's binding"
expect_err 'rank 1 .*bound to core 1' "-v prints rank 1's binding"

run -n 2 --bind-to none "$PROBE" affinity
expect_rc 0 "--bind-to none"
a0=$(sed -n 's/^affinity 0 //p' "$OUT")
n=$(echo "$a0" | tr ',' '\n' | grep -c .)
[ "$n" -eq "$ncpu" ] || fail "--bind-to none: rank 0 restricted to $a0"

# more ranks than cores with explicit core binding: wrap around, one warning
n=$((ncpu + 1))
run -n "$n" --bind-to core "$PROBE" affinity
expect_rc 0 "--bind-to core oversubscribed"
[ "$(grep -c 'warning' "$ERR")" -eq 1 ] || fail "oversubscribed: expected one warning line"
[ "$(grep -c '^affinity' "$OUT")" -eq "$n" ] || fail "oversubscribed: expected $n ranks"

finish
