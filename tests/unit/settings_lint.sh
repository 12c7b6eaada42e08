#!/bin/sh
# What the tree's sources show about settings and layering (engine/config.h):
#  - every TERN_* variable named on its own in a string of tern's libraries
#    and programs (a getenv, a table entry) is in the settings registry,
#    that is, listed by tern_info --params; the exceptions below are not
#    user settings and say why;
#  - no component sets a TERN_* variable for itself or for another
#    component (setenv / putenv of a literal TERN_* name): a program that
#    chooses settings passes them to tern_init_ex.  The launcher sets its
#    children's environment, which is its job (launcher/ is not scanned
#    for this);
#  - engine/ includes nothing of the components above it (iofwd, iof,
#    mpi, launcher, tools) nor of any netmod.
# Runs from the top build directory (tern_info built); srcdir is the source.
set -u
srcdir=${srcdir:-.}
INFO=${TERN_INFO:-./tern_info}
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tern-settings-lint.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

# Not user settings, so not in the registry:
#   TERN_IOF_INTERNAL_FD  set by ternrun for its ranks: the fd of the job's
#                         diagnostics stream (engine/status.c, iofwd/start.c)
#   TERN_KILL_GRACE       ternrun's own option (--kill-grace), read by the
#                         launcher, which does not link libtern
#   TERN_MPICH_ABI_DIR    where ternrun --mpich-abi finds libmpich.so.12
#                         (launcher/mpich_abi.c), the same
#   TERN_MPI_APPNUM, TERN_MPI_UNIVERSE_SIZE, TERN_MPI_PARENT_PORT
#                         set by MPI_Comm_spawn(_multiple) in the environment of
#                         the programs it starts (mpi/dyn_spawn.c): the
#                         children's MPI_APPNUM, MPI_UNIVERSE_SIZE and the port
#                         MPI_Init connects to for MPI_Comm_get_parent
internal="TERN_IOF_INTERNAL_FD TERN_KILL_GRACE TERN_MPICH_ABI_DIR TERN_MPI_APPNUM
TERN_MPI_UNIVERSE_SIZE TERN_MPI_PARENT_PORT"

"$INFO" --params >"$tmp/params" || fail "$INFO --params failed"
awk '$1 ~ /^TERN_/ { print $1 }' "$tmp/params" | sort -u >"$tmp/listed"
[ -s "$tmp/listed" ] || fail "tern_info --params lists no TERN_ setting"
for v in $internal; do echo "$v"; done >>"$tmp/listed"
sort -u -o "$tmp/listed" "$tmp/listed"

dirs=
for d in engine netmods mpi iofwd launcher pmix tools; do
    [ -d "$srcdir/$d" ] && dirs="$dirs $srcdir/$d"
done
# shellcheck disable=SC2086
find $dirs -name '*.[ch]' >"$tmp/files"
[ -s "$tmp/files" ] || fail "no C sources under$dirs"

# 1. named variables: each in the registry (or an internal one above)
xargs grep -HnoE '"TERN_[A-Z0-9_]+"' <"$tmp/files" | sed 's/"//g' >"$tmp/named"
[ -s "$tmp/named" ] || fail "no TERN_* variable named in the sources"
awk -F: 'NR == FNR { ok[$1] = 1; next } !($3 in ok) { print $1 ":" $2 ": " $3 }' \
    "$tmp/listed" "$tmp/named" >"$tmp/unlisted"
if [ -s "$tmp/unlisted" ]; then
    echo "FAIL: variables read by the code that tern_info does not list (not in the settings registry):" >&2
    sed 's/^/  /' "$tmp/unlisted" >&2
    exit 1
fi
echo "$(awk -F: '{ print $3 }' "$tmp/named" | sort -u | wc -l) variables named in the sources, all in the registry or internal"

# 2. no setenv / putenv of a TERN_* variable outside the launcher
grep -v "^$srcdir/launcher/" "$tmp/files" | xargs grep -HnE '(setenv|putenv)[[:space:]]*\([[:space:]]*"TERN_' \
    >"$tmp/setenv" 2>/dev/null
if [ -s "$tmp/setenv" ]; then
    echo "FAIL: a component sets a TERN_* variable (pass it to tern_init_ex instead):" >&2
    sed 's/^/  /' "$tmp/setenv" >&2
    exit 1
fi
echo "no component sets a TERN_* variable"

# 3. engine/ includes nothing of the layers above it or of a netmod
find "$srcdir/engine" -name '*.[ch]' | xargs grep -HnE \
    '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(iofwd|iof|mpi|launcher|tools|netmods)/' \
    >"$tmp/includes"
if [ -s "$tmp/includes" ]; then
    echo "FAIL: engine/ includes headers of the components above it or of a netmod:" >&2
    sed 's/^/  /' "$tmp/includes" >&2
    exit 1
fi
echo "engine/ includes nothing of iofwd, iof, mpi, launcher, tools or a netmod"
