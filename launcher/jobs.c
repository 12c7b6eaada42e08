/*
 * The namespaces ternrun runs: the first job and the ones its ranks spawn.
 *
 * Each namespace owns its ranks; job->all lists every rank of every
 * namespace in start order (a rank's slot), which is also its stream index
 * in the IOF engine.  Namespaces and ranks are only added, never removed,
 * so pointers to them stay valid until ternrun exits; the PMIx hooks read
 * job->ns / job->all under job->lock, which the main thread holds while it
 * appends.
 */
#include "launcher/job.h"
#include "launcher/iof/iof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ternrun_ns *ternrun_ns_add(struct ternrun_job *job, int nranks, int parent)
{
    struct ternrun_ns *ns;
    int first;

    if (job->nns == TERNRUN_MAX_NSPACES) {
        ternrun_err("cannot start another job: %d jobs already", TERNRUN_MAX_NSPACES);
        return NULL;
    }
    if (nranks < 1 || nranks > TERNRUN_MAX_RANKS - job->nall) {
        ternrun_err("cannot start %d more rank(s): %d of at most %d already", nranks, job->nall,
                    TERNRUN_MAX_RANKS);
        return NULL;
    }
    if (job->all == NULL && (job->all = calloc(TERNRUN_MAX_RANKS, sizeof(*job->all))) == NULL) {
        goto nomem;
    }
    ns = calloc(1, sizeof(*ns));
    if (ns == NULL) {
        goto nomem;
    }
    ns->ranks = calloc((size_t)nranks, sizeof(*ns->ranks));
    if (ns->ranks == NULL) {
        free(ns);
        goto nomem;
    }
    first = job->iof != NULL ? tern_iof_add_ranks(job->iof, nranks, job->nns) : job->nall;
    if (first != job->nall) {
        free(ns->ranks);
        free(ns);
        goto nomem;
    }
    ns->index = job->nns;
    ns->nranks = nranks;
    ns->parent = parent;
    /* [A-Za-z0-9._-] only: it names files (/dev/shm/tern-<nspace>-*) */
    if (ns->index == 0) {
        snprintf(ns->name, sizeof(ns->name), "ternrun-%ld", (long)getpid());
    } else {
        snprintf(ns->name, sizeof(ns->name), "ternrun-%ld.%d", (long)getpid(), ns->index);
    }
    /* with a terminal on stdin the ranks stay in ternrun's process group, so
     * rank 0 may read the terminal and ^C reaches everyone; otherwise each
     * rank leads its own group and signals reach its helpers too */
    bool own_pgrp = !isatty(STDIN_FILENO);
    for (int i = 0; i < nranks; i++) {
        struct ternrun_rank *r = &ns->ranks[i];

        r->rank = i;
        r->slot = job->nall + i;
        r->ns = ns;
        r->core = -1;
        r->own_pgrp = own_pgrp;
        for (int k = 0; k < 4; k++) {
            r->child_fd[k] = -1;
        }
    }
    pthread_mutex_lock(&job->lock);
    for (int i = 0; i < nranks; i++) {
        job->all[job->nall + i] = &ns->ranks[i];
    }
    job->nall += nranks;
    job->ns[job->nns++] = ns;
    pthread_mutex_unlock(&job->lock);
    return ns;

nomem:
    ternrun_err("out of memory for %d more rank(s)", nranks);
    return NULL;
}

char *ternrun_ns_keep(struct ternrun_ns *ns, char *s)
{
    char **tmp;

    if (s == NULL || (tmp = realloc(ns->owned, (ns->nowned + 1) * sizeof(*tmp))) == NULL) {
        free(s);
        return NULL;
    }
    ns->owned = tmp;
    ns->owned[ns->nowned++] = s;
    return s;
}

int ternrun_ns_keep_argv(struct ternrun_ns *ns, char **argv)
{
    char ***tmp = realloc(ns->argvs, (ns->nargvs + 1) * sizeof(*tmp));

    if (tmp == NULL) {
        return -1;
    }
    ns->argvs = tmp;
    ns->argvs[ns->nargvs++] = argv;
    return 0;
}

bool ternrun_ns_descends(const struct ternrun_job *job, const struct ternrun_ns *d,
                         const struct ternrun_ns *a)
{
    /* parents have lower indices: the walk ends */
    while (d != NULL) {
        if (d == a) {
            return true;
        }
        d = d->parent >= 0 ? job->ns[d->parent] : NULL;
    }
    return false;
}

void ternrun_ns_free_all(struct ternrun_job *job)
{
    for (int k = 0; k < job->nns; k++) {
        struct ternrun_ns *ns = job->ns[k];

        for (int i = 0; i < ns->nranks; i++) {
            ternrun_env_free(ns->ranks[i].env);
            free(ns->ranks[i].abort_msg);
            free(ns->ranks[i].cpuset);
        }
        for (size_t i = 0; i < ns->nowned; i++) {
            free(ns->owned[i]);
        }
        for (size_t i = 0; i < ns->nargvs; i++) {
            for (size_t j = 0; ns->argvs[i][j] != NULL; j++) {
                free(ns->argvs[i][j]);
            }
            free(ns->argvs[i]);
        }
        free(ns->owned);
        free(ns->argvs);
        free(ns->ranks);
        free(ns);
        job->ns[k] = NULL;
    }
    job->nns = 0;
    free(job->all);
    job->all = NULL;
    job->nall = 0;
}
