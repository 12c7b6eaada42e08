#!/usr/bin/env bash
# devnode.sh CMD [ARGS...]: run CMD where /dev/infiniband/uverbs0 exists,
# without touching this machine's /dev.
#
# Some verbs users look for the kernel's character device before they open
# a device that libibverbs lists: UCX 1.13 skips any device whose
# /dev/infiniband/<dev_name> is not a character device
# (uct_ib_device_is_accessible), so it never sees ibloop0 on a machine
# without InfiniBand.  ibloop itself never opens that node.  CMD runs in a
# private mount namespace whose /dev is an overlay of the real one with
# infiniband/uverbs0 (231:192, as the kernel numbers it) added; the real
# /dev's sub-mounts (/dev/shm, where ibloop's fabric lives, /dev/pts,
# /dev/hugepages, ...) are bound back on top, so processes inside and outside
# share one fabric.  Needs root (unshare, mount, mknod); exits 77 (skip) with
# a message when it cannot set this up.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: devnode.sh CMD [ARGS...]" >&2; exit 2; }
if [ "${IBLOOP_DEVNODE_INNER:-}" != 1 ]; then
    if [ -c /dev/infiniband/uverbs0 ]; then
        exec "$@" # a real node is there already
    fi
    if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null 2>&1; then
        echo "devnode.sh: needs root and unshare(1) to add /dev/infiniband/uverbs0" >&2
        exit 77
    fi
    # scratch outside /dev (the overlay would hide it)
    base=${TMPDIR:-/tmp}
    case $base in /dev | /dev/*) base=/tmp ;; esac
    dir=$(mktemp -d "$base/ibloop-dev.XXXXXX")
    # the directory goes however this ends (a benchmark stops its server
    # with SIGTERM): the namespace's mount on it dies with the namespace
    child=
    trap 'rmdir "$dir" 2>/dev/null' EXIT
    trap '[ -n "$child" ] && kill -TERM "$child" 2>/dev/null; wait; exit 143' TERM INT
    rc=0
    IBLOOP_DEVNODE_INNER=1 IBLOOP_DEVNODE_DIR=$dir \
        unshare --mount --propagation private "$0" "$@" <&0 &
    child=$!
    wait "$child" || rc=$?
    exit "$rc"
fi

# inside the namespace
d=$IBLOOP_DEVNODE_DIR
unset IBLOOP_DEVNODE_INNER IBLOOP_DEVNODE_DIR
fail() { echo "devnode.sh: $*" >&2; exit 77; }
mount -t tmpfs -o mode=700 ibloop-dev "$d" || fail "cannot mount a tmpfs on $d"
mkdir "$d/up" "$d/work" "$d/old"
mkdir -m 755 "$d/up/infiniband"
mknod -m 666 "$d/up/infiniband/uverbs0" c 231 192 || fail "mknod refused"
mount --rbind /dev "$d/old" || fail "cannot bind /dev"
mount -t overlay ibloop-dev -o "lowerdir=/dev,upperdir=$d/up,workdir=$d/work" /dev ||
    fail "cannot mount an overlay on /dev"
# the sub-mounts of the real /dev, shallowest first (as /proc lists them),
# from a snapshot taken before binding them back
subs=$(awk -v p="$d/old/" 'index($2, p) == 1 { print $2 }' /proc/self/mounts)
for mnt in $subs; do
    t=/dev/${mnt#"$d"/old/}
    [ -e "$t" ] || continue
    mount --bind "$mnt" "$t" || fail "cannot bind $mnt back on $t"
done
exec "$@"
