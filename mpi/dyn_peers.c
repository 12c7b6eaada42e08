/*
 * Processes of other jobs (docs/mpi.md, "Dynamic processes"): who a
 * process is, and how this one reaches it.
 *
 * Every process names every process alike by (job, rank): job a 64-bit
 * FNV-1a of the job's name (tern_job_name), rank its rank there.  A rank
 * of this job is the tern peer id of that rank.  A process of another job
 * becomes a peer through tern's ports: one side connects to the port name
 * the other gave (tern_port_connect) and says who it is in a hello; the
 * other side, whose port is open, sees the connection as a new peer and
 * learns from the hello who it is.  Both then keep the pair in a table,
 * and the next communicator with that process uses the same peer: one
 * connection per pair (a second one would show the netmod two VCs of one
 * (job, rank)).  Which pairs need a connection both sides know alike: a
 * pair is in the tables of both ends or of neither once a creation ended.
 *
 * Port peers are reached from worker 0 only (core.h): a communicator with
 * a process of another job goes through worker 0 on every member
 * (comm_ctx.c), and so does the layer's own dynamic traffic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tern/tagged.h>

#include "mpi/dyn.h"

typedef struct known {
    uint64_t job;
    int rank, peer;
} known_t;

typedef struct hello {
    uint32_t magic, zero;
    uint64_t job;
    int32_t rank, zero2;
} hello_t;

static known_t *known;
static int nknown, capknown;
static char self_port[TERN_PORT_NAME_MAX];
static bool port_opened;
static uint64_t job_key;
/* MPI_THREAD_MULTIPLE: the table and this process's port */
static pthread_mutex_t dyn_lock = PTHREAD_MUTEX_INITIALIZER;

uint64_t mpi_dyn_job(void)
{
    if (job_key == 0) {
        const char *name = tern_job_name(mpi.ctx);
        uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, 64 bits */
        for (const char *p = name != NULL ? name : ""; *p != '\0'; p++)
            h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
        job_key = h != 0 ? h : 1;
    }
    return job_key;
}

void mpi_ident_self(mpi_ident_t *id)
{
    *id = (mpi_ident_t){.job = mpi_dyn_job(), .rank = tern_rank(mpi.ctx)};
}

int mpi_ident_peer(const mpi_ident_t *id)
{
    if (id->job == mpi_dyn_job())
        return id->rank >= 0 && id->rank < tern_size(mpi.ctx) ? id->rank : -1;
    int peer = -1;
    mpi_mt_lock(&dyn_lock);
    for (int i = 0; i < nknown && peer < 0; i++)
        if (known[i].job == id->job && known[i].rank == id->rank)
            peer = known[i].peer;
    mpi_mt_unlock(&dyn_lock);
    return peer;
}

void mpi_dyn_known(uint64_t job, int rank, int peer)
{
    if (job == mpi_dyn_job())
        return; /* this job's ranks are peers already */
    mpi_ident_t id = {.job = job, .rank = rank};
    if (mpi_ident_peer(&id) >= 0)
        return;
    mpi_mt_lock(&dyn_lock);
    if (nknown == capknown) {
        int cap = capknown ? 2 * capknown : 16;
        known_t *k = realloc(known, sizeof(*k) * (size_t)cap);
        if (k == NULL) { /* the pair stays unknown: its next creation fails to wire it */
            mpi_mt_unlock(&dyn_lock);
            return;
        }
        known = k;
        capknown = cap;
    }
    known[nknown++] = (known_t){.job = job, .rank = rank, .peer = peer};
    mpi_mt_unlock(&dyn_lock);
}

const char *mpi_dyn_self_port(char *msg, size_t msglen)
{
    mpi_mt_lock(&dyn_lock);
    if (!port_opened) {
        mpi_lock(mpi.workers[0]);
        tern_status_t st = tern_port_open(mpi.ctx, self_port);
        mpi_unlock(mpi.workers[0]);
        if (st != TERN_OK) {
            snprintf(msg, msglen, "%s", tern_last_error());
            mpi_mt_unlock(&dyn_lock);
            return NULL;
        }
        port_opened = true;
    }
    mpi_mt_unlock(&dyn_lock);
    return self_port;
}

tern_status_t mpi_dyn_wait_until(tern_request_t *r, tern_recv_info_t *info, double deadline)
{
    tern_worker_t *w = mpi.workers[0];
    for (;;) {
        mpi_lock(w);
        tern_status_t st = tern_test(w, r, info);
        mpi_unlock(w);
        if (st != TERN_INPROGRESS)
            return st;
        mpi_dyn_pump();
        if (deadline <= 0) {
            mpi_block();
            continue;
        }
        double left = deadline - MPI_Wtime();
        if (left <= 0)
            return TERN_ERR_TIMED_OUT;
        mpi_block_ms(left > 1.0 ? 1000 : (int)(left * 1000) + 1);
    }
}

tern_status_t mpi_dyn_wait(tern_request_t *r, tern_recv_info_t *info)
{
    return mpi_dyn_wait_until(r, info, 0);
}

void mpi_dyn_pump(void)
{
    tern_worker_t *w = mpi.workers[0];
    if (!__atomic_load_n(&port_opened, __ATOMIC_ACQUIRE))
        return; /* hellos come to a port only */
    tern_job_t *j;
    mpi_lock(w);
    /* the connections taken: the engine's queue of them is bounded */
    while (tern_port_accept(mpi.ctx, &j) == TERN_OK)
        ;
    mpi_unlock(w);
    for (;;) {
        int flag = 0;
        tern_message_t *m = NULL;
        tern_cq_entry_t ent;
        hello_t h;
        tern_request_t *r = NULL;
        mpi_lock(w);
        tern_status_t st = tern_tprobe(w, TERN_ANY_SOURCE, DYN_HELLO, 0, MPI_SPACE_DYN,
                                       TERN_PROBE_CLAIM, &flag, &m, &ent);
        if (st == TERN_OK && flag)
            st = tern_tmrecv(w, &h, sizeof(h), m, NULL, &r);
        mpi_unlock(w);
        if (st != TERN_OK && st != TERN_INPROGRESS)
            return;
        if (!flag)
            return;
        if (st == TERN_INPROGRESS && mpi_wait_tern(w, r, NULL) != TERN_OK)
            continue;
        if (h.magic == DYN_MAGIC)
            mpi_dyn_known(h.job, h.rank, ent.peer);
    }
}

/* connect to the process of port name p as a peer of id, and say who
 * this one is */
static int reach(const mpi_ident_t *id, const char *p, char *msg, size_t msglen)
{
    tern_worker_t *w = mpi.workers[0];
    tern_job_t *j = NULL;
    mpi_lock(w);
    tern_status_t st = tern_port_connect(mpi.ctx, p, &j);
    mpi_unlock(w);
    if (st != TERN_OK) {
        snprintf(msg, msglen, "connecting to rank %d of job %016llx: %s", id->rank,
                 (unsigned long long)id->job, tern_last_error());
        return mpi_class_of(st);
    }
    int peer = tern_job_peer(j, 0);
    hello_t h = {.magic = DYN_MAGIC, .job = mpi_dyn_job(), .rank = tern_rank(mpi.ctx)};
    tern_request_t *r = NULL;
    mpi_lock(w);
    st = tern_tsend(w, &h, sizeof(h), peer, DYN_HELLO, MPI_SPACE_DYN, NULL, &r);
    mpi_unlock(w);
    if (st == TERN_INPROGRESS)
        st = mpi_dyn_wait(r, NULL);
    if (st != TERN_OK) {
        snprintf(msg, msglen, "saying hello to rank %d of job %016llx: %s", id->rank,
                 (unsigned long long)id->job, tern_last_error());
        return mpi_class_of(st);
    }
    mpi_dyn_known(id->job, id->rank, peer);
    return MPI_SUCCESS;
}

int mpi_dyn_wire(const mpi_ident_t *ids, const char *names, int n, bool connector, char *msg,
                 size_t msglen)
{
    for (int i = 0; connector && i < n; i++)
        if (mpi_ident_peer(&ids[i]) < 0) {
            int e = reach(&ids[i], names + (size_t)i * TERN_PORT_NAME_MAX, msg, msglen);
            if (e != MPI_SUCCESS)
                return e;
        }
    for (;;) { /* the other side: until every one of them has said hello */
        mpi_dyn_pump();
        int missing = 0;
        for (int i = 0; i < n; i++)
            missing += mpi_ident_peer(&ids[i]) < 0;
        if (missing == 0)
            return MPI_SUCCESS;
        mpi_block();
    }
}

/* ---- tern port names as bytes ------------------------------------------------- */

#define TERN_PORT_PREFIX "tern-port:2:" /* docs/dynamic.md: then the address in hex */

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

bool mpi_dyn_addr_of(const char *tern_port, unsigned char *addr, size_t *len, size_t max)
{
    size_t pl = strlen(TERN_PORT_PREFIX), n = strlen(tern_port);
    if (strncmp(tern_port, TERN_PORT_PREFIX, pl) != 0 || (n - pl) % 2 != 0 ||
        (n - pl) / 2 > max)
        return false;
    for (size_t i = 0; i < (n - pl) / 2; i++) {
        int hi = hexval(tern_port[pl + 2 * i]), lo = hexval(tern_port[pl + 2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        addr[i] = (unsigned char)(hi << 4 | lo);
    }
    *len = (n - pl) / 2;
    return true;
}

void mpi_dyn_port_of(const unsigned char *addr, size_t len, char *tern_port)
{
    int off = snprintf(tern_port, TERN_PORT_NAME_MAX, "%s", TERN_PORT_PREFIX);
    for (size_t i = 0; i < len && (size_t)off + 3 <= TERN_PORT_NAME_MAX; i++)
        off += snprintf(tern_port + off, TERN_PORT_NAME_MAX - (size_t)off, "%02x", addr[i]);
}
