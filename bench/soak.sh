#!/usr/bin/env bash
# soak.sh — the full soak (tests/soak/soak, see tests/soak/soak.h): two
# ranks each send 10^6 messages of 0..8 MiB to the other at once, random
# tags and spaces from one seed, every message checked for loss, corruption
# and reordering; over shm, then over tcp on loopback, then over verbs (when
# built; on the loopback device of tests/ibloop unless TERN_TEST_REAL_VERBS
# is set, as in netmods/verbs/test.env), then over dpdk (when built; memif
# between the ranks as in netmods/dpdk/test.env, with --faults SPEC given
# to its fault shim as TERN_DPDK_FAULTS).  It prints every
# command, each rank's counts every minute, each run's summary line and
# wall time, and a recap at the end.
# The exit status is non-zero when a run failed or found anything wrong;
# nothing is asserted about speed.  make check runs the short version
# (tests/soak/soak.sh).
set -u -o pipefail

usage() {
    cat <<EOF
usage: $0 [options]
  --netmod NAME|all     shm, tcp, verbs, dpdk, or all (default: every one built)
  --faults SPEC         dpdk: TERN_DPDK_FAULTS for the run, e.g.
                        drop=0.01,hold=0.01,dup=0.01,corrupt=0.01 (the seed
                        is added)
  --messages N          messages per rank (default $MESSAGES)
  --seed S              seed of the run (default: random, printed)
  --max-size BYTES      largest message, K/M/G suffixes (default $MAX_SIZE)
  --ranks N             ranks per run (default $RANKS)
  --timeout SECS        time the data phase of one run may take (default $TIMEOUT)
  --builddir DIR        where ternrun and tests/soak/soak are built (default
                        \$TERN_BUILDDIR, else the current directory); the soak
                        program is built there with make when missing
  -h, --help            this text
EOF
}

BUILDDIR=${TERN_BUILDDIR:-$PWD}
NETMODS=all
MESSAGES=1000000
SEED=
MAX_SIZE=8M
RANKS=2
TIMEOUT=3600
FAULTS=

while [ $# -gt 0 ]; do
    case $1 in
    --netmod) NETMODS=${2:?--netmod needs shm, tcp, verbs, dpdk or all}; shift ;;
    --faults) FAULTS=${2:?--faults needs a TERN_DPDK_FAULTS spec}; shift ;;
    --messages) MESSAGES=${2:?--messages needs a count}; shift ;;
    --seed) SEED=${2:?--seed needs a number}; shift ;;
    --max-size) MAX_SIZE=${2:?--max-size needs a size}; shift ;;
    --ranks) RANKS=${2:?--ranks needs a count}; shift ;;
    --timeout) TIMEOUT=${2:?--timeout needs seconds}; shift ;;
    --builddir) BUILDDIR=${2:?--builddir needs a directory}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "$0: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
built=$("$BUILDDIR/tern_info" --netmods 2>/dev/null | sed -n 's/^netmods: *\([^(]*\).*/\1/p')
case $NETMODS in
shm | tcp | verbs | dpdk) ;;
all) NETMODS=$built ;;
*) echo "$0: --netmod: shm, tcp, verbs, dpdk or all, not $NETMODS" >&2; exit 2 ;;
esac
for v in MESSAGES RANKS TIMEOUT; do
    [[ ${!v} =~ ^[0-9]+$ ]] || { echo "$0: ${v,,}: not a number: ${!v}" >&2; exit 2; }
done
[ -z "$SEED" ] && SEED=$(( (RANDOM << 15 | RANDOM) ))
[[ $SEED =~ ^[0-9]+$ ]] || { echo "$0: --seed: not a number: $SEED" >&2; exit 2; }

TERNRUN=$BUILDDIR/ternrun
SOAK=$BUILDDIR/tests/soak/soak
[ -x "$TERNRUN" ] || { echo "$0: no ternrun in $BUILDDIR (--builddir)" >&2; exit 2; }
if [ ! -x "$SOAK" ]; then
    echo "+ make -C $BUILDDIR tests/soak/soak"
    make -C "$BUILDDIR" tests/soak/soak >/dev/null || exit 2
fi

echo "# soak: $MESSAGES messages per rank, 0..$MAX_SIZE bytes, $RANKS ranks, seed $SEED," \
    "on $(nproc) cores, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
status=0
recap=()
for nm in $NETMODS; do
    env=(TERN_NETMODS="$nm")
    [ "$nm" = tcp ] && env+=(TERN_TCP_ADDRS=127.0.0.1) # one host: stay on loopback
    if [ "$nm" = verbs ] && [ -z "${TERN_TEST_REAL_VERBS:-}" ]; then # no HCA: tests/ibloop
        env+=(LD_LIBRARY_PATH="$BUILDDIR/tests/ibloop/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
            LD_BIND_NOW=1 IBLOOP_FABRIC="soak-$$")
    fi
    if [ "$nm" = dpdk ]; then # memif between the ranks, as the tests use
        env+=("TERN_DPDK_VDEV=net_memif_%w_%p,role=%R,id=0,socket=/tmp/tern-soak-$$-%j-%w-%l-%h.sock,socket-abstract=no")
        [ -n "$FAULTS" ] && env+=("TERN_DPDK_FAULTS=$FAULTS,seed=$SEED" TERN_DPDK_CSUM=1)
    fi
    cmd=(env "${env[@]}" "$TERNRUN" -n "$RANKS" "$SOAK" -n "$MESSAGES" -s "$MAX_SIZE"
        --seed "$SEED" --timeout "$TIMEOUT" --progress 60 --counters)
    echo "+ ${cmd[*]}"
    log=$(mktemp)
    t0=$(date +%s.%N)
    # the soak's own timeout ends its data phase; this one bounds the rest
    timeout $((TIMEOUT + 120)) "${cmd[@]}" </dev/null 2>&1 | tee "$log"
    rc=$?
    wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
    line=$(grep '^soak: netmod=' "$log" | tail -1)
    rm -f "$log"
    [ -n "$line" ] || line="soak: $nm: no summary line"
    printf '# %s: exit %d, wall %.1f s\n' "$nm" "$rc" "$wall"
    recap+=("$(printf '%s  [exit %d, wall %.1f s]' "$line" "$rc" "$wall")")
    [ "$rc" -eq 0 ] || status=1
done
echo "# recap (seed $SEED)"
printf '%s\n' "${recap[@]}"
exit $status
