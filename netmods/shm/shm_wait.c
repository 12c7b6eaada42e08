/*
 * shm's event source for block mode: each rank binds an abstract AF_UNIX
 * datagram socket named after the job's namespace and its rank; a sender
 * that finds its peer asleep sends it one byte, which makes the socket the
 * engine sleeps on (engine/wait.c) readable.  Abstract names need no file
 * and vanish with the process, even a killed one.
 *
 * The Dekker pair, with the index of the doorbell cache line in the segment:
 *   waiter (arm):  store(sleeping, 1) [seq_cst] -- then the engine re-polls
 *   sender (ring): publish the unit [R1 release]; fence [seq_cst];
 *                  load(sleeping): if 1, send a byte
 * Either the re-poll sees the unit or the sender sees the flag; the socket
 * stays readable until disarm drains it, so a byte sent before epoll_wait
 * still wakes it.  A ring that cannot be delivered (the peer is gone, or its
 * socket is full, which means it is already being woken) costs nothing; the
 * engine's sleep is bounded by TERN_HEALTH_MS anyway.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "netmods/shm/shm_internal.h"

void tern_shm_wake_addr(tern_shm_t *s, int rank, tern_shm_wake_addr_t *a)
{
    /* FNV-1a of the namespace: names of any length fit, jobs stay apart */
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *p = tern_ctx_job(s->ctx); *p; p++)
        h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
    int n = snprintf(a->name + 1, sizeof(a->name) - 1, "tern.%016llx.%d.%d",
                     (unsigned long long)h, rank, s->widx);
    a->name[0] = '\0'; /* abstract namespace */
    a->len = (unsigned)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static void to_sockaddr(const tern_shm_wake_addr_t *a, struct sockaddr_un *sa)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    memcpy(sa->sun_path, a->name, a->len - offsetof(struct sockaddr_un, sun_path));
}

tern_status_t tern_shm_wake_open(tern_shm_t *s)
{
    s->wake_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->wake_fd < 0)
        return tern_error(TERN_ERR_IO, "shm wake-up socket: %s", strerror(errno));
    tern_shm_wake_addr_t me;
    struct sockaddr_un sa;
    tern_shm_wake_addr(s, s->ctx->rank, &me);
    to_sockaddr(&me, &sa);
    if (bind(s->wake_fd, (struct sockaddr *)&sa, me.len) != 0) {
        int err = errno;
        close(s->wake_fd);
        s->wake_fd = -1;
        return tern_error(TERN_ERR_IO, "shm wake-up socket @%s of rank %d: bind: %s",
                          me.name + 1, s->ctx->rank, strerror(err));
    }
    return TERN_OK;
}

void tern_shm_wake_close(tern_shm_t *s)
{
    if (s->wake_fd >= 0)
        close(s->wake_fd);
    s->wake_fd = -1;
}

void tern_shm_ring_doorbell(tern_shm_t *s, tern_shm_vc_t *v)
{
    /* The unit is published (R1 in push); this fence orders it before the
     * read of `sleeping` (the Dekker pair above). */
    atomic_thread_fence(memory_order_seq_cst);
    if (!atomic_load_explicit(&v->peer_doorbell->sleeping, memory_order_relaxed))
        return;
    atomic_fetch_add_explicit(&v->peer_doorbell->seq, 1, memory_order_relaxed); /* rings */
    struct sockaddr_un sa;
    to_sockaddr(&v->peer_wake, &sa);
    ssize_t rc = sendto(s->wake_fd, "", 1, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa,
                        v->peer_wake.len);
    (void)rc;
}

int tern_shm_wait_fd(void *state)
{
    tern_shm_t *s = state;
    return s->wake_fd;
}

bool tern_shm_arm(void *state)
{
    tern_shm_t *s = state;
    if (s->my_doorbell != NULL)
        atomic_store_explicit(&s->my_doorbell->sleeping, 1, memory_order_seq_cst);
    return true;
}

void tern_shm_disarm(void *state)
{
    tern_shm_t *s = state;
    if (s->my_doorbell != NULL)
        atomic_store_explicit(&s->my_doorbell->sleeping, 0, memory_order_relaxed);
    char buf[64];
    while (s->wake_fd >= 0 && recv(s->wake_fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
        ;
}
