#!/usr/bin/env bash
# iof_throughput.sh — stdout forwarding throughput: ternrun against Debian
# MPICH's mpiexec (Hydra) on the same program, and the ranks writing their
# files themselves (no launcher: the ceiling), interleaved in ONE run.
#
# Every rank runs   yes <63 x's> | head -c SIZE   (64-byte lines) and the
# launcher forwards its stdout into one file (default on tmpfs, /dev/shm,
# so the disk's noise stays out).  Every round runs, in this order,
#     ternrun,  mpiexec.mpich,  direct (each rank > its own file)
# and the script reports the MEDIAN (and min..max) MB/s of the rounds per
# launcher (MB = 1e6 bytes, of all ranks' bytes) and the ratio
# ternrun / mpiexec of those medians.  With --check-lines it also counts the
# lines of each output that are not one whole 64-byte line (split or merged
# lines of two ranks), once, on a separate run of each launcher in which
# the ranks write 1000-byte chunks (dd), so that writes cut lines.
#
# It prints every command it runs and writes bench-results/iof-<date>.json.
# It asserts nothing about speed: the exit status is non-zero only when a
# launcher failed or forwarded a different number of bytes.

set -u -o pipefail

usage() {
    cat <<EOF
usage: $0 [options]
  --builddir DIR   where ternrun was built (default \$TERN_BUILDDIR, else .)
  --rounds R       interleaved rounds (default $ROUNDS)
  --ranks N        ranks per job (default $RANKS)
  --size BYTES     bytes each rank writes, suffixes K M G (default $SIZE)
  --dir DIR        where the output files go (default $DIR)
  --check-lines    also count split or merged lines of each launcher
  --outdir DIR     where the JSON goes (default ./bench-results)
  -h, --help       this text
EOF
}

CMDLINE="$0 $*"
BUILDDIR=${TERN_BUILDDIR:-$PWD}
ROUNDS=5
RANKS=2
SIZE=256M
DIR=/dev/shm
CHECK_LINES=0
OUTDIR=./bench-results

while [ $# -gt 0 ]; do
    case "$1" in
    --builddir) BUILDDIR=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --ranks) RANKS=$2; shift 2 ;;
    --size) SIZE=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --check-lines) CHECK_LINES=1; shift ;;
    --outdir) OUTDIR=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "$0: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
done

TERNRUN=$BUILDDIR/ternrun
MPIEXEC=$(command -v mpiexec.mpich || true)
[ -x "$TERNRUN" ] || { echo "$0: no ternrun in $BUILDDIR (--builddir)" >&2; exit 2; }
[ -n "$MPIEXEC" ] || echo "$0: mpiexec.mpich not found (apt-get install mpich): skipping it" >&2
bytes=$(numfmt --from=iec "$SIZE") || { echo "$0: bad --size $SIZE" >&2; exit 2; }
total=$((bytes * RANKS))
need=$(( (total * 2) / 1024 ))
avail=$(df -Pk "$DIR" | awk 'NR == 2 {print $4}')
if [ "${avail:-0}" -lt "$need" ]; then
    echo "$0: $DIR has ${avail} KiB free, $need KiB needed" >&2
    exit 2
fi

LINE=$(printf '%63s' '' | tr ' ' x)
PROG="yes $LINE | head -c $bytes"
WORK=$(mktemp -d "$DIR/tern-iof-bench.XXXXXX") || exit 2
trap 'rm -rf "$WORK"' EXIT
OUT=$WORK/out

CUT="$PROG | dd bs=1000 iflag=fullblock status=none"
declare -A CMD
CMD[ternrun]="$TERNRUN -n $RANKS sh -c '$PROG' >$OUT"
CMD[ternrun_cut]="$TERNRUN -n $RANKS sh -c '$CUT' >$OUT"
if [ -n "$MPIEXEC" ]; then
    CMD[mpiexec]="$MPIEXEC -n $RANKS sh -c '$PROG' >$OUT"
    CMD[mpiexec_cut]="$MPIEXEC -n $RANKS sh -c '$CUT' >$OUT"
fi
# the ceiling: the same ranks, each writing its own file, no launcher
CMD[direct]="for r in \$(seq 1 $RANKS); do sh -c '$PROG' >$OUT.\$r & done; wait"
ORDER=(ternrun)
[ -n "$MPIEXEC" ] && ORDER+=(mpiexec)
ORDER+=(direct)

echo "# $(date -Is) $(uname -n), $(nproc) cores; $RANKS ranks x $SIZE of 64-byte lines into $DIR"
for t in "${ORDER[@]}"; do
    echo "# $t: ${CMD[$t]}"
done

# run_one TOOL: time one run (s, on stdout); checks the forwarded size
run_one() {
    local t=$1 t0 t1 got
    rm -f "$OUT" "$OUT".*
    t0=$(date +%s.%N)
    if ! timeout 600 bash -c "${CMD[$t]}" 2>"$WORK/err"; then
        echo "$0: $t failed: $(head -c 500 "$WORK/err")" >&2
        return 1
    fi
    t1=$(date +%s.%N)
    got=$(cat "$OUT" "$OUT".* 2>/dev/null | wc -c)
    if [ "$got" -ne "$total" ]; then
        echo "$0: $t forwarded $got bytes, expected $total" >&2
        return 1
    fi
    printf '%.6f\n' "$(echo "$t1 - $t0" | bc -l)"
}

declare -A TIMES
status=0
for round in $(seq 1 "$ROUNDS"); do
    for t in "${ORDER[@]}"; do
        if s=$(run_one "$t"); then
            TIMES[$t]="${TIMES[$t]:-} $s"
            printf '# round %d %-8s %.3f s\n' "$round" "$t" "$s"
        else
            status=1
        fi
    done
done

# stats TIMES...: "median min max" of the throughputs (MB/s)
stats() {
    for s in "$@"; do echo "$total / $s / 1000000" | bc -l; done | sort -g |
        awk '{v[NR] = $1} END {
            m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "%.0f %.0f %.0f\n", m, v[1], v[NR]
        }'
}

declare -A MED MIN MAX BAD
if [ "$CHECK_LINES" -eq 1 ]; then
    for t in "${ORDER[@]}"; do
        [ "$t" = direct ] && continue
        echo "# lines check: ${CMD[${t}_cut]}"
        if run_one "${t}_cut" >/dev/null; then
            BAD[$t]=$(grep -cvx -- "$LINE" "$OUT")
        fi
    done
fi

echo
printf '| %-8s | %12s | %17s | %s |\n' launcher "median MB/s" "min..max MB/s" "bad lines"
printf '|%s|%s|%s|%s|\n' ---------- -------------- ------------------- -----------
for t in "${ORDER[@]}"; do
    # shellcheck disable=SC2086
    [ -n "${TIMES[$t]:-}" ] || continue
    read -r MED[$t] MIN[$t] MAX[$t] < <(stats ${TIMES[$t]})
    printf '| %-8s | %12s | %17s | %s |\n' "$t" "${MED[$t]}" "${MIN[$t]}..${MAX[$t]}" \
        "${BAD[$t]:--}"
done
ratio=null
if [ -n "${MED[ternrun]:-}" ] && [ -n "${MED[mpiexec]:-}" ]; then
    ratio=$(echo "${MED[ternrun]} / ${MED[mpiexec]}" | bc -l | xargs printf '%.2f')
    echo
    echo "ternrun / mpiexec.mpich (medians of this run): ${ratio}x"
fi
if [ -n "${MED[ternrun]:-}" ] && [ -n "${MED[direct]:-}" ]; then
    echo "ternrun / direct (no launcher):                $(echo "${MED[ternrun]} / ${MED[direct]}" |
        bc -l | xargs printf '%.2f')x"
fi

mkdir -p "$OUTDIR"
json=$OUTDIR/iof-$(date +%Y-%m-%dT%H%M%S).json
{
    printf '{"date": "%s", "command": "%s", "ranks": %d, "bytes_per_rank": %d, "dir": "%s",\n' \
        "$(date -Is)" "$CMDLINE" "$RANKS" "$bytes" "$DIR"
    printf ' "ratio_ternrun_mpiexec": %s, "launchers": {' "$ratio"
    sep=
    for t in "${ORDER[@]}"; do
        [ -n "${MED[$t]:-}" ] || continue
        # shellcheck disable=SC2086
        printf '%s\n  "%s": {"median_MBps": %s, "min_MBps": %s, "max_MBps": %s, "bad_lines": %s, "seconds": [%s]}' \
            "$sep" "$t" "${MED[$t]}" "${MIN[$t]}" "${MAX[$t]}" "${BAD[$t]:-null}" \
            "$(echo ${TIMES[$t]} | tr ' ' ',')"
        sep=,
    done
    printf '\n}}\n'
} >"$json"
echo "# results: $json"
exit $status
