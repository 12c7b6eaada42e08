/*
 * iofwd internals shared by the client (client.c, start.c) and the daemon
 * (daemon*.c): settings and the rendezvous directory.
 */
#ifndef TERN_IOFWD_INTERNAL_H
#define TERN_IOFWD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine/config.h"
#include <tern/status.h>

/* TERN_IOFWD_* (tern_info lists them) */
typedef struct tern_iofwd_config {
    char daemon[TERN_CFG_STR_MAX]; /* TERN_IOFWD: the daemon's program */
    uint64_t staging;              /* bytes of one staging buffer */
    uint64_t buffers;              /* staging buffers in the pool */
    uint64_t writers;              /* writer threads */
    uint64_t linger_ms;            /* idle time without clients before exiting */
    uint64_t start_ms;             /* a starter's limit for the daemon's port */
    uint64_t report;               /* the daemon reports its totals on exit */
    uint64_t fault_stall;          /* test hook: the writer stops at its first piece */
} tern_iofwd_config_t;

/* cfg from TERN_IOFWD_* (the table is in tern's settings registry:
 * tern_init refuses a bad value, tern_info lists them) */
tern_status_t tern_iofwd_config_load(tern_iofwd_config_t *cfg);

/* The rendezvous directory, $XDG_RUNTIME_DIR/tern-iofwd or
 * /tmp/tern-iofwd-<uid>: created 0700, refused (TERN_ERR_INVALID_PARAM,
 * naming why) unless it is a directory of this user that nobody else may
 * enter.  Holds `lock` (flock: one starter at a time) and `port` ("<pid>
 * <port name>\n", written by the daemon, renamed into place). */
tern_status_t tern_iofwd_dir(char *dir, size_t cap);

/* The port file's content: *pid and port[TERN_PORT_NAME_MAX]; TERN_ERR_NOT_FOUND
 * when there is none or it is malformed. */
tern_status_t tern_iofwd_read_port(const char *dir, pid_t *pid, char *port, size_t cap);

#endif
