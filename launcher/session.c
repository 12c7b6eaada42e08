/*
 * Session files: the private temp directory that holds the PMIx rendezvous
 * socket, and the /dev/shm segments the tern library of each rank may leave
 * behind when it dies before cleaning up.
 */
#include "launcher/job.h"

#include <errno.h>
#include <ftw.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define SESSION_LEAF "/ternrun.XXXXXX"
#define SHORT_BASE "/tmp"
/* Room kept for the name of a Unix socket PMIx may create in the directory
 * (e.g. "pmix.<hostname>.tool.<pid>" rendezvous points), plus the NUL.  The
 * Debian 4.2 build serves clients over loopback TCP and keeps only its
 * dstore segments here, but other builds and tool support use sockets. */
#define SOCKET_NAME_RESERVE 40

static size_t sun_path_max(void)
{
    struct sockaddr_un sa;

    return sizeof(sa.sun_path);
}

static bool fits_sun_path(const struct ternrun_job *job, const char *base)
{
    size_t len = strlen(base) + strlen(SESSION_LEAF) + 1 + strlen(job->hostname) +
                 SOCKET_NAME_RESERVE;

    return len <= sun_path_max();
}

static char *make_dir(const char *base)
{
    size_t len = strlen(base) + strlen(SESSION_LEAF) + 1;
    char *tmpl = malloc(len);

    if (tmpl == NULL) {
        return NULL;
    }
    snprintf(tmpl, len, "%s%s", base, SESSION_LEAF);
    if (mkdtemp(tmpl) == NULL) {
        int e = errno;
        free(tmpl);
        errno = e;
        return NULL;
    }
    return tmpl;
}

int ternrun_session_create(struct ternrun_job *job)
{
    const char *env_tmp = getenv("TMPDIR");
    const char *base = job->opt.tmpdir;
    const char *what = "--tmpdir";

    if (base == NULL && env_tmp != NULL && *env_tmp != '\0') {
        base = env_tmp;
        what = "TMPDIR";
    }
    if (base == NULL) {
        base = SHORT_BASE;
        what = NULL;
    }

    if (!fits_sun_path(job, base)) {
        ternrun_vlog(1, "%s '%s' is too long for a Unix socket path (%zu bytes max), "
                     "using a directory under " SHORT_BASE " instead", what ? what : "tmpdir",
                     base, sun_path_max());
        base = SHORT_BASE;
        what = NULL;
    }

    job->session_dir = make_dir(base);
    if (job->session_dir == NULL && what != NULL) {
        if (job->opt.tmpdir != NULL) {
            ternrun_err("cannot create a directory in --tmpdir '%s': %s", base, strerror(errno));
            return -1;
        }
        ternrun_warn("cannot create a directory in TMPDIR '%s' (%s), using " SHORT_BASE,
                     base, strerror(errno));
        base = SHORT_BASE;
        job->session_dir = make_dir(base);
    }
    if (job->session_dir == NULL) {
        ternrun_err("cannot create a directory in '%s': %s", base, strerror(errno));
        return -1;
    }
    ternrun_vlog(1, "session directory %s", job->session_dir);
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if ((type == FTW_DP ? rmdir(path) : unlink(path)) != 0 && errno != ENOENT) {
        ternrun_vlog(1, "cannot remove %s: %s", path, strerror(errno));
    }
    return 0; /* keep going: remove as much as we can */
}

void ternrun_session_remove(struct ternrun_job *job)
{
    if (job->session_dir == NULL) {
        return;
    }
    /* only ever the directory mkdtemp made for us, never the user's base */
    if (nftw(job->session_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT) {
        ternrun_warn("cannot remove session directory %s: %s", job->session_dir,
                     strerror(errno));
    }
    free(job->session_dir);
    job->session_dir = NULL;
}

int ternrun_shm_cleanup(const char *nspace)
{
    char pattern[PATH_MAX];
    glob_t g;
    int removed = 0;
    int rc;

    if (nspace[0] == '\0') {
        return 0;
    }
    /* the namespace holds only [A-Za-z0-9._-]: no glob metacharacters */
    snprintf(pattern, sizeof(pattern), "/dev/shm/tern-%s-*", nspace);
    rc = glob(pattern, GLOB_NOSORT, NULL, &g);
    if (rc == GLOB_NOMATCH) {
        return 0;
    }
    if (rc != 0) {
        ternrun_warn("cannot list %s", pattern);
        return -1;
    }
    for (size_t i = 0; i < g.gl_pathc; i++) {
        if (unlink(g.gl_pathv[i]) == 0) {
            removed++;
            ternrun_vlog(1, "removed leftover %s", g.gl_pathv[i]);
        } else if (errno != ENOENT) {
            ternrun_warn("cannot remove %s: %s", g.gl_pathv[i], strerror(errno));
        }
    }
    globfree(&g);
    return removed;
}
