# netmods/tcp — TCP over engine/sock (epoll).  On by default wherever
# epoll exists; --disable-tcp leaves it out.
AC_ARG_ENABLE([tcp],
    [AS_HELP_STRING([--disable-tcp], [do not build the tcp netmod])],
    [], [enable_tcp=check])
tern_tcp_ok=no
AS_IF([test "x$enable_tcp" != xno], [
    AC_CHECK_HEADERS([sys/epoll.h sys/eventfd.h ifaddrs.h], [tern_tcp_ok=yes], [tern_tcp_ok=no; break])])
AS_IF([test "x$enable_tcp" = xyes && test "x$tern_tcp_ok" != xyes],
    [AC_MSG_ERROR([--enable-tcp: epoll, eventfd or getifaddrs missing])])
AS_IF([test "x$tern_tcp_ok" = xyes], [
    TERN_NETMODS="$TERN_NETMODS tcp"
    AC_DEFINE([TERN_HAVE_NETMOD_TCP], [1], [tcp netmod built])])
AM_CONDITIONAL([TERN_NETMOD_TCP], [test "x$tern_tcp_ok" = xyes])
