# Shared by the provider's test scripts (sourced; run from the top build
# directory).  libfabric loads the build tree's libtern-fi.so through
# FI_PROVIDER_PATH, from a directory of its own (nothing else in it ends in
# fi.so); no PMIx variable leaks in, so the provider's context is a job of
# one wired by addresses.  Every run is bounded by timeout.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
OFI_SO=${TERN_OFI_SO:-./.libs/libtern-fi.so}
[ -f "$OFI_SO" ] || fail "no $OFI_SO: build libtern-fi.la first"
OFI_TMP=$(mktemp -d "${TMPDIR:-/tmp}/tern-ofi.XXXXXX") || fail "mktemp"
ofi_cleanup() { rm -rf "$OFI_TMP"; }
trap 'ofi_cleanup' EXIT
mkdir "$OFI_TMP/prov" || fail "mkdir"
ln -s "$(cd "$(dirname "$OFI_SO")" && pwd)/$(basename "$OFI_SO")" "$OFI_TMP/prov/libtern-fi.so" ||
    fail "ln"
FI_PROVIDER_PATH=$OFI_TMP/prov
export FI_PROVIDER_PATH
unset FI_PROVIDER FI_LOG_LEVEL FI_LOG_PROV FI_TERN_NETMODS FI_TERN_WIREUP FI_TERN_NUM_WORKERS \
    FI_TERN_INJECT_SIZE
for v in $(env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
OFI_TIMEOUT=${OFI_TIMEOUT:-120}
# ofi_ext CMD...: run a program built elsewhere (fi_info, fi_pingpong) that
# loads the provider: in a sanitizer build the provider's runtimes
# (libasan, libubsan, libtsan) must be in the process first
OFI_PRE=""
for rt in $(ldd "$OFI_SO" | awk '/lib(asan|ubsan|tsan)\.so/ {print $3}'); do
    OFI_PRE="$OFI_PRE${OFI_PRE:+:}$rt"
done
ofi_ext() {
    if [ -n "$OFI_PRE" ]; then
        LD_PRELOAD="$OFI_PRE" \
            ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:verify_asan_link_order=0" \
            "$@"
    else
        "$@"
    fi
}
