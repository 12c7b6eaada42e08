#!/bin/sh
# Two processes, each a job of one (no launcher), exchange their fi_getname
# names through files and run tests/ofi/ofi_ops's data cases against each
# other over tcp: tagged messages with ignore masks, FI_SOURCE, rendezvous,
# remote CQ data, inject, msg operations, FI_PEEK / FI_CLAIM / FI_DISCARD,
# fi_cancel, truncation, the four CQ formats, counters with selective
# completion, FI_DELIVERY_COMPLETE, one-sided (FI_RMA in every form, remote
# CQ data, FI_ATOMIC from both sides on one counter, the errors); then again
# FI_THREAD_SAFE with two threads on one endpoint.
. "${srcdir:-.}/tests/ofi/lib.sh"
OPS=./tests/ofi/ofi_ops
# run_pair NAME ARGS...: A and B with ARGS, both must pass
run_pair() {
    name=$1
    shift
    dir=$OFI_TMP/$name
    mkdir -p "$dir"
    TERN_NETMODS=tcp timeout -k 5 "$OFI_TIMEOUT" "$OPS" A "$dir" "$@" >"$dir/A.out" 2>&1 </dev/null &
    a=$!
    TERN_NETMODS=tcp timeout -k 5 "$OFI_TIMEOUT" "$OPS" B "$dir" "$@" >"$dir/B.out" 2>&1 </dev/null
    rb=$?
    wait "$a"
    ra=$?
    for r in A B; do
        echo "# $name: $r"
        cat "$dir/$r.out"
    done
    [ "$ra" -eq 0 ] && [ "$rb" -eq 0 ] || fail "$name: A exited $ra, B exited $rb"
}
run_pair domain all
for c in tagged data inject msg peek claim discard cancel trunc formats counters delivery rma \
         atomic rma_errors; do
    grep -q "^ok $c\$" "$OFI_TMP/domain/B.out" || fail "case $c did not pass on B"
done
run_pair safe safe threads
grep -q "^ok threads\$" "$OFI_TMP/safe/A.out" || fail "the threads case did not pass"
echo "PASS: the provider's data operations between two processes over tcp"
