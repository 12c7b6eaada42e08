/*
 * Publish / lookup / unpublish for the single-node PMIx host server.
 *
 * One in-memory table of (key, publisher, value) and one list of lookups
 * waiting for keys (PMIX_WAIT), both guarded by `lock`.  Module functions run
 * on PMIx's progress thread; tern_srv_pubsub_expire() runs on the host's
 * thread.  Callbacks into PMIx are never made with `lock` held: answers are
 * built under the lock, detached, and delivered after unlocking.
 *
 * There is one job per server, so data ranges (PMIX_RANGE) and persistence
 * collapse to "this job, until it ends"; keys are unique in the table.
 */
#include "pmix/server/server_internal.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct pub_entry {
    struct pub_entry *next;
    pmix_key_t key;
    pmix_proc_t owner;
    pmix_value_t value;
};

struct lookup_req {
    struct lookup_req *next;
    pmix_proc_t requester;
    char **keys; /* NULL-terminated copy */
    size_t nkeys;
    size_t nwait;     /* answer once this many keys are published */
    long deadline_ms; /* 0: no timeout */
    pmix_lookup_cbfunc_t cbfunc;
    void *cbdata;
    /* the answer, filled when the request leaves the pending list */
    pmix_status_t status;
    pmix_pdata_t *pdata;
    size_t npdata;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pub_entry *table;     /* lock */
static struct lookup_req *pending;  /* lock */

static struct pub_entry *find_key(const char *key)
{
    for (struct pub_entry *e = table; e != NULL; e = e->next) {
        if (strncmp(e->key, key, PMIX_MAX_KEYLEN) == 0) {
            return e;
        }
    }
    return NULL;
}

static size_t count_found(char **keys, size_t nkeys)
{
    size_t n = 0;

    for (size_t i = 0; i < nkeys; i++) {
        if (find_key(keys[i]) != NULL) {
            n++;
        }
    }
    return n;
}

/* Fill req's answer from the table.  Caller holds lock. */
static void build_answer(struct lookup_req *req)
{
    size_t nfound = count_found(req->keys, req->nkeys), j = 0;

    req->pdata = NULL;
    req->npdata = 0;
    if (nfound == 0) {
        req->status = PMIX_ERR_NOT_FOUND;
        return;
    }
    PMIX_PDATA_CREATE(req->pdata, nfound);
    if (req->pdata == NULL) {
        req->status = PMIX_ERR_NOMEM;
        return;
    }
    for (size_t i = 0; i < req->nkeys && j < nfound; i++) {
        struct pub_entry *e = find_key(req->keys[i]);

        if (e == NULL) {
            continue;
        }
        req->pdata[j].proc = e->owner;
        PMIX_LOAD_KEY(req->pdata[j].key, e->key);
        if (PMIx_Value_xfer(&req->pdata[j].value, &e->value) != PMIX_SUCCESS) {
            req->status = PMIX_ERR_NOMEM;
            PMIX_PDATA_FREE(req->pdata, nfound);
            return;
        }
        j++;
    }
    req->npdata = j;
    req->status = PMIX_SUCCESS;
}

static void free_req(struct lookup_req *req)
{
    for (size_t i = 0; req->keys != NULL && i < req->nkeys; i++) {
        free(req->keys[i]);
    }
    free(req->keys);
    if (req->pdata != NULL) {
        PMIX_PDATA_FREE(req->pdata, req->npdata);
    }
    free(req);
}

/* Deliver answers detached from the pending list.  Caller does not hold lock. */
static void deliver(struct lookup_req *list)
{
    while (list != NULL) {
        struct lookup_req *next = list->next;

        tern_srv_log(2, "lookup by rank %u answered: %s (%zu value(s))",
                     (unsigned)list->requester.rank, PMIx_Error_string(list->status),
                     list->npdata);
        if (list->cbfunc != NULL) {
            list->cbfunc(list->status, list->pdata, list->npdata, list->cbdata);
        }
        free_req(list);
        list = next;
    }
}

/* Move every pending lookup that is now satisfied (or, if now_ms > 0, has
 * timed out) to the returned list, answers filled.  Caller holds lock. */
static struct lookup_req *take_ready(long now_ms)
{
    struct lookup_req **pp = &pending, *ready = NULL, **tail = &ready;

    while (*pp != NULL) {
        struct lookup_req *req = *pp;
        bool done = count_found(req->keys, req->nkeys) >= req->nwait;
        bool expired = !done && now_ms > 0 && req->deadline_ms > 0 && now_ms >= req->deadline_ms;

        if (!done && !expired) {
            pp = &req->next;
            continue;
        }
        *pp = req->next;
        req->next = NULL;
        if (done) {
            build_answer(req);
        } else {
            req->status = PMIX_ERR_TIMEOUT;
        }
        *tail = req;
        tail = &req->next;
    }
    return ready;
}

/* ---- publish ------------------------------------------------------------ */

pmix_status_t tern_srv_publish(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                               pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    struct lookup_req *ready;
    pmix_status_t rc = PMIX_SUCCESS;
    size_t nadded = 0;

    pthread_mutex_lock(&lock);
    /* all or nothing: reject the whole request if any key already exists */
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_RESERVED_KEY(info[i].key)) {
            continue; /* directives (range, persistence, requester ids) */
        }
        if (find_key(info[i].key) != NULL) {
            tern_srv_log(1, "publish of '%s' by rank %u: key already published",
                         info[i].key, (unsigned)proc->rank);
            rc = PMIX_ERR_DUPLICATE_KEY;
            goto out_unlock;
        }
        for (size_t k = 0; k < i; k++) {
            if (!PMIX_CHECK_RESERVED_KEY(info[k].key) &&
                strncmp(info[k].key, info[i].key, PMIX_MAX_KEYLEN) == 0) {
                rc = PMIX_ERR_DUPLICATE_KEY;
                goto out_unlock;
            }
        }
    }
    for (size_t i = 0; i < ninfo; i++) {
        struct pub_entry *e;

        if (PMIX_CHECK_RESERVED_KEY(info[i].key)) {
            continue;
        }
        e = calloc(1, sizeof(*e));
        if (e == NULL) {
            rc = PMIX_ERR_NOMEM;
            break;
        }
        PMIX_LOAD_KEY(e->key, info[i].key);
        e->owner = *proc;
        if (PMIx_Value_xfer(&e->value, (pmix_value_t *)&info[i].value) != PMIX_SUCCESS) {
            free(e);
            rc = PMIX_ERR_NOMEM;
            break;
        }
        e->next = table;
        table = e;
        nadded++;
        tern_srv_log(2, "rank %u published '%s'", (unsigned)proc->rank, e->key);
    }
out_unlock:
    ready = take_ready(0);
    pthread_mutex_unlock(&lock);

    deliver(ready);
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    if (nadded == 0) {
        tern_srv_log(1, "publish by rank %u carried no data", (unsigned)proc->rank);
    }
    if (cbfunc != NULL) {
        cbfunc(PMIX_SUCCESS, cbdata);
    }
    return PMIX_SUCCESS;
}

/* ---- lookup ------------------------------------------------------------- */

/* PMIX_WAIT: int count (0 = all keys) or bool; PMIX_TIMEOUT: seconds. */
static void lookup_directives(const pmix_info_t info[], size_t ninfo, size_t nkeys,
                              size_t *nwait, long *timeout_s)
{
    *nwait = 0;
    *timeout_s = 0;
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_value_t *v = &info[i].value;

        if (PMIX_CHECK_KEY(&info[i], PMIX_WAIT)) {
            long want = 0;

            switch (v->type) {
            case PMIX_BOOL:
                want = v->data.flag ? 0 : -1;
                break;
            case PMIX_INT:
                want = v->data.integer;
                break;
            case PMIX_INT32:
                want = v->data.int32;
                break;
            case PMIX_UINT32:
                want = (long)v->data.uint32;
                break;
            case PMIX_SIZE:
                want = (long)v->data.size;
                break;
            default:
                want = 0; /* presence alone means "wait for all" */
                break;
            }
            if (want >= 0) {
                *nwait = (want == 0 || (size_t)want > nkeys) ? nkeys : (size_t)want;
            }
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT)) {
            if (v->type == PMIX_INT && v->data.integer > 0) {
                *timeout_s = v->data.integer;
            } else if (v->type == PMIX_INT32 && v->data.int32 > 0) {
                *timeout_s = v->data.int32;
            } else if (v->type == PMIX_UINT32) {
                *timeout_s = (long)v->data.uint32;
            }
        }
    }
}

pmix_status_t tern_srv_lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                              size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    struct lookup_req *req;
    size_t nkeys = 0;
    long timeout_s;

    while (keys != NULL && keys[nkeys] != NULL) {
        nkeys++;
    }
    if (nkeys == 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    req = calloc(1, sizeof(*req));
    if (req == NULL) {
        return PMIX_ERR_NOMEM;
    }
    req->keys = calloc(nkeys + 1, sizeof(char *));
    if (req->keys == NULL) {
        free(req);
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < nkeys; i++, req->nkeys++) {
        req->keys[i] = strdup(keys[i]);
        if (req->keys[i] == NULL) {
            free_req(req);
            return PMIX_ERR_NOMEM;
        }
    }
    req->requester = *proc;
    req->cbfunc = cbfunc;
    req->cbdata = cbdata;
    lookup_directives(info, ninfo, nkeys, &req->nwait, &timeout_s);
    if (timeout_s > 0) {
        req->deadline_ms = tern_srv_now_ms() + timeout_s * 1000;
    }

    pthread_mutex_lock(&lock);
    if (req->nwait > 0 && count_found(req->keys, nkeys) < req->nwait) {
        /* PMIX_WAIT: answered by the publish that completes it, or expiry */
        req->next = pending;
        pending = req;
        pthread_mutex_unlock(&lock);
        tern_srv_log(2, "lookup of '%s'%s by rank %u waits for a publish", keys[0],
                     nkeys > 1 ? " (and more)" : "", (unsigned)proc->rank);
        return PMIX_SUCCESS;
    }
    build_answer(req);
    pthread_mutex_unlock(&lock);

    deliver(req);
    return PMIX_SUCCESS;
}

/* ---- unpublish ---------------------------------------------------------- */

static bool same_proc(const pmix_proc_t *a, const pmix_proc_t *b)
{
    return a->rank == b->rank && strncmp(a->nspace, b->nspace, PMIX_MAX_NSLEN) == 0;
}

static bool key_listed(char **keys, const char *key)
{
    for (size_t i = 0; keys[i] != NULL; i++) {
        if (strncmp(keys[i], key, PMIX_MAX_KEYLEN) == 0) {
            return true;
        }
    }
    return false;
}

/* Removes the caller's own entries for keys (all of them if keys is NULL). */
pmix_status_t tern_srv_unpublish(const pmix_proc_t *proc, char **keys,
                                 const pmix_info_t info[], size_t ninfo,
                                 pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    struct pub_entry **pp, *dead = NULL;
    (void)info;
    (void)ninfo;
    pthread_mutex_lock(&lock);
    pp = &table;
    while (*pp != NULL) {
        struct pub_entry *e = *pp;

        if (same_proc(&e->owner, proc) && (keys == NULL || key_listed(keys, e->key))) {
            *pp = e->next;
            e->next = dead;
            dead = e;
        } else {
            if (keys != NULL && key_listed(keys, e->key)) {
                tern_srv_log(1, "unpublish of '%s' by rank %u: published by rank %u, kept",
                             e->key, (unsigned)proc->rank, (unsigned)e->owner.rank);
            }
            pp = &e->next;
        }
    }
    pthread_mutex_unlock(&lock);

    while (dead != NULL) {
        struct pub_entry *next = dead->next;

        tern_srv_log(2, "rank %u unpublished '%s'", (unsigned)proc->rank, dead->key);
        PMIx_Value_destruct(&dead->value);
        free(dead);
        dead = next;
    }
    if (cbfunc != NULL) {
        cbfunc(PMIX_SUCCESS, cbdata);
    }
    return PMIX_SUCCESS;
}

/* ---- host side ---------------------------------------------------------- */

int tern_srv_pubsub_expire(void)
{
    struct lookup_req *ready;
    int left = 0;

    pthread_mutex_lock(&lock);
    ready = take_ready(tern_srv_now_ms());
    for (struct lookup_req *r = pending; r != NULL; r = r->next) {
        left++;
    }
    pthread_mutex_unlock(&lock);
    deliver(ready);
    return left;
}

void tern_srv_pubsub_shutdown(void)
{
    struct lookup_req *all;
    struct pub_entry *entries;

    pthread_mutex_lock(&lock);
    all = pending;
    pending = NULL;
    entries = table;
    table = NULL;
    pthread_mutex_unlock(&lock);

    for (struct lookup_req *r = all; r != NULL; r = r->next) {
        r->status = PMIX_ERR_NOT_FOUND;
    }
    deliver(all);
    while (entries != NULL) {
        struct pub_entry *next = entries->next;

        PMIx_Value_destruct(&entries->value);
        free(entries);
        entries = next;
    }
}
