/*
 * The MPI tool information interface (MPI_T, MPI-3.1 14.3; docs/mpi.md,
 * "Tool information"): what its files (mpit.c, mpit_cvar.c, mpit_pvar.c)
 * share.  Nothing here is a registry of its own:
 *
 * - control variables are tern's settings registry (engine/config.h), in
 *   its order: table after table (tern_config_get), entry after entry; the
 *   value read is the one in effect (the context's after MPI_Init, the
 *   environment's before);
 * - performance variables are the engine's counters
 *   (tern_worker_counters), summed over the layer's workers, known from
 *   MPI_Init on and kept, their last values frozen, after MPI_Finalize;
 * - categories are the settings tables' owners (the engine and each
 *   component), the netmods, and the engine's same-host copy ("cma").
 *
 * Every MPI_T call holds mpit.lock (so MPI_T_init_thread provides every
 * thread level); a counter is read under its worker's lock too
 * (MPI_THREAD_MULTIPLE), taken after mpit.lock, never before.  MPI_T
 * calls return their error codes and invoke no error handler (MPI-3.1
 * 14.3.9); the message of one goes to MPI_Error_string as any other.
 */
#ifndef TERN_MPI_MPIT_H
#define TERN_MPI_MPIT_H

#include "engine/config.h" /* before mpi_internal.h: libtern's, not hidden here */
#include "mpi/mpi_internal.h"

#pragma GCC visibility push(hidden)

/* a control variable: the settings table (its index in the registry) and
 * the entry */
typedef struct mpit_cvar {
    const tern_config_table_t *t;
    int table;
    const tern_config_entry_t *e;
} mpit_cvar_t;

/* a category: what tern_info would call it, and its variables */
typedef struct mpit_cat {
    char *name, *desc;
    int ncvars, npvars;
    int *cvars, *pvars; /* indices, in order */
} mpit_cat_t;

typedef struct mpit_state {
    pthread_mutex_t lock;
    int refs;   /* MPI_T_init_thread calls not finalized */
    bool built; /* the categories and enums below (once) */
    int ncvars;
    mpit_cvar_t *cvars;
    int ncats;
    mpit_cat_t *cats;
    int changed; /* MPI_T_category_changed's number */
    bool frozen; /* MPI_Finalize began: the values as they were then */
} mpit_state_t;

extern mpit_state_t mpit;

/* The start of every MPI_T call but init: the interface initialized (else
 * MPI_T_ERR_NOT_INITIALIZED) and mpit.lock taken (leave releases it). */
int mpit_enter(void);
void mpit_leave(void);
/* code, its message (what and why) kept for MPI_Error_string */
int mpit_err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* src into (name, *len) by MPI-3.1 14.3.3's rule: NULL name or *len 0:
 * *len is the room needed (the NUL included); otherwise what fits, cut,
 * and *len what was written (the NUL included); NULL len: nothing */
void mpit_string(const char *src, char *name, int *len);

/* the categories (mpit.c): of settings table i, and of a counter's
 * prefix ("cma" of "cma.gets"; a new category when none has it yet) */
int mpit_cat_of_table(int table);
int mpit_cat_of_prefix(const char *counter);
/* index appended to category c's performance variables (the categories'
 * number changes: MPI_T_category_changed) */
int mpit_cat_add_pvar(int c, int index);

/* mpit_cvar.c: the control variables, listed in mpit (build) */
int mpit_cvars_build(void);
/* an enumeration of a control variable (an enum entry's names); NULL:
 * none; is h one of them */
MPI_T_enum mpit_enum_of(int cvar);
bool mpit_enum_valid(MPI_T_enum h);
int mpit_enum_count(MPI_T_enum h, const char **name, const char *const **items);
/* MPI_Finalize: the settings the context used kept (mpi_t_finalize_hook);
 * the last MPI_T_finalize: the handles go */
void mpit_cvars_freeze(void);
void mpit_cvar_handles_release(void);

/* mpit_pvar.c: the counters MPI_Init made known added to the
 * performance variables (every MPI_T call does it first: mpit_enter);
 * forget every session and handle (the last MPI_T_finalize) */
void mpit_pvars_refresh(void);
void mpit_pvars_release(void);

/* config.c: the MPI layer's own settings struct when t is its table
 * (writable while MPI is initialized); NULL for any other table */
mpi_config_t *mpi_config_struct(const tern_config_table_t *t);

#pragma GCC visibility pop

#endif
