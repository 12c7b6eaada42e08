# netmods/shm — shared memory netmod.  Always built: it needs only POSIX shm,
# C11 atomics and futex, and is the intra-node path of every job.
AC_MSG_CHECKING([for the shm netmod prerequisites])
AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <sys/mman.h>
#include <stdatomic.h>
#include <linux/futex.h>
#include <sys/syscall.h>]],
    [[atomic_uint x = 0; (void)atomic_load(&x); return shm_open("/x", 0, 0) + SYS_futex + SYS_pidfd_open;]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_ERROR([the shm netmod needs shm_open, C11 atomics, futex and pidfd_open])])
TERN_NETMODS="$TERN_NETMODS shm"
AC_DEFINE([TERN_HAVE_NETMOD_SHM], [1], [shm netmod built])
