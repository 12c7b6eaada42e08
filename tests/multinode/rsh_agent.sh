#!/bin/sh
# rsh agent for the multi-node tests: Open MPI's plm_rsh (and anything else
# that speaks ssh's command line) calls it as
#
#     rsh_agent.sh [ssh-style options] [user@]HOST command words...
#
# and it runs the command words, joined by spaces and interpreted by sh as
# ssh's remote shell would, inside the network namespace that plays HOST,
# with HOST's hostname.
#
# tests/multinode/lib.sh copies this file into the run's temporary directory
# next to hosts.map, which has one line per name a host answers to:
#
#     NAME  NAMESPACE  TMPDIR
#
# (NAME: the host's address or its name, which is its namespace's name).  TMPDIR is that host's own
# temporary directory, so the "hosts" do not share Open MPI session
# directories even though they share the file system.
map=$(dirname "$0")/hosts.map

# Skip ssh-style options.  Those ssh documents with a value take the next
# word unless the value is attached (-p22); all others are flags.
while [ $# -gt 0 ]; do
    case $1 in
    --) shift; break ;;
    -[BbcDEeFIiJLlmOoPpQRSWw]) shift; [ $# -gt 0 ] && shift ;;
    -*) shift ;;
    *) break ;;
    esac
done
if [ $# -lt 2 ]; then
    echo "rsh_agent: usage: $0 [options] HOST COMMAND..." >&2
    exit 255
fi
host=${1#*@}
shift

line=$(awk -v h="$host" '$1 == h { print $2, $3; exit }' "$map" 2>/dev/null)
ns=${line%% *}
tmp=${line#* }
if [ -z "$line" ] || [ -z "$ns" ]; then
    echo "rsh_agent: unknown host '$host' (not in $map)" >&2
    exit 255
fi
mkdir -p "$tmp" || exit 255
# a UTS namespace of its own, named like the network namespace: the host's
# hostname (sh -c "$0" is the command as ssh's remote shell would run it)
exec ip netns exec "$ns" unshare --uts env TMPDIR="$tmp" MN_HOSTNAME="$ns" \
    sh -c 'hostname "$MN_HOSTNAME" && unset MN_HOSTNAME && exec sh -c "$0"' "$*"
