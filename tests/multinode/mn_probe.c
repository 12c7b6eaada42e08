/*
 * mn_probe: a raw PMIx client for the multi-node tests (tests/multinode).
 * Ranks are expected in blocks of PPN per host (--map-by ppr:PPN:node):
 * rank r is on host r / PPN.
 *
 *   mn_probe keys PPN   job keys and locality as a 2-host job must see them,
 *                       then a modex across hosts (Put/Commit/Fence with
 *                       PMIX_COLLECT_DATA/Get) and TCP connections between
 *                       every pair of ranks to the addresses exchanged in it
 *   mn_probe hang SECS PPN
 *                       fence, print "ready RANK PID NETNS", then: ranks on
 *                       the first host start a fence again (PMIx_Fence_nb:
 *                       it cannot complete once a rank of another host is
 *                       gone), print "posted RANK" once it is handed to
 *                       PMIx, wait for it (at most SECS s) and say how it
 *                       ended; the other ranks sleep (bounded)
 *
 * Every failed check prints "FAIL: rank R: ..." and makes the exit status 1;
 * success prints one "ok <what> rank R" line.
 */
#define _GNU_SOURCE 1

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pmix.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/pmix_get.h"

static void expect_uint(pmix_rank_t rank, const char *key, long want)
{
    long got = get_uint(rank, key);

    if (got != want) {
        fail("%s of rank %d = %ld, expected %ld", key,
             rank == PMIX_RANK_WILDCARD ? -1 : (int)rank, got, want);
    }
}

static pmix_status_t fence(int collect)
{
    pmix_info_t info;
    pmix_status_t rc;
    bool flag = true;

    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, collect ? &info : NULL, collect ? 1 : 0);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

static int put_str(const char *key, const char *s)
{
    pmix_value_t val;
    pmix_status_t rc;

    PMIX_VALUE_LOAD(&val, s, PMIX_STRING);
    rc = PMIx_Put(PMIX_GLOBAL, key, &val);
    PMIX_VALUE_DESTRUCT(&val);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Put(%s): %s", key, PMIx_Error_string(rc));
        return -1;
    }
    return 0;
}

/* identity of this process's network namespace: differs between the hosts */
static unsigned long netns_id(void)
{
    struct stat st;

    if (stat("/proc/self/ns/net", &st) != 0) {
        return 0;
    }
    return (unsigned long)st.st_ino;
}

/* the first non-loopback IPv4 address: the host's veth address */
static int my_ipv4(char *out, size_t len)
{
    struct ifaddrs *ifa, *i;
    int found = -1;

    if (getifaddrs(&ifa) != 0) {
        return -1;
    }
    for (i = ifa; i != NULL && found != 0; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
            (i->ifa_flags & IFF_LOOPBACK) != 0) {
            continue;
        }
        inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, out,
                  (socklen_t)len);
        found = 0;
    }
    freeifaddrs(ifa);
    return found;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* poll one fd for EV, at most MS milliseconds; 1 ready, 0 not */
static int wait_fd(int fd, short ev, int ms)
{
    struct pollfd p = {.fd = fd, .events = ev};
    int n;

    do {
        n = poll(&p, 1, ms);
    } while (n < 0 && errno == EINTR);
    return n > 0;
}

static int listen_any(int *port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t alen = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
        fail("listening socket: %s", strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

/* connect to ADDR:PORT (bounded) and send our rank */
static int connect_send(const char *addr, int port, uint32_t rank)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok = -1;
    uint32_t wire = htonl(rank);

    if (fd < 0 || inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
        goto out;
    }
    struct timeval tv = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        goto out;
    }
    if (write(fd, &wire, sizeof(wire)) == (ssize_t)sizeof(wire)) {
        ok = 0;
    }
out:
    if (ok != 0) {
        fail("connecting to %s:%d: %s", addr, port, strerror(errno));
    }
    if (fd >= 0) {
        close(fd);
    }
    return ok;
}

static int cmd_keys(long ppn)
{
    char addr[64] = "", card[128], host[256] = "", *s, *want, *hn_me;
    long n = get_uint(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    long my_host = (long)me.rank / ppn, nodeid_me;
    int port = 0, lfd;
    size_t off = 0;

    if (n < 2 || ppn < 1 || n % ppn != 0 || n / ppn < 2) {
        fail("job size %ld with %ld ranks per host is not a multi-host job", n, ppn);
        return 1;
    }
    expect_uint(PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE, n);
    expect_uint(PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, ppn);
    expect_uint(me.rank, PMIX_LOCAL_RANK, (long)me.rank % ppn);
    expect_uint(me.rank, PMIX_NODE_RANK, (long)me.rank % ppn);

    /* local peers: exactly the ranks of this host */
    want = calloc(1, (size_t)ppn * 12 + 1);
    for (long r = my_host * ppn; want != NULL && r < (my_host + 1) * ppn; r++) {
        off += (size_t)sprintf(want + off, off ? ",%ld" : "%ld", r);
    }
    s = get_str(PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS);
    if (s == NULL || want == NULL || strcmp(s, want) != 0) {
        fail("PMIX_LOCAL_PEERS = '%s', expected '%s'", s ? s : "(null)", want ? want : "");
    }
    free(s);
    free(want);

    /* host names: equal exactly for the ranks of one host.  PMIX_NODEID is
     * compared through the modex below: Open MPI 4.1 serves it only for the
     * ranks of one's own node (NOT-FOUND for the others). */
    nodeid_me = get_uint(me.rank, PMIX_NODEID);
    hn_me = get_str(me.rank, PMIX_HOSTNAME);
    gethostname(host, sizeof(host) - 1);
    if (hn_me != NULL && strcmp(hn_me, host) != 0) {
        fail("PMIX_HOSTNAME = '%s', but gethostname() = '%s'", hn_me, host);
    }
    for (long r = 0; r < n; r++) {
        int same = r / ppn == my_host;
        char *hn = get_str((pmix_rank_t)r, PMIX_HOSTNAME);

        if (hn == NULL || hn_me == NULL || (strcmp(hn, hn_me) == 0) != same) {
            fail("PMIX_HOSTNAME of rank %ld is '%s', mine '%s': expected %s", r,
                 hn ? hn : "(null)", hn_me ? hn_me : "(null)", same ? "equal" : "different");
        }
        free(hn);
        if (same) {
            long id = get_uint((pmix_rank_t)r, PMIX_NODEID);

            if (id != nodeid_me) {
                fail("PMIX_NODEID of rank %ld on my host is %ld, mine %ld", r, id, nodeid_me);
            }
        }
    }

    /* modex: every rank publishes where it listens and which namespace it
     * is in; a TCP netmod's business card is the same idea */
    if (my_ipv4(addr, sizeof(addr)) != 0) {
        fail("no non-loopback IPv4 address: not on a namespace host?");
        strcpy(addr, "0.0.0.0");
    }
    lfd = listen_any(&port);
    snprintf(card, sizeof(card), "%s:%d", addr, port);
    put_str("mn.card", card);
    snprintf(card, sizeof(card), "%lu %ld", netns_id(), nodeid_me);
    put_str("mn.where", card);
    if (PMIx_Commit() != PMIX_SUCCESS) {
        fail("PMIx_Commit failed");
    }
    pmix_status_t rc = fence(1);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Fence(collect): %s", PMIx_Error_string(rc));
        return 1;
    }

    /* read every peer's card: network namespaces and node ids equal
     * exactly within a host */
    char (*cards)[64] = calloc((size_t)n, sizeof(*cards));
    for (long r = 0; cards != NULL && r < n; r++) {
        char *c = get_str((pmix_rank_t)r, "mn.card");
        char *w = get_str((pmix_rank_t)r, "mn.where");
        int same = r / ppn == my_host;
        unsigned long ns = 0;
        long id = -1;

        if (c != NULL) {
            snprintf(cards[r], sizeof(cards[r]), "%s", c);
        }
        if (w != NULL && sscanf(w, "%lu %ld", &ns, &id) != 2) {
            fail("rank %ld's mn.where '%s' is malformed", r, w);
        } else if (w != NULL) {
            if ((ns == netns_id()) != same) {
                fail("rank %ld runs in network namespace %lu, I in %lu: expected %s", r, ns,
                     netns_id(), same ? "the same" : "another");
            }
            if ((id == nodeid_me) != same) {
                fail("rank %ld has PMIX_NODEID %ld, I %ld: expected %s", r, id, nodeid_me,
                     same ? "the same" : "another");
            }
        }
        free(c);
        free(w);
    }

    /* every rank connects to every other one at its card's address (across
     * the veth pair for the other host) and says who it is; then accepts
     * the n - 1 connections made to it */
    for (long r = 0; cards != NULL && lfd >= 0 && r < n; r++) {
        char *colon = strrchr(cards[r], ':');

        if (r == (long)me.rank) {
            continue;
        }
        if (colon == NULL) {
            fail("rank %ld's card '%s' is malformed", r, cards[r]);
            continue;
        }
        *colon = '\0';
        connect_send(cards[r], atoi(colon + 1), me.rank);
    }
    unsigned char *seen = calloc((size_t)n, 1);
    double deadline = now_s() + 20;
    for (long k = 0; seen != NULL && lfd >= 0 && k < n - 1; k++) {
        uint32_t wire = 0;
        int c;

        if (!wait_fd(lfd, POLLIN, (int)((deadline - now_s()) * 1000) + 1) ||
            (c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0) {
            fail("only %ld of %ld peers connected", k, n - 1);
            break;
        }
        if (wait_fd(c, POLLIN, 10000) && read(c, &wire, sizeof(wire)) == (ssize_t)sizeof(wire) &&
            ntohl(wire) < (uint32_t)n && ntohl(wire) != me.rank && !seen[ntohl(wire)]) {
            seen[ntohl(wire)] = 1;
        } else {
            fail("a peer's connection did not carry a new rank");
        }
        close(c);
    }
    if (lfd >= 0) {
        close(lfd);
    }
    free(seen);
    free(cards);

    /* nobody leaves before everyone has accepted its connections */
    rc = fence(0);
    if (rc != PMIX_SUCCESS) {
        fail("closing PMIx_Fence: %s", PMIx_Error_string(rc));
    }
    if (failures == 0) {
        printf("ok keys rank %u host %ld nodeid %ld hostname %s card %s:%d size %ld\n",
               (unsigned)me.rank, my_host, nodeid_me, hn_me ? hn_me : "?", addr, port, n);
    }
    free(hn_me);
    return failures ? 1 : 0;
}

static void bounded_sleep(int secs)
{
    for (int i = 0; i < secs * 10; i++) {
        usleep(100 * 1000);
    }
}

/* the host-1 fence of cmd_hang, completed on PMIx's progress thread */
static atomic_int fence_ended, fence_status;

static void fence_done(pmix_status_t status, void *cbdata)
{
    (void)cbdata;
    atomic_store(&fence_status, status);
    atomic_store(&fence_ended, 1);
}

static int cmd_hang(int secs, long ppn)
{
    pmix_status_t rc = fence(0);
    double t0;

    if (rc != PMIX_SUCCESS) {
        fail("first PMIx_Fence: %s", PMIx_Error_string(rc));
        return 1;
    }
    printf("ready %u %ld %lu\n", (unsigned)me.rank, (long)getpid(), netns_id());
    fflush(stdout);
    if ((long)me.rank >= ppn) {
        bounded_sleep(secs);
        printf("FAIL: rank %u (host 2) was not killed within %d s\n", (unsigned)me.rank, secs);
        return 1;
    }
    /* host 1: wait in the launcher for ranks that are about to die; non-
     * blocking, so that the test learns when the fence is posted and kills
     * host 2's ranks only then */
    t0 = now_s();
    rc = PMIx_Fence_nb(NULL, 0, NULL, 0, fence_done, NULL);
    if (rc == PMIX_OPERATION_SUCCEEDED) {
        atomic_store(&fence_status, PMIX_SUCCESS);
        atomic_store(&fence_ended, 1);
    } else if (rc != PMIX_SUCCESS) {
        printf("rank %u: PMIx_Fence_nb failed: %s\n", (unsigned)me.rank, PMIx_Error_string(rc));
        return 2;
    }
    printf("posted %u\n", (unsigned)me.rank);
    fflush(stdout);
    while (!atomic_load(&fence_ended) && now_s() - t0 < secs) {
        usleep(10 * 1000);
    }
    if (!atomic_load(&fence_ended)) {
        printf("rank %u: PMIx_Fence had not ended after %d s\n", (unsigned)me.rank, secs);
        return 2;
    }
    rc = atomic_load(&fence_status);
    printf("rank %u: PMIx_Fence ended after %.1f s: %s\n", (unsigned)me.rank, now_s() - t0,
           PMIx_Error_string(rc));
    fflush(stdout);
    return rc == PMIX_SUCCESS ? 3 : 2;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";
    pmix_status_t prc;
    int rc;

    setvbuf(stdout, NULL, _IOLBF, 0);
    prc = PMIx_Init(&me, NULL, 0);
    if (prc != PMIX_SUCCESS) {
        fprintf(stderr, "FAIL: PMIx_Init: %s\n", PMIx_Error_string(prc));
        return 1;
    }
    if (strcmp(cmd, "keys") == 0 && argc > 2) {
        rc = cmd_keys(atol(argv[2]));
    } else if (strcmp(cmd, "hang") == 0 && argc > 3) {
        rc = cmd_hang(atoi(argv[2]), atol(argv[3]));
    } else {
        fprintf(stderr, "usage: mn_probe keys PPN | hang SECS PPN\n");
        rc = 2;
    }
    PMIx_Finalize(NULL, 0);
    return rc;
}
