# Sourced by the comparison scripts that print a host line (dpdk_compare.sh,
# tcp/compare_tcp.sh, verbs_compare.sh): the part every one of them starts
# with; each adds its own libraries and devices.
# shellcheck shell=bash

# bench_host_cpu: "MODEL, N CPUs, L2 SIZE, L3 SIZE; kernel RELEASE"
bench_host_cpu() {
    local cpu l2 l3
    cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
    l2=$(lscpu 2>/dev/null | awk -F': *' '/^L2 cache/ { print $2 }')
    l3=$(lscpu 2>/dev/null | awk -F': *' '/^L3 cache/ { print $2 }')
    echo "$cpu, $(nproc) CPUs, L2 ${l2:-?}, L3 ${l3:-?}; kernel $(uname -r)"
}

# pkg_version PACKAGE: its installed Debian version, or ?
pkg_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo '?'; }
