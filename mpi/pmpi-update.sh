#!/bin/sh
# mpi/pmpi-update.sh [include/mpi.h] — regenerate include/mpi_pmpi.h's
# PMPI_ block from mpi.h's MPI_ prototypes (mpi/pmpi.awk), after adding or
# changing a function; tests/mpi/pmpi.sh fails until this has been run.
set -eu
here=$(dirname "$0")
hdr=${1:-$here/../include/mpi.h}
out=$(dirname "$hdr")/mpi_pmpi.h
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.block"' EXIT
awk -v mode=header -f "$here/pmpi.awk" "$hdr" >"$tmp.block"
awk -v blockfile="$tmp.block" '
    /^\/\* ---- PMPI_/ { print; inhead = 1; next }
    inhead && /\*\/$/ { print; while ((getline line < blockfile) > 0) print line; inhead = 0; skip = 1; next }
    inhead { print; next }
    skip && /^\/\* ---- end of PMPI_/ { skip = 0; print; next }
    skip { next }
    { print }' "$out" >"$tmp"
cat "$tmp" >"$out"
echo "$out: $(grep -c '^\(int\|double\|MPI_Aint\) PMPI_' "$out") PMPI_ prototypes"
