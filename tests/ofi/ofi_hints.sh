#!/bin/sh
# fi_getinfo hint by hint and the bad calls of every object, through
# libfabric with the build tree's provider (tests/ofi/ofi_hints.c), over
# tcp; then libfabric's log (FI_LOG_LEVEL=info) must name the field of each
# refused hint.  Then with FI_TERN_NUM_WORKERS=2: two endpoints (workers 0
# and 1), a third -FI_EBUSY.
. "${srcdir:-.}/tests/ofi/lib.sh"
out=$OFI_TMP/hints.out
err=$OFI_TMP/hints.err
TERN_NETMODS=tcp FI_LOG_LEVEL=info timeout -k 5 "$OFI_TIMEOUT" ./tests/ofi/ofi_hints \
    >"$out" 2>"$err" </dev/null
rc=$?
cat "$out"
if [ "$rc" -ne 0 ]; then
    grep -a "tern\|runtime error\|Sanitizer" "$err" | tail -40
    fail "ofi_hints exited $rc"
fi
[ "$(grep -c '^ok hint ' "$out")" -ge 60 ] || fail "too few hint cases ran"
for field in "caps: FI_MULTI_RECV" "addr_format" \
    "ep_attr->type FI_EP_MSG" "ep_attr->protocol" "ep_attr->msg_prefix_size" \
    "ep_attr->max_msg_size" "tx_attr->msg_order: FI_ORDER_RAW" "tx_attr->comp_order" \
    "tx_attr->inject_size 1048576" "tx_attr->iov_limit" "tx_attr->rma_iov_limit" \
    "tx_attr->op_flags: FI_MULTICAST" "tx_attr->tclass" "rx_attr->op_flags: FI_MULTI_RECV" \
    "rx_attr->comp_order" "domain_attr->data_progress FI_PROGRESS_AUTO" \
    "domain_attr->cq_data_size 16" "domain_attr->mr_key_size" "domain_attr->ep_cnt 2" \
    "domain_attr->name eth0" "domain_attr->caps: FI_SHARED_AV" "domain_attr->max_ep_srx_ctx" \
    "fabric_attr->name tcp" "src_addr" "dest_addr: not a tern name" "API version 1.4"; do
    grep -a -q "hints refused: .*$field" "$err" ||
        fail "no log line names the refused hint \"$field\""
done
grep -a -q "tern context: job fi-" "$err" || fail "the context was not a job of one of its own"
# two workers: two endpoints, a third refused with -FI_EBUSY
FI_TERN_NUM_WORKERS=2 TERN_NETMODS=tcp timeout -k 5 "$OFI_TIMEOUT" ./tests/ofi/ofi_hints workers \
    >"$out" 2>"$err" </dev/null
rc=$?
cat "$out"
[ "$rc" -eq 0 ] || { grep -a "tern\|runtime error\|Sanitizer" "$err" | tail -20; fail "workers: exited $rc"; }
grep -q "^ok two workers" "$out" || fail "the two-worker case did not run"
echo "PASS: fi_getinfo hints and bad calls"
