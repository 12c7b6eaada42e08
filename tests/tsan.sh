#!/bin/sh
# The threaded tests under ThreadSanitizer, in a configure --enable-tsan
# build (make check there runs this; ./quickstart check's TSan stage runs
# only this).  ternrun and the ranks are instrumented; a TSan report fails
# the test (exitcode 66, and the output is searched).  tests/tsan.supp
# silences known races inside libpmix only.
#   engine cases, 2 ranks with 2 workers each, over shm, tcp and verbs (on
#   tests/ibloop):
#     wakeup      another thread signals a worker blocked in tern_worker_wait
#     block_wake  TERN_WAIT_MODE=block: a blocked receive is woken by the
#                 arrival
#     workers     each rank drives worker 0 and worker 1 from two threads
#     rma_*       one-sided from two workers, a region destroyed under
#                 another thread's puts, errors, CQ completion, device atomics
#   the workers case again with TERN_LMT_MODE=get and =put over shm: the
#     two workers register memory through the process's one registration
#     cache, whose userfaultfd monitor thread runs beside them
#   tests/unit/rcache_test: the registration cache and its monitor thread
#   the MPI layer at MPI_THREAD_MULTIPLE (tests/mpi/mpi_thread.c, mpi_greq.c) and one-sided (mpi_win.c), shm, tcp
#   engine/sock: wait_timeout, wakeup_from_thread,
#     post_from_thread_while_waiting (posts while another thread waits)
#   the libfabric provider (when built): two threads on one FI_THREAD_SAFE
#     endpoint in each of two processes (tests/ofi/ofi_ops threads)
. "${srcdir:-.}/tests/engine/lib.sh"
TERN_INFO=${TERN_INFO:-./tern_info}
supp=$(cd "${srcdir:-.}" && pwd)/tests/tsan.supp
TSAN_OPTIONS="suppressions=$supp halt_on_error=0 exitcode=66 second_deadlock_stack=1"
TERN_NUM_WORKERS=2 TERN_WAIT_MODE=block TERN_HEALTH_MS=20000
export TSAN_OPTIONS TERN_NUM_WORKERS TERN_WAIT_MODE TERN_HEALTH_MS
cases="wakeup block_wake workers rma_workers rma_workers_alloc rma_destroy_race rma_errors rma_cq rma_amo_device"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
failed=0

# verdict RC LABEL: the output of one run is in $out
verdict() {
    cat "$out"
    n=$(grep -c "WARNING: ThreadSanitizer" "$out")
    if [ "$1" -eq 0 ] && [ "$n" -eq 0 ]; then
        echo "ok: $2"
    else
        echo "FAIL: $2 (exit $1, $n ThreadSanitizer report(s))"
        failed=1
    fi
}

TERN_NETMODS=shm TERN_TEST_NETMOD=shm run_engine 2 "--bind-to none" $cases >"$out" 2>&1
verdict $? "engine cases $cases over shm"
for mode in get put; do
    TERN_NETMODS=shm TERN_TEST_NETMOD=shm TERN_LMT_MODE=$mode \
        run_engine 2 "--bind-to none" workers >"$out" 2>&1
    verdict $? "engine case workers over shm, LMT mode $mode"
done
timeout -k 5 300 ./tests/unit/rcache_test >"$out" 2>&1
verdict $? "registration cache (tests/unit/rcache_test)"
if "$TERN_INFO" 2>/dev/null | grep -Eq '^netmods:.* tcp( |$)'; then
    TERN_NETMODS=tcp TERN_TEST_NETMOD=tcp TERN_TCP_ADDRS=127.0.0.1 \
        run_engine 2 "--bind-to none" $cases >"$out" 2>&1
    verdict $? "engine cases $cases over tcp"
    timeout -k 5 120 ./tests/sock/sock_test wait_timeout wakeup_from_thread \
        post_from_thread_while_waiting >"$out" 2>&1
    verdict $? "engine/sock thread cases"
else
    echo "note: no tcp netmod in this build (tern_info): tcp and engine/sock not run"
fi
# the MPI layer at MPI_THREAD_MULTIPLE (tests/mpi/mpi_thread.c: four
# threads per rank at once, on their own communicators and on
# MPI_COMM_WORLD, and one-sided on one window; tests/mpi/mpi_greq.c: a
# generalized request completed by another thread while MPI_Wait waits;
# tests/mpi/mpi_win.c: every window flavor and synchronisation), two
# workers per rank, over shm and tcp
mpi_prog=$(mktemp)
for prog in mpi_thread mpi_greq mpi_win; do
    # shellcheck disable=SC2086
    if ./ternmpicc ${TERN_TEST_CFLAGS:-} -O1 -I"${srcdir:-.}" "${srcdir:-.}/tests/mpi/$prog.c" \
        -o "$mpi_prog" >"$out" 2>&1; then
        for nm in shm tcp; do
            TERN_NETMODS=$nm TERN_TCP_ADDRS=127.0.0.1 timeout -k 5 300 \
                ./ternrun -n 2 --bind-to none "$mpi_prog" </dev/null >"$out" 2>&1
            rc=$?
            [ "$(grep -c '^ok rank' "$out")" -eq 2 ] || [ "$rc" -ne 0 ] || rc=1
            verdict "$rc" "MPI_THREAD_MULTIPLE (tests/mpi/$prog.c) over $nm"
        done
    else
        verdict 1 "ternmpicc tests/mpi/$prog.c"
    fi
done
rm -f "$mpi_prog"
if "$TERN_INFO" 2>/dev/null | grep -Eq '^netmods:.* verbs( |$)'; then
    # the workers of a rank share the device context; on tests/ibloop
    # (instrumented too: built in this tree), with its helper thread
    (set -a && . "${srcdir:-.}/netmods/verbs/test.env" && set +a &&
        TERN_NETMODS=verbs TERN_TEST_NETMOD=verbs run_engine 2 "--bind-to none" $cases) \
        >"$out" 2>&1
    verdict $? "engine cases $cases over verbs"
fi
# the libfabric provider, when built: tests/ofi/ofi_ops's threads case (two
# threads on one FI_THREAD_SAFE endpoint and CQ, each process a job of one
# reaching the other over tcp); libfabric loads the instrumented provider
if [ -x ./tests/ofi/ofi_ops ] && [ -f ./.libs/libtern-fi.so ]; then
    ofi=$(mktemp -d)
    mkdir "$ofi/prov" && ln -s "$(pwd)/.libs/libtern-fi.so" "$ofi/prov/libtern-fi.so"
    (
        for v in $(env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
        export FI_PROVIDER_PATH="$ofi/prov" TERN_NETMODS=tcp
        timeout -k 5 300 ./tests/ofi/ofi_ops A "$ofi" safe threads </dev/null &
        a=$!
        timeout -k 5 300 ./tests/ofi/ofi_ops B "$ofi" safe threads </dev/null
        rb=$?
        wait "$a"
        ra=$?
        [ "$ra" -eq 0 ] && [ "$rb" -eq 0 ]
    ) >"$out" 2>&1
    verdict $? "libfabric provider, FI_THREAD_SAFE, two threads per process (tests/ofi/ofi_ops)"
    rm -rf "$ofi"
fi
exit "$failed"
