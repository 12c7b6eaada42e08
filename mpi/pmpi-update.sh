#!/bin/sh
# mpi/pmpi-update.sh [include/] — regenerate include/mpi_pmpi.h's PMPI_
# block from the MPI_ prototypes of mpi.h, mpi_rma.h and mpi_t.h (mpi/pmpi.awk),
# after adding or changing a function; tests/mpi/pmpi.sh fails until this has
# been run.
set -eu
here=$(dirname "$0")
inc=${1:-$here/../include}
out=$inc/mpi_pmpi.h
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.block"' EXIT
awk -v mode=header -f "$here/pmpi.awk" "$inc/mpi.h" "$inc/mpi_rma.h" "$inc/mpi_t.h" >"$tmp.block"
awk -v blockfile="$tmp.block" '
    /^\/\* ---- PMPI_/ { print; inhead = 1; next }
    inhead && /\*\/$/ { print; while ((getline line < blockfile) > 0) print line; inhead = 0; skip = 1; next }
    inhead { print; next }
    skip && /^\/\* ---- end of PMPI_/ { skip = 0; print; next }
    skip { next }
    { print }' "$out" >"$tmp"
cat "$tmp" >"$out"
echo "$out: $(grep -c '^\(int\|double\|MPI_Aint\) PMPI_' "$out") PMPI_ prototypes"
