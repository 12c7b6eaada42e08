#!/usr/bin/env bash
# osu_abi.sh — one binary, two MPI libraries (issue 24): the OSU-style
# benchmarks of bench/osu, built ONCE with MPICH's mpicc.mpich, run
#     under MPICH           mpiexec.mpich -n 2 -bind-to core PROG
#     on tern, via its ABI  ternrun --mpich-abi -n 2 --bind-to core PROG
# interleaved: every round runs each benchmark under both (which one goes
# first alternates from round to round), each launch sweeping every size.
# The binary is the same file both times: tern's libmpich.so.12 (first on
# the ranks' LD_LIBRARY_PATH with --mpich-abi) takes the place of MPICH's.
# This VM's absolute figures swing up to 3x between runs, so the ratio
# tern / MPICH is taken inside each round and the table gives the median of
# the rounds' ratios beside the medians of the figures.
#
# Every tern launch must print tern's library line ("# Library: tern ..."):
# a run that loaded MPICH's libmpich.so.12 instead is a failure, not a
# figure.  The script prints every command it runs and writes
# bench-results/osu_abi-<date>.json (medians, ratios, every sample, the
# commands).  It asserts nothing about speed; the exit status is non-zero
# only when a launch failed or printed nothing usable.

set -u -o pipefail
# shellcheck source=bench/compare_lib.sh
. "$(dirname "$0")/compare_lib.sh"

usage() {
    cat <<EOF
usage: $0 [options]
  --builddir DIR   tern's build directory, whose ternrun (and mpich-abi/) run
                   the tern side (default \$TERN_BUILDDIR, else the current
                   directory; else ternrun on PATH, installed)
  --rounds N       interleaved rounds (default $ROUNDS)
  --quick          sizes up to 64 KiB and $QUICK_ITERS iterations per size
  --tests LIST     comma list of $(IFS=,; echo "${ALL_PROGS[*]}")
                   (default all)
  --max SIZE       largest message size in bytes (default: each benchmark's)
  --timeout S      seconds one launch may take (default $CMD_TIMEOUT)
  --ompi           also Open MPI: the same sources built with mpicc.openmpi,
                   run by mpirun.openmpi (pml ob1, btl self,vader; one-sided
                   through its osc components), in the same rounds
  --outdir DIR     where the JSON goes (default ./bench-results)
  --keep           keep every launch's output (the path is printed)
  -h, --help       this text
Environment: MPICC (default mpicc.mpich), MPIEXEC (default mpiexec.mpich),
MPICC_OMPI (default mpicc.openmpi), MPIRUN_OMPI (default mpirun.openmpi),
OMPI_MCA (the "--mca K V" pairs, default "$OMPI_MCA_DEFAULT").
EOF
}

# ---- defaults -----------------------------------------------------------
CMDLINE="$0 $*"
BUILDDIR=${TERN_BUILDDIR:-$PWD}
ROUNDS=3
QUICK=0
QUICK_ITERS=100
ALL_PROGS=(latency bw bibw mbw_mr allreduce ialltoall iallreduce
           put_latency get_latency acc_latency get_acc_latency fop_latency cas_latency
           put_bw get_bw put_bibw)
OMPI=0
OMPI_MCA_DEFAULT="--mca pml ob1 --mca btl self,vader"
PROGS=$(IFS=,; echo "${ALL_PROGS[*]}")
MAX_SIZE=""
CMD_TIMEOUT=300
OUTDIR=bench-results
KEEP=0
SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/osu

is_count() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }

while [ $# -gt 0 ]; do
    case $1 in
    --builddir) BUILDDIR=${2:?--builddir needs a directory}; shift ;;
    --rounds) ROUNDS=${2:-}; is_count "$ROUNDS" || { echo "$0: bad --rounds" >&2; exit 2; }; shift ;;
    --quick) QUICK=1 ;;
    --tests) PROGS=${2:?--tests needs a list}; shift ;;
    --max) MAX_SIZE=${2:-}; is_count "$MAX_SIZE" || { echo "$0: bad --max" >&2; exit 2; }; shift ;;
    --timeout) CMD_TIMEOUT=${2:-}; is_count "$CMD_TIMEOUT" || { echo "$0: bad --timeout" >&2; exit 2; }; shift ;;
    --outdir|--out) OUTDIR=${2:?$1 needs a directory}; shift ;;
    --keep) KEEP=1 ;;
    --ompi) OMPI=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "$0: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
for p in ${PROGS//,/ }; do
    in_list "$p" "$(IFS=,; echo "${ALL_PROGS[*]}")" || { echo "$0: unknown benchmark '$p' in --tests" >&2; exit 2; }
done
RUN_PROGS=()
for p in "${ALL_PROGS[@]}"; do in_list "$p" "$PROGS" && RUN_PROGS+=("$p"); done

# What each benchmark's table holds, as metrics: NAME:COLUMN:BETTER (the
# column of its "size v1 v2 ..." rows, counting size as 1; BETTER is lo
# when a smaller figure is better).
declare -A METRICS=(
    [latency]="lat_us:2:lo"
    [bw]="bw_MBps:2:hi"
    [bibw]="bibw_MBps:2:hi"
    [mbw_mr]="mbw_MBps:2:hi mr_msgps:3:hi"
    [allreduce]="allreduce_us:2:lo"
    [ialltoall]="ialltoall_pure_us:4:lo ialltoall_overall_us:2:lo ialltoall_overlap_pct:5:hi"
    [iallreduce]="iallreduce_pure_us:4:lo iallreduce_overall_us:2:lo iallreduce_overlap_pct:5:hi"
    [put_latency]="put_lat_us:2:lo"
    [get_latency]="get_lat_us:2:lo"
    [acc_latency]="acc_lat_us:2:lo"
    [get_acc_latency]="get_acc_lat_us:2:lo"
    [fop_latency]="fop_lat_us:2:lo"
    [cas_latency]="cas_lat_us:2:lo"
    [put_bw]="put_bw_MBps:2:hi"
    [get_bw]="get_bw_MBps:2:hi"
    [put_bibw]="put_bibw_MBps:2:hi"
)

# ---- tools --------------------------------------------------------------
missing=0
MPICC=${MPICC:-mpicc.mpich}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
command -v "$MPICC" >/dev/null || { echo "$0: $MPICC not found (Debian: libmpich-dev)" >&2; missing=1; }
command -v "$MPIEXEC" >/dev/null || { echo "$0: $MPIEXEC not found (Debian: mpich)" >&2; missing=1; }
TERNRUN=$(find_prog ternrun) || { echo "$0: ternrun not found under $BUILDDIR or on PATH" >&2; missing=1; }
for p in timeout awk readelf; do
    command -v $p >/dev/null || { echo "$0: $p not found" >&2; missing=1; }
done
[ -f "$SRCDIR/osu_common.c" ] || { echo "$0: the benchmarks' sources are not in $SRCDIR" >&2; missing=1; }
TOOLS="mpich tern"
if [ "$OMPI" = 1 ]; then
    TOOLS="mpich tern ompi"
    MPICC_OMPI=${MPICC_OMPI:-mpicc.openmpi}
    MPIRUN_OMPI=${MPIRUN_OMPI:-mpirun.openmpi}
    command -v "$MPICC_OMPI" >/dev/null || { echo "$0: $MPICC_OMPI not found (Debian: libopenmpi-dev)" >&2; missing=1; }
    command -v "$MPIRUN_OMPI" >/dev/null || { echo "$0: $MPIRUN_OMPI not found (Debian: openmpi-bin)" >&2; missing=1; }
    read -ra OMPI_MCA_ARGS <<<"${OMPI_MCA:-$OMPI_MCA_DEFAULT}"
    # Open MPI refuses root without these (a container's usual user)
    OMPI_CMD=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
              "$MPIRUN_OMPI" -n 2 --bind-to core --map-by core "${OMPI_MCA_ARGS[@]}")
    [ "$(id -u)" -ne 0 ] || OMPI_CMD+=(--allow-run-as-root)
fi
[ "$missing" = 0 ] || exit 2

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-osu-abi.XXXXXX") || exit 1
cleanup() { if [ "$KEEP" = 1 ]; then echo "# logs kept in $WORK"; else rm -rf "$WORK"; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM
SAMPLES=$WORK/samples.tsv # tool <TAB> metric <TAB> size <TAB> round <TAB> value
COMMANDS=$WORK/commands.txt
: >"$SAMPLES"
: >"$COMMANDS"
FAILURES=0
NRUN=0
record() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$SAMPLES"; }

# ---- build once, with MPICH's wrapper -----------------------------------
for p in "${RUN_PROGS[@]}"; do
    echo "+ $MPICC -O2 -o $WORK/osu_$p $SRCDIR/osu_$p.c $SRCDIR/osu_common.c $SRCDIR/osu_nbc.c"
    "$MPICC" -O2 -o "$WORK/osu_$p" "$SRCDIR/osu_$p.c" "$SRCDIR/osu_common.c" "$SRCDIR/osu_nbc.c" ||
        { echo "$0: $MPICC osu_$p.c failed" >&2; exit 1; }
    readelf -d "$WORK/osu_$p" | grep -q 'NEEDED.*\[libmpich\.so\.12\]' ||
        { echo "$0: osu_$p does not need libmpich.so.12: $MPICC is not MPICH's" >&2; exit 1; }
    [ "$OMPI" = 1 ] || continue
    echo "+ $MPICC_OMPI -O2 -o $WORK/ompi_osu_$p $SRCDIR/osu_$p.c $SRCDIR/osu_common.c $SRCDIR/osu_nbc.c"
    "$MPICC_OMPI" -O2 -o "$WORK/ompi_osu_$p" "$SRCDIR/osu_$p.c" "$SRCDIR/osu_common.c" \
        "$SRCDIR/osu_nbc.c" || { echo "$0: $MPICC_OMPI osu_$p.c failed" >&2; exit 1; }
done

ARGS=()
[ "$QUICK" = 0 ] || ARGS+=(-i "$QUICK_ITERS" -x 10 -m "${MAX_SIZE:-65536}")
[ "$QUICK" = 1 ] || [ -z "$MAX_SIZE" ] || ARGS+=(-m "$MAX_SIZE")

# one TOOL PROG ROUND: a launch sweeping every size, its rows into SAMPLES
one() {
    local tool=$1 prog=$2 round=$3 log m name col better
    local -a cmd
    log=$WORK/$tool-$prog-$round.log
    case $tool in
    mpich) cmd=("$MPIEXEC" -n 2 -bind-to core "$WORK/osu_$prog") ;;
    tern) cmd=("$TERNRUN" --mpich-abi -n 2 --bind-to core "$WORK/osu_$prog") ;;
    ompi) cmd=("${OMPI_CMD[@]}" "$WORK/ompi_osu_$prog") ;;
    esac
    run "$log" "${cmd[@]}" "${ARGS[@]}" || return 1
    LIBRARY[$tool]=$(sed -n 's/^# Library: //p' "$log" | head -n 1)
    if [ "$tool" = tern ] && [[ ${LIBRARY[tern]} != tern* ]]; then
        fail "osu_$prog under ternrun --mpich-abi ran '${LIBRARY[tern]:-no library line}', not tern"
        return 1
    fi
    grep -q '^[0-9]' "$log" || { fail "no figures from osu_$prog under $tool"; return 1; }
    for m in ${METRICS[$prog]}; do
        IFS=: read -r name col better <<<"$m"
        awk -v c="$col" '/^[0-9]/ { print $1 "\t" $c }' "$log" |
            while IFS=$'\t' read -r size value; do record "$tool" "$name" "$size" "$round" "$value"; done
    done
}

declare -A LIBRARY=([mpich]=unknown [tern]=unknown [ompi]=unknown)
DATE=$(date +%Y-%m-%dT%H:%M:%S%z)
STAMP=$(date +%Y%m%d-%H%M%S)
T_START=$(date +%s)
echo "# tern osu_abi: $ROUNDS interleaved rounds, MPICH vs tern via libmpich.so.12$([ "$OMPI" = 0 ] || echo " vs Open MPI"), $(hostname), $DATE"
args_shown=${ARGS[*]:-}
echo "# benchmarks: ${RUN_PROGS[*]}; arguments: ${args_shown:-none, the defaults of each benchmark}"
busy_before
for r in $(seq 1 "$ROUNDS"); do
    echo "# ---- round $r of $ROUNDS"
    # which library goes first turns from round to round
    order=$TOOLS
    for ((k = 1; k < r; k++)); do order="${order#* } ${order%% *}"; done
    for p in "${RUN_PROGS[@]}"; do
        for tool in $order; do one "$tool" "$p" "$r"; done
    done
done
T_END=$(date +%s)
BUSY_END=$(cpu_busy)
echo "# CPU busy after the runs: ${BUSY_END}%"

# ---- medians and per-round ratios ---------------------------------------
ALL_METRICS=()
for p in "${RUN_PROGS[@]}"; do
    for m in ${METRICS[$p]}; do ALL_METRICS+=("${m%%:*}"); done
done
SIZE_LIST=$(cut -f3 "$SAMPLES" | sort -n | uniq | tr '\n' ' ')
STATS=$WORK/stats.txt
sweep_stats "$SAMPLES" "$TOOLS" "${ALL_METRICS[*]}" "$SIZE_LIST" "tern:mpich tern:ompi" >"$STATS"
declare -A MED RR
sweep_read "$STATS"
fmt() { awk -v v="$1" 'BEGIN { if (v == "nan" || v == "") print "-"; else printf "%.2f\n", v }'; }

echo
echo "# Medians of $ROUNDS interleaved rounds; ratio = median of the per-round tern / MPICH (and"
echo "# tern / Open MPI) ratios."
echo "# mpich: ${LIBRARY[mpich]}"
echo "# tern:  ${LIBRARY[tern]}"
[ "$OMPI" = 0 ] || echo "# ompi:  ${LIBRARY[ompi]}"
for p in "${RUN_PROGS[@]}"; do
    for m in ${METRICS[$p]}; do
        IFS=: read -r name col better <<<"$m"
        echo
        how="higher is better: ratio > 1 favours tern"
        [ "$better" = hi ] || how="lower is better: ratio < 1 favours tern"
        echo "# osu_$p: $name ($how)"
        if [ "$OMPI" = 1 ]; then
            printf '# %-10s %14s %14s %10s %14s %10s\n' Size MPICH "tern (ABI)" ratio "Open MPI" \
                "tern/ompi"
        else
            printf '# %-10s %14s %14s %10s\n' Size MPICH "tern (ABI)" ratio
        fi
        for s in $SIZE_LIST; do
            [ "${MED[mpich.$name.$s]:-nan}${MED[tern.$name.$s]:-nan}" != nannan ] || continue
            printf '  %-10s %14s %14s %10s' "$s" "$(fmt "${MED[mpich.$name.$s]}")" \
                "$(fmt "${MED[tern.$name.$s]}")" "$(ratio_fmt "${RR[tern.mpich.$name.$s]}")"
            [ "$OMPI" = 0 ] || printf ' %14s %10s' "$(fmt "${MED[ompi.$name.$s]}")" \
                "$(ratio_fmt "${RR[tern.ompi.$name.$s]}")"
            echo
        done
    done
done

# ---- JSON ---------------------------------------------------------------
mkdir -p "$OUTDIR" || { echo "$0: cannot create $OUTDIR" >&2; exit 1; }
OUT=$OUTDIR/osu_abi-$STAMP
{
    echo "{"
    echo "  \"tool\": \"osu_abi.sh\","
    echo "  \"date\": $(json_str "$DATE"),"
    echo "  \"hostname\": $(json_str "$(hostname)"),"
    echo "  \"command_line\": $(json_str "$CMDLINE"),"
    echo "  \"rounds\": $ROUNDS,"
    echo "  \"quick\": $([ "$QUICK" = 1 ] && echo true || echo false),"
    echo "  \"benchmarks\": $(json_list "${RUN_PROGS[@]}"),"
    echo "  \"arguments\": $(json_str "${ARGS[*]:-}"),"
    echo "  \"seconds\": $((T_END - T_START)),"
    echo "  \"cpu_busy_percent\": {\"before\": $BUSY_START, \"after\": $BUSY_END},"
    echo "  \"libraries\": {\"mpich\": $(json_str "${LIBRARY[mpich]}"), \"tern\": $(json_str "${LIBRARY[tern]}"), \"ompi\": $(json_str "${LIBRARY[ompi]}")},"
    echo "  \"results\": ["
    rows=()
    for name in "${ALL_METRICS[@]}"; do
        for s in $SIZE_LIST; do
            [ "${MED[mpich.$name.$s]:-nan}${MED[tern.$name.$s]:-nan}" != nannan ] || continue
            rows+=("    {\"metric\": \"$name\", \"size\": $s, \"median\": {\"mpich\": $(json_num "${MED[mpich.$name.$s]}"), \"tern\": $(json_num "${MED[tern.$name.$s]}"), \"ompi\": $(json_num "${MED[ompi.$name.$s]:-nan}")}, \"round_ratio_median_tern_over_mpich\": $(json_num "${RR[tern.mpich.$name.$s]}"), \"round_ratio_median_tern_over_ompi\": $(json_num "${RR[tern.ompi.$name.$s]:-nan}")}")
        done
    done
    for ((i = 0; i < ${#rows[@]}; i++)); do
        printf '%s%s\n' "${rows[i]}" "$([ $((i + 1)) -lt ${#rows[@]} ] && echo ,)"
    done
    echo "  ],"
    echo "  \"samples\": ["
    awk -F'\t' '{ printf "%s    {\"tool\": \"%s\", \"metric\": \"%s\", \"size\": %s, \"round\": %s, \"value\": %s}",
                  (NR > 1 ? ",\n" : ""), $1, $2, $3, $4, $5 } END { if (NR) print "" }' "$SAMPLES"
    echo "  ],"
    json_commands
} >"$OUT.json"
echo "# wrote $OUT.json"
echo "# $NRUN launches in $((T_END - T_START)) s, $FAILURES failure(s)"
[ "$FAILURES" = 0 ]
