#!/bin/sh
# The engine suite with no launcher and no PMIx server at all: this script
# starts the ranks itself (engine_tests, N background processes), each
# wires up with tern_init_ex(TERN_WIREUP_ADDRESS) and the worker addresses
# go through files in a directory (tests/engine/addr_wire.c).  For every
# built netmod (its netmods/<name>/test.env: tcp on loopback, verbs on
# tests/ibloop, dpdk on memif) and 2 ranks (2 workers each) and 4 ranks:
# every rank passes the whole suite, the "addresses" case included, and
# leaves nothing in /dev/shm.  Two jobs of one rank each insert each
# other's address and exchange (tcp, verbs, dpdk).  Then a job whose two ranks allow netmods
# that cannot meet (tcp only, shm only): both inserts that complete the job
# fail with TERN_ERR_UNREACHABLE naming the peer's netmods, and neither
# waits for the other.
. "${srcdir:-.}/tests/engine/lib.sh"
INFO=${TERN_INFO:-./tern_info}
netmods=$("$INFO" --netmods | sed -n 's/^netmods: \([^(]*\).*/\1/p' | head -1)
[ -n "$netmods" ] || fail "no netmods in tern_info --netmods"
# no launcher: nothing of one may leak in from the environment
for v in $(env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
top=$(mktemp -d "${TMPDIR:-/tmp}/tern-addr.XXXXXX") || fail "mktemp"
trap 'rm -rf "$top"' EXIT

# start_ranks NAME NP CASES...: NP ranks of job NAME, their outputs in
# $top/NAME/out.R, statuses in $top/NAME/rc.R; each bounded by timeout
start_ranks() {
    name=$1 np=$2
    shift 2
    dir=$top/$name
    mkdir -p "$dir"
    r=0
    pids=""
    while [ "$r" -lt "$np" ]; do
        TERN_TEST_ADDR_DIR=$dir TERN_TEST_RANK=$r TERN_TEST_SIZE=$np TERN_TEST_JOB=$name \
            timeout -k 5 "${ENGINE_TIMEOUT:-300}" "$ENGINE_TESTS" "$@" \
            >"$dir/out.$r" 2>&1 </dev/null &
        pids="$pids $!"
        r=$((r + 1))
    done
    r=0
    for p in $pids; do
        wait "$p"
        echo $? >"$dir/rc.$r"
        r=$((r + 1))
    done
}

for nm in $netmods; do
    for np in 2 4; do
        (
            if [ -f "${srcdir:-.}/netmods/$nm/test.env" ]; then
                set -a
                . "${srcdir:-.}/netmods/$nm/test.env"
                set +a
            fi
            case $np in 2) workers=2 ;; *) workers=1 ;; esac
            TERN_NETMODS=$nm TERN_TEST_NETMOD=$nm TERN_NUM_WORKERS=$workers
            export TERN_NETMODS TERN_TEST_NETMOD TERN_NUM_WORKERS
            job=addr-$$-$nm-np$np
            echo "# $nm, $np ranks, $workers worker(s) each, no launcher"
            start_ranks "$job" "$np" all
            r=0
            while [ "$r" -lt "$np" ]; do
                cat "$top/$job/out.$r"
                [ "$(cat "$top/$job/rc.$r")" -eq 0 ] ||
                    fail "$nm, $np ranks: rank $r exited $(cat "$top/$job/rc.$r")"
                grep -q "^ok addresses (rank $r)" "$top/$job/out.$r" ||
                    fail "$nm, $np ranks: rank $r did not pass the addresses case"
                [ "$(grep -c '^ok ' "$top/$job/out.$r")" -gt 10 ] ||
                    fail "$nm, $np ranks: rank $r passed too few cases"
                r=$((r + 1))
            done
            left=$(find /dev/shm -maxdepth 1 -name "tern-$job-*" 2>/dev/null | wc -l)
            [ "$left" -eq 0 ] || fail "$nm, $np ranks: $left segment(s) left in /dev/shm"
        ) || exit 1
    done
done

# two jobs of one rank each insert each other's address (no launcher to
# connect them) and exchange, over every built netmod that reaches other jobs
for nm in tcp verbs dpdk; do
    case " $netmods " in *" $nm "*) ;; *) continue ;; esac
    (
        if [ -f "${srcdir:-.}/netmods/$nm/test.env" ]; then
            set -a
            . "${srcdir:-.}/netmods/$nm/test.env"
            set +a
        fi
        TERN_NETMODS=$nm TERN_TEST_NETMOD=$nm TERN_TEST_OTHER_DIR=$top/other-$nm
        export TERN_NETMODS TERN_TEST_NETMOD TERN_TEST_OTHER_DIR
        mkdir -p "$TERN_TEST_OTHER_DIR"
        echo "# $nm: two jobs of one rank, each inserting the other's address"
        start_ranks "addr-$$-A-$nm" 1 other_job &
        a=$!
        start_ranks "addr-$$-B-$nm" 1 other_job
        wait "$a"
        for j in A B; do
            out=$top/addr-$$-$j-$nm/out.0
            cat "$out"
            [ "$(cat "$top/addr-$$-$j-$nm/rc.0")" -eq 0 ] || fail "$nm: job $j failed"
            grep -q "^other_job: peer 1 via $nm\$" "$out" ||
                fail "$nm: job $j did not reach the other over $nm"
            if grep -q warning "$out"; then fail "$nm: job $j warned"; fi
        done
    ) || exit 1
done

# netmods that cannot meet: rank 0 allows tcp only, rank 1 shm only
case " $netmods " in
*" shm "*" tcp "* | *" tcp "*" shm "*)
    job=addr-$$-nomeet
    mkdir -p "$top/$job"
    for r in 0 1; do
        case $r in 0) allow=tcp ;; *) allow=shm ;; esac
        TERN_NETMODS=$allow TERN_TCP_ADDRS=127.0.0.1 TERN_TEST_ADDR_DIR=$top/$job \
            TERN_TEST_RANK=$r TERN_TEST_SIZE=2 TERN_TEST_JOB=$job TERN_TEST_ADDR_WAIT_S=30 \
            timeout -k 5 60 "$ENGINE_TESTS" self >"$top/$job/out.$r" 2>&1 </dev/null &
        eval "pid$r=\$!"
    done
    wait "$pid0"; rc0=$?
    wait "$pid1"; rc1=$?
    cat "$top/$job/out.0" "$top/$job/out.1"
    [ "$rc0" -eq 1 ] && [ "$rc1" -eq 1 ] ||
        fail "netmods that cannot meet: exit statuses $rc0 and $rc1 (want 1: refused, not timed out)"
    grep -q "tern_peer_insert .*no netmod reaches rank 1 from rank 0.*its address has cards of shm" \
        "$top/$job/out.0" || fail "rank 0's refusal does not name rank 1's netmods"
    grep -q "tern_peer_insert .*no netmod reaches rank 0 from rank 1.*its address has cards of tcp" \
        "$top/$job/out.1" || fail "rank 1's refusal does not name rank 0's netmods"
    ;;
esac
echo "PASS: the engine suite wired by addresses over: $netmods"
