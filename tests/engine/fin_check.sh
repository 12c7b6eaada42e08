# fin_job, shared by the clean-finalize tests (tests/engine/finalize_tcp.sh,
# tests/multinode/finalize_hosts.sh; sourced, POSIX sh).
#
# fin_job OUT LABEL NOTES CMD...: run CMD, a job of fin_stagger (bounded by
# the caller's timeout), with its output in OUT.  A clean finalize: exit 0,
# no FAIL line, no warning of tern's ("tern[PID]: warning", not Open MPI's
# or a note), and exactly NOTES notes of the TERN_FAULT_FENCE_LATE_MS test
# hook (engine/context.c: one per rank it delays), so that a job meant to
# have a late rank shows the delay happened.  Returns 1, having printed the
# output and a FAIL line, otherwise; never exits.
fin_job() {
    fin_out=$1 fin_label=$2 fin_notes=$3
    shift 3
    "$@" </dev/null >"$fin_out" 2>&1
    fin_rc=$?
    fin_n=$(grep -c 'tern\[[0-9]*\]: note: test hook TERN_FAULT_FENCE_LATE_MS' "$fin_out")
    if [ "$fin_rc" -eq 0 ] && ! grep -q 'tern\[[0-9]*\]: warning\|FAIL' "$fin_out" &&
        [ "$fin_n" -eq "$fin_notes" ]; then
        return 0
    fi
    cat "$fin_out"
    echo "FAIL: $fin_label: exit $fin_rc, a warning at a clean finalize, or $fin_n notes" \
        "of the TERN_FAULT_FENCE_LATE_MS hook (expected $fin_notes)"
    return 1
}
