#!/bin/sh
# ternrun tells the job's ranks when one of them ends: a PMIx event (range
# namespace) naming it in PMIX_EVENT_AFFECTED_PROC, with PMIX_EXIT_CODE, its
# status saying how it ended:
#   PMIx_Finalize, exit 0       PMIX_EVENT_PROC_TERMINATED   -201  job exits 0
#   exit 0 without finalizing   PMIX_ERR_PROC_TERM_WO_SYNC   -200  job exits 1
#   exit 3                      PMIX_ERR_EXIT_NONZERO_TERM   -404  job exits 3
#   SIGKILL                     PMIX_ERR_PROC_ABORTED_BY_SIG -402  job exits 137
# Both survivors get it well within the kill grace and end by themselves.
# Every end but the first is also told as PMIX_ERR_PROC_ABORTED (-7), the
# PMIx 3 name, after the precise code: the probe registers for both and
# must see the precise one.  A client that registers only for the old names
# (PMIX_ERR_PROC_ABORTED, PMIX_ERR_JOB_TERMINATED), as OpenPMIx's fault
# example does, is told too (nobody was before).  When only the second,
# PMIx 3 event cannot be sent (injected by fault_shim), the precise one
# still arrives and the warning says which was lost.
. "$(dirname "$0")/lib.sh"
CLIENTS=${PMIX_CLIENTS:-./tests/launcher/pmix_clients}

# check HOW JOB-STATUS EVENT-STATUS EXIT-CODE
check() {
    T=30 run -n 3 --kill-grace 20 "$PROBE" death 1 "$1"
    expect_rc "$2" "rank 1 ending by $1"
    for r in 0 2; do
        expect_out "^event rank $r: rank 1 code $3 \(.*\) exit code $4\$" \
            "rank $r told that rank 1 ended by $1"
    done
    if grep -q "still running .* after the failure" "$ERR"; then
        fail "$1: the survivors had to be killed"
    fi
}

check finalize 0 -201 0
check nofinalize 1 -200 0
check exit3 3 -404 3
check kill 137 -402 137

# the PMIx 3 name cannot be told (fault_shim fails that PMIx_Notify_event):
# the precise event still reaches the survivors, and the warning says
# which of the two was not sent
T=30 run_shim TERN_SHIM_NOTIFY_FAIL=-7 -n 3 --kill-grace 20 "$PROBE" death 1 exit3
expect_rc 3 "rank 1 exits 3, PMIX_ERR_PROC_ABORTED not sent"
for r in 0 2; do
    expect_out "^event rank $r: rank 1 code -404 \(.*\) exit code 3\$" \
        "rank $r told the precise code though the PMIx 3 one failed"
done
expect_err "rank 1 ended: told as PMIX_ERR_EXIT_NONZERO_TERM, but not as PMIX_ERR_PROC_ABORTED" \
    "the warning names the event not sent"
if grep -q "cannot tell the other ranks" "$ERR"; then
    fail "the warning says the other ranks were not told, though they were"
fi

T=30 run -n 3 --kill-grace 20 "$CLIENTS" fault
expect_rc 1 "pmix_clients fault (rank 0 exits 1)"
for r in 1 2; do
    expect_out "^fault rank $r: rank 0 code -7 \(.*\) exit code 1\$" \
        "rank $r told of rank 0's end under the PMIx 3 name"
done
if grep -q "still running .* after the failure" "$ERR"; then
    fail "fault: the survivors had to be killed"
fi

finish
