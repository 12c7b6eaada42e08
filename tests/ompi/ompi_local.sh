#!/bin/bash
# Stock Open MPI over tern's libfabric provider on this host (issue 23):
# the programs of tests/mpi, built unchanged with mpicc.openmpi (mpi_cxx
# with mpicxx.openmpi), and tests/ompi/ompi_probe_cancel (matched probes,
# cancelled receives) run under
#
#   mpirun.openmpi --allow-run-as-root --oversubscribe -n NP \
#       --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tern \
#       -x FI_PROVIDER_PATH=<builddir>/.libs -x TERN_NETMODS=NM ... PROG
#
# at 2 and 4 ranks with NM = shm, then tcp (with netmods/tcp/test.env: on
# loopback, the same-host copy off, so tcp carries every byte).  mpi_thread
# asks for MPI_THREAD_MULTIPLE and checks it got it (Open MPI then asks the
# provider for FI_THREAD_SAFE).  Every rank must report tern as its
# provider (mtl_ofi_verbose) and every program pass, but for Open MPI's own
# known deviations (tests/ompi/lib.sh, ompi_known_deviation).  Skips (77)
# without Open MPI or the provider.  OMPI_NETMODS, OMPI_NPS and OMPI_PROGS
# narrow the matrix (space-separated lists).
. "${srcdir:-.}/tests/ompi/lib.sh"
ompi_skip_unless_possible
ompi_setup
progs=${OMPI_PROGS:-mpi_p2p mpi_p2p2 mpi_coll mpi_comm mpi_group mpi_dtype mpi_nbc mpi_thread mpi_cxx ompi_probe_cancel}
# shellcheck disable=SC2086
ompi_build "$OMPI_WORK" $progs
progs=$OMPI_BUILT
out=$OMPI_WORK/out
failures=0
runs=0
for nm in ${OMPI_NETMODS:-shm tcp}; do
    for np in ${OMPI_NPS:-2 4}; do
        for prog in $progs; do
            ompi_netmod_env "$nm"
            t0=$SECONDS
            ompi_mpirun "$np" "${OMPI_ENV[@]}" -- "$OMPI_WORK/$prog" >"$out" 2>&1
            rc=$?
            cat "$out"
            echo "# $prog, $np ranks over $nm: exit $rc after $((SECONDS - t0)) s"
            ompi_check "$out" "$np" "$prog, $np ranks over $nm" "$prog" "$rc" ||
                failures=$((failures + 1))
            runs=$((runs + 1))
        done
    done
done
[ "$failures" -eq 0 ] || ompi_fail "$failures of $runs runs failed"
echo "ok: $runs runs of Open MPI over tern's provider passed"
