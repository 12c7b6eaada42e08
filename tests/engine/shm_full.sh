#!/bin/sh
# /dev/shm too small for the segment: every rank's tern_init fails with
# TERN_ERR_NO_SHM_SPACE and a message naming /dev/shm, the size needed and
# the space free; nobody hangs in the wire-up fences.  A private mount
# namespace puts a 1 MiB tmpfs over /dev/shm for this job only.
. "${srcdir:-.}/tests/engine/lib.sh"
if ! unshare -m true 2>/dev/null; then
    echo "SKIP: cannot create a mount namespace here"; exit 77
fi
out=$(mktemp)
start=$(date +%s)
unshare -m sh -c 'mount -t tmpfs -o size=1m tmpfs /dev/shm && exec "$@"' sh \
    timeout 120 "$TERNRUN" -n 3 --kill-grace 30 "$ENGINE_TESTS" self >"$out" 2>&1
rc=$?
end=$(date +%s)
cat "$out"
[ "$rc" -ne 0 ] || fail "the job succeeded with a 1 MiB /dev/shm"
n=$(grep -c "tern_init: not enough space in /dev/shm: .*needs [0-9]* bytes, /dev/shm has [0-9]* bytes free" "$out")
[ "$n" -eq 3 ] || fail "$n of 3 ranks named /dev/shm and the sizes"
# nobody waited for the others: ternrun had no rank left to terminate when
# the grace ran out (a causal check, not a time bound; the time is printed)
if grep -q 'still running .* after the failure' "$out"; then
    fail "a rank waited in the wire-up until ternrun's grace ran out"
fi
echo "took $((end - start)) s"
rm -f "$out"
