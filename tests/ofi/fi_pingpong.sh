#!/bin/sh
# Debian's fi_pingpong (libfabric-bin) over the provider on this host:
# server and client, FI_EP_RDM, tagged and msg transmit modes, with data
# integrity checks (-c), every default size up to 1 MiB, over tcp.  Each
# pair gets its own control port; both sides are bounded by timeout.
. "${srcdir:-.}/tests/ofi/lib.sh"
FI_PINGPONG=${FI_PINGPONG:-fi_pingpong}
command -v "$FI_PINGPONG" >/dev/null 2>&1 ||
    skip "no fi_pingpong (Debian: apt-get install libfabric-bin)"
port=$((20000 + $$ % 20000))
for mode in tagged msg; do
    port=$((port + 1))
    s=$OFI_TMP/server.$mode
    c=$OFI_TMP/client.$mode
    TERN_NETMODS=tcp ofi_ext timeout -k 5 "$OFI_TIMEOUT" "$FI_PINGPONG" -p tern -e rdm -m "$mode" -c \
        -I 50 -B "$port" >"$s" 2>&1 </dev/null &
    spid=$!
    # the client retries its control connection until the server listens
    tries=0
    while :; do
        TERN_NETMODS=tcp ofi_ext timeout -k 5 "$OFI_TIMEOUT" "$FI_PINGPONG" -p tern -e rdm -m "$mode" -c \
            -I 50 -P "$port" 127.0.0.1 >"$c" 2>&1 </dev/null
        rc=$?
        grep -q "ctrl/connect\|Connection refused" "$c" || break
        tries=$((tries + 1))
        [ "$tries" -lt 100 ] || break
        sleep 0.1
    done
    wait "$spid"
    src=$?
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
