/*
 * The process's one tern context, shared by every domain: created by the
 * first fi_domain, reference-counted, and finalized when the last domain
 * closes (docs/libfabric.md).
 *
 * Inside a PMIx job (PMIX_RANK and PMIX_NAMESPACE set: Open MPI's mpirun,
 * ternrun, srun --mpi=pmix) the context is made with TERN_WIREUP_PMIX,
 * collective over the job: every rank of an MPI job opens its domain in
 * MPI_Init and closes it in MPI_Finalize, so both ends are collective.
 * Outside one (fi_pingpong, a client and a server started by hand) it is a
 * job of one rank of its own, wired by addresses, with a name no other
 * process uses; its peers are other jobs reached through tern_peer_insert
 * (fi_av_insert), over the netmods that reach other jobs (tcp, verbs,
 * dpdk: not shm).  FI_TERN_WIREUP overrides the choice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "ofi/tern_fi.h"

static struct {
    pthread_mutex_t lock;
    tern_context_t *ctx;
    int refs;
    bool pmix;
    uint32_t job_hash;
    bool w0_taken; /* worker 0 belongs to an endpoint */
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

uint32_t tfi_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s != '\0'; s++) {
        h ^= (uint8_t)*s;
        h *= 16777619u;
    }
    return h;
}

/* -1: a bad FI_TERN_WIREUP (logged) */
static int wireup_mode(const char *setting)
{
    if (setting == NULL || setting[0] == '\0' || strcmp(setting, "auto") == 0)
        return getenv("PMIX_RANK") != NULL && getenv("PMIX_NAMESPACE") != NULL
                   ? TERN_WIREUP_PMIX
                   : TERN_WIREUP_ADDRESS;
    if (strcmp(setting, "pmix") == 0)
        return TERN_WIREUP_PMIX;
    if (strcmp(setting, "address") == 0)
        return TERN_WIREUP_ADDRESS;
    TFI_WARN(FI_LOG_DOMAIN, "FI_TERN_WIREUP=%s: want auto, pmix or address\n", setting);
    return -1;
}

static int create(void)
{
    struct tfi_settings s;
    tfi_settings(&s);
    int mode = wireup_mode(s.wireup);
    if (mode < 0)
        return -FI_EINVAL;
    tern_init_params_t p;
    memset(&p, 0, sizeof(p));
    p.struct_size = sizeof(p);
    p.fields = TERN_INIT_F_WIREUP;
    p.wireup = mode;
    if (s.netmods != NULL) {
        p.fields |= TERN_INIT_F_NETMODS;
        p.netmods = s.netmods;
    }
    if (s.num_workers > 0) {
        p.fields |= TERN_INIT_F_WORKERS;
        p.num_workers = s.num_workers;
    }
    char job[128];
    if (mode == TERN_WIREUP_ADDRESS) {
        /* a job of one: a name unique to this process, also across hosts
         * and pid namespaces (the random part) */
        char host[64] = "host";
        gethostname(host, sizeof(host) - 1);
        host[sizeof(host) - 1] = '\0';
        uint32_t nonce = 0;
        if (getrandom(&nonce, sizeof(nonce), GRND_NONBLOCK) != (ssize_t)sizeof(nonce))
            nonce = (uint32_t)(uintptr_t)&nonce ^ (uint32_t)getpid();
        snprintf(job, sizeof(job), "fi-%s-%d-%08x", host, (int)getpid(), nonce);
        p.rank = 0;
        p.size = 1;
        p.job = job;
    }
    tern_status_t st = tern_init_ex(&p, &g.ctx);
    if (st != TERN_OK) {
        TFI_WARN(FI_LOG_DOMAIN, "tern_init_ex (%s wire-up) failed: %s: %s\n",
                 mode == TERN_WIREUP_PMIX ? "PMIx" : "address", tern_strerror(st),
                 tern_last_error());
        g.ctx = NULL;
        return tfi_errno(st);
    }
    g.pmix = mode == TERN_WIREUP_PMIX;
    const char *name = tern_job_name(g.ctx);
    g.job_hash = tfi_hash(name != NULL ? name : "");
    g.w0_taken = false;
    TFI_INFO(FI_LOG_DOMAIN, "tern context: job %s, rank %d of %d, %s wire-up\n",
             name != NULL ? name : "?", tern_rank(g.ctx), tern_size(g.ctx),
             g.pmix ? "PMIx" : "address");
    return 0;
}

int tfi_ctx_acquire(tern_context_t **ctx)
{
    pthread_mutex_lock(&g.lock);
    int ret = g.refs == 0 ? create() : 0;
    if (ret == 0) {
        g.refs++;
        *ctx = g.ctx;
    }
    pthread_mutex_unlock(&g.lock);
    return ret;
}

void tfi_ctx_release(void)
{
    pthread_mutex_lock(&g.lock);
    if (g.refs > 0 && --g.refs == 0) {
        tern_status_t st = tern_finalize(g.ctx);
        if (st != TERN_OK)
            TFI_WARN(FI_LOG_DOMAIN, "tern_finalize: %s: %s\n", tern_strerror(st),
                     tern_last_error());
        g.ctx = NULL;
        g.w0_taken = false;
    }
    pthread_mutex_unlock(&g.lock);
}

bool tfi_ctx_pmix(void)
{
    return g.pmix;
}

uint32_t tfi_ctx_job_hash(void)
{
    return g.job_hash;
}

int tfi_worker_take(tern_worker_t **w)
{
    int ret = 0;
    pthread_mutex_lock(&g.lock);
    if (g.ctx == NULL) {
        ret = -FI_EOPBADSTATE;
    } else if (!g.w0_taken) {
        g.w0_taken = true;
        *w = tern_context_worker(g.ctx);
    } else {
        tern_status_t st = tern_worker_create(g.ctx, w);
        if (st != TERN_OK) {
            TFI_WARN(FI_LOG_EP_CTRL,
                     "no tern worker left for another endpoint (one per endpoint; raise "
                     "FI_TERN_NUM_WORKERS or TERN_NUM_WORKERS, the same on every process): "
                     "%s\n",
                     tern_last_error());
            ret = st == TERN_ERR_NO_RESOURCE ? -FI_EBUSY : tfi_errno(st);
        }
    }
    pthread_mutex_unlock(&g.lock);
    return ret;
}

void tfi_worker_give(tern_worker_t *w)
{
    pthread_mutex_lock(&g.lock);
    if (tern_worker_index(w) == 0)
        g.w0_taken = false;
    else if (tern_worker_destroy(w) != TERN_OK)
        TFI_WARN(FI_LOG_EP_CTRL, "tern_worker_destroy: %s\n", tern_last_error());
    pthread_mutex_unlock(&g.lock);
}

int tfi_errno(tern_status_t st)
{
    switch (st) {
    case TERN_OK:
    case TERN_INPROGRESS:
        return 0;
    case TERN_ERR_INVALID_PARAM:
    case TERN_ERR_INVALID_RANK:
    case TERN_ERR_INVALID_TAG:
    case TERN_ERR_MALFORMED:
        return -FI_EINVAL;
    case TERN_ERR_TRUNCATED:
        return -FI_ETRUNC;
    case TERN_ERR_AGAIN:
        return -FI_EAGAIN;
    case TERN_ERR_NO_MEMORY:
        return -FI_ENOMEM;
    case TERN_ERR_NO_SHM_SPACE:
    case TERN_ERR_NO_RESOURCE:
        return -FI_ENOSPC;
    case TERN_ERR_UNREACHABLE:
    case TERN_ERR_HOST_UNREACH:
        return -FI_EHOSTUNREACH;
    case TERN_ERR_CONN_REFUSED:
        return -FI_ECONNREFUSED;
    case TERN_ERR_CONN_RESET:
        return -FI_ECONNRESET;
    case TERN_ERR_CONN_CLOSED:
        return -FI_ECONNABORTED;
    case TERN_ERR_REMOTE_ACCESS:
        return -FI_EACCES;
    case TERN_ERR_NO_DEVICE:
        return -FI_ENODEV;
    case TERN_ERR_ADDR_IN_USE:
        return -FI_EADDRINUSE;
    case TERN_ERR_UNSUPPORTED:
        return -FI_EOPNOTSUPP;
    case TERN_ERR_TIMED_OUT:
        return -FI_ETIMEDOUT;
    case TERN_ERR_INTERRUPTED:
        return -FI_EINTR;
    case TERN_ERR_NOT_FOUND:
        return -FI_ENOENT;
    case TERN_ERR_CANCELED:
        return -FI_ECANCELED;
    case TERN_ERR_PMIX:
        return -FI_EOTHER;
    default: /* peer failed, shm, io and whatever a later tern adds */
        return -FI_EIO;
    }
}
