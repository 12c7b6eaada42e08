#!/usr/bin/env bash
# mpi_compare.sh — tern's MPI layer (issue 13) against tern's own core, MPICH
# and Open MPI, interleaved in ONE run on the same two pinned cores.
#
# Every round runs, for each test in turn (lat, bw, bibw, mr, allreduce),
#     tern_bench      tern's core API     ternrun -n 2 --bind-to core
#     mpi_bench_tern  tern's MPI layer    ternrun -n 2 --bind-to core
#     mpi_bench       MPICH               mpiexec.mpich -n 2 -bind-to core
#     mpi_bench_ompi  Open MPI            mpirun.openmpi -n 2 --bind-to core
#                                         (shared memory: pml ob1, btl self,vader)
# each sweeping the sizes 1 B .. 4 MiB (powers of 2; powers of 4 with
# --quick) in one launch.  mpi_bench_* are one program (bench/mpi_bench.c)
# built three ways; tern_bench has the same loops on tern's API and no
# allreduce.  This VM's absolute figures swing up to 3x between runs, so the
# script takes each ratio inside a round (ternmpi / tern, ternmpi / mpich,
# ternmpi / ompi) and reports the median of the rounds' ratios per test and
# size, beside the medians of the figures.
#
# It prints every command it runs and writes bench-results/mpi_compare-<date>.json
# (every figure of every round) and, with gnuplot, a .png (one panel per
# test).  It asserts nothing about speed: the issue-13 targets are printed as
# read from the ratios.  The exit status is non-zero only when a tool failed
# to run or printed nothing usable.  A peer that is not installed or not
# built (MPICH, Open MPI) is skipped with a message.
#
# Units as tern_bench's: latency one-way (round trip / 2) in us, allreduce us
# per call (mean of the two ranks), bandwidth MB/s with MB = 1e6 bytes
# (bibw: both directions), message rate messages/s.

set -u -o pipefail
# shellcheck source=bench/compare_lib.sh
. "$(dirname "$0")/compare_lib.sh"

usage() {
    cat <<EOF
usage: $0 [options]
  --builddir DIR    where ternrun, tern_bench, mpi_bench_tern, mpi_bench and
                    mpi_bench_ompi were built (default \$TERN_BUILDDIR, else
                    the current directory)
  --rounds R        interleaved rounds (default $ROUNDS)
  --quick           sizes 1 B .. 4 MiB in powers of 4 instead of 2 (and lat
                    at 8 B, the target's size, in a launch of its own)
  --tests LIST      comma list of lat,bw,bibw,mr,allreduce (default all)
  --tools LIST      comma list of tern,ternmpi,mpich,ompi (default all four;
                    ternmpi, the layer under test, is always run)
  --max SIZE        largest size in bytes (default $MAX_SIZE)
  --base DIR        also run the MPI layer as built in DIR (another tree: the
                    code before a change) right after ternmpi in every round,
                    and report ternmpi / base per round: before and after
  --env "V=x ..."   environment settings for the tern runs only (TERN_* knobs)
  --timeout S       seconds any one launch may take (default $CMD_TIMEOUT)
  --outdir DIR      where results go (default ./bench-results; --out is the same)
  --keep            keep the raw logs of every command (path is printed)
  -h, --help        this text
Environment: MPIEXEC (MPICH's hydra), MPIRUN_OMPI (Open MPI's mpirun),
OMPI_MCA ("--mca K V" pairs replacing "$OMPI_MCA_DEFAULT").
EOF
}

# ---- defaults -----------------------------------------------------------
CMDLINE="$0 $*"
BUILDDIR=${TERN_BUILDDIR:-$PWD}
ROUNDS=5
QUICK=0
TESTS=lat,bw,bibw,mr,allreduce
TOOLS=tern,ternmpi,mpich,ompi
BASE_DIR=""
MAX_SIZE=4194304
TERN_ENV=()
CMD_TIMEOUT=300
OUTDIR=bench-results
KEEP=0
CORE_A=0            # rank 0 (every launcher binds rank r to core r)
CORE_B=1
LAT_SIZE=8          # the issue-13 latency target's size
# Open MPI 4.1 on one node: ob1 with the shared-memory btl (vader) and self,
# so no UCX pml or tcp btl is picked behind our back.
OMPI_MCA_DEFAULT="--mca pml ob1 --mca btl self,vader"
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

is_count() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }

while [ $# -gt 0 ]; do
    case $1 in
    --builddir) BUILDDIR=${2:?--builddir needs a directory}; shift ;;
    --rounds) ROUNDS=${2:-}; is_count "$ROUNDS" || { echo "bad --rounds" >&2; exit 2; }; shift ;;
    --quick) QUICK=1 ;;
    --tests) TESTS=${2:?--tests needs a list}; shift ;;
    --tools) TOOLS=${2:?--tools needs a list}; shift ;;
    --base) BASE_DIR=${2:?--base needs a build directory}; shift ;;
    --max) MAX_SIZE=${2:-}; is_count "$MAX_SIZE" || { echo "bad --max" >&2; exit 2; }; shift ;;
    --env)
        read -ra kv <<<"${2:?--env needs \"VAR=value ...\"}"
        for x in "${kv[@]}"; do
            [[ $x =~ ^[A-Za-z_][A-Za-z0-9_]*=.*$ ]] || { echo "$0: --env: '$x' is not VAR=value" >&2; exit 2; }
            [[ $x == TERN_* ]] || echo "$0: note: --env $x is not a TERN_* setting" >&2
            TERN_ENV+=("$x")
        done
        shift ;;
    --timeout) CMD_TIMEOUT=${2:-}; is_count "$CMD_TIMEOUT" || { echo "bad --timeout" >&2; exit 2; }; shift ;;
    --outdir|--out) OUTDIR=${2:?$1 needs a directory}; shift ;;
    --keep) KEEP=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "$0: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

ALL_TESTS=(lat bw bibw mr allreduce)
ALL_TOOLS=(tern ternmpi mpich ompi)
cmp_select ternmpi # compare_lib.sh: RUN_TESTS, SIZES, EXTRA_LAT

# ---- locate the programs ------------------------------------------------
# First hit among the build-dir candidates, then PATH.
missing=0
TERNRUN=$(find_prog ternrun) || { echo "$0: ternrun not found under $BUILDDIR or in PATH" >&2; missing=1; }
MPI_BENCH_TERN=$(find_prog mpi_bench_tern) ||
    { echo "$0: mpi_bench_tern not found under $BUILDDIR (make builds it with ternmpicc)" >&2; missing=1; }
for p in timeout awk sort paste; do
    command -v $p >/dev/null || { echo "$0: $p not found" >&2; missing=1; }
done
if [ -n "$BASE_DIR" ]; then
    BASE_TERNRUN=$(BUILDDIR=$BASE_DIR find_prog ternrun) && [[ $BASE_TERNRUN == "$BASE_DIR"* ]] ||
        { echo "$0: ternrun not found under --base $BASE_DIR" >&2; missing=1; }
    BASE_MPI_BENCH=$(BUILDDIR=$BASE_DIR find_prog mpi_bench_tern) && [[ $BASE_MPI_BENCH == "$BASE_DIR"* ]] ||
        { echo "$0: mpi_bench_tern not found under --base $BASE_DIR" >&2; missing=1; }
    # base runs right after ternmpi; it is never a peer of the targets
    ALL_TOOLS=(tern ternmpi base mpich ompi)
    TOOLS="$TOOLS,base"
fi
[ "$missing" = 0 ] || exit 2
if in_list tern "$TOOLS"; then
    TERN_BENCH=$(find_prog tern_bench) || skip tern "tern_bench not found under $BUILDDIR"
fi
if in_list mpich "$TOOLS"; then
    # MPICH's launcher is hydra; Debian's plain "mpiexec" may be Open MPI's.
    MPIEXEC=${MPIEXEC:-$(command -v mpiexec.mpich || command -v mpiexec.hydra || true)}
    if ! MPI_BENCH=$(find_prog mpi_bench); then
        skip mpich "mpi_bench not built (configure builds it when it finds mpicc.mpich; Debian: libmpich-dev)"
    elif [ -z "$MPIEXEC" ]; then
        skip mpich "mpiexec.mpich not installed (Debian: mpich)"
    elif [[ $(timeout 20 "$MPIEXEC" --version 2>/dev/null) != *HYDRA* ]]; then
        skip mpich "$MPIEXEC is not MPICH's hydra (set MPIEXEC=/usr/bin/mpiexec.mpich)"
    fi
fi
if in_list ompi "$TOOLS"; then
    MPIRUN_OMPI=${MPIRUN_OMPI:-$(command -v mpirun.openmpi || true)}
    if ! MPI_BENCH_OMPI=$(find_prog mpi_bench_ompi); then
        skip ompi "mpi_bench_ompi not built (configure builds it when mpicc.openmpi works; Debian: libopenmpi-dev)"
    elif [ -z "$MPIRUN_OMPI" ]; then
        skip ompi "mpirun.openmpi not installed (Debian: openmpi-bin)"
    elif [[ $(timeout 20 "$MPIRUN_OMPI" --version 2>/dev/null) != *OpenRTE* ]]; then   # 4.1: "mpirun (OpenRTE) 4.1.4"
        skip ompi "$MPIRUN_OMPI is not Open MPI's mpirun (set MPIRUN_OMPI=/usr/bin/mpirun.openmpi)"
    fi
fi
want() { in_list "$1" "$TOOLS"; }

# Open MPI refuses to run as root without both of these (a container's
# usual user); the option says the same on the command line.
read -ra OMPI_MCA_ARGS <<<"${OMPI_MCA:-$OMPI_MCA_DEFAULT}"
OMPI_CMD=()
if want ompi; then
    OMPI_CMD=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
              "$MPIRUN_OMPI" -n 2 --bind-to core --map-by core "${OMPI_MCA_ARGS[@]}")
    [ "$(id -u)" -ne 0 ] || OMPI_CMD+=(--allow-run-as-root)
fi

# ---- scratch space, cleanup ---------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-mpi-compare.XXXXXX") || exit 1
cleanup() {
    if [ "$KEEP" = 1 ]; then
        echo "# logs kept in $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

SAMPLES=$WORK/samples.tsv      # tool <TAB> test <TAB> size <TAB> round <TAB> value
COMMANDS=$WORK/commands.txt    # every command, in the order it ran
: >"$SAMPLES"
: >"$COMMANDS"
FAILURES=0
NRUN=0
declare -A LIBRARY=([tern]=unknown [ternmpi]=unknown [base]=unknown [mpich]=unknown [ompi]=unknown)


# run LOG CMD...: print and record the command, run it bounded, stdout+stderr to LOG.

record() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$SAMPLES"; }

# one TOOL TEST ROUND [RANGE]: one launch sweeping every size (or RANGE,
# MIN:MAX); its JSON (bench_p2p.c: one {"size": N, "value": V, ...} object
# per line) into the samples.
one() {
    local tool=$1 test=$2 round=$3 range=${4:-1:$MAX_SIZE} json log
    local -a cmd
    json=$WORK/$tool-$test-$range-$round.json
    log=$WORK/$tool-$test-$range-$round.log
    case $tool in
    tern) cmd=("$TERNRUN" -n 2 --bind-to core "$TERN_BENCH") ;;
    ternmpi) cmd=("$TERNRUN" -n 2 --bind-to core "$MPI_BENCH_TERN") ;;
    base) cmd=("$BASE_TERNRUN" -n 2 --bind-to core "$BASE_MPI_BENCH") ;;
    mpich) cmd=("$MPIEXEC" -n 2 -bind-to core "$MPI_BENCH") ;;
    ompi) cmd=("${OMPI_CMD[@]}" "$MPI_BENCH_OMPI") ;;
    esac
    if [[ $tool == tern* || $tool == base ]] && [ ${#TERN_ENV[@]} -gt 0 ]; then cmd=(env "${TERN_ENV[@]}" "${cmd[@]}"); fi
    run "$log" "${cmd[@]}" -t "$test" -m "$range" -f "$FACTOR" -q --json "$json" || return 1
    record_json "$tool" "$test" "$round" "$json" || return 1
    LIBRARY[$tool]=$(grep -o '"netmod": "[^"]*"' "$json" | head -n 1 | cut -d'"' -f4)
}

# ---- the interleaved rounds ---------------------------------------------
DATE=$(date +%Y-%m-%dT%H:%M:%S%z)
STAMP=$(date +%Y%m%d-%H%M%S)
T_START=$(date +%s)
echo "# tern mpi_compare: $ROUNDS interleaved rounds on cores $CORE_A and $CORE_B, $(hostname), $DATE"
echo "# tools: $TOOLS; tests: ${RUN_TESTS[*]}; sizes: 1 .. $MAX_SIZE (x$FACTOR); tern env: ${TERN_ENV[*]:-<none>}"
[ ${#OMPI_CMD[@]} -eq 0 ] || echo "# Open MPI launch: ${OMPI_CMD[*]}"
# Spin-wait ping-pongs on busy cores measure the scheduler: say how busy
# the machine is (all CPUs, over 1 s, before and after), keep it with the results.
busy_before

for r in $(seq 1 "$ROUNDS"); do
    echo "# ---- round $r of $ROUNDS"
    for test in "${RUN_TESTS[@]}"; do
        for tool in "${ALL_TOOLS[@]}"; do
            want "$tool" || continue
            [ "$tool.$test" != tern.allreduce ] || continue   # tern_bench has no allreduce
            one "$tool" "$test" "$r"
            if [ "$test" = lat ] && [ "$EXTRA_LAT" = 1 ]; then one "$tool" lat "$r" "$LAT_SIZE:$LAT_SIZE"; fi
        done
    done
done
T_END=$(date +%s)
BUSY_END=$(cpu_busy)
echo "# CPU busy after the runs: ${BUSY_END}%"

# ---- medians and ratios -------------------------------------------------
# Per tool, test and size the median of the rounds; per pair (ternmpi
# against tern, mpich, ompi; tern against mpich, ompi) the median of the
# ratios taken inside each round (compare_lib.sh: sweep_stats).
STATS=$WORK/stats.txt
sweep_stats "$SAMPLES" "${ALL_TOOLS[*]}" "${RUN_TESTS[*]}" "${SIZES[*]}" \
    "ternmpi:tern ternmpi:mpich ternmpi:ompi tern:mpich tern:ompi ternmpi:base" >"$STATS"
declare -A MED RR
sweep_read "$STATS"

echo
echo "# Medians of $ROUNDS interleaved rounds; ratios are the medians of the per-round ratios of the"
echo "# figures, the MPI layer (ternmpi) over each: latency < 1 and bandwidth / rate > 1 favour the layer."
echo "# tern: ${LIBRARY[tern]}; ternmpi: ${LIBRARY[ternmpi]}; mpich: ${LIBRARY[mpich]}; ompi: ${LIBRARY[ompi]}"
declare -A TITLE=([lat]="latency, one-way (us)" [bw]="bandwidth (MB/s)" [bibw]="bi-directional bandwidth (MB/s)"
                  [mr]="message rate (msg/s)" [allreduce]="MPI_Allreduce latency (us per call)")
BEHIND=()    # test:size where the core leads both MPI libraries and the layer does not
for test in "${RUN_TESTS[@]}"; do
    echo
    echo "# $test: ${TITLE[$test]}"
    printf '# %-9s %10s %10s %10s %10s   %9s %9s %9s\n' size tern ternmpi mpich ompi mpi/tern mpi/mpich mpi/ompi
    for s in "${SIZES[@]}"; do
        [ "${MED[tern.$test.$s]}${MED[ternmpi.$test.$s]}${MED[mpich.$test.$s]}${MED[ompi.$test.$s]}" != nannannannan ] || continue
        printf '  %-9s %10s %10s %10s %10s   %9s %9s %9s' "$s" \
            "$(sweep_fmt "$test" "${MED[tern.$test.$s]}")" "$(sweep_fmt "$test" "${MED[ternmpi.$test.$s]}")" \
            "$(sweep_fmt "$test" "${MED[mpich.$test.$s]}")" "$(sweep_fmt "$test" "${MED[ompi.$test.$s]}")" \
            "$(ratio_fmt "${RR[ternmpi.tern.$test.$s]}")" "$(ratio_fmt "${RR[ternmpi.mpich.$test.$s]}")" \
            "$(ratio_fmt "${RR[ternmpi.ompi.$test.$s]}")"
        # "where tern's core is ahead of both": the layer should be too.
        if ratio_better "$test" "${RR[tern.mpich.$test.$s]}" && ratio_better "$test" "${RR[tern.ompi.$test.$s]}"; then
            if ratio_better "$test" "${RR[ternmpi.mpich.$test.$s]}" && ratio_better "$test" "${RR[ternmpi.ompi.$test.$s]}"; then
                printf '  core+layer ahead'
            else
                printf '  <- core ahead, layer not'
                BEHIND+=("$test:$s")
            fi
        fi
        echo
    done
done

# Before / after: the layer against the --base build, per test and size.
if [ -n "$BASE_DIR" ]; then
    echo
    echo "# Before / after: ternmpi ($BUILDDIR) over base ($BASE_DIR), medians of per-round ratios"
    echo "# (latency < 1 and bandwidth / rate > 1 favour this build)"
    printf '# %-9s' size
    for test in "${RUN_TESTS[@]}"; do printf ' %10s' "$test"; done
    echo
    for s in "${SIZES[@]}"; do
        printf '  %-9s' "$s"
        for test in "${RUN_TESTS[@]}"; do printf ' %10s' "$(ratio_fmt "${RR[ternmpi.base.$test.$s]:-nan}")"; done
        echo
    done
fi

# Issue-13 targets, read from this run's ratios (printed, never asserted).
echo
echo "# Issue-13 targets (medians of per-round ratios; read, not asserted)"
LAT_TARGET=${RR[ternmpi.tern.lat.$LAT_SIZE]:-nan}
if [ "$LAT_TARGET" = nan ]; then LAT_VERDICT="not measured"
elif awk -v q="$LAT_TARGET" 'BEGIN { exit !(q <= 1.10) }'; then LAT_VERDICT=met
else LAT_VERDICT=$(awk -v q="$LAT_TARGET" 'BEGIN { printf "MISSED: the layer adds %.0f%%\n", (q - 1) * 100 }')
fi
printf '  %-58s %8s  %s\n' "$LAT_SIZE B latency   ternmpi/tern <= 1.10" "$(ratio_fmt "$LAT_TARGET")" "$LAT_VERDICT"
if ! want tern || ! want mpich || ! want ompi; then AHEAD_VERDICT="not measured (a tool was skipped)"
elif [ ${#BEHIND[@]} -eq 0 ]; then AHEAD_VERDICT=met
else AHEAD_VERDICT="MISSED at ${BEHIND[*]}"
fi
printf '  %-58s %8s  %s\n' "layer ahead of MPICH and Open MPI wherever the core is" "" "$AHEAD_VERDICT"
for s in "${SKIPPED[@]}"; do echo "# skipped $s"; done

# ---- JSON ---------------------------------------------------------------
mkdir -p "$OUTDIR" || { echo "$0: cannot create $OUTDIR" >&2; exit 1; }
OUT=$OUTDIR/mpi_compare-$STAMP
{
    echo "{"
    echo "  \"tool\": \"mpi_compare.sh\","
    echo "  \"date\": $(json_str "$DATE"),"
    echo "  \"hostname\": $(json_str "$(hostname)"),"
    echo "  \"command_line\": $(json_str "$CMDLINE"),"
    echo "  \"cores\": [$CORE_A, $CORE_B],"
    echo "  \"rounds\": $ROUNDS,"
    echo "  \"quick\": $([ "$QUICK" = 1 ] && echo true || echo false),"
    echo "  \"sizes\": [$(IFS=,; echo "${SIZES[*]}")],"
    echo "  \"tests\": $(json_list "${RUN_TESTS[@]}"),"
    IFS=, read -ra tl <<<"$TOOLS"
    echo "  \"tools\": $(json_list "${tl[@]}"),"
    echo "  \"skipped\": $(json_list "${SKIPPED[@]}"),"
    echo "  \"seconds\": $((T_END - T_START)),"
    echo "  \"cpu_busy_percent\": {\"before\": $BUSY_START, \"after\": $BUSY_END},"
    echo "  \"tern_env\": $(json_str "${TERN_ENV[*]:-}"),"
    echo "  \"ompi_launch\": $(json_str "${OMPI_CMD[*]:-}"),"
    echo "  \"libraries\": {\"tern\": $(json_str "${LIBRARY[tern]}"), \"ternmpi\": $(json_str "${LIBRARY[ternmpi]}"), \"mpich\": $(json_str "${LIBRARY[mpich]}"), \"ompi\": $(json_str "${LIBRARY[ompi]}")},"
    echo "  \"units\": {\"lat\": \"us one-way\", \"bw\": \"MB/s, MB = 1e6 bytes\", \"bibw\": \"MB/s both directions\", \"mr\": \"messages/s\", \"allreduce\": \"us per call, mean of the ranks\"},"
    echo "  \"results\": ["
    rows=()
    for test in "${RUN_TESTS[@]}"; do
        for s in "${SIZES[@]}"; do
            [ "${MED[tern.$test.$s]}${MED[ternmpi.$test.$s]}${MED[mpich.$test.$s]}${MED[ompi.$test.$s]}" != nannannannan ] || continue
            rows+=("$(printf '    {"test": "%s", "size": %s, "median": {"tern": %s, "ternmpi": %s, "mpich": %s, "ompi": %s},\n' \
                "$test" "$s" "$(json_num "${MED[tern.$test.$s]}")" "$(json_num "${MED[ternmpi.$test.$s]}")" \
                "$(json_num "${MED[mpich.$test.$s]}")" "$(json_num "${MED[ompi.$test.$s]}")"
            printf '     "round_ratio_median": {"ternmpi/tern": %s, "ternmpi/mpich": %s, "ternmpi/ompi": %s, "tern/mpich": %s, "tern/ompi": %s}}' \
                "$(json_num "${RR[ternmpi.tern.$test.$s]}")" "$(json_num "${RR[ternmpi.mpich.$test.$s]}")" \
                "$(json_num "${RR[ternmpi.ompi.$test.$s]}")" "$(json_num "${RR[tern.mpich.$test.$s]}")" \
                "$(json_num "${RR[tern.ompi.$test.$s]}")")")
        done
    done
    for ((i = 0; i < ${#rows[@]}; i++)); do
        printf '%s%s\n' "${rows[i]}" "$([ $((i + 1)) -lt ${#rows[@]} ] && echo ,)"
    done
    echo "  ],"
    if [ -n "$BASE_DIR" ]; then
        echo "  \"base\": {\"builddir\": $(json_str "$BASE_DIR"), \"round_ratio_median_ternmpi_over_base\": ["
        brows=()
        for test in "${RUN_TESTS[@]}"; do
            for s in "${SIZES[@]}"; do
                [ "${RR[ternmpi.base.$test.$s]:-nan}" != nan ] || continue
                brows+=("    {\"test\": \"$test\", \"size\": $s, \"ratio\": ${RR[ternmpi.base.$test.$s]}}")
            done
        done
        for ((i = 0; i < ${#brows[@]}; i++)); do
            printf '%s%s\n' "${brows[i]}" "$([ $((i + 1)) -lt ${#brows[@]} ] && echo ,)"
        done
        echo "  ]},"
    fi
    echo "  \"issue13_targets\": ["
    echo "    {\"rule\": \"$LAT_SIZE B latency ternmpi/tern <= 1.10\", \"ratio\": $(json_num "$LAT_TARGET"), \"result\": $(json_str "$LAT_VERDICT")},"
    echo "    {\"rule\": \"layer ahead of MPICH and Open MPI wherever the core is\", \"result\": $(json_str "$AHEAD_VERDICT")}"
    echo "  ],"
    echo "  \"samples\": ["
    awk -F'\t' '{ printf "%s    {\"tool\": \"%s\", \"test\": \"%s\", \"size\": %s, \"round\": %s, \"value\": %s}",
                  (NR > 1 ? ",\n" : ""), $1, $2, $3, $4, $5 } END { if (NR) print "" }' "$SAMPLES"
    echo "  ],"
    json_commands
} >"$OUT.json"
echo "# wrote $OUT.json"

# ---- plot ---------------------------------------------------------------
for test in "${ALL_TESTS[@]}"; do
    {
        echo "# size tern ternmpi mpich ompi   (medians of $ROUNDS rounds; $test)"
        for s in "${SIZES[@]}"; do
            row="$s"
            for tool in tern ternmpi mpich ompi; do v=${MED[$tool.$test.$s]:-nan}; row="$row ${v/nan/NaN}"; done
            [ "$row" = "$s NaN NaN NaN NaN" ] || echo "$row"   # (--quick: 8 B is lat's only)
        done
    } >"$WORK/plot-$test.dat"
done
plot_png "$SCRIPT_DIR/mpi_compare_plot.gp" "prefix='$WORK/plot'; tests=' ${RUN_TESTS[*]} '; outfile='$OUT.png'; title='tern MPI layer vs core, MPICH, Open MPI: $(hostname) $DATE, cores $CORE_A-$CORE_B, $ROUNDS rounds'" "$OUT.json"

echo "# $NRUN launches in $((T_END - T_START)) s, $FAILURES failure(s)"
[ "$FAILURES" = 0 ]
