#!/bin/bash
# ofi_cost.sh — where one MPI message's instructions go: Open MPI over
# tern's libfabric provider (pml cm + mtl ofi) against tern's own MPI layer
# and Open MPI's own self path (pml ob1 + btl self), counted by callgrind.
#
# Each tool runs bench/mpi_self (one rank, 8-byte MPI_Irecv + MPI_Send +
# MPI_Wait to itself) twice, with N and 2N messages, under
# `valgrind --tool=callgrind`; the difference of the two runs' counts per
# library, divided by N, is that library's instructions per message, with
# start-up and finalize cancelled out.  Instruction counts do not depend on
# the host's speed or load, so unlike the timed comparisons they can be
# quoted alone; they say what each layer costs, not how long it takes.
#
#   cd _build && ../bench/ofi_cost.sh [--messages N] [--outdir DIR]
#
# Tools: ompi_tern (Open MPI, cm + ofi + provider tern, TERN_NETMODS=self),
# ternmpi (tern's MPI layer, TERN_NETMODS=self), ompi_self (Open MPI,
# ob1 + btl self).  Needs valgrind (Debian: valgrind), Open MPI
# (openmpi-bin, libopenmpi-dev) and a build with the provider.
# Prints a table; --outdir also writes JSON.
set -euo pipefail

BUILD=$(pwd)
N=50000
OUTDIR=
while [ $# -gt 0 ]; do
    case $1 in
    --messages) N=$2; shift 2 ;;
    --outdir) OUTDIR=$2; shift 2 ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "$0: unknown option $1" >&2; exit 2 ;;
    esac
done
case $N in '' | *[!0-9]*) echo "$0: --messages wants a number" >&2; exit 2 ;; esac

missing=0
for t in valgrind callgrind_annotate mpirun.openmpi; do
    command -v "$t" >/dev/null || { echo "$0: $t not found" >&2; missing=1; }
done
for f in mpi_self_ompi mpi_self_tern ternrun .libs/libtern-fi.so; do
    [ -e "$BUILD/$f" ] || { echo "$0: $BUILD/$f missing: run from a build tree (make)" >&2; missing=1; }
done
[ $missing = 0 ] || exit 1

WORK=$(mktemp -d /tmp/tern-ofi-cost.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
VG=(valgrind --tool=callgrind --quiet)
OMPI=(timeout -k 5 600 mpirun.openmpi -n 1)

# run TOOL COUNT OUT: one callgrind run
run() {
    local tool=$1 n=$2 out=$3
    case $tool in
    ompi_tern)
        "${OMPI[@]}" --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tern \
            -x FI_PROVIDER_PATH="$BUILD/.libs" -x TERN_NETMODS=self \
            "${VG[@]}" --callgrind-out-file="$out" "$BUILD/mpi_self_ompi" "$n" ;;
    ompi_self)
        "${OMPI[@]}" --mca pml ob1 --mca btl self \
            "${VG[@]}" --callgrind-out-file="$out" "$BUILD/mpi_self_ompi" "$n" ;;
    ternmpi)
        TERN_NETMODS=self timeout -k 5 600 "$BUILD/ternrun" -n 1 \
            "${VG[@]}" --callgrind-out-file="$out" "$BUILD/mpi_self_tern" "$n" ;;
    esac
}

# per-library totals of a callgrind file: "count library" lines
by_lib() {
    callgrind_annotate --threshold=100 "$1" 2>/dev/null |
        awk '/^-+$/ {sep++; next} sep >= 3 && $NF ~ /^\[.*\]$/ {
                 c = $1; gsub(",", "", c); lib = $NF; gsub(/^\[|\]$/, "", lib)
                 n = split(lib, p, "/"); sum[p[n]] += c }
             END { for (l in sum) print sum[l], l }'
}

# the layer a library belongs to
layer() {
    case $1 in
    libtern-fi.so*) echo provider ;;
    libtern-mpi.so*) echo "tern MPI layer" ;;
    libtern.so*) echo "tern engine" ;;
    libmpi.so* | libopen-pal.so* | libopen-rte.so* | mca_*) echo "Open MPI" ;;
    libfabric.so*) echo libfabric ;;
    libc.so*) echo libc ;;
    mpi_self_*) echo program ;;
    *) echo other ;;
    esac
}

TOOLS=(ompi_tern ternmpi ompi_self)
declare -A PER # tool|layer -> instructions per message
for tool in "${TOOLS[@]}"; do
    echo "# $tool: $N and $((2 * N)) messages under callgrind" >&2
    run "$tool" "$N" "$WORK/$tool.1" >"$WORK/$tool.1.out" 2>&1 ||
        { echo "$0: $tool failed:" >&2; tail -20 "$WORK/$tool.1.out" >&2; exit 1; }
    run "$tool" $((2 * N)) "$WORK/$tool.2" >"$WORK/$tool.2.out" 2>&1 ||
        { echo "$0: $tool failed:" >&2; tail -20 "$WORK/$tool.2.out" >&2; exit 1; }
    by_lib "$WORK/$tool.1" | sort -k2 >"$WORK/$tool.1.lib"
    by_lib "$WORK/$tool.2" | sort -k2 >"$WORK/$tool.2.lib"
    while read -r lib c2 c1; do
        l=$(layer "$lib")
        d=$(((c2 - c1) / N))
        PER["$tool|$l"]=$((${PER["$tool|$l"]:-0} + d))
        PER["$tool|total"]=$((${PER["$tool|total"]:-0} + d))
    done < <(join -1 2 -2 2 -a 1 -e 0 -o 0,1.1,2.1 "$WORK/$tool.2.lib" "$WORK/$tool.1.lib")
done

LAYERS=("Open MPI" libfabric provider "tern MPI layer" "tern engine" libc program other total)
printf '\n# instructions per 8-byte message to self (MPI_Irecv + MPI_Send + MPI_Wait), callgrind\n'
printf '%-16s' layer
for t in "${TOOLS[@]}"; do printf '%12s' "$t"; done
printf '\n'
for l in "${LAYERS[@]}"; do
    printf '%-16s' "$l"
    for t in "${TOOLS[@]}"; do printf '%12s' "${PER["$t|$l"]:-0}"; done
    printf '\n'
done
om=${PER["ompi_tern|Open MPI"]:-0}
tm=${PER["ternmpi|total"]:-1}
printf '\n# Open MPI'"'"'s own layers in ompi_tern / all of ternmpi: %s\n' \
    "$(awk -v a="$om" -v b="$tm" 'BEGIN { printf "%.3f", a / b }')"
printf '# ompi_tern / ternmpi, all instructions: %s\n' \
    "$(awk -v a="${PER["ompi_tern|total"]:-0}" -v b="$tm" 'BEGIN { printf "%.3f", a / b }')"

if [ -n "$OUTDIR" ]; then
    mkdir -p "$OUTDIR"
    json="$OUTDIR/ofi_cost-$(date -u +%Y%m%d-%H%M%S).json"
    {
        printf '{"tool": "ofi_cost.sh", "date": "%s", "messages": %s,\n' "$(date -u +%FT%T%z)" "$N"
        printf ' "unit": "instructions per message (callgrind Ir)",\n "per_layer": {'
        sep=
        for t in "${TOOLS[@]}"; do
            printf '%s\n  "%s": {' "$sep" "$t"
            s2=
            for l in "${LAYERS[@]}"; do
                printf '%s"%s": %s' "$s2" "$l" "${PER["$t|$l"]:-0}"
                s2=', '
            done
            printf '}'
            sep=,
        done
        printf '}}\n'
    } >"$json"
    python3 -m json.tool "$json" >/dev/null 2>&1 || { echo "$0: $json is not valid JSON" >&2; exit 1; }
    echo "# wrote $json"
fi
