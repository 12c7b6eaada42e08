#!/bin/bash
# One host dies mid-job: 4 ranks on 2 namespace hosts, the ranks of host 1
# wait on the ranks of host 2, and
#   ranks: host 2's two ranks are SIGKILLed (its Open MPI daemon lives), or
#   host:  everything in host 2's namespace is SIGKILLed, daemon included
#          (the host is gone; the kernel closes its sockets).
# Each is run with two programs:
#   pmix    mn_probe: host 1's ranks wait in a PMIx_Fence host 2 never
#           enters (the launcher side)
#   engine  mn_engine_probe (when tern has the tcp netmod): host 1's ranks
#           wait on receives from and a 64 MiB send to host 2's ranks over
#           connected tcp VCs; each request must end with
#           TERN_ERR_PEER_FAILED; engine-verbs: the same over verbs
#           (when built; on the loopback device of tests/ibloop)
# Every time mpirun must end the job with a non-zero status within $BOUND s,
# no host-1 rank may report a completed fence or a FAIL, and no process of
# the job may remain on either host.
#
# MN_KILLED_CMD / MN_KILLED_EXPECT run another program instead of both: it
# must print "ready RANK PID" on each rank once wired up, ranks 0-1 should
# then block on ranks 2-3 and print "posted RANK" once they do (the kill
# waits for those lines: tests/multinode/lib.sh, mn_await_posted), and at
# least 2 lines (one per host-1 rank) must match the extended regular
# expression MN_KILLED_EXPECT (if set).
. "${srcdir:-.}/tests/multinode/lib.sh"
PROBE=${MN_PROBE:-./tests/multinode/mn_probe}
ENGINE_PROBE=${MN_ENGINE_PROBE:-./tests/multinode/mn_engine_probe}
TERN_INFO=${TERN_INFO:-./tern_info}
[ -x "$PROBE" ] || mn_fail "$PROBE not built"
mn_skip_unless_possible
mn_setup
MN_TIMEOUT=60
BOUND=${MN_KILL_BOUND:-60} # a hang catcher: mpirun ends the job 2-3 s after a death
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# run_case LABEL MODE EXPECT PROG...: MODE ranks | host
run_case() {
    local label=$1 mode=$2 expect=$3 out=$MN_DIR/out.$1-$2 mpid i victims rc left
    shift 3
    local -a PROG=("$@")
    echo "=== $label/$mode: kill host 2's $([ "$mode" = ranks ] && echo ranks || echo processes, daemon included)"
    # shellcheck disable=SC2086
    if [ -n "${CASE_MPIRUN_OPTS:-}" ]; then
        mn_mpirun 4 $CASE_MPIRUN_OPTS -- "${PROG[@]}" >"$out" 2>&1 &
    else
        mn_mpirun 4 "${PROG[@]}" >"$out" 2>&1 &
    fi
    mpid=$!
    # wired up, host 1's ranks waiting on host 2's (their requests or fence
    # posted: the kill must land while they wait), each rank on its host
    mn_await_posted "$mpid" "$out" 4 2 "$label/$mode"
    case $? in
    1)
        failures=$((failures + 1))
        return
        ;;
    2) failures=$((failures + 1)) ;;
    esac
    if [ "$mode" = ranks ]; then
        victims=$MN_VICTIMS
    else
        victims=$(mn_ns_pids 2)
    fi
    echo "killing $(echo $victims) in $MN_NS2"
    # shellcheck disable=SC2086
    mn_kill_and_wait "$mpid" "$BOUND" $victims ||
        fail "$label/$mode: mpirun still ran $BOUND s after host 2's ranks were killed (hang)"
    wait "$mpid"
    rc=$?
    cat "$out"
    echo "mpirun exit status $rc"
    [ "$rc" -ne 0 ] || fail "$label/$mode: mpirun exited 0 although host 2's ranks were killed"
    # (137 is a legitimate answer here: mpirun reports the killed rank's
    # 128 + SIGKILL; a hang is caught by the bound above)
    if grep -Eq '^rank [01]: PMIx_Fence ended .*: SUCCESS' "$out"; then
        fail "$label/$mode: a host-1 rank completed a fence its dead peers never entered"
    fi
    if grep -q '^FAIL' "$out"; then
        fail "$label/$mode: a rank reported a failed check"
    fi
    if [ -n "$expect" ]; then
        # With the daemon killed too, mpirun tears the job down as soon as
        # it notices (0.1-2 s here) and may kill host-1 ranks before they
        # print: there every summary a rank did print must be right (none
        # may be missing a failure); with only the ranks killed, both host-1
        # ranks must report.
        if [ "$mode" = ranks ]; then
            [ "$(grep -Ec "$expect" "$out")" -ge 2 ] ||
                fail "$label/$mode: fewer than 2 lines (one per host-1 rank) match /$expect/"
        elif grep -E '^rank [01]: [0-9]+ of ' "$out" | grep -Ev "$expect" | grep -q .; then
            fail "$label/$mode: a host-1 rank's summary does not match /$expect/"
        fi
    fi
    # nothing of the job remains on either host (bounded: a daemon may
    # need a moment to reap)
    for i in $(seq 1 30); do
        left="$(mn_ns_pids 1) $(mn_ns_pids 2)"
        [ -z "${left// /}" ] && break
        sleep 0.1
    done
    if [ -n "${left// /}" ]; then
        fail "$label/$mode: processes left after mpirun ended: $(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)")"
    fi
}

if [ -n "${MN_KILLED_CMD:-}" ]; then
    read -r -a cmd <<<"$MN_KILLED_CMD"
    run_case custom ranks "${MN_KILLED_EXPECT:-}" "${cmd[@]}"
    run_case custom host "${MN_KILLED_EXPECT:-}" "${cmd[@]}"
else
    run_case pmix ranks "" "$PROBE" hang 60 2
    run_case pmix host "" "$PROBE" hang 60 2
    # mpirun tears the job down at the first death: SIGTERM, then
    # SIGKILL odls_base_sigkill_timeout (1) s later.  The probe's host-1
    # ranks hold a SIGTERM until they have reported, and a loaded machine
    # may take longer than 1 s to let them: 5 s.  (Each daemon waits out
    # that time before it reports its processes gone, even those long
    # dead: a case takes about twice as long more.)
    CASE_MPIRUN_OPTS="--mca odls_base_sigkill_timeout 5"
    if "$TERN_INFO" 2>/dev/null | grep -Eq '^netmods:.* tcp( |$)'; then
        [ -x "$ENGINE_PROBE" ] || mn_fail "$ENGINE_PROBE not built"
        # a receive from each of host 2's ranks and the send: 3 per rank
        expect='^rank [01]: 3 of 3 requests on host-2 ranks failed with TERN_ERR_PEER_FAILED'
        run_case engine ranks "$expect" "$ENGINE_PROBE" hang 30 2
        run_case engine host "$expect" "$ENGINE_PROBE" hang 30 2
    else
        echo "note: no tcp netmod in this build (tern_info): the engine cases are not run"
    fi
    if "$TERN_INFO" 2>/dev/null | grep -Eq '^netmods:.* verbs( |$)'; then
        # the same over verbs between the hosts (the loopback device's fabric
        # spans both namespaces; netmods/verbs/test.env)
        expect='^rank [01]: 3 of 3 requests on host-2 ranks failed with TERN_ERR_PEER_FAILED'
        # Open MPI 4.1's mpirun reports no deaths to the survivors and ends
        # the job 2-3 s after the first death: verbs must find out itself,
        # by its keepalive (a probe every TERN_VERBS_KEEPALIVE_MS, then the
        # RC retry time, 4.096 us * 2^TERN_VERBS_TIMEOUT * 8 tries).  The
        # defaults (1 s, 0.54 s) take 1.5-2 s here; 200 ms and 34 ms fit
        # (and a loaded machine has the SIGTERM grace above).
        (set -a && . "${srcdir:-.}/netmods/verbs/test.env" && set +a &&
            export TERN_NETMODS=shm,verbs TERN_VERBS_KEEPALIVE_MS=200 TERN_VERBS_TIMEOUT=10 &&
            run_case engine-verbs ranks "$expect" "$ENGINE_PROBE" hang 30 2 &&
            run_case engine-verbs host "$expect" "$ENGINE_PROBE" hang 30 2
         exit "$failures") || failures=$((failures + 1))
    fi
fi
if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
