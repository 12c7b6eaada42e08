#!/bin/sh
# /dev/shm/tern-<nspace>-* files left by the ranks (normal exit or SIGKILL)
# are removed when ternrun exits; other jobs' files are not touched.
. "$(dirname "$0")/lib.sh"

if [ ! -d /dev/shm ] || [ ! -w /dev/shm ]; then
    echo "SKIP: no writable /dev/shm"
    exit 77
fi
decoy=/dev/shm/tern-ternrun-test-decoy-$$-x
: >"$decoy"

run -n 2 "$PROBE" shm
expect_rc 0 "shm probe"
files=$(sed -n 's/^created //p' "$OUT")
[ "$(echo "$files" | grep -c .)" -eq 2 ] || fail "expected 2 created files"
for f in $files; do
    [ -e "$f" ] && fail "$f left behind"
done

run -n 2 --kill-grace 0 sh -c ': >"/dev/shm/tern-$PMIX_NAMESPACE-rank$PMIX_RANK"; echo "$PMIX_NAMESPACE"; kill -9 $$'
expect_rc 137 "SIGKILLed ranks"
ns=$(head -n 1 "$OUT")
[ -n "$ns" ] || fail "no namespace printed"
ls /dev/shm/tern-"$ns"-* >/dev/null 2>&1 && fail "files of SIGKILLed ranks left behind"

[ -e "$decoy" ] || fail "another job's file was removed"
rm -f "$decoy"

finish
