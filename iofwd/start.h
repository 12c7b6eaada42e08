/* Finding or starting the node's iofwd daemon (start.c). */
#ifndef TERN_IOFWD_START_H
#define TERN_IOFWD_START_H

#include <stdbool.h>
#include <sys/types.h>

#include "iofwd/iofwd_internal.h"
#include <tern/core.h>

typedef struct tern_iofwd_daemon {
    char dir[256];
    char port[TERN_PORT_NAME_MAX];
    pid_t pid;
    bool started;  /* this process started it (and reaps it) */
    int lock;      /* the rendezvous lock, held until the CONNECT is answered */
} tern_iofwd_daemon_t;

/* Fill d with the running daemon or one started now (env: NAME=value
 * settings for it, NULL-terminated).  On success the lock is held: release
 * it with tern_iofwd_unlock once connected. */
tern_status_t tern_iofwd_attach(const tern_iofwd_config_t *cfg, char *const env[],
                                tern_iofwd_daemon_t *d);
void tern_iofwd_unlock(tern_iofwd_daemon_t *d);

#endif
