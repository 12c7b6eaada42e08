# ofi — tern's libfabric provider, libtern-fi.so (docs/libfabric.md).
# Built when pkg-config finds libfabric whose headers have what the
# provider fills in (the 1.17 ops tables and <rdma/providers/fi_prov.h>):
# --with-libfabric=auto (the default) builds it then, =yes insists on it,
# =no leaves it out.
AC_ARG_WITH([libfabric],
    [AS_HELP_STRING([--with-libfabric@<:@=yes|no|auto@:>@],
        [build the libfabric provider libtern-fi.so (default: auto, when pkg-config finds libfabric)])],
    [], [with_libfabric=auto])
AS_CASE([$with_libfabric], [yes|no|auto], [],
    [AC_MSG_ERROR([--with-libfabric=$with_libfabric: want yes, no or auto])])
tern_ofi_ok=no
AS_IF([test "x$with_libfabric" != xno], [
    PKG_CHECK_MODULES([LIBFABRIC], [libfabric >= 1.5], [tern_ofi_ok=yes], [tern_ofi_ok=no])
    AS_IF([test "x$tern_ofi_ok" = xyes], [
        tern_save_CPPFLAGS=$CPPFLAGS
        CPPFLAGS="$CPPFLAGS $LIBFABRIC_CFLAGS"
        AC_MSG_CHECKING([whether libfabric's provider headers have what libtern-fi fills in])
        AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <rdma/fabric.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/providers/fi_prov.h>
#include <rdma/providers/fi_log.h>]], [[struct fi_ops_fabric f = {.domain2 = 0};
struct fi_ops_domain d = {.endpoint2 = 0};
struct fi_ops_collective c = {.barrier2 = 0};
struct fi_provider p = {.fi_version = FI_VERSION(1, 5)};
return (int)(f.size + d.size + c.size + p.version);]])],
            [AC_MSG_RESULT([yes])],
            [AC_MSG_RESULT([no]); tern_ofi_ok=no])
        CPPFLAGS=$tern_save_CPPFLAGS])])
AS_IF([test "x$with_libfabric" = xyes && test "x$tern_ofi_ok" != xyes],
    [AC_MSG_ERROR([--with-libfabric=yes: libfabric not found by pkg-config, or its headers lack <rdma/providers/fi_prov.h> or the 1.17 ops tables (Debian: apt-get install libfabric-dev)])])
AM_CONDITIONAL([TERN_OFI], [test "x$tern_ofi_ok" = xyes])
# the tests drive Debian's libfabric-bin tools when they are there
AC_PATH_PROGS([FI_INFO], [fi_info], [])
AC_PATH_PROGS([FI_PINGPONG], [fi_pingpong], [])
