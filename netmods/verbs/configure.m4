# netmods/verbs — RDMA verbs (rdma-core's libibverbs: InfiniBand, RoCE).
# Auto-detected with pkg-config libibverbs; --with-verbs insists on it,
# --without-verbs leaves it out.  The netmod links the real -libverbs; its
# tests run it against tests/ibloop, a loopback libibverbs.so.1 with the
# same ABI (no HCA is needed to build or test).
AC_ARG_WITH([verbs],
    [AS_HELP_STRING([--with-verbs], [build the RDMA verbs netmod (default: when libibverbs is found)])],
    [], [with_verbs=check])
tern_verbs_ok=no
AS_IF([test "x$with_verbs" != xno], [
    PKG_CHECK_MODULES([VERBS], [libibverbs], [tern_verbs_ok=yes], [tern_verbs_ok=no])
    AS_IF([test "x$tern_verbs_ok" = xyes], [
        tern_save_CPPFLAGS=$CPPFLAGS
        CPPFLAGS="$CPPFLAGS $VERBS_CFLAGS"
        AC_CHECK_HEADER([infiniband/verbs.h], [], [tern_verbs_ok=no])
        CPPFLAGS=$tern_save_CPPFLAGS])])
AS_IF([test "x$with_verbs" = xyes && test "x$tern_verbs_ok" != xyes],
    [AC_MSG_ERROR([--with-verbs: libibverbs not found by pkg-config (Debian: apt-get install libibverbs-dev)])])
AS_IF([test "x$tern_verbs_ok" = xyes], [
    TERN_NETMODS="$TERN_NETMODS verbs"
    TERN_PC_LIBS="$TERN_PC_LIBS $VERBS_LIBS"
    AC_DEFINE([TERN_HAVE_NETMOD_VERBS], [1], [verbs netmod built])])
AM_CONDITIONAL([TERN_NETMOD_VERBS], [test "x$tern_verbs_ok" = xyes])
