#!/bin/sh
# Ports (tests/launcher/tern_port.c): a server started without a launcher (a
# singleton, as the iofwd daemon will be) opens a port and writes its name
# to a file; the 2 ranks of a ternrun job connect to it one by one (no
# collective), each sends a word and 1 MiB and checks the answer; the
# server takes exactly 2 clients and disconnects them.  A malformed port
# name is refused.
. "$(dirname "$0")/lib.sh"

PROG=./tests/launcher/tern_port
PORTFILE=$WORK/port
SRVOUT=$WORK/server.out
# the server is not a launcher's child: no PMIX_* in its environment
noenv() { env $(env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\)=.*/-u \1/p') "$@"; }

TERN_TCP_ADDRS=127.0.0.1 noenv timeout -k 5 90 "$PROG" server 2 "$PORTFILE" >"$SRVOUT" 2>&1 &
srv=$!
T=90 run -n 2 -x TERN_TCP_ADDRS=127.0.0.1 "$PROG" client "$PORTFILE"
expect_rc 0 "2 clients through the port"
expect_out '^ok client 0$' "client 0"
expect_out '^ok client 1$' "client 1"
wait $srv
src=$?
if [ "$src" -ne 0 ] || ! grep -q '^server took 2$' "$SRVOUT"; then
    fail "server: status $src, $(cat "$SRVOUT")"
fi
if grep -q 'warning' "$SRVOUT"; then fail "server warned: $(cat "$SRVOUT")"; fi
grep -q '^tern-port:2:' "$PORTFILE" || fail "port name: $(cat "$PORTFILE")"

# a name that is not a port's
echo "tern-port:9:nonsense" >"$PORTFILE"
T=30 run -n 1 "$PROG" client "$PORTFILE"
expect_rc 1 "a malformed port name"
expect_out 'tern_port_connect: .*is not a port name of this version' \
    "malformed name refused by name"

finish
