#!/usr/bin/env bash
# compare.sh — tern against UCX (ucx_perftest) and the raw shared-memory
# limit (raw_pingpong), interleaved in ONE run on the same two pinned cores.
#
# This VM's absolute latency swings up to 3x between runs, so the script
# never compares figures across runs: every round runs, in this order,
#     tern lat 8 B, ucx tag_lat 8 B, raw ping-pong, tern bw 4 MiB, ucx tag_bw 4 MiB
# so machine noise hits every tool alike, and it reports the MEDIAN of the
# rounds per tool and the ratios tern/ucx and tern/raw.  With --sweep it also
# runs every size (1 B .. 4 MiB) and plots latency and bandwidth vs size.
#
# It prints every command it runs and writes bench-results/compare-<date>.json
# (and .png with --sweep).  It asserts nothing about speed: the exit status is
# non-zero only when a tool failed to run or printed nothing usable.
#
# Units: latency is one-way (round trip / 2) in us; bandwidth in MB/s with
# MB = 1e6 bytes.  ucx_perftest prints MB/s with MB = 2^20 bytes: the script
# converts (x 1.048576) before comparing.

set -u -o pipefail

usage() {
    cat <<EOF
usage: $0 [options]
  --builddir DIR    where ternrun, tern_bench and raw_pingpong were built
                    (default \$TERN_BUILDDIR, else the current directory)
  --rounds R        interleaved rounds (default 5)
  --sweep           also sweep sizes 1 B .. 4 MiB and plot them (gnuplot PNG)
  --sweep-rounds R  rounds of the sweep (default 3)
  --tools LIST      comma list of tern,ucx,raw (default all three)
  --lat-iters N     ping-pong round trips per latency run (default $LAT_ITERS)
  --bw-iters N      tern windows of 64 x 4 MiB per bandwidth run (default $BW_ITERS;
                    ucx_perftest gets 64 x N messages, the same bytes)
  --outdir DIR      where results go (default ./bench-results)
  --keep            keep the raw logs of every command (path is printed)
  -h, --help        this text
EOF
}

# ---- defaults -----------------------------------------------------------
CMDLINE="$0 $*"
BUILDDIR=${TERN_BUILDDIR:-$PWD}
ROUNDS=5
SWEEP=0
SWEEP_ROUNDS=3
TOOLS=tern,ucx,raw
LAT_ITERS=100000
LAT_WARMUP=10000
BW_ITERS=20
BW_WARMUP=2
OUTDIR=bench-results
KEEP=0
CORE_A=0            # rank 0 / ucx client / raw side A
CORE_B=1            # rank 1 / ucx server / raw side B
LAT_SIZE=8
BW_SIZE=4194304
WINDOW=64           # tern_bench's bandwidth window (TB_WINDOW)
CMD_TIMEOUT=180     # seconds any one command may take
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

is_count() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }

while [ $# -gt 0 ]; do
    case $1 in
    --builddir) BUILDDIR=${2:?--builddir needs a directory}; shift ;;
    --rounds) ROUNDS=${2:-}; is_count "$ROUNDS" || { echo "bad --rounds" >&2; exit 2; }; shift ;;
    --sweep) SWEEP=1 ;;
    --sweep-rounds) SWEEP_ROUNDS=${2:-}; is_count "$SWEEP_ROUNDS" || { echo "bad --sweep-rounds" >&2; exit 2; }; shift ;;
    --tools) TOOLS=${2:?--tools needs a list}; shift ;;
    --lat-iters) LAT_ITERS=${2:-}; is_count "$LAT_ITERS" || { echo "bad --lat-iters" >&2; exit 2; }; shift ;;
    --bw-iters) BW_ITERS=${2:-}; is_count "$BW_ITERS" || { echo "bad --bw-iters" >&2; exit 2; }; shift ;;
    --outdir) OUTDIR=${2:?--outdir needs a directory}; shift ;;
    --keep) KEEP=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "$0: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

want() { [[ ",$TOOLS," == *",$1,"* ]]; }
for t in ${TOOLS//,/ }; do
    case $t in tern|ucx|raw) ;; *) echo "$0: unknown tool '$t' in --tools" >&2; exit 2 ;; esac
done

# ---- locate the programs ------------------------------------------------
# First hit among the build-dir candidates, then PATH.
find_prog() {
    local name=$1 d
    for d in "$BUILDDIR" "$BUILDDIR/bench" "$BUILDDIR/launcher"; do
        if [ -x "$d/$name" ] && [ ! -d "$d/$name" ]; then
            echo "$d/$name"
            return 0
        fi
    done
    command -v "$name" 2>/dev/null
}

missing=0
if want tern; then
    TERNRUN=$(find_prog ternrun) || { echo "$0: ternrun not found under $BUILDDIR or in PATH" >&2; missing=1; }
    TERN_BENCH=$(find_prog tern_bench) || { echo "$0: tern_bench not found under $BUILDDIR or in PATH" >&2; missing=1; }
fi
if want raw; then
    RAW=$(find_prog raw_pingpong) || { echo "$0: raw_pingpong not found under $BUILDDIR or in PATH" >&2; missing=1; }
fi
if want ucx; then
    UCX=$(command -v ucx_perftest) || { echo "$0: ucx_perftest not found (Debian: ucx-utils)" >&2; missing=1; }
fi
for p in timeout awk sort ss; do
    command -v $p >/dev/null || { echo "$0: $p not found" >&2; missing=1; }
done
[ "$missing" = 0 ] || exit 2

# ---- scratch space, cleanup ---------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-compare.XXXXXX") || exit 1
SERVER_PID=""
stop_server() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
        SERVER_PID=""
    fi
}
cleanup() {
    stop_server
    if [ "$KEEP" = 1 ]; then
        echo "# logs kept in $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

SAMPLES=$WORK/samples.tsv      # tool <TAB> metric <TAB> size <TAB> round <TAB> value
COMMANDS=$WORK/commands.txt    # every command, in the order it ran
: >"$SAMPLES"
: >"$COMMANDS"
FAILURES=0
NRUN=0

fail() {
    echo "!! $*" >&2
    FAILURES=$((FAILURES + 1))
}

# run LOG CMD...: print and record the command, run it bounded, stdout+stderr to LOG.
run() {
    local log=$1 rc
    shift
    NRUN=$((NRUN + 1))
    echo "+ $*"
    echo "$*" >>"$COMMANDS"
    timeout "$CMD_TIMEOUT" "$@" >"$log" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        fail "exit status $rc from: $* (last lines of output follow)"
        tail -n 5 "$log" >&2
    fi
    return $rc
}

record() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$SAMPLES"; }

# ---- tern ---------------------------------------------------------------
# tern_one TEST RANGE ROUND [EXTRA tern_bench options...]
tern_one() {
    local test=$1 range=$2 round=$3 json log pairs
    shift 3
    json=$WORK/tern-$test-$range-$round.json
    log=$WORK/tern-$test-$range-$round.log
    run "$log" "$TERNRUN" -n 2 --bind-to core "$TERN_BENCH" -t "$test" -m "$range" -q \
        --json "$json" "$@" || return 1
    # tern_bench writes one {"size": N, "value": V, ...} object per line.
    pairs=$(grep -o '"size": [0-9]*, "value": [0-9.eE+-]*' "$json" 2>/dev/null |
            awk '{ gsub(/[",]/, ""); print $2, $4 }')
    if [ -z "$pairs" ]; then
        fail "no figures in $json from tern_bench"
        return 1
    fi
    while read -r size value; do
        record tern "$test" "$size" "$round" "$value"
    done <<<"$pairs"
    TERN_NETMOD=$(grep -o '"netmod": "[^"]*"' "$json" | head -n 1 | cut -d'"' -f4)
}

# ---- ucx_perftest -------------------------------------------------------
# The client always connects to 127.0.0.1 on a port nobody uses.  Note that
# ucx_perftest's server has no bind-address option: it listens on 0.0.0.0
# for the few hundred milliseconds of one test, and exits after one client.
free_port() {
    local p i
    for i in $(seq 1 50); do
        p=$((20000 + RANDOM % 40000))
        if [ -z "$(ss -Htan "sport = :$p" 2>/dev/null)" ]; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

# ucx_one TEST SIZE ITERS WARMUP ROUND METRIC
ucx_one() {
    local test=$1 size=$2 iters=$3 warmup=$4 round=$5 metric=$6
    local port log slog final value i
    port=$(free_port) || { fail "no free TCP port for ucx_perftest"; return 1; }
    log=$WORK/ucx-$test-$size-$round.log
    slog=$WORK/ucx-server-$test-$size-$round.log
    echo "+ $UCX -c $CORE_B -p $port &"
    echo "$UCX -c $CORE_B -p $port &" >>"$COMMANDS"
    timeout "$CMD_TIMEOUT" "$UCX" -c "$CORE_B" -p "$port" >"$slog" 2>&1 &
    SERVER_PID=$!
    for i in $(seq 1 100); do   # up to 5 s for the server to listen
        [ -n "$(ss -Htln "sport = :$port" 2>/dev/null)" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.05
    done
    run "$log" "$UCX" 127.0.0.1 -p "$port" -c "$CORE_A" -t "$test" -s "$size" \
        -n "$iters" -w "$warmup"
    local rc=$?
    # The server ends with its client; give it a moment, then make sure.
    for i in $(seq 1 40); do
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.05
    done
    stop_server
    [ $rc -eq 0 ] || return 1
    # Final: iters lat50 lat_avg lat_overall bw_avg bw_overall rate_avg rate_overall
    final=$(grep '^Final:' "$log" | tail -n 1)
    if [ -z "$final" ]; then
        fail "no Final: line from ucx_perftest $test -s $size"
        return 1
    fi
    if [ "$metric" = lat ]; then
        value=$(awk '{ print $5 }' <<<"$final")
    else
        value=$(awk '{ printf "%.2f\n", $7 * 1.048576 }' <<<"$final")  # MiB/s -> MB/s
    fi
    record ucx "$metric" "$size" "$round" "$value"
}

# ---- raw ----------------------------------------------------------------
raw_one() {
    local round=$1 log value
    log=$WORK/raw-$round.log
    run "$log" "$RAW" -a "$CORE_A" -b "$CORE_B" -n "$LAT_ITERS" -w "$LAT_WARMUP" -q || return 1
    value=$(tail -n 1 "$log")
    if ! [[ $value =~ ^[0-9.]+$ ]]; then
        fail "raw_pingpong printed no figure"
        return 1
    fi
    record raw lat 64 "$round" "$value"
}

raw_memcpy() {
    local log=$WORK/memcpy.log
    run "$log" "$RAW" --memcpy -a "$CORE_A" -q || return 1
    while read -r size value; do
        record memcpy bw "$size" 1 "$(awk -v v="$value" 'BEGIN { printf "%.1f", v * 1000 }')"
    done < <(grep -E '^[0-9]+ +[0-9.]+$' "$log")
}

# ---- the interleaved rounds ---------------------------------------------
DATE=$(date +%Y-%m-%dT%H:%M:%S%z)
STAMP=$(date +%Y%m%d-%H%M%S)
T_START=$(date +%s)
TERN_NETMOD=unknown
echo "# tern compare: $ROUNDS interleaved rounds on cores $CORE_A and $CORE_B, $(hostname), $DATE"
echo "# UCX_TLS=${UCX_TLS-<unset: UCX default>}"
# Other busy processes on the cores turn spin-wait ping-pongs into scheduler
# benchmarks: measure how busy the machine is (all CPUs, over 1 s, before and
# after the runs), say so, and keep it with the results.
cpu_busy() {
    local a b
    a=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat)
    sleep 1
    b=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat)
    awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ");
        t = y[2] - x[2]; printf "%.0f\n", (t > 0 ? 100 * (y[1] - x[1]) / t : 0) }'
}
BUSY_START=$(cpu_busy)
echo "# CPU busy before the runs: ${BUSY_START}% of all CPUs (over 1 s)"
if [ "$BUSY_START" -gt 10 ]; then
    echo "# WARNING: other processes are using the CPUs; latency figures will partly measure the scheduler" >&2
fi

for r in $(seq 1 "$ROUNDS"); do
    echo "# ---- round $r of $ROUNDS"
    if want tern; then tern_one lat "$LAT_SIZE:$LAT_SIZE" "$r" -i "$LAT_ITERS" -w "$LAT_WARMUP"; fi
    if want ucx; then ucx_one tag_lat "$LAT_SIZE" "$LAT_ITERS" "$LAT_WARMUP" "$r" lat; fi
    if want raw; then raw_one "$r"; fi
    if want tern; then tern_one bw "$BW_SIZE:$BW_SIZE" "$r" -i "$BW_ITERS" -w "$BW_WARMUP"; fi
    if want ucx; then
        ucx_one tag_bw "$BW_SIZE" $((BW_ITERS * WINDOW)) $((BW_WARMUP * WINDOW)) "$r" bw
    fi
done
if want raw; then raw_memcpy; fi

# Sweep: both tools get the same counts per size, OSU-like, fewer above
# 8 KiB.  tern_bench sweeps a size range per launch (two launches: small and
# large); ucx_perftest runs once per size (messages = windows x 64 for bw).
SWEEP_SIZES=()
SWEEP_SPLIT=8192
LAT_SMALL="10000 1000" LAT_LARGE="1000 10"     # iterations warm-up
BW_SMALL="1000 100" BW_LARGE="20 2"            # windows warm-up windows
if [ "$SWEEP" = 1 ]; then
    for ((s = 1; s <= BW_SIZE; s *= 2)); do SWEEP_SIZES+=("$s"); done
    for r in $(seq 1 "$SWEEP_ROUNDS"); do
        echo "# ---- sweep round $r of $SWEEP_ROUNDS"
        for m in lat bw; do
            if [ $m = lat ]; then
                read -ra small <<<"$LAT_SMALL"; read -ra large <<<"$LAT_LARGE"; mul=1 ut=tag_lat
            else
                read -ra small <<<"$BW_SMALL"; read -ra large <<<"$BW_LARGE"; mul=$WINDOW ut=tag_bw
            fi
            if want tern; then
                tern_one $m "1:$SWEEP_SPLIT" "s$r" -i "${small[0]}" -w "${small[1]}"
                tern_one $m "$((SWEEP_SPLIT * 2)):$BW_SIZE" "s$r" -i "${large[0]}" -w "${large[1]}"
            fi
            if want ucx; then
                for s in "${SWEEP_SIZES[@]}"; do
                    if [ "$s" -gt "$SWEEP_SPLIT" ]; then c=("${large[@]}"); else c=("${small[@]}"); fi
                    ucx_one $ut "$s" $((c[0] * mul)) $((c[1] * mul)) "s$r" $m
                done
            fi
        done
    done
fi
T_END=$(date +%s)
BUSY_END=$(cpu_busy)
echo "# CPU busy after the runs: ${BUSY_END}%"

# ---- medians and ratios -------------------------------------------------
# median TOOL METRIC SIZE [sweep]: median over the main rounds (or the sweep
# rounds, whose round ids start with 's'); "nan" when there is no sample.
median() {
    local sel=${4:-main}
    awk -F'\t' -v t="$1" -v m="$2" -v s="$3" -v sel="$sel" '
        $1 == t && $2 == m && $3 == s &&
        ((sel == "sweep") == ($4 ~ /^s/)) { print $5 }' "$SAMPLES" |
        sort -g |
        awk '{ a[NR] = $1 }
             END { if (NR == 0) print "nan";
                   else if (NR % 2) print a[(NR + 1) / 2];
                   else printf "%.6g\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b + 0 == 0) print "nan"; else printf "%.3f\n", a / b }'; }
count() { awk -F'\t' -v t="$1" -v m="$2" '$1 == t && $2 == m && $4 !~ /^s/' "$SAMPLES" | wc -l; }

T_LAT=$(median tern lat "$LAT_SIZE")
U_LAT=$(median ucx lat "$LAT_SIZE")
R_LAT=$(median raw lat 64)
T_BW=$(median tern bw "$BW_SIZE")
U_BW=$(median ucx bw "$BW_SIZE")
M_1M=$(median memcpy bw 1048576)
M_4M=$(median memcpy bw 4194304)
LAT_TU=$(ratio "$T_LAT" "$U_LAT")
LAT_TR=$(ratio "$T_LAT" "$R_LAT")
BW_TU=$(ratio "$T_BW" "$U_BW")
# The same ratio taken inside each round, then the median: robust to a
# slow-down that hits a whole round (what interleaving is for).
round_ratios() {
    awk -F'\t' -v a="$1" -v b="$2" -v m="$3" -v s="$4" '
        $4 !~ /^s/ && $2 == m && $3 == s && $1 == a { x[$4] = $5 }
        $4 !~ /^s/ && $2 == m && $3 == s && $1 == b { y[$4] = $5 }
        END { for (r in x) if ((r in y) && y[r] + 0 > 0) printf "%s %.3f\n", r, x[r] / y[r] }' "$SAMPLES" |
        sort -n | awk '{ print $2 }'
}
median_of() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
RR_LAT_TU=$(round_ratios tern ucx lat "$LAT_SIZE" | tr '\n' ' ')
RR_BW_TU=$(round_ratios tern ucx bw "$BW_SIZE" | tr '\n' ' ')
RRM_LAT_TU=$(tr ' ' '\n' <<<"$RR_LAT_TU" | grep . | median_of)
RRM_BW_TU=$(tr ' ' '\n' <<<"$RR_BW_TU" | grep . | median_of)

if [ "$LAT_TU" = nan ]; then
    TARGET=unknown
elif awk -v r="$LAT_TU" 'BEGIN { exit !(r <= 1.2) }'; then
    TARGET=met
else
    TARGET=missed
fi

fmt_lat() { awk -v v="$1" 'BEGIN { if (v == "nan") print v; else printf "%.3f\n", v }'; }
fmt_bw() { awk -v v="$1" 'BEGIN { if (v == "nan") print v; else printf "%.0f\n", v }'; }

echo
echo "# Per round (one-way latency in us, bandwidth in MB/s = 1e6 B/s)"
printf '# %-6s %12s %12s %12s %12s %12s\n' round tern_lat_8B ucx_lat_8B raw_lat_64B tern_bw_4MiB ucx_bw_4MiB
for r in $(seq 1 "$ROUNDS"); do
    printf '  %-6s' "$r"
    for k in "tern lat $LAT_SIZE" "ucx lat $LAT_SIZE" "raw lat 64" "tern bw $BW_SIZE" "ucx bw $BW_SIZE"; do
        read -r kt km ks <<<"$k"
        v=$(awk -F'\t' -v t="$kt" -v m="$km" -v s="$ks" -v r="$r" \
            '$1 == t && $2 == m && $3 == s && $4 == r { print $5 }' "$SAMPLES")
        if [ -z "$v" ]; then v=-; elif [ "$km" = lat ]; then v=$(fmt_lat "$v"); else v=$(fmt_bw "$v"); fi
        printf ' %12s' "$v"
    done
    echo
done
echo
echo "# Medians of $ROUNDS interleaved rounds (tern netmod: $TERN_NETMOD)"
printf '# %-30s %10s %10s %10s %10s %10s\n' metric tern ucx raw tern/ucx tern/raw
printf '  %-30s %10s %10s %10s %10s %10s\n' "latency 8 B, one-way (us)" \
    "$(fmt_lat "$T_LAT")" "$(fmt_lat "$U_LAT")" "$(fmt_lat "$R_LAT")" "$LAT_TU" "$LAT_TR"
printf '  %-30s %10s %10s %10s %10s %10s\n' "bandwidth 4 MiB (MB/s)" \
    "$(fmt_bw "$T_BW")" "$(fmt_bw "$U_BW")" "-" "$BW_TU" "-"
printf '  %-30s %10s\n' "memcpy 1 MiB / 4 MiB (MB/s)" "$(fmt_bw "$M_1M") / $(fmt_bw "$M_4M")"
echo "# tern/ucx per round: latency ${RR_LAT_TU:-none}(median $RRM_LAT_TU); bandwidth ${RR_BW_TU:-none}(median $RRM_BW_TU)"
echo "# issue-2 target, tern 8 B latency <= 1.2 x UCX in the same run: $TARGET (ratio $LAT_TU)"

# ---- JSON ---------------------------------------------------------------
json_str() {
    local s=$1
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\t'/\\t}
    printf '"%s"' "$s"
}
json_num() { if [ "$1" = nan ] || [ -z "$1" ]; then printf null; else printf '%s' "$1"; fi; }

mkdir -p "$OUTDIR" || { echo "$0: cannot create $OUTDIR" >&2; exit 1; }
OUT=$OUTDIR/compare-$STAMP
{
    echo "{"
    echo "  \"tool\": \"compare.sh\","
    echo "  \"date\": $(json_str "$DATE"),"
    echo "  \"hostname\": $(json_str "$(hostname)"),"
    echo "  \"command_line\": $(json_str "$CMDLINE"),"
    echo "  \"cores\": [$CORE_A, $CORE_B],"
    echo "  \"rounds\": $ROUNDS,"
    echo "  \"seconds\": $((T_END - T_START)),"
    echo "  \"cpu_busy_percent\": {\"before\": $BUSY_START, \"after\": $BUSY_END},"
    echo "  \"ucx_tls\": $(if [ -n "${UCX_TLS+x}" ]; then json_str "$UCX_TLS"; else echo null; fi),"
    echo "  \"tern_netmod\": $(json_str "$TERN_NETMOD"),"
    echo "  \"units\": {\"latency\": \"us one-way\", \"bandwidth\": \"MB/s, MB = 1e6 bytes\"},"
    echo "  \"medians\": {"
    echo "    \"tern_lat_8B\": $(json_num "$T_LAT"), \"ucx_lat_8B\": $(json_num "$U_LAT"), \"raw_lat_64B\": $(json_num "$R_LAT"),"
    echo "    \"tern_bw_4MiB\": $(json_num "$T_BW"), \"ucx_bw_4MiB\": $(json_num "$U_BW"),"
    echo "    \"memcpy_1MiB\": $(json_num "$M_1M"), \"memcpy_4MiB\": $(json_num "$M_4M")"
    echo "  },"
    echo "  \"ratios\": {\"lat_tern_over_ucx\": $(json_num "$LAT_TU"), \"lat_tern_over_raw\": $(json_num "$LAT_TR"), \"bw_tern_over_ucx\": $(json_num "$BW_TU")},"
    echo "  \"round_ratio_medians\": {\"lat_tern_over_ucx\": $(json_num "$RRM_LAT_TU"), \"bw_tern_over_ucx\": $(json_num "$RRM_BW_TU")},"
    echo "  \"issue2_target\": {\"rule\": \"tern 8 B latency <= 1.2 x ucx tag_lat\", \"result\": \"$TARGET\"},"
    echo "  \"samples\": ["
    awk -F'\t' '{ printf "%s    {\"tool\": \"%s\", \"metric\": \"%s\", \"size\": %s, \"round\": \"%s\", \"value\": %s}",
                  (NR > 1 ? ",\n" : ""), $1, $2, $3, $4, $5 } END { if (NR) print "" }' "$SAMPLES"
    echo "  ],"
    echo "  \"commands\": ["
    n=$(wc -l <"$COMMANDS"); i=0
    while IFS= read -r c; do
        i=$((i + 1))
        printf '    %s%s\n' "$(json_str "$c")" "$([ $i -lt "$n" ] && echo ,)"
    done <"$COMMANDS"
    echo "  ]"
    echo "}"
} >"$OUT.json"
echo "# wrote $OUT.json"

# ---- plot (--sweep) -----------------------------------------------------
if [ "$SWEEP" = 1 ]; then
    for m in lat bw; do
        {
            echo "# size tern ucx   (medians of $SWEEP_ROUNDS sweep rounds; $m)"
            for s in "${SWEEP_SIZES[@]}"; do
                tv=$(median tern "$m" "$s" sweep); uv=$(median ucx "$m" "$s" sweep)
                echo "$s ${tv/nan/NaN} ${uv/nan/NaN}"
            done
        } >"$OUT-$m.dat"
    done
    if command -v gnuplot >/dev/null; then
        echo "+ gnuplot -e ... $SCRIPT_DIR/compare_plot.gp"
        if gnuplot -e "latfile='$OUT-lat.dat'; bwfile='$OUT-bw.dat'; outfile='$OUT.png'; rawlat='$R_LAT'; memcpy='$M_4M'; title='$(hostname) $DATE, cores $CORE_A-$CORE_B'" \
            "$SCRIPT_DIR/compare_plot.gp"; then
            echo "# wrote $OUT.png"
        else
            fail "gnuplot failed"
        fi
    else
        echo "# gnuplot not found: no plot (data in $OUT-lat.dat, $OUT-bw.dat)"
    fi
fi

echo "# $NRUN tool runs in $((T_END - T_START)) s, $FAILURES failure(s)"
[ "$FAILURES" = 0 ]
