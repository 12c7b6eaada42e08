#!/bin/sh
# Debian's fi_pingpong (libfabric-bin) over the provider on this host:
# server and client, FI_EP_RDM, tagged and msg transmit modes, with data
# integrity checks (-c), every default size up to 1 MiB, over tcp.  Each
# pair gets its own control port, below the kernel's ephemeral range (a
# port there may be any connection's); one another process holds is
# given up for the next (the server says "Address already in use"), ten
# times at most.  Both sides are bounded by timeout.
. "${srcdir:-.}/tests/ofi/lib.sh"
FI_PINGPONG=${FI_PINGPONG:-fi_pingpong}
command -v "$FI_PINGPONG" >/dev/null 2>&1 ||
    skip "no fi_pingpong (Debian: apt-get install libfabric-bin)"
port=${TERN_TEST_PINGPONG_PORT:-$((10000 + $$ % 20000))}
for mode in tagged msg; do
    s=$OFI_TMP/server.$mode
    c=$OFI_TMP/client.$mode
    attempt=0
    while :; do
        port=$((port + 1))
        TERN_NETMODS=tcp ofi_ext timeout -k 5 "$OFI_TIMEOUT" "$FI_PINGPONG" -p tern -e rdm -m "$mode" \
            -c -I 50 -B "$port" >"$s" 2>&1 </dev/null &
        spid=$!
        # the client retries its control connection until the server listens
        tries=0
        while :; do
            TERN_NETMODS=tcp ofi_ext timeout -k 5 "$OFI_TIMEOUT" "$FI_PINGPONG" -p tern -e rdm \
                -m "$mode" -c -I 50 -P "$port" 127.0.0.1 >"$c" 2>&1 </dev/null
            rc=$?
            grep -q "ctrl/connect\|Connection refused" "$c" || break
            # a server that could not bind has ended: no point in waiting
            kill -0 "$spid" 2>/dev/null || break
            tries=$((tries + 1))
            [ "$tries" -lt 100 ] || break
            sleep 0.1
        done
        wait "$spid"
        src=$?
        attempt=$((attempt + 1))
        grep -q "Address already in use" "$s" && [ "$attempt" -lt 10 ] || break
        echo "# $mode: port $port is taken; the next one"
    done
    echo "# $mode: client"
    cat "$c"
    echo "# $mode: server"
    cat "$s"
    [ "$rc" -eq 0 ] && [ "$src" -eq 0 ] || fail "$mode: client exited $rc, server $src"
    for size in 64 256 1k 4k 64k 1m; do
        grep -q "^$size  *50  *=50 " "$c" || fail "$mode: no $size line with 50 acks"
    done
done
echo "PASS: fi_pingpong over the tern provider, tagged and msg"
