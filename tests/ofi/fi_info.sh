#!/bin/sh
# Debian's fi_info (libfabric-bin) with the build tree's provider: `fi_info
# -p tern` lists it (FI_EP_RDM, 64 tag bits, 8 bytes of CQ data, manual
# progress), FI_TERN_INJECT_SIZE changes what it reports, a hint tern
# cannot honour lists nothing, and `fi_info -e` shows the FI_TERN_*
# settings; without FI_PROVIDER_PATH pointing at it, tern is not there.
. "${srcdir:-.}/tests/ofi/lib.sh"
FI_INFO=${FI_INFO:-fi_info}
command -v "$FI_INFO" >/dev/null 2>&1 || skip "no fi_info (Debian: apt-get install libfabric-bin)"
out=$OFI_TMP/out
ofi_ext timeout -k 5 60 "$FI_INFO" -p tern >"$out" 2>&1 || { cat "$out"; fail "fi_info -p tern failed"; }
cat "$out"
grep -q "^provider: tern" "$out" || fail "fi_info -p tern does not list tern"
grep -q "type: FI_EP_RDM" "$out" || fail "not FI_EP_RDM"
ofi_ext timeout -k 5 60 "$FI_INFO" -p tern -v >"$out" 2>&1 || fail "fi_info -p tern -v failed"
for want in "mem_tag_format: 0xffffffffffffffff" "cq_data_size: 8" \
    "data_progress: FI_PROGRESS_MANUAL" "addr_format: FI_FORMAT_UNSPEC" "inject_size: 4096" \
    "msg_order: \[ FI_ORDER_SAS \]" \
    "caps: \[ FI_MSG, FI_RMA, FI_TAGGED, FI_ATOMIC, FI_READ, FI_WRITE, FI_RECV, FI_SEND, FI_REMOTE_READ, FI_REMOTE_WRITE"; do
    grep -q "$want" "$out" || fail "fi_info -v: no \"$want\""
done
FI_TERN_INJECT_SIZE=1024 ofi_ext timeout -k 5 60 "$FI_INFO" -p tern -v >"$out" 2>&1 ||
    fail "fi_info with FI_TERN_INJECT_SIZE failed"
grep -q "inject_size: 1024" "$out" || fail "FI_TERN_INJECT_SIZE=1024 not reported"
# an endpoint type tern does not offer: nothing listed
if ofi_ext timeout -k 5 60 "$FI_INFO" -p tern -t FI_EP_MSG >"$out" 2>&1 &&
    grep -q "^provider: tern" "$out"; then
    fail "fi_info -p tern -t FI_EP_MSG lists tern"
fi
ofi_ext timeout -k 5 60 "$FI_INFO" -e >"$out" 2>&1 || fail "fi_info -e failed"
for v in FI_TERN_NETMODS FI_TERN_WIREUP FI_TERN_NUM_WORKERS FI_TERN_INJECT_SIZE; do
    grep -a -q "^# $v: " "$out" || fail "fi_info -e does not show $v"
done
grep -a "^# FI_TERN_" "$out"
# the same fi_info without the provider's directory: no tern
mkdir "$OFI_TMP/empty"
if FI_PROVIDER_PATH=$OFI_TMP/empty ofi_ext timeout -k 5 60 "$FI_INFO" -p tern >"$out" 2>&1 &&
    grep -q "^provider: tern" "$out"; then
    fail "tern listed without FI_PROVIDER_PATH (an installed copy?)"
fi
echo "PASS: fi_info lists the tern provider and its settings"
