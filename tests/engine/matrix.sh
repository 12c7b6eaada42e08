#!/bin/sh
# One entry of the engine matrix: the whole engine suite over one netmod,
# one wait mode and one rank count (np2: two workers per rank).  make check runs it once per entry that
# configure generated from the netmods built (tests/matrix/NETMOD-MODE-npN.matrix,
# this script's argument): every registered netmod gets the whole suite.
#   np2: 2 ranks pinned to cores;  np4: 4 ranks on 2 cores, unpinned.
# A netmod may give test settings in netmods/<name>/test.env (tcp: stay on
# loopback).  The job must leave no segment in /dev/shm.
. "${srcdir:-.}/tests/engine/lib.sh"
INFO=${TERN_INFO:-./tern_info}
entry=$(basename "$1" .matrix)
nm=${entry%%-*}
rest=${entry#*-}
mode=${rest%%-*}
np=${rest#*-np}
# np2 entries wire two workers per rank (the workers case drives both at
# once from two threads); np4 entries keep the default of one
case $np in 2) bind=core workers=2 ;; *) bind=none workers=1 ;; esac
"$INFO" --netmods | grep -Eq "^netmods: (.* )?$nm( |$)" ||
    fail "netmod $nm is not in tern_info's registry: $("$INFO" --netmods | head -2)"
if [ -f "${srcdir:-.}/netmods/$nm/test.env" ]; then
    set -a
    . "${srcdir:-.}/netmods/$nm/test.env"
    set +a
fi
TERN_NETMODS=$nm TERN_TEST_NETMOD=$nm TERN_WAIT_MODE=$mode
# block mode: a sleep ends on an arrival, never on this timeout (block_wake)
TERN_HEALTH_MS=20000
TERN_NUM_WORKERS=$workers
export TERN_NETMODS TERN_TEST_NETMOD TERN_WAIT_MODE TERN_HEALTH_MS TERN_NUM_WORKERS
echo "# matrix: netmod $nm, wait mode $mode, $np ranks (--bind-to $bind), $workers worker(s) per rank"
out=$(mktemp)
run_engine "$np" "-v --bind-to $bind" all >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" -eq 0 ] || fail "engine suite: $nm, $mode, $np ranks"
[ "$(grep -c '^ok ' "$out")" -gt "$np" ] || fail "no case reported ok"
[ "$(shm_leftovers "$out")" -eq 0 ] || fail "a tern segment was left in /dev/shm"
rm -f "$out"
