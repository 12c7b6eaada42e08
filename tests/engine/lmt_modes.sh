#!/bin/sh
# Every LMT mode forced on every built netmod (TERN_LMT_MODE=null|coop|get|put):
# large messages up to 64 MiB from and into unaligned buffers, every size,
# iovecs, truncation, all byte-exact.  A mode a netmod lacks falls back to
# its own choice (with a warning), which must work as well.
. "${srcdir:-.}/tests/engine/lib.sh"
INFO=${TERN_INFO:-./tern_info}
netmods=$("$INFO" --netmods | sed -n 's/^netmods: *\([^(]*\).*/\1/p')
[ -n "$netmods" ] || fail "tern_info lists no netmod"
for nm in $netmods; do
    for mode in null coop get put; do
        echo "# netmod $nm, TERN_LMT_MODE=$mode"
        # each netmod's test.env in a subshell: verbs' LD_LIBRARY_PATH (the
        # loopback libibverbs) must not reach the next netmod (DPDK's mlx
        # drivers then fail to load and EAL with them)
        (if [ -f "${srcdir:-.}/netmods/$nm/test.env" ]; then
             set -a; . "${srcdir:-.}/netmods/$nm/test.env"; set +a
         fi
         TERN_NETMODS=$nm TERN_TEST_NETMOD=$nm TERN_LMT_MODE=$mode; \
         export TERN_NETMODS TERN_TEST_NETMOD TERN_LMT_MODE; \
         run_engine 2 "--bind-to core" large sizes iov truncate wildcard_order) ||
            fail "netmod $nm, LMT mode $mode"
    done
done
