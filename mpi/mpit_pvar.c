/*
 * MPI_T's performance variables (mpit.h): the engine's counters
 * (tern_worker_counters: the netmods' own, "verbs.post_send" ..., and the
 * same-host copy's, "cma.get_bytes" ...), each summed over the layer's
 * workers, named as the engine names them.
 *
 * - They exist once MPI_Init made the context (before it there are none:
 *   MPI_T_pvar_get_num says 0, and the categories' numbers change when they
 *   come); MPI_Finalize freezes them at their last values, which they keep.
 * - Each is MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, bound to no
 *   object, not continuous: a handle counts from 0 while it is started
 *   (MPI_T_pvar_start / _stop), so sessions measure phases independently;
 *   not read-only: a handle's value may be written or reset (the engine's
 *   count itself never changes); atomic: MPI_T_pvar_readreset reads and
 *   resets from one reading of the counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpit.h"

typedef struct pvar {
    char *name;
    int cat;
} pvar_t;
static pvar_t *pvars;
static int npvars, cappvars;

struct MPIR_T_pvar_handle_s {
    int pvar;
    bool started;
    uint64_t accum; /* counted while started before, or written */
    uint64_t base;  /* the counter when last started (or written while started) */
    struct MPIR_T_pvar_session_s *session;
    struct MPIR_T_pvar_handle_s *next;
};

struct MPIR_T_pvar_session_s {
    struct MPIR_T_pvar_handle_s *handles;
    struct MPIR_T_pvar_session_s *next;
};
static struct MPIR_T_pvar_session_s *sessions;

/* MPI_T_PVAR_ALL_HANDLES: an address no handle has (a data symbol of the
 * library, as in MPICH's ABI) */
static struct MPIR_T_pvar_handle_s all_handles;
struct MPIR_T_pvar_handle_s *const MPI_T_PVAR_ALL_HANDLES = &all_handles;

/* ---- the counters ---------------------------------------------------------------- */

#define MAX_COUNTERS 256
/* what MPI_Finalize left (names: the engine's static strings) */
static tern_counter_t *last;
static int nlast;

/* The counters, summed over the workers (the names worker 0 gives, in its
 * order), into c; their number (0 before MPI_Init). */
static int read_counters(tern_counter_t *c)
{
    if (mpit.frozen || !__atomic_load_n(&mpi.init, __ATOMIC_ACQUIRE) || mpi.nworkers < 1) {
        if (nlast > 0)
            memcpy(c, last, sizeof(*c) * (size_t)nlast);
        return nlast;
    }
    static tern_counter_t w[MAX_COUNTERS]; /* mpit.lock's */
    int n = 0;
    for (int k = 0; k < mpi.nworkers; k++) {
        mpi_lock(mpi.workers[k]);
        int m = tern_worker_counters(mpi.workers[k], k == 0 ? c : w, MAX_COUNTERS);
        mpi_unlock(mpi.workers[k]);
        m = m < 0 ? 0 : m > MAX_COUNTERS ? MAX_COUNTERS : m;
        if (k == 0) {
            n = m;
            continue;
        }
        /* the workers have the same netmods: the same names in one order */
        for (int i = 0; i < m && i < n; i++)
            if (w[i].name == c[i].name || strcmp(w[i].name, c[i].name) == 0)
                c[i].value += w[i].value;
    }
    return n;
}

static int find_pvar(const char *name)
{
    for (int i = 0; i < npvars; i++)
        if (strcmp(pvars[i].name, name) == 0)
            return i;
    return -1;
}

void mpit_pvars_refresh(void)
{
    /* known once MPI_Init made them (and at most once more: at
     * MPI_Finalize, from what it left) */
    static int seen = -1;
    int now = mpit.frozen ? 2 : __atomic_load_n(&mpi.init, __ATOMIC_ACQUIRE) ? 1 : 0;
    if (now == seen || now == 0 || !mpit.built)
        return;
    tern_counter_t *c = malloc(sizeof(*c) * MAX_COUNTERS);
    int n = c != NULL ? read_counters(c) : 0;
    for (int i = 0; i < n; i++) {
        if (find_pvar(c[i].name) >= 0)
            continue;
        if (npvars == cappvars) {
            int cap = cappvars ? 2 * cappvars : 32;
            pvar_t *p = realloc(pvars, sizeof(*p) * (size_t)cap);
            if (p == NULL)
                break; /* tried again at the next call */
            pvars = p;
            cappvars = cap;
        }
        int cat = mpit_cat_of_prefix(c[i].name);
        char *name = strdup(c[i].name);
        if (cat < 0 || name == NULL || mpit_cat_add_pvar(cat, npvars) != MPI_SUCCESS) {
            free(name);
            break;
        }
        pvars[npvars++] = (pvar_t){.name = name, .cat = cat};
    }
    if (c != NULL && n >= 0 && (n == 0 || npvars >= n))
        seen = now;
    free(c);
}

void mpi_t_finalize_hook(void)
{
    pthread_mutex_lock(&mpit.lock);
    tern_counter_t *c = malloc(sizeof(*c) * MAX_COUNTERS);
    if (c != NULL) {
        nlast = read_counters(c);
        last = c;
    }
    mpit_cvars_freeze();
    mpit.frozen = true;
    mpit_pvars_refresh();
    pthread_mutex_unlock(&mpit.lock);
}

/* the value of every performance variable now, into v (npvars of them) */
static void values(uint64_t *v)
{
    tern_counter_t c[MAX_COUNTERS];
    int n = read_counters(c);
    memset(v, 0, sizeof(*v) * (size_t)npvars);
    for (int i = 0; i < n; i++) {
        int k = i < npvars && strcmp(pvars[i].name, c[i].name) == 0 ? i : find_pvar(c[i].name);
        if (k >= 0)
            v[k] = c[i].value;
    }
}

static uint64_t value_of(int pvar)
{
    uint64_t *v = malloc(sizeof(*v) * (size_t)(npvars > 0 ? npvars : 1));
    if (v == NULL)
        return 0;
    values(v);
    uint64_t x = v[pvar];
    free(v);
    return x;
}

/* ---- descriptions ------------------------------------------------------------------ */

static const struct {
    const char *name, *desc;
} known[] = {
    {"cma.get_bytes", "bytes of rendezvous data this process read from same-host peers with "
                      "process_vm_readv"},
    {"cma.put_bytes", "bytes of rendezvous data this process wrote into same-host peers with "
                      "process_vm_writev"},
    {"cma.gets", "same-host copies this process completed by reading"},
    {"cma.puts", "same-host copies this process completed by writing"},
    {"cma.refused", "same-host copies the kernel refused here (the netmod carried the data)"},
    {"cma.declined", "same-host copies this process declined (TERN_CMA, or another host)"},
    {"cma.fallbacks", "sends this process handed back to the netmod's own path"},
};

static void describe(int i, char *buf, size_t len)
{
    for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
        if (strcmp(known[k].name, pvars[i].name) == 0) {
            snprintf(buf, len, "%s, summed over its workers", known[k].desc);
            return;
        }
    snprintf(buf, len,
             "the engine's counter %s (of netmod %s: its calls into its device "
             "library and events of its protocol), summed over this process's workers",
             pvars[i].name, mpit.cats[pvars[i].cat].name);
}

/* ---- the calls -------------------------------------------------------------------- */

static int pvar_arg(int i, const char *call)
{
    if (i < 0 || i >= npvars)
        return mpit_err(MPI_T_ERR_INVALID_INDEX, "%s: performance variable %d (there are %d%s)",
                        call, i, npvars, npvars == 0 ? ": none before MPI_Init" : "");
    return MPI_SUCCESS;
}

int MPI_T_pvar_get_num(int *num_pvar)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    if (num_pvar == NULL)
        e = mpit_err(MPI_T_ERR_INVALID, "MPI_T_pvar_get_num: NULL num_pvar");
    else
        *num_pvar = npvars;
    mpit_leave();
    return e;
}

int MPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                        MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                        int *bind, int *readonly, int *continuous, int *atomic)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    if ((e = pvar_arg(pvar_index, "MPI_T_pvar_get_info")) == MPI_SUCCESS) {
        mpit_string(pvars[pvar_index].name, name, name_len);
        if (verbosity != NULL)
            *verbosity = MPI_T_VERBOSITY_TUNER_DETAIL;
        if (var_class != NULL)
            *var_class = MPI_T_PVAR_CLASS_COUNTER;
        if (datatype != NULL)
            *datatype = MPI_UNSIGNED_LONG_LONG;
        if (enumtype != NULL)
            *enumtype = MPI_T_ENUM_NULL;
        char text[512];
        describe(pvar_index, text, sizeof(text));
        mpit_string(text, desc, desc_len);
        if (bind != NULL)
            *bind = MPI_T_BIND_NO_OBJECT;
        if (readonly != NULL)
            *readonly = 0;
        if (continuous != NULL)
            *continuous = 0;
        if (atomic != NULL)
            *atomic = 1;
    }
    mpit_leave();
    return e;
}

int MPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    int i = name != NULL ? find_pvar(name) : -1;
    if (name == NULL || pvar_index == NULL)
        e = mpit_err(MPI_T_ERR_INVALID, "MPI_T_pvar_get_index: NULL argument");
    else if (i < 0 || var_class != MPI_T_PVAR_CLASS_COUNTER)
        e = mpit_err(MPI_T_ERR_INVALID_NAME,
                     "MPI_T_pvar_get_index: no performance variable "
                     "\"%s\" of class %d (tern's are counters, MPI_T_PVAR_CLASS_COUNTER)%s",
                     name, var_class, npvars == 0 ? ": none before MPI_Init" : "");
    else
        *pvar_index = i;
    mpit_leave();
    return e;
}

/* ---- sessions ------------------------------------------------------------------------ */

static bool session_ok(MPI_T_pvar_session s)
{
    for (struct MPIR_T_pvar_session_s *x = sessions; x != NULL; x = x->next)
        if (x == s)
            return true;
    return false;
}

static int session_err(MPI_T_pvar_session s, const char *call)
{
    return mpit_err(MPI_T_ERR_INVALID_SESSION, "%s: %p is not a session%s", call, (void *)s,
                    s == MPI_T_PVAR_SESSION_NULL ? " (MPI_T_PVAR_SESSION_NULL)" : " (freed?)");
}

int MPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    struct MPIR_T_pvar_session_s *s = session != NULL ? calloc(1, sizeof(*s)) : NULL;
    if (session == NULL)
        e = mpit_err(MPI_T_ERR_INVALID, "MPI_T_pvar_session_create: NULL session");
    else if (s == NULL)
        e = mpit_err(MPI_T_ERR_OUT_OF_SESSIONS, "MPI_T_pvar_session_create: no memory");
    else {
        s->next = sessions;
        sessions = s;
        *session = s;
    }
    mpit_leave();
    return e;
}

static void session_drop(struct MPIR_T_pvar_session_s *s)
{
    struct MPIR_T_pvar_session_s **p = &sessions;
    while (*p != s)
        p = &(*p)->next;
    *p = s->next;
    while (s->handles != NULL) {
        struct MPIR_T_pvar_handle_s *h = s->handles;
        s->handles = h->next;
        free(h);
    }
    free(s);
}

int MPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    if (session == NULL || !session_ok(*session)) {
        e = session_err(session != NULL ? *session : NULL, "MPI_T_pvar_session_free");
    } else {
        session_drop(*session);
        *session = MPI_T_PVAR_SESSION_NULL;
    }
    mpit_leave();
    return e;
}

void mpit_pvars_release(void)
{
    while (sessions != NULL)
        session_drop(sessions);
}

/* ---- handles ----------------------------------------------------------------------- */

int MPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                            MPI_T_pvar_handle *handle, int *count)
{
    (void)obj_handle; /* MPI_T_BIND_NO_OBJECT: none */
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    struct MPIR_T_pvar_handle_s *h = NULL;
    if (!session_ok(session))
        e = session_err(session, "MPI_T_pvar_handle_alloc");
    else if ((e = pvar_arg(pvar_index, "MPI_T_pvar_handle_alloc")) != MPI_SUCCESS)
        ;
    else if (handle == NULL || count == NULL)
        e = mpit_err(MPI_T_ERR_INVALID, "MPI_T_pvar_handle_alloc: NULL handle or count");
    else if ((h = calloc(1, sizeof(*h))) == NULL)
        e = mpit_err(MPI_T_ERR_OUT_OF_HANDLES, "MPI_T_pvar_handle_alloc: no memory");
    if (h != NULL) {
        /* stopped, at 0 (a counter's starting value) */
        *h = (struct MPIR_T_pvar_handle_s){
            .pvar = pvar_index, .session = session, .next = session->handles};
        session->handles = h;
        *handle = h;
        *count = 1;
    }
    mpit_leave();
    return e;
}

/* handle's link in session's list (NULL: not one of its handles) */
static struct MPIR_T_pvar_handle_s **find_handle(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    struct MPIR_T_pvar_handle_s **p = &s->handles;
    while (*p != NULL && *p != h)
        p = &(*p)->next;
    return *p != NULL ? p : NULL;
}

/* session and handle valid for call (all: MPI_T_PVAR_ALL_HANDLES allowed) */
static int check(MPI_T_pvar_session s, MPI_T_pvar_handle h, bool all, const char *call)
{
    if (!session_ok(s))
        return session_err(s, call);
    if (h == MPI_T_PVAR_ALL_HANDLES ? !all : find_handle(s, h) == NULL)
        return mpit_err(MPI_T_ERR_INVALID_HANDLE, "%s: %p is not a handle of session %p%s", call,
                        (void *)h, (void *)s,
                        h == MPI_T_PVAR_ALL_HANDLES   ? " (MPI_T_PVAR_ALL_HANDLES is not "
                                                        "allowed here)"
                        : h == MPI_T_PVAR_HANDLE_NULL ? " (MPI_T_PVAR_HANDLE_NULL)"
                                                      : "");
    return MPI_SUCCESS;
}

int MPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    if (handle == NULL)
        e = mpit_err(MPI_T_ERR_INVALID, "MPI_T_pvar_handle_free: NULL handle");
    else if ((e = check(session, *handle, false, "MPI_T_pvar_handle_free")) == MPI_SUCCESS) {
        struct MPIR_T_pvar_handle_s **p = find_handle(session, *handle), *h = *p;
        *p = h->next;
        free(h);
        *handle = MPI_T_PVAR_HANDLE_NULL;
    }
    mpit_leave();
    return e;
}

/* a handle's value, the variables' values being v */
static uint64_t handle_value(const struct MPIR_T_pvar_handle_s *h, const uint64_t *v)
{
    return h->accum + (h->started ? v[h->pvar] - h->base : 0);
}

enum op { OP_START, OP_STOP, OP_RESET };

/* op on handle (or on every handle of the session) */
static int apply(MPI_T_pvar_session session, MPI_T_pvar_handle handle, enum op op, const char *call)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    uint64_t *v = NULL;
    if ((e = check(session, handle, true, call)) == MPI_SUCCESS &&
        (v = malloc(sizeof(*v) * (size_t)(npvars > 0 ? npvars : 1))) == NULL)
        e = mpit_err(MPI_T_ERR_MEMORY, "%s: no memory", call);
    if (e == MPI_SUCCESS) {
        values(v); /* one reading for every handle */
        for (struct MPIR_T_pvar_handle_s *h = session->handles; h != NULL; h = h->next) {
            if (handle != MPI_T_PVAR_ALL_HANDLES && h != handle)
                continue;
            if (op == OP_START && !h->started) {
                h->started = true;
                h->base = v[h->pvar];
            } else if (op == OP_STOP && h->started) {
                h->accum = handle_value(h, v);
                h->started = false;
            } else if (op == OP_RESET) {
                h->accum = 0;
                h->base = v[h->pvar];
            }
        }
    }
    free(v);
    mpit_leave();
    return e;
}

int MPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return apply(session, handle, OP_START, "MPI_T_pvar_start");
}

int MPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return apply(session, handle, OP_STOP, "MPI_T_pvar_stop");
}

int MPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return apply(session, handle, OP_RESET, "MPI_T_pvar_reset");
}

enum rw { RW_READ, RW_WRITE, RW_READRESET };

/* read the handle's value into buf, or set it from buf, or both (reset:
 * to 0), from one reading of the counters */
static int read_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf, enum rw rw,
                      const char *call)
{
    int e = mpit_enter();
    if (e != MPI_SUCCESS)
        return e;
    if ((e = check(session, handle, false, call)) == MPI_SUCCESS && buf == NULL)
        e = mpit_err(MPI_T_ERR_INVALID, "%s: NULL buffer", call);
    if (e == MPI_SUCCESS) {
        uint64_t now = value_of(handle->pvar);
        unsigned long long x = 0;
        if (rw == RW_WRITE)
            memcpy(&x, buf, sizeof(x));
        else
            memcpy(
                buf,
                &(unsigned long long){handle->accum + (handle->started ? now - handle->base : 0)},
                sizeof(x));
        if (rw != RW_READ) {
            handle->accum = x;
            handle->base = now;
        }
    }
    mpit_leave();
    return e;
}

int MPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return read_write(session, handle, buf, RW_READ, "MPI_T_pvar_read");
}

int MPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    return read_write(session, handle, (void *)buf, RW_WRITE, "MPI_T_pvar_write");
}

int MPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return read_write(session, handle, buf, RW_READRESET, "MPI_T_pvar_readreset");
}
