/*
 * The element kernels of one-sided atomics and accumulate (tern/rma.h),
 * applied where the target memory is: by the target's progress (the
 * engine's path) or by a peer that maps it.
 *
 * Atomicity per element.  An element of 1, 2, 4 or 8 bytes aligned to its
 * size is updated by a compare-and-swap loop on its bits (acq_rel on
 * success: the update is ordered with what the target does before and
 * after), so it is atomic against every other update of it, from any
 * thread, and against the hardware atomics of tern_atomic; elements
 * shorter than 8 bytes share one swap of the aligned 8-byte word that
 * holds them (word_cas).  A larger or
 * misaligned element (long double, the double complex types, a packed
 * structure) is updated under a spin lock chosen by its address from a
 * stripe table: the region's shared one for an allocated region (every
 * process that maps it takes the same locks), else the process's own,
 * which is atomic against the accumulates this process applies: every
 * accumulate on a region that is not mapped is applied by the target's
 * progress.  That is MPI's rule (the same predefined type at the same
 * address).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "engine/rma.h"

/* The pairs of MINLOC / MAXLOC, as MPI's C types lay them out. */
typedef struct { float v; int i; } pair_float_int_t;
typedef struct { double v; int i; } pair_double_int_t;
typedef struct { long v; int i; } pair_long_int_t;
typedef struct { int v; int i; } pair_2int_t;
typedef struct { short v; int i; } pair_short_int_t;
typedef struct { long double v; int i; } pair_long_double_int_t;

static const unsigned char dt_size[TERN_DT_NTYPES] = {
    [TERN_DT_INT8] = 1,
    [TERN_DT_UINT8] = 1,
    [TERN_DT_INT16] = 2,
    [TERN_DT_UINT16] = 2,
    [TERN_DT_INT32] = 4,
    [TERN_DT_UINT32] = 4,
    [TERN_DT_INT64] = 8,
    [TERN_DT_UINT64] = 8,
    [TERN_DT_FLOAT] = sizeof(float),
    [TERN_DT_DOUBLE] = sizeof(double),
    [TERN_DT_LONG_DOUBLE] = sizeof(long double),
    [TERN_DT_FLOAT_COMPLEX] = sizeof(float _Complex),
    [TERN_DT_DOUBLE_COMPLEX] = sizeof(double _Complex),
    [TERN_DT_LONG_DOUBLE_COMPLEX] = sizeof(long double _Complex),
    [TERN_DT_FLOAT_INT] = sizeof(pair_float_int_t),
    [TERN_DT_DOUBLE_INT] = sizeof(pair_double_int_t),
    [TERN_DT_LONG_INT] = sizeof(pair_long_int_t),
    [TERN_DT_2INT] = sizeof(pair_2int_t),
    [TERN_DT_SHORT_INT] = sizeof(pair_short_int_t),
    [TERN_DT_LONG_DOUBLE_INT] = sizeof(pair_long_double_int_t),
};

size_t tern_dtype_size(int dtype)
{
    return dtype > 0 && dtype < TERN_DT_NTYPES ? dt_size[dtype] : 0;
}

bool tern_acc_valid(int acc, int dtype, size_t *esize)
{
    if (dtype <= 0 || dtype >= TERN_DT_NTYPES || acc < 0 || acc >= TERN_ACC_NOPS)
        return false;
    *esize = dt_size[dtype];
    if (acc == TERN_ACC_REPLACE || acc == TERN_ACC_NO_OP)
        return true;
    bool pair = dtype >= TERN_DT_FLOAT_INT;
    if (acc == TERN_ACC_MAXLOC || acc == TERN_ACC_MINLOC || pair)
        return (acc == TERN_ACC_MAXLOC || acc == TERN_ACC_MINLOC) && pair;
    if (acc == TERN_ACC_SUM || acc == TERN_ACC_PROD)
        return true;
    if (dtype <= TERN_DT_UINT64)
        return true; /* integers: every op */
    /* real floating types order (MIN / MAX), complex ones do not; neither
     * has logical or bit operations */
    return (acc == TERN_ACC_MIN || acc == TERN_ACC_MAX) && dtype <= TERN_DT_LONG_DOUBLE;
}

/* x = x acc y on n values of type T (by copies: the bytes may be
 * unaligned), the operation chosen once for the n (a loop per case, which
 * the compiler vectorises) */
#define LOOP(T, STEP)                                                                              \
    for (size_t k = 0; k < n; k++) {                                                               \
        T x, y;                                                                                    \
        memcpy(&x, cp + k * sizeof(T), sizeof(T));                                                 \
        memcpy(&y, sp + k * sizeof(T), sizeof(T));                                                 \
        STEP;                                                                                      \
        memcpy(cp + k * sizeof(T), &x, sizeof(T));                                                 \
    }                                                                                              \
    break;
#define ARITH(T)                                                                                   \
    case TERN_ACC_SUM: LOOP(T, x = x + y)                                                          \
    case TERN_ACC_PROD: LOOP(T, x = x * y)
#define ORDER(T)                                                                                   \
    case TERN_ACC_MIN: LOOP(T, x = y < x ? y : x)                                                  \
    case TERN_ACC_MAX: LOOP(T, x = y > x ? y : x)
#define LOGIC(T)                                                                                   \
    case TERN_ACC_LAND: LOOP(T, x = (T)(x && y))                                                   \
    case TERN_ACC_LOR: LOOP(T, x = (T)(x || y))                                                    \
    case TERN_ACC_LXOR: LOOP(T, x = (T)(!x != !y))                                                 \
    case TERN_ACC_BAND: LOOP(T, x = (T)(x & y))                                                    \
    case TERN_ACC_BOR: LOOP(T, x = (T)(x | y))                                                     \
    case TERN_ACC_BXOR: LOOP(T, x = (T)(x ^ y))
#define KERNEL(T, CASES)                                                                           \
    {                                                                                              \
        char *cp = c;                                                                              \
        const char *sp = s;                                                                        \
        switch (acc) {                                                                             \
            CASES                                                                                  \
        default: break;                                                                            \
        }                                                                                          \
        return;                                                                                    \
    }
/* MPI's MAXLOC / MINLOC: the winning value, and on a tie the smaller index */
#define LOC(T)                                                                                     \
    case TERN_ACC_MAXLOC:                                                                          \
        LOOP(T, if (y.v > x.v || (y.v == x.v && y.i < x.i)) x = y)                                 \
    case TERN_ACC_MINLOC:                                                                          \
        LOOP(T, if (y.v < x.v || (y.v == x.v && y.i < x.i)) x = y)
#define PAIR(T) KERNEL(T, LOC(T))
/* integers wrap (two's complement, as MPI implementations compute them):
 * the sum and product in unsigned arithmetic of at least int's width, so
 * that neither a signed overflow nor the promotion of a short to int is
 * undefined */
#define WRAP(T, U)                                                                                 \
    case TERN_ACC_SUM: LOOP(T, x = (T)((U)x + (U)y))                                               \
    case TERN_ACC_PROD: LOOP(T, x = (T)((U)x * (U)y))
#define INTEGER(T, U) KERNEL(T, WRAP(T, U) ORDER(T) LOGIC(T))
#define REAL(T) KERNEL(T, ARITH(T) ORDER(T))
#define COMPLEX(T) KERNEL(T, ARITH(T))

/* c[k] = c[k] acc s[k] for n elements of dtype (acc valid on it, not
 * REPLACE or NO_OP): one switch for the n */
static void combine(int acc, int dtype, void *c, const void *s, size_t n)
{
    switch (dtype) {
    case TERN_DT_INT8: INTEGER(int8_t, unsigned)
    case TERN_DT_UINT8: INTEGER(uint8_t, unsigned)
    case TERN_DT_INT16: INTEGER(int16_t, unsigned)
    case TERN_DT_UINT16: INTEGER(uint16_t, unsigned)
    case TERN_DT_INT32: INTEGER(int32_t, uint32_t)
    case TERN_DT_UINT32: INTEGER(uint32_t, uint32_t)
    case TERN_DT_INT64: INTEGER(int64_t, uint64_t)
    case TERN_DT_UINT64: INTEGER(uint64_t, uint64_t)
    case TERN_DT_FLOAT: REAL(float)
    case TERN_DT_DOUBLE: REAL(double)
    case TERN_DT_LONG_DOUBLE: REAL(long double)
    case TERN_DT_FLOAT_COMPLEX: COMPLEX(float _Complex)
    case TERN_DT_DOUBLE_COMPLEX: COMPLEX(double _Complex)
    case TERN_DT_LONG_DOUBLE_COMPLEX: COMPLEX(long double _Complex)
    case TERN_DT_FLOAT_INT: PAIR(pair_float_int_t)
    case TERN_DT_DOUBLE_INT: PAIR(pair_double_int_t)
    case TERN_DT_LONG_INT: PAIR(pair_long_int_t)
    case TERN_DT_2INT: PAIR(pair_2int_t)
    case TERN_DT_SHORT_INT: PAIR(pair_short_int_t)
    case TERN_DT_LONG_DOUBLE_INT: PAIR(pair_long_double_int_t)
    default: return;
    }
}

/* the new value of n elements: cur acc s */
static inline void next_value(int acc, int dtype, size_t es, void *nv, const void *s, size_t n)
{
    if (acc == TERN_ACC_REPLACE)
        memcpy(nv, s, es * n);
    else
        combine(acc, dtype, nv, s, n);
}

/* One aligned element of U (es bytes) by compare-and-swap. */
#define CAS_ELEMENT(U)                                                                             \
    {                                                                                              \
        U *p = (U *)(void *)e;                                                                     \
        U cur = __atomic_load_n(p, __ATOMIC_ACQUIRE);                                              \
        if (acc != TERN_ACC_NO_OP) {                                                               \
            for (;;) {                                                                             \
                U nv = cur;                                                                        \
                next_value(acc, dtype, sizeof(U), &nv, s, 1);                                      \
                /* acq_rel on success; on failure cur is reloaded (acquire) */                     \
                if (__atomic_compare_exchange_n(p, &cur, nv, false, __ATOMIC_ACQ_REL,              \
                                                __ATOMIC_ACQUIRE))                                 \
                    break;                                                                         \
            }                                                                                      \
        }                                                                                          \
        if (old != NULL)                                                                           \
            memcpy(old, &cur, sizeof(U));                                                          \
        return;                                                                                    \
    }

static void element_cas(int acc, int dtype, size_t es, char *e, const char *s, char *old)
{
    switch (es) {
    case 1: CAS_ELEMENT(uint8_t)
    case 2: CAS_ELEMENT(uint16_t)
    case 4: CAS_ELEMENT(uint32_t)
    default: CAS_ELEMENT(uint64_t)
    }
}

/* The stripe locks of the elements no compare-and-swap covers, for the
 * regions that have none of their own (a shared mapping's header has). */
static _Atomic int32_t stripe[TERN_ACC_STRIPES];

/* Take stripe lock l for this process (pid me): 0 free, else its holder's
 * pid.  A holder in another process that has died (its element maybe
 * half-written: it died inside an accumulate) is overtaken once its pid is
 * gone (a zombie counts as alive until reaped), never waited for.  acquire:
 * the previous holder's update of the element is seen. */
static void lock_take(_Atomic int32_t *l, int32_t me)
{
    for (unsigned spins = 1;; spins++) {
        int32_t owner = 0;
        if (atomic_compare_exchange_weak_explicit(l, &owner, me, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
        if (spins % 1024 == 0 && owner > 0 && owner != me && kill(owner, 0) != 0 &&
            errno == ESRCH &&
            atomic_compare_exchange_strong_explicit(l, &owner, me, memory_order_acquire,
                                                    memory_order_relaxed))
            return;
        sched_yield();
    }
}

static void element_locked(int acc, int dtype, size_t es, char *e, const char *s, char *old,
                           _Atomic int32_t *locks, int32_t me)
{
    /* by the element's offset in its page: the same in every process that
     * maps the region, whatever address the mapping has */
    _Atomic int32_t *l = &locks[(((uintptr_t)e & 4095) >> 4) % TERN_ACC_STRIPES];
    lock_take(l, me);
    if (old != NULL)
        memcpy(old, e, es);
    if (acc != TERN_ACC_NO_OP) {
        unsigned char nv[64];
        memcpy(nv, e, es);
        next_value(acc, dtype, es, nv, s, 1);
        memcpy(e, nv, es);
    }
    /* release: the update, for the next holder */
    atomic_store_explicit(l, 0, memory_order_release);
}

/* Elements of 1, 2 or 4 bytes, n of them from byte `at` of the aligned
 * 8-byte word w (all in it), by one compare-and-swap of the word: atomic
 * for each element as its own would be (the word's other bytes are
 * written back as they were, or the swap fails and is tried again), and
 * up to 8 times fewer locked instructions for short elements. */
static void word_cas(int acc, int dtype, size_t es, uint64_t *w, size_t at, size_t n,
                     const char *s, char *old)
{
    uint64_t cur = __atomic_load_n(w, __ATOMIC_ACQUIRE);
    if (acc != TERN_ACC_NO_OP) {
        for (;;) {
            uint64_t nv = cur;
            next_value(acc, dtype, es, (char *)&nv + at, s, n);
            /* acq_rel on success; on failure cur is reloaded (acquire) */
            if (__atomic_compare_exchange_n(w, &cur, nv, false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE))
                break;
        }
    }
    if (old != NULL)
        memcpy(old, (char *)&cur + at, es * n);
}

void tern_acc_apply(int acc, int dtype, void *t, const void *in, size_t count, void *old,
                    _Atomic int32_t *locks)
{
    size_t es = dt_size[dtype];
    if (locks == NULL)
        locks = stripe;
    int32_t me = 0; /* the pid the locks hold: asked once per call, when needed */
    for (size_t i = 0; i < count;) {
        char *e = (char *)t + i * es;
        const char *s = in == NULL ? NULL : (const char *)in + i * es;
        char *o = old == NULL ? NULL : (char *)old + i * es;
        if (es < 8 && (uintptr_t)e % es == 0) {
            /* the elements sharing e's aligned word (it never crosses a
             * page: its bytes are as mapped as e's) */
            uintptr_t at = (uintptr_t)e & 7;
            size_t n = (8 - at) / es;
            if (n > count - i)
                n = count - i;
            word_cas(acc, dtype, es, (uint64_t *)(void *)(e - at), at, n, s, o);
            i += n;
            continue;
        }
        if (es == 8 && (uintptr_t)e % 8 == 0)
            element_cas(acc, dtype, es, e, s, o);
        else
            element_locked(acc, dtype, es, e, s, o, locks,
                           me != 0 ? me : (me = (int32_t)getpid()));
        i++;
    }
}

#define AMO(U)                                                                                     \
    {                                                                                              \
        U *p = (U *)t, v = (U)value, c = (U)compare;                                               \
        switch (aop) {                                                                             \
        case TERN_AMO_ADD: return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);                      \
        case TERN_AMO_SWAP: return __atomic_exchange_n(p, v, __ATOMIC_ACQ_REL);                    \
        case TERN_AMO_CSWAP:                                                                       \
            __atomic_compare_exchange_n(p, &c, v, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);      \
            return c; /* the old value, equal to compare or not */                                 \
        case TERN_AMO_AND: return __atomic_fetch_and(p, v, __ATOMIC_ACQ_REL);                      \
        case TERN_AMO_OR: return __atomic_fetch_or(p, v, __ATOMIC_ACQ_REL);                        \
        default: return __atomic_fetch_xor(p, v, __ATOMIC_ACQ_REL);                                \
        }                                                                                          \
    }

uint64_t tern_amo_apply(int aop, size_t size, void *t, uint64_t value, uint64_t compare)
{
    switch (size) {
    case 1: AMO(uint8_t)
    case 2: AMO(uint16_t)
    case 4: AMO(uint32_t)
    default: AMO(uint64_t)
    }
}

void tern_amo_store(void *out, uint64_t v, size_t size)
{
    uint8_t a = (uint8_t)v;
    uint16_t b = (uint16_t)v;
    uint32_t c = (uint32_t)v;
    memcpy(out, size == 1 ? (void *)&a : size == 2 ? (void *)&b : size == 4 ? (void *)&c : &v,
           size);
}
