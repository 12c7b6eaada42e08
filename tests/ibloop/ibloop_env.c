/*
 * ibloop: environment knobs, logging, robust locks, clocks, fault counters.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "ibloop.h"

static struct ibloop_env env;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static long env_long(const char *name, long dflt)
{
    const char *s = getenv(name);
    char *end;
    long v;

    if (!s || !*s)
        return dflt;
    errno = 0;
    v = strtol(s, &end, 0);
    if (errno || *end || v < 0) {
        ibloop_log("ignoring %s=%s (not a non-negative number)", name, s);
        return dflt;
    }
    return v;
}

/* a limit: the mode's default, or the variable within [lo, hi] */
static uint32_t env_limit(const char *name, uint32_t dflt, uint32_t lo, uint32_t hi)
{
    long v = env_long(name, -1);

    if (v < 0)
        return dflt;
    if (v < (long)lo || v > (long)hi) {
        ibloop_log("ignoring %s=%ld (not in %u..%u)", name, v, lo, hi);
        return dflt;
    }
    return (uint32_t)v;
}

/* The mode ibloop follows where providers differ, and the limits it
 * reports.  mlx5 (ConnectX-5 as rdma-core 44's provider drives it): 30
 * SGEs, inline data bounded by the 1 KiB WQE, active MTU 4096.  rxe (the
 * kernel's soft RoCE on a 1500-byte netdev): 32 SGEs, 512 bytes inline,
 * 32767 CQEs, active MTU 1024. */
static void env_limits(void)
{
    const char *m = getenv("IBLOOP_MODE");
    bool rxe = m && !strcasecmp(m, "rxe");
    long mtu;

    if (m && *m && !rxe && strcasecmp(m, "mlx5"))
        ibloop_log("IBLOOP_MODE=%s unknown: following mlx5", m);
    env.mode = rxe ? IBLOOP_MODE_RXE : IBLOOP_MODE_MLX5;
    env.max_qp_wr = env_limit("IBLOOP_MAX_QP_WR", IBLOOP_MAX_QP_WR, 2, IBLOOP_MAX_QP_WR);
    env.max_sge = env_limit("IBLOOP_MAX_SGE", rxe ? 32 : 30, 1, IBLOOP_MAX_SGE);
    env.max_cqe = env_limit("IBLOOP_MAX_CQE", rxe ? 32767 : IBLOOP_MAX_CQE, 1, IBLOOP_MAX_CQE);
    env.max_inline = env_limit("IBLOOP_MAX_INLINE", rxe ? 512 : IBLOOP_INLINE_BY_WQE, 0,
                               IBLOOP_MAX_INLINE);
    env.mtu = rxe ? IBV_MTU_1024 : IBLOOP_MTU;
    mtu = env_long("IBLOOP_MTU", -1);
    if (mtu >= 0) {
        uint32_t e = IBV_MTU_256;
        while (e < IBLOOP_MTU && IBLOOP_MTU_ENUM_BYTES(e) < (uint32_t)mtu)
            e++;
        if (IBLOOP_MTU_ENUM_BYTES(e) != (uint32_t)mtu)
            ibloop_log("ignoring IBLOOP_MTU=%ld (256, 512, 1024, 2048 or 4096)", mtu);
        else
            env.mtu = e;
    }
}

static void env_parse(void)
{
    const char *f = getenv("IBLOOP_FABRIC");
    const char *ll = getenv("IBLOOP_LINK_LAYER");
    size_t i;

    env.debug = (int)env_long("IBLOOP_DEBUG", 0);
    if (!f || !*f)
        f = "default";
    for (i = 0; f[i] && i < sizeof(env.fabric) - 1; i++) {
        char c = f[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
        env.fabric[i] = ok ? c : '_';
    }
    env.fabric[i] = 0;
    env.roce = ll && (!strcasecmp(ll, "ethernet") || !strcasecmp(ll, "roce") ||
                      !strcasecmp(ll, "eth"));
    if (ll && !env.roce && strcasecmp(ll, "infiniband") && strcasecmp(ll, "ib"))
        ibloop_log("IBLOOP_LINK_LAYER=%s unknown: using infiniband", ll);
    env.reg_fail_after = env_long("IBLOOP_FAULT_REG_FAIL_AFTER", -1);
    env.reg_max_bytes = env_long("IBLOOP_FAULT_REG_MAX_BYTES", -1);
    env.drop_cqe = env_long("IBLOOP_FAULT_DROP_CQE", 0);
    env.link_down_after = env_long("IBLOOP_FAULT_LINK_DOWN_AFTER", -1);
    env.link_down_ms = env_long("IBLOOP_FAULT_LINK_DOWN_MS", -1);
    env.post_refuse_after = env_long("IBLOOP_FAULT_POST_REFUSE_AFTER", -1);
    env.qp_fail_after = env_long("IBLOOP_FAULT_QP_FAIL_AFTER", -1);
    env.no_device = env_long("IBLOOP_FAULT_NO_DEVICE", 0);
    env.die_in_lock = env_long("IBLOOP_FAULT_DIE_IN_LOCK", 0);
    env.timeout_ms = env_long("IBLOOP_TIMEOUT_MS", 100);
    {
        const char *st = getenv("IBLOOP_STATS");
        if (st && *st && strcmp(st, "0")) {
            snprintf(env.stats, sizeof(env.stats), "%s", st);
            ibloop_stats_on = true;
        }
    }
    env_limits();
}

const struct ibloop_env *ibloop_env(void)
{
    pthread_once(&env_once, env_parse);
    return &env;
}

void ibloop_log(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    int n;

    n = snprintf(buf, sizeof(buf), "ibloop[%d]: ", (int)getpid());
    va_start(ap, fmt);
    vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    n = (int)strlen(buf);
    buf[n++] = '\n';
    if (write(2, buf, (size_t)n) < 0)
        return;
}

/* ---- robust process-shared mutexes ------------------------------------ */
void ibloop_lock_init(ibloop_lock_t *l)
{
    pthread_mutexattr_t a;

    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&l->m, &a);
    pthread_mutexattr_destroy(&a);
}

/* A holder that died leaves EOWNERDEAD: every structure a lock guards is
 * published by one final store, so the state is consistent as it is. */
void ibloop_lock(ibloop_lock_t *l)
{
    int rc = pthread_mutex_lock(&l->m);

    if (rc == EOWNERDEAD) {
        IBLOOP_DBG("recovered a lock from a dead process");
        pthread_mutex_consistent(&l->m);
    } else if (rc) {
        ibloop_log("lock failed: %s (fabric corrupted?)", strerror(rc));
        abort();
    }
}

bool ibloop_trylock(ibloop_lock_t *l)
{
    int rc = pthread_mutex_trylock(&l->m);

    if (rc == EOWNERDEAD) {
        pthread_mutex_consistent(&l->m);
        return true;
    }
    return rc == 0;
}

void ibloop_unlock(ibloop_lock_t *l)
{
    pthread_mutex_unlock(&l->m);
}

uint64_t ibloop_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- fault injection counters (per process) --------------------------- */
static _Atomic long reg_count;
static _Atomic long send_count;
static _Atomic long post_count;
static _Atomic long cqe_count;
static _Atomic long foreign_push_count;

long ibloop_reg_count_inc(void)
{
    return atomic_fetch_add(&reg_count, 1);
}

void ibloop_fault_count_send(void)
{
    long lim = ibloop_env()->link_down_after;
    long n;

    if (lim < 0)
        return;
    n = atomic_fetch_add(&send_count, 1) + 1;
    if (n == lim + 1)
        ibloop_port_check();
}

/* IBLOOP_FAULT_POST_REFUSE_AFTER: after n work requests taken, every
 * ibv_post_send refuses its first one as the provider refuses a WR beyond
 * what the QP was granted (mlx5 ENOMEM, rxe EINVAL) */
bool ibloop_fault_post_refused(void)
{
    long lim = ibloop_env()->post_refuse_after;

    return lim >= 0 && atomic_fetch_add(&post_count, 1) >= lim;
}

bool ibloop_fault_link_should_be_down(void)
{
    long lim = ibloop_env()->link_down_after;

    return lim >= 0 && atomic_load(&send_count) > lim;
}

bool ibloop_fault_drop_cqe(void)
{
    long n = ibloop_env()->drop_cqe;

    return n > 0 && atomic_fetch_add(&cqe_count, 1) + 1 == n;
}

/* called holding another process's CQ lock: die there, to show that a
 * process killed inside the fabric wedges nobody */
void ibloop_fault_die_in_lock(void)
{
    long n = ibloop_env()->die_in_lock;

    if (n > 0 && atomic_fetch_add(&foreign_push_count, 1) + 1 == n) {
        ibloop_log("fault: dying while holding a CQ lock (IBLOOP_FAULT_DIE_IN_LOCK)");
        raise(SIGKILL);
    }
}

void ibloop_fault_reset(void)
{
    atomic_store(&reg_count, 0);
    atomic_store(&send_count, 0);
    atomic_store(&cqe_count, 0);
    atomic_store(&foreign_push_count, 0);
}
