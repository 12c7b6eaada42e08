/*
 * Ports (MPI_Open_port, MPI_Close_port, MPI_Comm_accept, MPI_Comm_connect,
 * MPI_Comm_join) and the name service (MPI_Publish_name, MPI_Lookup_name,
 * MPI_Unpublish_name); docs/mpi.md, "Dynamic processes".
 *
 * An MPI port name says which process opened it and which of its ports it
 * is, and how a process of another job reaches it:
 *   tern-mpi:<job, 16 hex>:<rank>:<port id>:<how>
 * how: the process's tern port address (tern_port_open), its zero runs
 * squeezed, in base64url, when that fits MPI_MAX_PORT_NAME; else "@", the
 * address published in the launcher's name service under
 * tern-mpi-addr:<job>:<rank>; "-" when it takes no connection from other
 * jobs (no netmod of it takes ports: it still serves its own job).
 *
 * MPI_Comm_connect's root reaches that process (a rank of its own job as it
 * is, a process of another job through the address, once: dyn_peers.c)
 * and sends it a connection request naming itself, the port and a
 * conversation number; the root of MPI_Comm_accept on that port answers
 * it (a request to a port closed since is refused), the connecting root
 * confirms, and the two roots' conversation is the link of the new
 * intercommunicator's steps (inter.c).
 *
 * A connect waits TERN_MPI_CONNECT_TIMEOUT seconds (its info key
 * "timeout") for the answer, then fails with MPI_ERR_PORT and withdraws
 * its request: an accept that takes it later reads the withdrawal where
 * it waits for the confirmation, and waits for the next request.  (Its
 * answer then stays unread in the connecting process, as the withdrawal
 * does in an accepting one that refused the request: one message each.)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tern/tagged.h>

#include "mpi/comm_ctx.h"
#include "mpi/dyn.h"

#define PREFIX "tern-mpi:"
#define MAX_PORTS 64
#define ADDR_MAX (TERN_PORT_NAME_MAX / 2)

typedef struct connreq {
    uint32_t magic, zero;
    uint64_t job;
    int32_t rank, zero2;
    uint64_t conv;
} connreq_t;

typedef struct answer {
    uint32_t magic;
    int32_t err; /* the accepting root's: MPI_SUCCESS, or MPI_ERR_PORT: the port is
                  * closed; the connecting root's: MPI_SUCCESS (confirmed) or
                  * MPI_ERR_PORT (withdrawn: it gave up waiting) */
} answer_t;

static int open_ids[MAX_PORTS], nopen, next_id = 1;
static int closed_ids[MAX_PORTS], nclosed; /* the last closed: their requests refused */
static uint64_t next_conv = 1;
static bool addr_published;
static pthread_mutex_t port_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- port names ------------------------------------------------------------------ */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* zero runs as 0, count (addresses are mostly zeros: a tcp card's room) */
static size_t squeeze(const unsigned char *in, size_t n, unsigned char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (in[i] != 0) {
            out[o++] = in[i++];
            continue;
        }
        unsigned char z = 0;
        while (i < n && in[i] == 0 && z < 255)
            z++, i++;
        out[o++] = 0;
        out[o++] = z;
    }
    return o;
}

static bool unsqueeze(const unsigned char *in, size_t n, unsigned char *out, size_t max,
                      size_t *len)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i] != 0) {
            if (o == max)
                return false;
            out[o++] = in[i];
            continue;
        }
        if (++i == n || in[i] == 0 || o + in[i] > max)
            return false;
        memset(out + o, 0, in[i]);
        o += in[i];
    }
    *len = o;
    return true;
}

static void b64_encode(const unsigned char *in, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
                     (i + 2 < n ? in[i + 2] : 0);
        out[o++] = b64[v >> 18 & 63];
        out[o++] = b64[v >> 12 & 63];
        if (i + 1 < n)
            out[o++] = b64[v >> 6 & 63];
        if (i + 2 < n)
            out[o++] = b64[v & 63];
    }
    out[o] = '\0';
}

static bool b64_decode(const char *in, unsigned char *out, size_t max, size_t *len)
{
    size_t n = strlen(in), o = 0;
    uint32_t v = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = strchr(b64, in[i]);
        if (p == NULL || in[i] == '\0')
            return false;
        v = v << 6 | (uint32_t)(p - b64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o == max)
                return false;
            out[o++] = (unsigned char)(v >> bits);
        }
    }
    *len = o;
    return true;
}

typedef struct port {
    uint64_t job;
    int rank, id;
    char how[MPI_MAX_PORT_NAME]; /* base64 address, "@" or "-" */
} port_t;

static bool parse(const char *name, port_t *p)
{
    if (name == NULL || strnlen(name, MPI_MAX_PORT_NAME) == MPI_MAX_PORT_NAME ||
        strncmp(name, PREFIX, strlen(PREFIX)) != 0)
        return false;
    unsigned long long job;
    int used = 0;
    if (sscanf(name + strlen(PREFIX), "%16llx:%d:%d:%n", &job, &p->rank, &p->id, &used) != 3 ||
        used == 0)
        return false;
    p->job = job;
    snprintf(p->how, sizeof(p->how), "%s", name + strlen(PREFIX) + used);
    return p->rank >= 0 && p->id > 0 && p->how[0] != '\0';
}

static void addr_key(char *key, size_t len, uint64_t job, int rank)
{
    snprintf(key, len, "tern-mpi-addr:%016" PRIx64 ":%d", job, rank);
}

/* how this process is reached from other jobs, for a port name of n
 * characters so far */
static void how_reached(char *how, size_t room)
{
    char why[MPI_MAX_ERROR_STRING];
    const char *tp = mpi_dyn_self_port(why, sizeof(why));
    unsigned char addr[ADDR_MAX], sq[2 * ADDR_MAX];
    size_t alen = 0;
    snprintf(how, room, "-");
    if (tp == NULL || !mpi_dyn_addr_of(tp, addr, &alen, sizeof(addr)))
        return;
    size_t sl = squeeze(addr, alen, sq);
    if ((sl + 2) / 3 * 4 + 1 <= room) {
        b64_encode(sq, sl, how);
        return;
    }
    mpi_mt_lock(&port_lock);
    if (!addr_published) {
        char key[96];
        addr_key(key, sizeof(key), mpi_dyn_job(), tern_rank(mpi.ctx));
        addr_published = tern_publish(mpi.ctx, key, tp) == TERN_OK;
    }
    mpi_mt_unlock(&port_lock);
    if (addr_published)
        snprintf(how, room, "@");
}

int mpi_dyn_open_port(char *name, const char *call)
{
    (void)call;
    mpi_mt_lock(&port_lock);
    if (nopen == MAX_PORTS) {
        mpi_mt_unlock(&port_lock);
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_PORT, "%s: %d ports open (close some)", call,
                         MAX_PORTS);
    }
    int id = next_id++;
    open_ids[nopen++] = id;
    mpi_mt_unlock(&port_lock);
    int n = snprintf(name, MPI_MAX_PORT_NAME, PREFIX "%016" PRIx64 ":%d:%d:", mpi_dyn_job(),
                     tern_rank(mpi.ctx), id);
    how_reached(name + n, MPI_MAX_PORT_NAME - (size_t)n);
    return MPI_SUCCESS;
}

static bool port_open(int id)
{
    bool yes = false;
    mpi_mt_lock(&port_lock);
    for (int i = 0; i < nopen && !yes; i++)
        yes = open_ids[i] == id;
    mpi_mt_unlock(&port_lock);
    return yes;
}

/* a port name of this process that is open: its id (0: not one) */
static int own_open(const char *name)
{
    port_t p;
    if (!parse(name, &p) || p.job != mpi_dyn_job() || p.rank != tern_rank(mpi.ctx))
        return 0;
    return port_open(p.id) ? p.id : 0;
}

void mpi_dyn_close_port(const char *name)
{
    int id = own_open(name);
    mpi_mt_lock(&port_lock);
    for (int i = 0; id > 0 && i < nopen; i++)
        if (open_ids[i] == id) {
            open_ids[i] = open_ids[--nopen];
            closed_ids[nclosed++ % MAX_PORTS] = id;
            break;
        }
    mpi_mt_unlock(&port_lock);
}

/* ---- requests and answers ---------------------------------------------------- */

static tern_status_t send_dyn(int peer, const void *buf, size_t len, uint64_t tag)
{
    tern_request_t *r = NULL;
    mpi_lock(mpi.workers[0]);
    tern_status_t st = tern_tsend(mpi.workers[0], buf, len, peer, tag, MPI_SPACE_DYN, NULL, &r);
    mpi_unlock(mpi.workers[0]);
    return st == TERN_INPROGRESS ? mpi_dyn_wait(r, NULL) : st;
}

static tern_status_t recv_dyn(int peer, void *buf, size_t len, uint64_t tag)
{
    tern_request_t *r = NULL;
    mpi_lock(mpi.workers[0]);
    tern_status_t st = tern_trecv(mpi.workers[0], buf, len, peer, tag, 0, MPI_SPACE_DYN, NULL,
                                  &r);
    mpi_unlock(mpi.workers[0]);
    return st == TERN_INPROGRESS ? mpi_dyn_wait(r, NULL) : st;
}

/* a connection request for port id that came in (claimed and received):
 * true with *req and its sender's peer id */
static bool take_request(uint64_t want, uint64_t ignore, connreq_t *req, int *peer,
                         uint64_t *tag)
{
    tern_worker_t *w = mpi.workers[0];
    int flag = 0;
    tern_message_t *m = NULL;
    tern_cq_entry_t ent;
    tern_request_t *r = NULL;
    mpi_lock(w);
    tern_status_t st = tern_tprobe(w, TERN_ANY_SOURCE, want, ignore, MPI_SPACE_DYN,
                                   TERN_PROBE_CLAIM, &flag, &m, &ent);
    if (st == TERN_OK && flag)
        st = tern_tmrecv(w, req, sizeof(*req), m, NULL, &r);
    mpi_unlock(w);
    if (!flag || (st != TERN_OK && st != TERN_INPROGRESS))
        return false;
    if (st == TERN_INPROGRESS && mpi_wait_tern(w, r, NULL) != TERN_OK)
        return false;
    if (req->magic != DYN_MAGIC)
        return false;
    *peer = ent.peer;
    *tag = ent.tag;
    mpi_dyn_known(req->job, req->rank, ent.peer); /* a port peer: who it is */
    return true;
}

/* the requests to ports closed here: refused, so that their roots do not
 * wait for ever (at MPI_Finalize: every request still waiting) */
static void refuse_closed(bool all)
{
    connreq_t req;
    int peer;
    uint64_t tag;
    answer_t no = {.magic = DYN_MAGIC, .err = MPI_ERR_PORT};
    for (int i = 0; i < (all ? 1 : nclosed < MAX_PORTS ? nclosed : MAX_PORTS); i++)
        while (take_request(all ? DYN_CONNREQ : DYN_CONNREQ | (uint32_t)closed_ids[i],
                            all ? ~DYN_KIND_MASK : 0, &req, &peer, &tag))
            (void)send_dyn(peer, &no, sizeof(no), DYN_LINK | (req.conv & ~DYN_KIND_MASK));
}

void mpi_dyn_finalize(void)
{
    refuse_closed(true);
}

/* ---- accept, connect ------------------------------------------------------------- */

/* The root's part done (status rc, raised there), every process of comm
 * learns it; then both sides make the intercommunicator. */
static int both_sides(int rc, const mpi_link_t *link, int root, MPI_Comm comm, MPI_Comm *out,
                      const char *call)
{
    int e = MPI_Bcast(&rc, 1, MPI_INT, root, comm);
    if (e != MPI_SUCCESS)
        return e;
    if (rc != MPI_SUCCESS)
        return mpi_comm_get(comm)->rank == root
                   ? rc
                   : mpi_raise(comm, rc, "%s: the root (rank %d) failed (its error says why)",
                               call, root);
    mpi_sides_t s = {.L = comm, .leader = root, .link = link, .errcomm = comm, .call = call};
    return mpi_inter_from_idents(&s, MPI_SUCCESS, mpi_comm_get(comm)->errh, out);
}

/* the checks of accept and connect (all processes) */
static int common_args(int root, MPI_Comm comm, MPI_Comm *out, const char *call)
{
    int e = mpi_check_comm(comm, call);
    if (e == MPI_SUCCESS)
        e = mpi_check_intra(comm, call);
    if (e == MPI_SUCCESS && out == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "%s: NULL new communicator pointer", call);
    if (e == MPI_SUCCESS && (root < 0 || root >= mpi_comm_get(comm)->size))
        e = mpi_raise(comm, MPI_ERR_ROOT, "%s: root %d (the communicator has %d)", call, root,
                      mpi_comm_get(comm)->size);
    if (e == MPI_SUCCESS)
        *out = MPI_COMM_NULL;
    return e;
}

int mpi_dyn_accept(const char *name, int root, MPI_Comm comm, MPI_Comm *out, const char *call)
{
    int e = common_args(root, comm, out, call);
    if (e != MPI_SUCCESS)
        return e;
    int rc = MPI_SUCCESS, id = 0;
    mpi_link_t link = {.w = mpi.workers[0], .space = MPI_SPACE_DYN};
    if (mpi_comm_get(comm)->rank == root && (id = own_open(name)) == 0)
        rc = mpi_raise(comm, MPI_ERR_PORT, "%s: \"%.80s\" is not a port this process opened "
                       "(or it was closed)", call, name != NULL ? name : "(null)");
    while (rc == MPI_SUCCESS && id > 0) {
        connreq_t req;
        uint64_t tag;
        mpi_dyn_pump();
        refuse_closed(false);
        if (take_request(DYN_CONNREQ | (uint32_t)id, 0, &req, &link.peer, &tag)) {
            answer_t yes = {.magic = DYN_MAGIC, .err = MPI_SUCCESS}, conf = {0};
            link.tag = DYN_LINK | (req.conv & ~DYN_KIND_MASK);
            tern_status_t st = send_dyn(link.peer, &yes, sizeof(yes), link.tag);
            if (st == TERN_OK)
                st = recv_dyn(link.peer, &conf, sizeof(conf), link.tag);
            if (st != TERN_OK)
                rc = mpi_raise(comm, MPI_ERR_PORT, "%s: answering the connecting process: %s",
                               call, tern_last_error());
            else if (conf.magic != DYN_MAGIC)
                rc = mpi_raise(comm, MPI_ERR_INTERN, "%s: the connecting process's "
                               "confirmation is damaged", call);
            if (rc != MPI_SUCCESS || conf.err == MPI_SUCCESS)
                break;
            continue; /* withdrawn (it timed out): the next request */
        }
        mpi_block();
    }
    return both_sides(rc, &link, root, comm, out, call);
}

/* The opener of p as a tern peer id (reached now if it was not), or an
 * error raised on comm. */
static int reach_opener(const port_t *p, const char *tern_port, MPI_Comm comm, int *peer,
                        const char *call)
{
    mpi_ident_t id = {.job = p->job, .rank = p->rank};
    if ((*peer = mpi_ident_peer(&id)) >= 0)
        return MPI_SUCCESS;
    if (p->job == mpi_dyn_job())
        return mpi_raise(comm, MPI_ERR_PORT, "%s: the port names rank %d of this job, which has "
                         "%d", call, p->rank, tern_size(mpi.ctx));
    char tp[TERN_PORT_NAME_MAX];
    unsigned char sq[2 * ADDR_MAX], addr[ADDR_MAX];
    size_t sl = 0, alen = 0;
    if (tern_port != NULL && tern_port[0] != '\0') {
        snprintf(tp, sizeof(tp), "%s", tern_port);
    } else if (strcmp(p->how, "@") == 0) {
        char key[96], *v = NULL;
        addr_key(key, sizeof(key), p->job, p->rank);
        if (tern_lookup(mpi.ctx, key, &v) != TERN_OK)
            return mpi_raise(comm, MPI_ERR_PORT, "%s: the port's address is in the launcher's "
                             "name service, which does not give it: %s", call,
                             tern_last_error());
        snprintf(tp, sizeof(tp), "%s", v);
        free(v);
    } else if (strcmp(p->how, "-") == 0) {
        return mpi_raise(comm, MPI_ERR_PORT, "%s: the port's process takes no connection from "
                         "another job (no netmod of it takes ports: TERN_NETMODS?)", call);
    } else if (!b64_decode(p->how, sq, sizeof(sq), &sl) ||
               !unsqueeze(sq, sl, addr, sizeof(addr), &alen)) {
        return mpi_raise(comm, MPI_ERR_PORT, "%s: the port name's address is damaged", call);
    } else {
        mpi_dyn_port_of(addr, alen, tp);
    }
    tern_job_t *j = NULL;
    mpi_lock(mpi.workers[0]);
    tern_status_t st = tern_port_connect(mpi.ctx, tp, &j);
    mpi_unlock(mpi.workers[0]);
    if (st != TERN_OK)
        return mpi_raise(comm, MPI_ERR_PORT, "%s: %s", call, tern_last_error());
    *peer = tern_job_peer(j, 0);
    mpi_dyn_known(p->job, p->rank, *peer);
    return MPI_SUCCESS;
}

int mpi_dyn_connect(const char *name, const char *tern_port, int root, MPI_Comm comm,
                    MPI_Comm *out, const char *call)
{
    return mpi_dyn_connect_info(name, tern_port, root, comm, MPI_INFO_NULL, out, call);
}

/* MPICH's info key "timeout": seconds, a positive integer; else
 * TERN_MPI_CONNECT_TIMEOUT */
static int connect_timeout(MPI_Info info, MPI_Comm comm, uint64_t *secs, const char *call)
{
    *secs = mpi.cfg.connect_timeout;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    if (!mpi_info_ok(info))
        return mpi_raise(comm, MPI_ERR_INFO, "%s: info %d is not an info object", call, info);
    if (MPI_Info_get(info, "timeout", MPI_MAX_INFO_VAL, v, &flag) != MPI_SUCCESS || !flag)
        return MPI_SUCCESS;
    char *end = NULL;
    unsigned long long n = strtoull(v, &end, 10);
    if (end == v || *end != '\0' || v[0] == '-' || n == 0 || n > (1u << 30))
        return mpi_raise(comm, MPI_ERR_INFO_VALUE, "%s: info key \"timeout\" is \"%.40s\": "
                         "seconds from 1 to %u", call, v, 1u << 30);
    *secs = n;
    return MPI_SUCCESS;
}

/* The connecting root's wait for the answer to its request (r: its
 * receive, NULL when it came at once; *ans its buffer), at most timeout_s
 * seconds (0: no limit); then it confirms or withdraws.
 * TERN_ERR_TIMED_OUT: withdrawn. */
static tern_status_t await_answer(tern_request_t *r, const answer_t *ans, const mpi_link_t *link,
                                  uint64_t timeout_s)
{
    tern_status_t st = r == NULL ? TERN_OK
                                 : mpi_dyn_wait_until(r, NULL, timeout_s ? MPI_Wtime() +
                                                                               (double)timeout_s
                                                                         : 0);
    bool withdraw = false;
    if (st == TERN_ERR_TIMED_OUT) {
        mpi_lock(mpi.workers[0]);
        (void)tern_cancel(mpi.workers[0], r);
        mpi_unlock(mpi.workers[0]);
        st = mpi_dyn_wait(r, NULL); /* TERN_ERR_CANCELED, or the answer came meanwhile */
        withdraw = st == TERN_ERR_CANCELED;
    }
    if (st != TERN_OK && !withdraw)
        return st;
    if (!withdraw && (ans->magic != DYN_MAGIC || ans->err != MPI_SUCCESS))
        return TERN_OK; /* refused: nothing to confirm */
    answer_t conf = {.magic = DYN_MAGIC, .err = withdraw ? MPI_ERR_PORT : MPI_SUCCESS};
    st = send_dyn(link->peer, &conf, sizeof(conf), link->tag);
    return withdraw ? TERN_ERR_TIMED_OUT : st;
}

int mpi_dyn_connect_info(const char *name, const char *tern_port, int root, MPI_Comm comm,
                         MPI_Info info, MPI_Comm *out, const char *call)
{
    int e = common_args(root, comm, out, call);
    uint64_t timeout_s = 0;
    if (e != MPI_SUCCESS)
        return e;
    int rc = MPI_SUCCESS;
    mpi_link_t link = {.w = mpi.workers[0], .space = MPI_SPACE_DYN};
    port_t p;
    if (mpi_comm_get(comm)->rank == root) {
        rc = connect_timeout(info, comm, &timeout_s, call);
        if (rc == MPI_SUCCESS && !parse(name, &p))
            rc = mpi_raise(comm, MPI_ERR_PORT, "%s: \"%.80s\" is not a port name (%s...)", call,
                           name != NULL ? name : "(null)", PREFIX);
        if (rc == MPI_SUCCESS)
            rc = reach_opener(&p, tern_port, comm, &link.peer, call);
    }
    if (mpi_comm_get(comm)->rank == root && rc == MPI_SUCCESS) {
        mpi_mt_lock(&port_lock);
        uint64_t conv = next_conv++;
        mpi_mt_unlock(&port_lock);
        connreq_t req = {.magic = DYN_MAGIC, .job = mpi_dyn_job(), .rank = tern_rank(mpi.ctx),
                         .conv = conv};
        answer_t ans = {0};
        link.tag = DYN_LINK | conv;
        tern_request_t *r = NULL;
        mpi_lock(mpi.workers[0]); /* the answer's receive first */
        tern_status_t st = tern_trecv(mpi.workers[0], &ans, sizeof(ans), link.peer, link.tag, 0,
                                      MPI_SPACE_DYN, NULL, &r);
        mpi_unlock(mpi.workers[0]);
        tern_status_t ss = st == TERN_OK || st == TERN_INPROGRESS
                               ? send_dyn(link.peer, &req, sizeof(req),
                                          DYN_CONNREQ | (uint32_t)p.id)
                               : st;
        if (ss != TERN_OK && st == TERN_INPROGRESS) {
            mpi_lock(mpi.workers[0]);
            (void)tern_cancel(mpi.workers[0], r);
            mpi_unlock(mpi.workers[0]);
        }
        if ((st == TERN_INPROGRESS || st == TERN_OK) && ss == TERN_OK)
            st = await_answer(st == TERN_OK ? NULL : r, &ans, &link, timeout_s); /* a process
                                                                                  * gone fails it */
        else if (st == TERN_INPROGRESS)
            st = mpi_dyn_wait(r, NULL);
        if (st == TERN_ERR_TIMED_OUT)
            rc = mpi_raise(comm, MPI_ERR_PORT, "%s: no MPI_Comm_accept on port %d of rank %d of "
                           "job %016" PRIx64 " within %llu s (TERN_MPI_CONNECT_TIMEOUT, or the "
                           "info key \"timeout\")", call, p.id, p.rank, p.job,
                           (unsigned long long)timeout_s);
        else if (ss != TERN_OK || st != TERN_OK)
            rc = mpi_raise(comm, MPI_ERR_PORT, "%s: the port's process (rank %d of job %016" PRIx64
                           "): %s", call, p.rank, p.job, tern_last_error());
        else if (ans.magic != DYN_MAGIC || ans.err != MPI_SUCCESS)
            rc = mpi_raise(comm, MPI_ERR_PORT, "%s: port %d of rank %d of job %016" PRIx64 " is "
                           "closed", call, p.id, p.rank, p.job);
    }
    return both_sides(rc, &link, root, comm, out, call);
}

/* ---- the MPI calls ------------------------------------------------------------------ */

int MPI_Open_port(MPI_Info info, char *port_name)
{
    static const char call[] = "MPI_Open_port";
    int e = mpi_check_init(call);
    if (e == MPI_SUCCESS && port_name == NULL)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL port name", call);
    if (e == MPI_SUCCESS && !mpi_info_ok(info))
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_INFO, "%s: info %d is not an info object", call,
                      info);
    return e == MPI_SUCCESS ? mpi_dyn_open_port(port_name, call) : e;
}

int MPI_Close_port(const char *port_name)
{
    static const char call[] = "MPI_Close_port";
    int e = mpi_check_init(call);
    if (e == MPI_SUCCESS && own_open(port_name) == 0)
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_PORT, "%s: \"%.80s\" is not a port this process "
                      "has open", call, port_name != NULL ? port_name : "(null)");
    if (e == MPI_SUCCESS) {
        mpi_dyn_close_port(port_name);
        refuse_closed(false);
    }
    return e;
}

int MPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                    MPI_Comm *newcomm)
{
    (void)info; /* no hint is read */
    return mpi_dyn_accept(port_name, root, comm, newcomm, "MPI_Comm_accept");
}

int MPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm *newcomm)
{
    return mpi_dyn_connect_info(port_name, NULL, root, comm, info, newcomm, "MPI_Comm_connect");
}

/* all of len bytes of buf through fd, each way */
static bool fd_all(int fd, void *buf, size_t len, bool out)
{
    for (size_t done = 0; done < len;) {
        ssize_t n = out ? write(fd, (char *)buf + done, len - done)
                        : read(fd, (char *)buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += (size_t)n;
    }
    return true;
}

/* Over a connected socket: each side opens a port and sends the other its
 * name and its tern port address; the side with the lower name accepts, the
 * other connects, each over MPI_COMM_SELF. */
int MPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    static const char call[] = "MPI_Comm_join";
    int e = mpi_check_init(call);
    if (e == MPI_SUCCESS && intercomm == NULL)
        e = mpi_raise(MPI_COMM_SELF, MPI_ERR_ARG, "%s: NULL new communicator pointer", call);
    if (e == MPI_SUCCESS && fd < 0)
        e = mpi_raise(MPI_COMM_SELF, MPI_ERR_ARG, "%s: file descriptor %d", call, fd);
    if (e != MPI_SUCCESS)
        return e;
    struct {
        char name[MPI_MAX_PORT_NAME];
        char tern[TERN_PORT_NAME_MAX];
    } mine, theirs;
    memset(&mine, 0, sizeof(mine));
    char why[MPI_MAX_ERROR_STRING];
    if ((e = mpi_dyn_open_port(mine.name, call)) != MPI_SUCCESS)
        return e;
    const char *tp = mpi_dyn_self_port(why, sizeof(why));
    if (tp != NULL)
        snprintf(mine.tern, sizeof(mine.tern), "%s", tp);
    if (!fd_all(fd, &mine, sizeof(mine), true) || !fd_all(fd, &theirs, sizeof(theirs), false)) {
        int err = errno;
        mpi_dyn_close_port(mine.name);
        return mpi_raise(MPI_COMM_SELF, MPI_ERR_OTHER, "%s: exchanging port names over file "
                         "descriptor %d: %s", call, fd, err ? strerror(err) : "end of file");
    }
    theirs.name[sizeof(theirs.name) - 1] = theirs.tern[sizeof(theirs.tern) - 1] = '\0';
    int order = strcmp(mine.name, theirs.name);
    if (order == 0)
        e = mpi_raise(MPI_COMM_SELF, MPI_ERR_OTHER, "%s: the other end is this process", call);
    else if (order < 0)
        e = mpi_dyn_accept(mine.name, 0, MPI_COMM_SELF, intercomm, call);
    else
        e = mpi_dyn_connect(theirs.name, theirs.tern, 0, MPI_COMM_SELF, intercomm, call);
    mpi_dyn_close_port(mine.name);
    return e;
}

/* ---- the name service ------------------------------------------------------------ */

static int service_args(const char *service, MPI_Info info, const void *port, const char *call)
{
    int e = mpi_check_init(call);
    if (e == MPI_SUCCESS && (service == NULL || service[0] == '\0' || port == NULL))
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL or empty service name, or NULL "
                      "port name", call);
    if (e == MPI_SUCCESS && !mpi_info_ok(info))
        e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_INFO, "%s: info %d is not an info object", call,
                      info);
    return e;
}

/* the launcher's key of a service (apart from tern's own keys) */
static void service_key(char *key, size_t len, const char *service)
{
    snprintf(key, len, "mpi-service:%s", service);
}

int MPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    static const char call[] = "MPI_Publish_name";
    char key[512];
    int e = service_args(service_name, info, port_name, call);
    if (e != MPI_SUCCESS)
        return e;
    service_key(key, sizeof(key), service_name);
    if (tern_publish(mpi.ctx, key, port_name) != TERN_OK)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_SERVICE, "%s: service \"%.80s\": %s", call,
                         service_name, tern_last_error());
    return MPI_SUCCESS;
}

int MPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    static const char call[] = "MPI_Lookup_name";
    char key[512], *v = NULL;
    int e = service_args(service_name, info, port_name, call);
    if (e != MPI_SUCCESS)
        return e;
    service_key(key, sizeof(key), service_name);
    tern_status_t st = tern_lookup(mpi.ctx, key, &v);
    if (st != TERN_OK)
        return mpi_raise(MPI_COMM_WORLD, st == TERN_ERR_NOT_FOUND ? MPI_ERR_NAME : MPI_ERR_SERVICE,
                         "%s: service \"%.80s\": %s", call, service_name, tern_last_error());
    snprintf(port_name, MPI_MAX_PORT_NAME, "%s", v);
    free(v);
    return MPI_SUCCESS;
}

int MPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    static const char call[] = "MPI_Unpublish_name";
    char key[512];
    int e = service_args(service_name, info, port_name, call);
    if (e != MPI_SUCCESS)
        return e;
    service_key(key, sizeof(key), service_name);
    /* a name nobody published is refused (the launcher's unpublish of a
     * missing key succeeds) */
    char *v = NULL;
    if (tern_lookup(mpi.ctx, key, &v) != TERN_OK)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_SERVICE, "%s: service \"%.80s\" is not "
                         "published: %s", call, service_name, tern_last_error());
    free(v);
    if (tern_unpublish(mpi.ctx, key) != TERN_OK)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_SERVICE, "%s: service \"%.80s\": %s", call,
                         service_name, tern_last_error());
    return MPI_SUCCESS;
}
