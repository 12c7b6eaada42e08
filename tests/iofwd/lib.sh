# iofwd tests' common setup: a rendezvous directory of their own (so the
# daemon is this test's), the daemon from the build tree, outputs in tmpfs;
# any daemon left is killed at exit.  Runs from the top build directory.
set -u
fail() { echo "FAIL: $*"; exit 1; }
TERNRUN=${TERNRUN:-./ternrun}
CLIENT=./tests/iofwd/io_client
work=$(mktemp -d /dev/shm/tern-iofwd-test.XXXXXX) || fail "mktemp"
XDG_RUNTIME_DIR=$work/run
TERN_IOFWD=$(pwd)/tern-iofwd
export XDG_RUNTIME_DIR TERN_IOFWD
mkdir -m 700 "$XDG_RUNTIME_DIR" "$work/out"
daemon_pid() { sed -n 's/^\([0-9]*\) .*/\1/p' "$XDG_RUNTIME_DIR/tern-iofwd/port" 2>/dev/null; }
cleanup() {
    p=$(daemon_pid)
    [ -n "$p" ] && kill -9 "$p" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
# run a bounded command, its output kept in $out
out=$work/output
run() {
    echo "+ $*"
    timeout -k 5 120 "$@" >"$out" 2>&1
    rc=$?
    cat "$out"
    return $rc
}
