/*
 * ibloop: the shared-memory wire format of a fabric.
 *
 * A fabric is one file, /dev/shm/ibloop-<uid>-<fabric>, mapped MAP_SHARED by
 * every process that opened the ibloop0 device with the same IBLOOP_FABRIC.
 * Processes of different network namespaces share it (they share /dev/shm),
 * so this layout is a wire format between independent processes which may
 * even run different builds of the library: every size and offset below is
 * fixed, checked by static_assert, and the header's magic + version are
 * checked on attach (a mismatch refuses to attach rather than corrupting).
 *
 * The file is sparse: tables and the arena are only backed by memory where
 * they are touched.  All offsets are bytes from the start of the file.
 *
 *   0            struct ibloop_wire_hdr              (4 KiB)
 *   off_proc     struct ibloop_wire_proc [NPROC]     processes ("ports")
 *   off_host     struct ibloop_wire_host [NHOST]     hosts = network namespaces
 *   off_ctx      struct ibloop_wire_ctx  [NCTX]      device contexts
 *   off_qp       struct ibloop_wire_qp   [NQP]       queue pairs
 *   off_cq       struct ibloop_wire_cq   [NCQ]       completion queues
 *   off_srq      struct ibloop_wire_srq  [NSRQ]      shared receive queues
 *   off_chan     struct ibloop_wire_chan [NCHAN]     completion channels
 *   off_mr       struct ibloop_wire_mr   [NMR]       memory regions (l/rkeys)
 *   off_arena    rings (SQ, RQ, CQ) in power-of-two blocks (>= 4 KiB)
 *
 * Object identity: every table entry has an atomic 'gen'; 0 means free, any
 * other value is the generation of the live object (drawn from the header's
 * gen_counter, never reused while the fabric lives).  A reference to an
 * object is (index, gen) and is valid iff entry.gen == gen.  Entries are
 * allocated and freed only under the fabric lock (flock on the file), and
 * their memory is never unmapped while attached, so a stale reference is
 * always safe to read and always detected.
 *
 * Locks: ibloop_lock_t is a glibc pthread mutex, PROCESS_SHARED + ROBUST
 * (all processes of a fabric use the same glibc, so its 40-byte layout is
 * part of this format).  A process killed while holding one leaves it to the
 * next locker with EOWNERDEAD; every writer publishes its update with one
 * final store (an index or a gen), so a half-done update is never visible.
 * Lock order (never take an earlier one while holding a later one):
 *   QP lock  >  RQ/SRQ lock  >  CQ lock  >  context async lock
 * and a QP lock is never held while taking another QP's lock.
 */
#ifndef IBLOOP_WIRE_H
#define IBLOOP_WIRE_H

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define IBLOOP_WIRE_MAGIC 0x314f4f4c42490a31ull /* "1\nIBLOO1" */
#define IBLOOP_WIRE_VERSION 2u

#define IBLOOP_NPROC 256u
#define IBLOOP_NHOST 256u
#define IBLOOP_NCTX 256u
#define IBLOOP_NQP 16384u /* QPN = tag << 14 | index, tag 1..1023 */
#define IBLOOP_NCQ 4096u
#define IBLOOP_NSRQ 4096u
#define IBLOOP_NCHAN 4096u
#define IBLOOP_NMR 65536u /* key = index << 8 | tag, tag 1..255 */
#define IBLOOP_NASYNC 64u /* async events queued per context */
#define IBLOOP_QP_IDX_BITS 14u

#define IBLOOP_ARENA_MIN_ORDER 12u /* 4 KiB */
#define IBLOOP_ARENA_MAX_ORDER 31u /* 2 GiB */
#define IBLOOP_FILE_SIZE (4ull << 30) /* sparse */

typedef struct {
    pthread_mutex_t m;
} ibloop_lock_t;
static_assert(sizeof(ibloop_lock_t) == 40, "glibc x86-64 pthread_mutex_t");

/* ---- header (offset 0, 4096 bytes) ------------------------------------ */
struct ibloop_wire_hdr {
    _Atomic uint64_t magic;       /*   0: stored last at creation (R0)      */
    uint32_t version;             /*   8: IBLOOP_WIRE_VERSION                */
    uint32_t hdr_size;            /*  12: sizeof(struct ibloop_wire_hdr)     */
    uint64_t file_size;           /*  16: IBLOOP_FILE_SIZE                   */
    uint32_t link_layer;          /*  24: IBV_LINK_LAYER_* of every port     */
    uint32_t uid;                 /*  28: owner uid                          */
    uint32_t count[8];            /*  32: NPROC..NMR, checked on attach      */
    uint64_t off[9];              /*  64: proc..mr, arena                    */
    _Atomic uint32_t gen_counter; /* 136: source of object generations      */
    _Atomic uint32_t next_pd;     /* 140: PD ids                             */
    uint32_t next_lid;            /* 144: LIDs, monotonic (fabric lock)      */
    uint32_t entry_size[8];       /* 148: sizeof each table entry, checked   */
    uint32_t hwm[8];              /* 180: entries ever used per table (lock) */
    uint32_t pad0;                /* 212 */
    uint64_t arena_bump;          /* 216: arena bytes handed out (fab. lock) */
    uint64_t arena_free[32];      /* 224: per-order free list, offset or 0   */
    ibloop_lock_t atomic_lock;    /* 480: makes emulated atomics HCA-atomic  */
    uint8_t pad1[4096 - 520];
};
static_assert(offsetof(struct ibloop_wire_hdr, gen_counter) == 136, "hdr");
static_assert(offsetof(struct ibloop_wire_hdr, hwm) == 180, "hdr");
static_assert(offsetof(struct ibloop_wire_hdr, arena_free) == 224, "hdr");
static_assert(offsetof(struct ibloop_wire_hdr, atomic_lock) == 480, "hdr");
static_assert(sizeof(struct ibloop_wire_hdr) == 4096, "hdr");

/* ---- a process attached to the fabric: one port of one HCA ------------ */
struct ibloop_wire_proc {
    _Atomic uint32_t gen;       /*  0 */
    int32_t pid;                /*  4 */
    uint64_t start_time;        /*  8: /proc/<pid>/stat starttime (pid reuse) */
    uint64_t netns_ino;         /* 16 */
    uint32_t host;              /* 24: index in the host table */
    uint32_t lid;               /* 28: the host's LID */
    _Atomic uint32_t port_down; /* 32: fault injection: link is down */
    uint32_t pad[7];            /* 36 */
};
static_assert(sizeof(struct ibloop_wire_proc) == 64, "proc");

/* ---- a host: a network namespace, i.e. one LID and one GID ------------ */
struct ibloop_wire_host {
    _Atomic uint32_t gen; /*  0 */
    uint32_t lid;         /*  4 */
    uint64_t netns_ino;   /*  8 */
};
static_assert(sizeof(struct ibloop_wire_host) == 16, "host");

/* ---- async events of a context --------------------------------------- */
enum { IBLOOP_OBJ_PORT, IBLOOP_OBJ_QP, IBLOOP_OBJ_CQ, IBLOOP_OBJ_SRQ };

struct ibloop_wire_async_ev {
    uint32_t type; /* enum ibv_event_type */
    uint32_t kind; /* IBLOOP_OBJ_* */
    uint32_t idx;  /* table index (port number for PORT) */
    uint32_t gen;
};

/*
 * A context's async events: a ring written by any process under 'lock',
 * read by the owner.  'efd' is the owner's eventfd (its context->async_fd);
 * another process reaches it with pidfd_getfd() and checks 'efd_id' (the
 * eventfd-id of /proc/<pid>/fdinfo) before writing.  'token' is 1 while
 * the eventfd holds a count (the S1 protocol of ibloop_notify.c).
 * A producer writes ev[tail % N] then releases tail (R6); the owner
 * acquires tail (A6) before reading the event.  The owner releases head
 * after copying an event out (R7); a producer acquires head (A7) before
 * reusing that slot.
 */
struct ibloop_wire_ctx {
    ibloop_lock_t lock;              /*   0 */
    _Atomic uint32_t gen;            /*  40 */
    uint32_t proc;                   /*  44 */
    int32_t efd;                     /*  48 */
    uint32_t pad0;                   /*  52 */
    uint64_t efd_id;                 /*  56 */
    _Atomic uint32_t token;          /*  64 */
    uint32_t pad1;                   /*  68 */
    _Atomic uint64_t head;           /*  72: next to read (owner)      */
    _Atomic uint64_t tail;           /*  80: next to write (lock)      */
    _Atomic uint64_t dropped;        /*  88: events lost to a full ring */
    struct ibloop_wire_async_ev ev[IBLOOP_NASYNC]; /* 96 */
};
static_assert(offsetof(struct ibloop_wire_ctx, ev) == 96, "ctx");
static_assert(sizeof(struct ibloop_wire_ctx) == 96 + 16 * IBLOOP_NASYNC, "ctx");

/* ---- completion channel ---------------------------------------------- */
struct ibloop_wire_chan {
    _Atomic uint32_t gen;   /*  0 */
    uint32_t proc;          /*  4 */
    int32_t efd;            /*  8: the owner's channel->fd (an eventfd) */
    uint32_t ctx;           /* 12 */
    uint64_t efd_id;        /* 16 */
    _Atomic uint32_t token; /* 24 */
    uint32_t pad;           /* 28 */
};
static_assert(sizeof(struct ibloop_wire_chan) == 32, "chan");

/* ---- completion queue -------------------------------------------------- */
/* One CQE, 64 bytes; fields as struct ibv_wc plus routing. */
struct ibloop_wire_cqe {
    uint64_t wr_id;         /*  0 */
    uint32_t status;        /*  8 */
    uint32_t opcode;        /* 12 */
    uint32_t vendor_err;    /* 16 */
    uint32_t byte_len;      /* 20 */
    uint32_t imm;           /* 24: network order, as given */
    uint32_t qp_num;        /* 28 */
    uint32_t src_qp;        /* 32 */
    uint32_t wc_flags;      /* 36 */
    uint16_t pkey_index;    /* 40 */
    uint16_t slid;          /* 42 */
    uint8_t sl;             /* 44 */
    uint8_t dlid_path_bits; /* 45 */
    uint8_t solicited;      /* 46 */
    uint8_t is_send;        /* 47: 1: sq_idx below frees send-queue slots */
    uint32_t qp_idx;        /* 48 */
    uint32_t qp_gen;        /* 52 */
    uint64_t sq_idx;        /* 56: SQ position after this WQE */
};
static_assert(sizeof(struct ibloop_wire_cqe) == 64, "cqe");

enum { IBLOOP_ARM_NONE = 0, IBLOOP_ARM_ANY = 1, IBLOOP_ARM_SOLICITED = 2 };

/*
 * CQ ring: producers (any process) append under 'lock' and publish with a
 * release store of 'prod' (R1); the owner reads 'prod' with acquire (A1),
 * copies the entries, then releases 'cons' (R2), which producers load with
 * acquire (A2) before reusing a slot.
 */
struct ibloop_wire_cq {
    ibloop_lock_t lock;          /*   0 */
    _Atomic uint32_t gen;        /*  40 */
    uint32_t ctx;                /*  44 */
    uint32_t proc;               /*  48 */
    uint32_t size;               /*  52: entries, a power of two; size, ring
                                  * and ring_order change under lock
                                  * (ibv_resize_cq) */
    uint64_t ring;               /*  56: arena offset */
    _Atomic uint64_t prod;       /*  64 */
    _Atomic uint64_t cons;       /*  72 */
    _Atomic uint32_t armed;      /*  80: IBLOOP_ARM_* */
    _Atomic uint32_t overflow;   /*  84: set once: the CQ is in error */
    uint32_t chan;               /*  88 */
    uint32_t chan_gen;           /*  92: 0 = no channel */
    _Atomic uint64_t ev_count;   /*  96: completion events generated */
    uint32_t ring_order;         /* 104 */
    uint32_t ctx_gen;            /* 108 */
    _Atomic uint32_t resizing;   /* 112: 1 while ibv_resize_cq swaps the ring
                                  * (lock held): if its process dies there,
                                  * reclaim leaves both rings (leaked) */
    uint8_t pad[12];             /* 116 */
};
static_assert(sizeof(struct ibloop_wire_cq) == 128, "cq");

/* ---- receive queues (a QP's own RQ, or an SRQ) ------------------------- */
struct ibloop_wire_sge {
    uint64_t addr;
    uint32_t length;
    uint32_t lkey;
};
static_assert(sizeof(struct ibloop_wire_sge) == 16, "sge");

struct ibloop_wire_rwqe {
    uint64_t wr_id;   /*  0 */
    uint32_t num_sge; /*  8 */
    uint32_t pad;     /* 12 */
    struct ibloop_wire_sge sge[]; /* 16: max_sge entries */
};

/*
 * Receive ring, consumed by requesters of any process and fed by the owner,
 * both under 'lock' (so head/tail need no ordering of their own: the mutex
 * is the acquire/release pair).  'limit' is the armed SRQ limit (0: off).
 */
struct ibloop_wire_rq {
    ibloop_lock_t lock;    /*  0 */
    uint64_t ring;         /* 40: arena offset */
    uint32_t size;         /* 48: entries, a power of two */
    uint32_t stride;       /* 52 */
    uint32_t max_sge;      /* 56 */
    uint32_t ring_order;   /* 60 */
    _Atomic uint64_t head; /* 64 */
    _Atomic uint64_t tail; /* 72 */
    uint32_t limit;        /* 80 */
    uint32_t max_wr;       /* 84: as reported to the user */
};
static_assert(sizeof(struct ibloop_wire_rq) == 88, "rq");

struct ibloop_wire_srq {
    struct ibloop_wire_rq rq; /*   0 */
    _Atomic uint32_t gen;     /*  88 */
    uint32_t ctx;             /*  92 */
    uint32_t proc;            /*  96 */
    uint32_t pd;              /* 100 */
    uint32_t ctx_gen;         /* 104 */
    uint8_t pad[20];          /* 108 */
};
static_assert(sizeof(struct ibloop_wire_srq) == 128, "srq");

/* ---- memory regions ---------------------------------------------------- */
/*
 * 'key' (lkey == rkey) is 0 while free.  Registration writes the fields and
 * then releases the key (R3); a reader acquires the key (A3), copies the
 * fields with relaxed loads, then re-reads the key after an acquire fence:
 * a changed key means the copy may be torn and is discarded (a seqlock whose
 * sequence number is the key itself; deregistration stores 0 then fences).
 */
struct ibloop_wire_mr {
    _Atomic uint32_t key;    /*  0 */
    _Atomic uint32_t proc;   /*  4 */
    _Atomic uint32_t pd;     /*  8 */
    _Atomic uint32_t access; /* 12 */
    _Atomic uint64_t addr;   /* 16: virtual address in the owner */
    _Atomic uint64_t length; /* 24 */
    _Atomic uint64_t iova;   /* 32: address the keys are used with */
    _Atomic uint32_t ctx;    /* 40 */
    /* 44: remote accesses under way through the key (ibloop_exec.c): an
     * accessor adds itself, then reads key again (both seq_cst);
     * ibv_dereg_mr clears key, then waits for users to reach 0 (both
     * seq_cst), so the owner's memory is never touched after it returns,
     * as an HCA guarantees */
    _Atomic uint32_t users;
    uint32_t pad[4];         /* 48 */
};
static_assert(sizeof(struct ibloop_wire_mr) == 64, "mr");

/* ---- queue pairs ------------------------------------------------------- */
/* Address vector, as stored in QP attributes and UD send WQEs. */
struct ibloop_wire_av {
    uint32_t dlid;          /*  0 */
    uint32_t is_global;     /*  4 */
    uint8_t dgid[16];       /*  8 */
    uint32_t sgid_index;    /* 24 */
    uint32_t flow_label;    /* 28 */
    uint8_t hop_limit;      /* 32 */
    uint8_t traffic_class;  /* 33 */
    uint8_t sl;             /* 34 */
    uint8_t src_path_bits;  /* 35 */
    uint8_t static_rate;    /* 36 */
    uint8_t port_num;       /* 37 */
    uint8_t pad[2];         /* 38 */
};
static_assert(sizeof(struct ibloop_wire_av) == 40, "av");

/*
 * QP attributes readable by any process.  The owner rewrites them under the
 * QP lock inside a seqlock: seq odd, release fence, words, seq even with
 * release (R4); a reader acquires seq (A4), copies with relaxed loads,
 * acquire fence, re-reads seq and retries if it changed or was odd.
 */
struct ibloop_wire_qp_attr {
    struct ibloop_wire_av av;    /*  0 */
    uint32_t dest_qpn;           /* 40 */
    uint32_t qkey;               /* 44 */
    uint32_t access;             /* 48: qp_access_flags */
    uint32_t path_mtu;           /* 52: enum ibv_mtu */
    uint32_t min_rnr_timer;      /* 56 */
    uint32_t timeout;            /* 60 */
    uint32_t retry_cnt;          /* 64 */
    uint32_t rnr_retry;          /* 68 */
    uint32_t sq_psn;             /* 72 */
    uint32_t rq_psn;             /* 76 */
    uint32_t max_rd_atomic;      /* 80 */
    uint32_t max_dest_rd_atomic; /* 84 */
    uint32_t pkey_index;         /* 88 */
    uint32_t port_num;           /* 92 */
    uint32_t pad[8];             /* 96 */
};
static_assert(sizeof(struct ibloop_wire_qp_attr) == 128, "qp attr");
static_assert(sizeof(struct ibloop_wire_qp_attr) % 4 == 0, "word copy");

/* One send WQE; followed by the SGEs or the inline data. */
struct ibloop_wire_swqe {
    uint64_t wr_id;             /*   0 */
    uint32_t opcode;            /*   8: enum ibv_wr_opcode */
    uint32_t flags;             /*  12: enum ibv_send_flags */
    uint32_t num_sge;           /*  16 */
    uint32_t imm;               /*  20: network order */
    uint64_t remote_addr;       /*  24 */
    uint32_t rkey;              /*  32 */
    uint32_t inline_len;        /*  36 */
    uint64_t compare_add;       /*  40 */
    uint64_t swap;              /*  48 */
    uint32_t remote_qpn;        /*  56 */
    uint32_t remote_qkey;       /*  60 */
    struct ibloop_wire_av av;   /*  64: UD destination */
    uint64_t length;            /* 104: total message length */
    uint8_t pad[16];            /* 112 */
};
static_assert(sizeof(struct ibloop_wire_swqe) == 128, "swqe");

/*
 * The send queue is executed by the owner only, under 'lock'; any process
 * may take the lock to move the QP to the error state and flush it.
 * sq_freed is the SQ position covered by polled signaled completions
 * (stored by the owner's poll with release (R5), loaded by post_send with
 * acquire (A5) before reusing a slot).  epsn is the responder's expected
 * PSN, written by its one connected requester (while holding the
 * requester's own QP lock) and by the owner at RTR.
 */
struct ibloop_wire_qp {
    ibloop_lock_t lock;                  /*   0 */
    _Atomic uint32_t gen;                /*  40 */
    uint32_t qpn;                        /*  44 */
    uint32_t ctx;                        /*  48 */
    uint32_t proc;                       /*  52 */
    uint32_t type;                       /*  56: enum ibv_qp_type */
    uint32_t pd;                         /*  60 */
    uint32_t send_cq, send_cq_gen;       /*  64 */
    uint32_t recv_cq, recv_cq_gen;       /*  72 */
    uint32_t srq, srq_gen;               /*  80: srq_gen 0: own RQ */
    _Atomic uint32_t state;              /*  88: enum ibv_qp_state */
    _Atomic uint32_t seq;                /*  92: attr seqlock */
    struct ibloop_wire_qp_attr attr;     /*  96 */
    uint32_t max_send_wr, max_recv_wr;   /* 224 */
    uint32_t max_send_sge, max_recv_sge; /* 232 */
    uint32_t max_inline, sq_sig_all;     /* 240 */
    uint64_t sq_ring;                    /* 248 */
    uint32_t sq_size, sq_stride;         /* 256 */
    uint32_t sq_order, ctx_gen;          /* 264 */
    uint64_t sq_head;                    /* 272: next WQE to execute (lock) */
    uint64_t sq_tail;                    /* 280: next free position (lock) */
    _Atomic uint64_t sq_freed;           /* 288 */
    _Atomic uint32_t epsn;               /* 296 */
    uint32_t npsn;                       /* 300: requester's next PSN (lock) */
    uint32_t rnr_used;                   /* 304: RNR retries used by the head WQE */
    uint32_t in_retry;                   /* 308: head WQE got no response */
    uint64_t retry_deadline;             /* 312: CLOCK_MONOTONIC ns */
    uint64_t next_try;                   /* 320: ns; 0: now */
    _Atomic uint32_t comm_est;           /* 328: COMM_EST raised */
    uint32_t pad0;                       /* 332 */
    struct ibloop_wire_rq rq;            /* 336 */
    uint8_t pad1[512 - 424];             /* 424 */
};
static_assert(offsetof(struct ibloop_wire_qp, attr) == 96, "qp");
static_assert(offsetof(struct ibloop_wire_qp, sq_ring) == 248, "qp");
static_assert(offsetof(struct ibloop_wire_qp, rq) == 336, "qp");
static_assert(sizeof(struct ibloop_wire_qp) == 512, "qp");

#endif
