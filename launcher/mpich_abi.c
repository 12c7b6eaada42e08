/*
 * ternrun --mpich-abi (issue 24; docs/mpi.md, "Running MPICH-built
 * programs"): run programs linked by MPICH's mpicc on tern's MPI layer by
 * putting the directory of tern's libmpich.so.12 / libmpi.so.12 first on
 * the ranks' LD_LIBRARY_PATH.  The program is not touched: its
 * DT_NEEDED libmpich.so.12 is found there before the system's MPICH.
 *
 * Which directory, first that applies:
 *   1. $TERN_MPICH_ABI_DIR (a relocated install; it must hold the library)
 *   2. mpich-abi/ beside ternrun's own executable, when it holds
 *      libmpich.so.12: ternrun run from the build tree, uninstalled, whose
 *      mpich-abi/ the build makes (mpi/mpich-abi/Makefile.inc); an
 *      installed ternrun's bindir has none
 *   3. the configured install directory, $(pkglibdir)/mpich-abi
 * It is resolved once, when the options are parsed, so a missing library is
 * a usage error before any rank starts, naming where ternrun looked.
 */
#include "launcher/job.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TERN_MPICH_ABI_INSTALLDIR
#error "TERN_MPICH_ABI_INSTALLDIR (the configured $(pkglibdir)/mpich-abi) must be defined"
#endif

#define ABI_LIB "libmpich.so.12"

/* dir as an absolute path (the ranks may run in another working directory)
 * if it holds libmpich.so.12; NULL otherwise, with *why set */
static char *abi_dir_check(const char *dir, const char **why)
{
    char lib[PATH_MAX];
    char *abs;

    if (snprintf(lib, sizeof(lib), "%s/" ABI_LIB, dir) >= (int)sizeof(lib)) {
        *why = "path too long";
        return NULL;
    }
    if (access(lib, R_OK) != 0) {
        *why = strerror(errno);
        return NULL;
    }
    abs = realpath(dir, NULL);
    if (abs == NULL) {
        *why = strerror(errno);
    }
    return abs;
}

/* mpich-abi/ beside /proc/self/exe, or NULL */
static char *abi_dir_beside_exe(void)
{
    char exe[PATH_MAX], dir[PATH_MAX + 16];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    const char *why;
    char *slash;

    if (n <= 0) {
        return NULL;
    }
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if (slash == NULL) {
        return NULL;
    }
    *slash = '\0';
    snprintf(dir, sizeof(dir), "%s/mpich-abi", exe);
    return abi_dir_check(dir, &why);
}

int ternrun_mpich_abi_resolve(struct ternrun_options *opt)
{
    const char *env = getenv("TERN_MPICH_ABI_DIR");
    const char *why = NULL;

    if (env != NULL && *env != '\0') {
        opt->mpich_abi_dir = abi_dir_check(env, &why);
        if (opt->mpich_abi_dir == NULL) {
            ternrun_err("--mpich-abi: TERN_MPICH_ABI_DIR=%s holds no readable %s (%s)", env,
                        ABI_LIB, why);
            return -1;
        }
    } else if ((opt->mpich_abi_dir = abi_dir_beside_exe()) != NULL) {
        ternrun_vlog(1, "--mpich-abi: the build tree's %s (ternrun is uninstalled)",
                     opt->mpich_abi_dir);
    } else {
        opt->mpich_abi_dir = abi_dir_check(TERN_MPICH_ABI_INSTALLDIR, &why);
        if (opt->mpich_abi_dir == NULL) {
            ternrun_err("--mpich-abi: no readable %s in %s (%s): is tern's MPI layer "
                        "installed? Set TERN_MPICH_ABI_DIR to the directory holding it",
                        ABI_LIB, TERN_MPICH_ABI_INSTALLDIR, why);
            return -1;
        }
    }
    ternrun_vlog(1, "--mpich-abi: %s first on the ranks' LD_LIBRARY_PATH", opt->mpich_abi_dir);
    return 0;
}

int ternrun_mpich_abi_env(const struct ternrun_options *opt, char ***envp)
{
    const char *old = ternrun_env_get(*envp, "LD_LIBRARY_PATH");
    size_t len;
    char *path;
    int rc;

    if (opt->mpich_abi_dir == NULL) {
        return 0;
    }
    /* no empty element: in LD_LIBRARY_PATH it would mean the working
     * directory */
    len = strlen(opt->mpich_abi_dir) + (old != NULL ? strlen(old) : 0) + 2;
    path = malloc(len);
    if (path == NULL) {
        return -1;
    }
    if (old != NULL && *old != '\0') {
        snprintf(path, len, "%s:%s", opt->mpich_abi_dir, old);
    } else {
        snprintf(path, len, "%s", opt->mpich_abi_dir);
    }
    rc = ternrun_env_set(envp, "LD_LIBRARY_PATH", path);
    free(path);
    return rc;
}
