#!/bin/sh
# tern_connect / tern_disconnect between two tern jobs under ternrun
# (tests/launcher/tern_connect.c): 2 ranks spawn 2, both jobs connect,
# every pair exchanges a word and 1 MiB (a rendezvous) both ways, a receive
# from any source names the other job's rank, an unknown job and the own
# job are refused; after tern_disconnect the peer ids are invalid.  Over
# every built netmod that reaches other jobs, alone (TERN_NETMODS, its
# netmods/<name>/test.env: tcp on loopback, verbs on tests/ibloop, dpdk on
# memif, one link per pair of ranks of both jobs; their test.env turn the
# engine's same-host copy off).  Then over dpdk with every frame held
# until its sender's progress lets it go: tern_connect progresses while it
# waits.  Then over tcp with the copy on (the
# default): each server rank's cma.get_bytes counts the 2 clients' MiB,
# the large messages of a connected job's ranks on this host.  Then
# the same with a client rank dying before any byte went to it: the
# server's VC to it fails with TERN_ERR_PEER_FAILED, told by ternrun's PMIx
# event, and the other client still answers.  Last, a connect to a job whose
# ranks end without connecting (/bin/true, /bin/false, and /bin/sleep 2,
# which ends while the connect waits) fails with TERN_ERR_PEER_FAILED naming
# the job, on both ranks and twice, where it used to wait forever.
. "$(dirname "$0")/lib.sh"

PROG=./tests/launcher/tern_connect
# the connections between the jobs stay on loopback
X="-x TERN_TCP_ADDRS=127.0.0.1"

INFO=${TERN_INFO:-./tern_info}
built=$("$INFO" --netmods | sed -n 's/^netmods: \([^(]*\).*/\1/p' | head -1)
for nm in tcp verbs dpdk; do
    case " $built " in *" $nm "*) ;; *) continue ;; esac
    (
        if [ -f "${srcdir:-.}/netmods/$nm/test.env" ]; then
            set -a
            . "${srcdir:-.}/netmods/$nm/test.env"
            set +a
        fi
        TERN_NETMODS=$nm
        export TERN_NETMODS
        T=90 run -n 2 $X "$PROG" server 2
        expect_rc 0 "$nm: connect, exchange, disconnect"
        for r in 0 1; do
            expect_out "^ok server $r\$" "$nm: server rank $r"
            expect_out "^client $r of 2: exchanged with 2 server ranks\$" "$nm: client rank $r"
        done
        expect_out "^server 0: client peers 2\\.\\.3 via $nm\$" "$nm: peer ids and netmod"
        if grep -q FAIL "$OUT"; then fail "$nm: a check failed"; fi
        if grep -q 'warning' "$ERR"; then fail "$nm: a clean disconnect warned"; fi
        echo "# $nm: $(grep '^server 0: client peers' "$OUT")"
        [ "$failures" -eq 0 ]
    ) || failures=$((failures + 1))
done

# the progress of a rank inside tern_connect: dpdk's fault shim holds every
# frame a rank sends until its own progress releases it (2 ms later, or 3
# frames on), so server rank 0's message with the clients' job name
# reaches rank 1 only if rank 0, already in tern_connect, keeps
# progressing (it did not: the job hung when memif's link came up late)
case " $built " in *" dpdk "*)
    (
        set -a
        . "${srcdir:-.}/netmods/dpdk/test.env"
        set +a
        TERN_NETMODS=dpdk TERN_DPDK_FAULTS=hold=1,dir=tx
        export TERN_NETMODS TERN_DPDK_FAULTS
        T=90 run -n 2 $X "$PROG" server 2
        expect_rc 0 "dpdk, every frame held: connect, exchange, disconnect"
        for r in 0 1; do
            expect_out "^ok server $r\$" "dpdk, every frame held: server rank $r"
        done
        if grep -q FAIL "$OUT"; then fail "dpdk, every frame held: a check failed"; fi
        [ "$failures" -eq 0 ]
    ) || failures=$((failures + 1))
    ;;
esac

# the same-host copy for a connected job's ranks (tcp, TERN_CMA by default)
(
    TERN_NETMODS=tcp
    export TERN_NETMODS
    T=90 run -n 2 $X "$PROG" server 2
    expect_rc 0 "tcp, the same-host copy: connect, exchange, disconnect"
    for r in 0 1; do
        got=$(sed -n "s/^server $r cma.get_bytes=\([0-9]*\)$/\1/p" "$OUT")
        [ "${got:-0}" -ge 2097152 ] ||
            fail "server rank $r: the connected job's 1 MiB messages not by the same-host copy ($got)"
    done
    if grep -q FAIL "$OUT"; then fail "tcp, the same-host copy: a check failed"; fi
    echo "# tcp, the same-host copy: $(grep '^server . cma' "$OUT" | tr '\n' ' ')"
    [ "$failures" -eq 0 ]
) || failures=$((failures + 1))

# a client rank dies (status 5) before its VCs carried anything: the
# launcher's event fails them (no tcp connection to see end), only them
T=90 run -n 2 $X --kill-grace 20 "$PROG" server 2 die
expect_rc 5 "a connected job's rank dies"
expect_out '^ok dead client: connection to rank 3 failed: rank 1 of job ternrun-[0-9]+\.1 exited .*reported by the launcher' \
    "VC to the dead rank failed by the event"
expect_out '^ok client 0 still answers$' "the other client's VC works"
expect_out '^ok server 0$' "server rank 0 went on"
expect_out '^ok server 1$' "server rank 1 went on"
if grep -q FAIL "$OUT"; then fail "a check failed"; fi

# a job that ended (or ends meanwhile) is refused, not waited for; ternrun
# exits with the worst status of all its jobs' ranks (/bin/false: 1)
for spec in "/bin/true:0" "/bin/false:1" "/bin/sleep 2:0"; do
    prog=${spec%:*}
    # shellcheck disable=SC2086
    T=60 run -n 2 $X "$PROG" ended $prog
    expect_rc "${spec##*:}" "connect to a job of $prog"
    for r in 0 1; do
        n=$(grep -Ec "^ok ended $r: tern_connect with job ternrun-[0-9]+\.1: .*ended" "$OUT")
        [ "$n" -eq 2 ] || fail "$prog: rank $r: $n of its 2 connects refused naming the job"
    done
    if grep -q FAIL "$OUT"; then fail "$prog: a check failed"; fi
    grep '^ok ended 0' "$OUT"
done

finish
