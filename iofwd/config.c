/*
 * iofwd settings (TERN_IOFWD_*) and the rendezvous directory both sides use.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/log.h"
#include "iofwd/iofwd_internal.h"
#include <tern/core.h>

#define T tern_iofwd_config_t
static const tern_config_entry_t entries[] = {
    TERN_CFG_ENTRY_STRING("TERN_IOFWD", T, daemon, "tern-iofwd", NULL,
                          "the iofwd daemon tern_io_init starts (a path, or a name on PATH)"),
    TERN_CFG_ENTRY_UINT("TERN_IOFWD_STAGING", T, staging, 4u << 20, 4096, 1u << 30,
                        "bytes of one staging buffer of the daemon (a write moves in pieces "
                        "of this size)"),
    TERN_CFG_ENTRY_UINT("TERN_IOFWD_BUFFERS", T, buffers, 16, 1, 4096,
                        "staging buffers in the daemon's pool (pulls in flight)"),
    TERN_CFG_ENTRY_UINT("TERN_IOFWD_WRITERS", T, writers, 2, 1, 16,
                        "the daemon's writer threads (a rank's writes all go through one)"),
    TERN_CFG_ENTRY_UINT("TERN_IOFWD_LINGER_MS", T, linger_ms, 500, 0, 3600000,
                        "the daemon exits after this long without clients"),
    TERN_CFG_ENTRY_UINT("TERN_IOFWD_START_MS", T, start_ms, 10000, 100, 600000,
                        "how long tern_io_init waits for a daemon it started to open its port"),
    TERN_CFG_ENTRY_UINT("TERN_IOFWD_REPORT", T, report, 0, 0, 1,
                        "1: the daemon says on exit how many bytes it pulled and wrote"),
    TERN_CFG_ENTRY_UINT("TERN_IOFWD_FAULT_STALL", T, fault_stall, 0, 0, 1,
                        "test hook: 1 stops the daemon's writer at its first piece (writes are "
                        "held, never written)"),
};
#undef T

static const tern_config_table_t iofwd_config_table = {
    .owner = "iofwd",
    .entries = entries,
    .num_entries = sizeof(entries) / sizeof(entries[0]),
    .struct_size = sizeof(tern_iofwd_config_t),
};
/* in the registry: tern_init refuses a bad TERN_IOFWD_* at once, and
 * tern_info lists them */
TERN_CONFIG_REGISTER(iofwd_config_table)

tern_status_t tern_iofwd_config_load(tern_iofwd_config_t *cfg)
{
    return tern_config_load_table(&iofwd_config_table, cfg, NULL);
}

tern_status_t tern_iofwd_dir(char *dir, size_t cap)
{
    const char *rt = getenv("XDG_RUNTIME_DIR");
    int n = rt != NULL && rt[0] == '/' ? snprintf(dir, cap, "%s/tern-iofwd", rt)
                                       : snprintf(dir, cap, "/tmp/tern-iofwd-%u", (unsigned)geteuid());
    if (n < 0 || (size_t)n >= cap)
        return tern_error(TERN_ERR_INVALID_PARAM, "iofwd: rendezvous directory name too long");
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return tern_error(TERN_ERR_IO, "iofwd: mkdir %s: %s", dir, strerror(errno));
    struct stat st;
    if (lstat(dir, &st) != 0)
        return tern_error(TERN_ERR_IO, "iofwd: %s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "iofwd: %s is not a directory of uid %u that "
                          "only it may enter (mode %o, owner %u): remove it", dir,
                          (unsigned)geteuid(), (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
    return TERN_OK;
}

tern_status_t tern_iofwd_read_port(const char *dir, pid_t *pid, char *port, size_t cap)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/port", dir);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return TERN_ERR_NOT_FOUND;
    char line[TERN_PORT_NAME_MAX + 32];
    long p = 0;
    int ok = fgets(line, sizeof(line), f) != NULL;
    fclose(f);
    char *sp = ok ? strchr(line, ' ') : NULL;
    if (sp == NULL || (p = strtol(line, NULL, 10)) <= 0)
        return TERN_ERR_NOT_FOUND;
    sp++;
    sp[strcspn(sp, "\n")] = '\0';
    if (strlen(sp) >= cap || sp[0] == '\0')
        return TERN_ERR_NOT_FOUND;
    strcpy(port, sp);
    *pid = (pid_t)p;
    return TERN_OK;
}
