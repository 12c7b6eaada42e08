# netmods/dpdk — Ethernet through DPDK (Debian libdpdk-dev 22.11).
# Auto-detected with pkg-config libdpdk; --with-dpdk insists on it,
# --without-dpdk leaves it out.  DPDK's headers want its own flags
# (-march, -include rte_config.h): the netmod is a convenience library
# built with them (netmods/dpdk/Makefile.inc), its include paths as
# -isystem so tern's warnings stay on tern's code.
AC_ARG_WITH([dpdk],
    [AS_HELP_STRING([--with-dpdk], [build the DPDK netmod (default: when libdpdk >= 22.11 is found)])],
    [], [with_dpdk=check])
tern_dpdk_ok=no
AS_IF([test "x$with_dpdk" != xno], [
    PKG_CHECK_MODULES([DPDK], [libdpdk >= 22.11], [tern_dpdk_ok=yes], [tern_dpdk_ok=no])
    AS_IF([test "x$tern_dpdk_ok" = xyes], [
        DPDK_CFLAGS=`echo " $DPDK_CFLAGS" | sed 's/ -I/ -isystem /g'`
        tern_save_CFLAGS=$CFLAGS
        CFLAGS="$CFLAGS $DPDK_CFLAGS -DALLOW_EXPERIMENTAL_API"
        AC_MSG_CHECKING([whether DPDK's ethdev and mbuf headers compile])
        AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <rte_ethdev.h>
#include <rte_mbuf.h>]], [[return rte_eth_dev_count_avail() + (int)RTE_ETH_TX_OFFLOAD_MULTI_SEGS;]])],
            [AC_MSG_RESULT([yes])], [AC_MSG_RESULT([no]); tern_dpdk_ok=no])
        CFLAGS=$tern_save_CFLAGS])])
AS_IF([test "x$with_dpdk" = xyes && test "x$tern_dpdk_ok" != xyes],
    [AC_MSG_ERROR([--with-dpdk: libdpdk >= 22.11 not found by pkg-config or its headers do not compile (Debian: apt-get install libdpdk-dev)])])
AS_IF([test "x$tern_dpdk_ok" = xyes], [
    TERN_NETMODS="$TERN_NETMODS dpdk"
    TERN_PC_LIBS="$TERN_PC_LIBS $DPDK_LIBS"
    AC_DEFINE([TERN_HAVE_NETMOD_DPDK], [1], [dpdk netmod built])])
AM_CONDITIONAL([TERN_NETMOD_DPDK], [test "x$tern_dpdk_ok" = xyes])
