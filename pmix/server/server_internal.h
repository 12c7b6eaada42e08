/*
 * Private to the PMIx host-server module (server_module.c, server_pubsub.c,
 * server_log.c, server_query.c, server_jobctl.c, server_connect.c,
 * server_spawn.c).
 */
#ifndef TERN_PMIX_SERVER_INTERNAL_H
#define TERN_PMIX_SERVER_INTERNAL_H

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include "pmix/server/server_module.h"

#include <pmix.h>

extern struct tern_srv_hooks tern_srv_hooks;

void tern_srv_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
long tern_srv_now_ms(void);
/* Run fn(arg) on a detached thread of its own: 0, or -1 when none started
 * (the caller answers itself).  Module functions whose answer PMIx must
 * not get from inside the upcall use it: OpenPMIx 4.2's frameworks (plog,
 * ...) hold a lock around the upcall that their completion callback takes
 * too, and an answer given inside hung the client and the server's
 * progress thread (PMIx_Log, seen). */
int tern_srv_defer(void *(*fn)(void *), void *arg);
/* cbfunc(status, cbdata) / cbfunc(status, info, ninfo, ...) from a thread
 * of its own (tern_srv_defer).  0: it will be called (info, if any, is
 * then owned and freed here); -1: nothing started, nothing taken. */
int tern_srv_answer_op(pmix_op_cbfunc_t cbfunc, void *cbdata, pmix_status_t status);
int tern_srv_answer_info(pmix_info_cbfunc_t cbfunc, void *cbdata, pmix_status_t status,
                         pmix_info_t *info, size_t ninfo);

/* server_pubsub.c */
pmix_status_t tern_srv_publish(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                               pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t tern_srv_lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                              size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata);
pmix_status_t tern_srv_unpublish(const pmix_proc_t *proc, char **keys,
                                 const pmix_info_t info[], size_t ninfo,
                                 pmix_op_cbfunc_t cbfunc, void *cbdata);
int tern_srv_pubsub_expire(void);
void tern_srv_pubsub_shutdown(void);

/* server_query.c: the module's .query (PMIx_Query_info) */
pmix_status_t tern_srv_query(pmix_proc_t *requester, pmix_query_t *queries, size_t nqueries,
                             pmix_info_cbfunc_t cbfunc, void *cbdata);

/* server_jobctl.c: the module's .job_control (PMIx_Job_control) */
pmix_status_t tern_srv_job_control(const pmix_proc_t *requestor, const pmix_proc_t targets[],
                                   size_t ntargets, const pmix_info_t directives[],
                                   size_t ndirs, pmix_info_cbfunc_t cbfunc, void *cbdata);

/* server_connect.c: .connect, .disconnect, .group */
pmix_status_t tern_srv_connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                               size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t tern_srv_disconnect(const pmix_proc_t procs[], size_t nprocs,
                                  const pmix_info_t info[], size_t ninfo,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t tern_srv_group(pmix_group_operation_t op, char grp[], const pmix_proc_t procs[],
                             size_t nprocs, const pmix_info_t directives[], size_t ndirs,
                             pmix_info_cbfunc_t cbfunc, void *cbdata);

/* server_spawn.c: the module's .spawn (PMIx_Spawn) */
pmix_status_t tern_srv_spawn(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
                             const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                             void *cbdata);

/* server_log.c: the module's .log (PMIx_Log of a client) */
void tern_srv_log_request(const pmix_proc_t *client, const pmix_info_t data[], size_t ndata,
                          const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc,
                          void *cbdata);

#endif /* TERN_PMIX_SERVER_INTERNAL_H */
