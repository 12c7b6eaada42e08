#!/usr/bin/env bash
# tune.sh — choose tern's default thresholds by measurement.
#
# An experiment is one tern_bench test over a size range, run with a list
# of settings (each a set of TERN_* variables).  Every round runs the
# default (no TERN_* set) and each setting once, one after the other, in an
# order rotated from round to round, all on the same two pinned cores; the
# script reports per size the median over the rounds of
#     figure(setting) / figure(default) in the same round
# so machine noise, which swings absolute figures up to 3x on this VM, hits
# both sides of every ratio alike.  A setting equal to the default is kept
# in the list on purpose: its ratios show how far 1.00 is from noise.
#
#     ratio > 1 is better for bandwidth and message rate (bw, bibw, mr),
#     ratio < 1 is better for latency (lat).
#
# For bandwidth experiments it also prints, per setting, the smallest
# bw(size) / bw(size / 2) over the range: below 0.9 the curve dips (the
# eager -> rendezvous switch is where it would).
#
# Experiments are lines "NAME|TEST|RANGE|ITERS|WARMUP|SETTING;SETTING;..."
# where a SETTING is space-separated VAR=value pairs.  The built-in list is
# below (--list prints it); --exp adds one, --only picks by name.  A setting
# that names a variable tern_info does not list is skipped (the engine's
# knobs change: run tern_info to see the current ones and their ranges).
# It asserts nothing about speed: the exit status is non-zero only when a
# tool failed to run.

set -u -o pipefail

BUILDDIR=${TERN_BUILDDIR:-$PWD}
ROUNDS=5
ONLY=""
OUTDIR=bench-results
KEEP=0
LIST=0
CMD_TIMEOUT=180
MIN_BYTES=256m      # bw and bibw: tern_bench -b, at least this many bytes per size
EXPS=(
    # fastbox: slot size (the largest message that takes the fastbox) and slots
    "fbox|lat|8:16384|10000|1000|TERN_SHM_FBOX_SIZE=256;TERN_SHM_FBOX_SIZE=512;TERN_SHM_FBOX_SIZE=1024;TERN_SHM_FBOX_SIZE=2048;TERN_SHM_FBOX_SIZE=4096;TERN_SHM_FBOX_SIZE=8192;TERN_SHM_FBOX_SIZE=16384"
    "fbox-mr|mr|8:1024|2000|200|TERN_SHM_FBOX_SIZE=256;TERN_SHM_FBOX_SIZE=512;TERN_SHM_FBOX_SIZE=1024;TERN_SHM_FBOX_SIZE=2048;TERN_SHM_FBOX_SIZE=4096;TERN_SHM_FBOX_SIZE=8192;TERN_SHM_FBOX_SIZE=16384"
    "fbox-slots|mr|8:512|2000|200|TERN_SHM_NUM_FBOX=16;TERN_SHM_NUM_FBOX=32;TERN_SHM_NUM_FBOX=64;TERN_SHM_NUM_FBOX=128;TERN_SHM_NUM_FBOX=256"
    # cells: size x count, eager bandwidth
    "cells|bw|1024:65536|200|20|TERN_SHM_CELL_SIZE=4096 TERN_SHM_NUM_CELLS=16;TERN_SHM_CELL_SIZE=8192 TERN_SHM_NUM_CELLS=16;TERN_SHM_CELL_SIZE=16384 TERN_SHM_NUM_CELLS=8;TERN_SHM_CELL_SIZE=16384 TERN_SHM_NUM_CELLS=16;TERN_SHM_CELL_SIZE=16384 TERN_SHM_NUM_CELLS=32;TERN_SHM_CELL_SIZE=32768 TERN_SHM_NUM_CELLS=16;TERN_SHM_CELL_SIZE=65536 TERN_SHM_NUM_CELLS=8;TERN_SHM_CELL_SIZE=65536 TERN_SHM_NUM_CELLS=16"
    # eager -> rendezvous switch: bandwidth and latency around it
    "eager|bw|2048:131072|200|20|TERN_EAGER_LIMIT=4096;TERN_EAGER_LIMIT=8192;TERN_EAGER_LIMIT=16384;TERN_EAGER_LIMIT=32768 TERN_SHM_CELL_SIZE=32768;TERN_EAGER_LIMIT=65536 TERN_SHM_CELL_SIZE=65536"
    "eager-lat|lat|2048:131072|2000|100|TERN_EAGER_LIMIT=4096;TERN_EAGER_LIMIT=8192;TERN_EAGER_LIMIT=16384;TERN_EAGER_LIMIT=32768 TERN_SHM_CELL_SIZE=32768;TERN_EAGER_LIMIT=65536 TERN_SHM_CELL_SIZE=65536"
    # the same-host copy (CMA get): where it starts to pay on shm (and CMA off)
    "cma|bw|16384:4194304|20|2|TERN_CMA=off;TERN_CMA_THRESHOLD=16384;TERN_CMA_THRESHOLD=32768;TERN_CMA_THRESHOLD=65536;TERN_CMA_THRESHOLD=131072;TERN_CMA_THRESHOLD=262144;TERN_CMA_THRESHOLD=1048576"
    # cooperative copy buffer (CMA off, so it carries every LMT size)
    "chunks|bw|65536:4194304|20|2|TERN_CMA=off;TERN_CMA=off TERN_SHM_COPY_CHUNK=16384 TERN_SHM_COPY_CHUNKS=8;TERN_CMA=off TERN_SHM_COPY_CHUNK=32768 TERN_SHM_COPY_CHUNKS=8;TERN_CMA=off TERN_SHM_COPY_CHUNK=65536 TERN_SHM_COPY_CHUNKS=4;TERN_CMA=off TERN_SHM_COPY_CHUNK=65536 TERN_SHM_COPY_CHUNKS=8;TERN_CMA=off TERN_SHM_COPY_CHUNK=65536 TERN_SHM_COPY_CHUNKS=16;TERN_CMA=off TERN_SHM_COPY_CHUNK=262144 TERN_SHM_COPY_CHUNKS=4;TERN_CMA=off TERN_SHM_COPY_CHUNK=262144 TERN_SHM_COPY_CHUNKS=8;TERN_CMA=off TERN_SHM_COPY_CHUNK=1048576 TERN_SHM_COPY_CHUNKS=4"
    # idle wait: must cost nothing for latency and message rate
    "wait|lat|8:8|100000|10000|TERN_WAIT_MODE=spin;TERN_WAIT_MODE=yield;TERN_WAIT_MODE=block"
    "wait-mr|mr|8:8|5000|500|TERN_WAIT_MODE=spin;TERN_WAIT_MODE=yield;TERN_WAIT_MODE=block"
)

usage() {
    cat <<EOF
usage: $0 [options]
  --builddir DIR   where ternrun, tern_bench and tern_info were built
                   (default \$TERN_BUILDDIR, else the current directory)
  --rounds R       rounds per experiment (default $ROUNDS)
  --only LIST      comma list of experiment names (default: all; --list shows them)
  --exp LINE       add an experiment "NAME|TEST|RANGE|ITERS|WARMUP|SET;SET;..."
                   (TEST: lat, bw, bibw or mr; SET: "VAR=value VAR=value")
  --min-bytes N    bw/bibw experiments move at least N bytes per size
                   (tern_bench -b; default $MIN_BYTES)
  --list           print the experiments and exit
  --outdir DIR     where the results go (default ./bench-results)
  --keep           keep the raw logs (path is printed)
  -h, --help       this text
EOF
}

is_count() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
CMDLINE="$0 $*"
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) BUILDDIR=${2:?--builddir needs a directory}; shift ;;
    --rounds) ROUNDS=${2:-}; is_count "$ROUNDS" || { echo "bad --rounds" >&2; exit 2; }; shift ;;
    --only) ONLY=${2:?--only needs a list}; shift ;;
    --exp)
        IFS='|' read -r n t r i w s <<<"${2:?--exp needs a line}"
        if [ -z "$s" ] || ! [[ $t =~ ^(lat|bw|bibw|mr)$ ]] || ! is_count "$i" || ! [[ $w =~ ^[0-9]+$ ]]; then
            echo "$0: bad --exp '$2' (want NAME|TEST|RANGE|ITERS|WARMUP|SET;SET;...)" >&2
            exit 2
        fi
        EXPS+=("$2"); shift ;;
    --min-bytes) MIN_BYTES=${2:?--min-bytes needs a byte count}; shift ;;
    --list) LIST=1 ;;
    --outdir) OUTDIR=${2:?--outdir needs a directory}; shift ;;
    --keep) KEEP=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "$0: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

if [ "$LIST" = 1 ]; then
    for e in "${EXPS[@]}"; do
        IFS='|' read -r n t r i w s <<<"$e"
        printf '%-10s tern_bench -t %s -m %s -i %s -w %s\n' "$n" "$t" "$r" "$i" "$w"
        tr ';' '\n' <<<"$s" | sed 's/^/           /'
    done
    exit 0
fi

find_prog() {
    local d
    for d in "$BUILDDIR" "$BUILDDIR/bench" "$BUILDDIR/launcher" "$BUILDDIR/tools"; do
        if [ -x "$d/$1" ] && [ ! -d "$d/$1" ]; then echo "$d/$1"; return 0; fi
    done
    command -v "$1" 2>/dev/null
}
TERNRUN=$(find_prog ternrun) || { echo "$0: ternrun not found under $BUILDDIR" >&2; exit 2; }
TERN_BENCH=$(find_prog tern_bench) || { echo "$0: tern_bench not found under $BUILDDIR" >&2; exit 2; }
TERN_INFO=$(find_prog tern_info) || { echo "$0: tern_info not found under $BUILDDIR" >&2; exit 2; }

# The knobs this engine has, with their defaults ("NAME value default ...").
KNOBS=$("$TERN_INFO" 2>/dev/null | awk '/^TERN_/ { print $1, $3 }')
[ -n "$KNOBS" ] || { echo "$0: $TERN_INFO listed no TERN_* knobs" >&2; exit 1; }
knob_default() { awk -v k="$1" '$1 == k { print $2 }' <<<"$KNOBS"; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-tune.XXXXXX") || exit 1
cleanup() { if [ "$KEEP" = 1 ]; then echo "# logs kept in $WORK"; else rm -rf "$WORK"; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM
SAMPLES=$WORK/samples.tsv   # exp <TAB> setting-index <TAB> round <TAB> size <TAB> value
: >"$SAMPLES"
FAILURES=0
NRUN=0
REPORT=$WORK/report.txt
: >"$REPORT"
say() { echo "$*" | tee -a "$REPORT"; }

# run_one EXP IDX ROUND TEST RANGE ITERS WARMUP [VAR=value...]
run_one() {
    local exp=$1 idx=$2 round=$3 test=$4 range=$5 iters=$6 warmup=$7 json log pairs
    local -a extra=()
    shift 7
    case $test in bw|bibw) extra=(-b "$MIN_BYTES") ;; esac
    json=$WORK/$exp-$idx-$round.json
    log=$WORK/$exp-$idx-$round.log
    NRUN=$((NRUN + 1))
    echo "+ (TERN_* cleared) $* $TERNRUN -n 2 --bind-to core $TERN_BENCH -t $test -m $range -i $iters -w $warmup ${extra[*]} -q --json $json"
    # Only this setting's TERN_* variables: none inherited from the caller.
    local -a unset=()
    mapfile -t unset < <(env | awk -F= '/^TERN_/ { print "-u"; print $1 }')
    if ! env "${unset[@]}" "$@" \
        timeout "$CMD_TIMEOUT" "$TERNRUN" -n 2 --bind-to core "$TERN_BENCH" -t "$test" -m "$range" \
        -i "$iters" -w "$warmup" "${extra[@]}" -q --json "$json" >"$log" 2>&1; then
        echo "!! failed: $* tern_bench -t $test -m $range (last lines follow)" >&2
        tail -n 3 "$log" >&2
        FAILURES=$((FAILURES + 1))
        return 1
    fi
    pairs=$(grep -o '"size": [0-9]*, "value": [0-9.eE+-]*' "$json" 2>/dev/null |
            awk '{ gsub(/[",]/, ""); print $2, $4 }')
    if [ -z "$pairs" ]; then
        echo "!! no figures in $json" >&2
        FAILURES=$((FAILURES + 1))
        return 1
    fi
    while read -r size value; do
        printf '%s\t%s\t%s\t%s\t%s\n' "$exp" "$idx" "$round" "$size" "$value" >>"$SAMPLES"
    done <<<"$pairs"
}

# median of the per-round ratio setting/default at one size ("nan" if none)
ratio_median() {
    awk -F'\t' -v e="$1" -v i="$2" -v s="$3" '
        $1 == e && $4 == s && $2 == 0 { d[$3] = $5 }
        $1 == e && $4 == s && $2 == i { x[$3] = $5 }
        END { for (r in x) if ((r in d) && d[r] + 0 > 0) print x[r] / d[r] }' "$SAMPLES" |
        sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan";
            else if (NR % 2) printf "%.3f\n", a[(NR + 1) / 2];
            else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
value_median() {
    awk -F'\t' -v e="$1" -v i="$2" -v s="$3" '$1 == e && $4 == s && $2 == i { print $5 }' "$SAMPLES" |
        sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan";
            else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

T_START=$(date +%s)
DATE=$(date +%Y-%m-%dT%H:%M:%S%z)
say "# tern tune: $ROUNDS rounds per experiment, cores 0 and 1, $(hostname), $DATE"
say "# command: $CMDLINE"
say "# engine knobs (tern_info): $(awk '{ printf "%s%s=%s", (NR > 1 ? " " : ""), $1, $2 }' <<<"$KNOBS")"
say "# cells: median over rounds of figure(setting) / figure(default) in the same round;"
say "#        the 'default' row gives the default's median figure itself"

for e in "${EXPS[@]}"; do
    IFS='|' read -r name test range iters warmup sets <<<"$e"
    if [ -n "$ONLY" ] && [[ ",$ONLY," != *",$name,"* ]]; then continue; fi
    IFS=';' read -ra SETS <<<"$sets"
    # Keep only the settings whose variables this engine knows.
    KEPT=()
    for st in "${SETS[@]}"; do
        ok=1
        for kv in $st; do
            [ -n "$(knob_default "${kv%%=*}")" ] || { ok=0; say "# $name: skipped '$st' (tern_info has no ${kv%%=*})"; break; }
        done
        [ $ok = 1 ] && KEPT+=("$st")
    done
    if [ ${#KEPT[@]} -eq 0 ]; then
        say "# $name: no setting applies to this engine, skipped"
        continue
    fi
    LABELS=("default")
    for st in "${KEPT[@]}"; do
        same=1
        for kv in $st; do [ "${kv#*=}" = "$(knob_default "${kv%%=*}")" ] || same=0; done
        LABELS+=("$st$([ $same = 1 ] && echo ' (=default)')")
    done
    n=$(( ${#KEPT[@]} + 1 ))
    echo "# ==== $name: tern_bench -t $test -m $range, $n settings x $ROUNDS rounds"
    for r in $(seq 1 "$ROUNDS"); do
        for k in $(seq 0 $((n - 1))); do
            idx=$(( (k + r - 1) % n ))    # rotate the order each round
            if [ $idx -eq 0 ]; then
                run_one "$name" 0 "$r" "$test" "$range" "$iters" "$warmup"
            else
                # shellcheck disable=SC2086 # a setting is several VAR=value words
                run_one "$name" "$idx" "$r" "$test" "$range" "$iters" "$warmup" ${KEPT[$((idx - 1))]}
            fi
        done
    done

    # ---- the table of this experiment
    mapfile -t SIZES < <(awk -F'\t' -v e="$name" '$1 == e { print $4 }' "$SAMPLES" | sort -nu)
    case $test in lat) unit="us, lower is better" ;; mr) unit="msg/s, higher is better" ;; *) unit="MB/s, higher is better" ;; esac
    say ""
    bo=""; case $test in bw|bibw) bo=" -b $MIN_BYTES" ;; esac
    say "## $name — tern_bench -t $test -m $range -i $iters -w $warmup$bo ($unit), $ROUNDS rounds"
    lw=20
    for l in "${LABELS[@]}"; do [ ${#l} -gt $lw ] && lw=${#l}; done
    dipcol=0; case $test in bw|bibw) dipcol=1 ;; esac
    line=$(printf "%-$((lw + 2))s" "# setting")
    for s in "${SIZES[@]}"; do line+=$(printf ' %8s' "$s"); done
    [ $dipcol = 0 ] || line+=$(printf ' %9s' "min b/p")
    say "$line"
    for idx in $(seq 0 $((n - 1))); do
        line=$(printf "  %-${lw}s" "${LABELS[$idx]}")
        prev=""; minbp=nan
        for s in "${SIZES[@]}"; do
            if [ "$idx" = 0 ]; then
                v=$(value_median "$name" 0 "$s")
                line+=$(awk -v v="$v" -v t="$test" 'BEGIN { if (v == "nan") printf " %8s", "-";
                    else if (t == "lat") printf " %8.3f", v; else if (t == "mr") printf " %8.3g", v;
                    else printf " %8.0f", v }')
            else
                line+=$(printf ' %8s' "$(ratio_median "$name" "$idx" "$s")")
            fi
            # smallest bw(s) / bw(s/2) of this setting's medians: the dip check
            cur=$(value_median "$name" "$idx" "$s")
            if [ -n "$prev" ]; then
                minbp=$(awk -v a="$minbp" -v c="$cur" -v p="$prev" 'BEGIN {
                    if (c == "nan" || p == "nan" || p + 0 == 0) { print a; exit }
                    q = c / p; print (a == "nan" || q < a) ? q : a }')
            fi
            prev=$cur
        done
        if [ $dipcol = 1 ]; then
            line+=$(awk -v m="$minbp" 'BEGIN { if (m == "nan") printf " %9s", "-";
                else printf " %9.3f%s", m, (m < 0.9 ? " DIP" : "") }')
        fi
        say "$line"
    done
done
T_END=$(date +%s)

mkdir -p "$OUTDIR" || { echo "$0: cannot create $OUTDIR" >&2; exit 1; }
OUT=$OUTDIR/tune-$(date +%Y%m%d-%H%M%S)
cp "$REPORT" "$OUT.txt"
cp "$SAMPLES" "$OUT.tsv"
echo
echo "# wrote $OUT.txt (tables) and $OUT.tsv (every figure: experiment, setting index, round, size, value)"
echo "# $NRUN tern_bench runs in $((T_END - T_START)) s, $FAILURES failure(s)"
[ "$FAILURES" = 0 ]
