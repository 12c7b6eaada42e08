/*
 * Run-time configuration: every tunable is a TERN_* environment variable
 * described in a table of entries (type, default, range, meaning).  The
 * engine has its own table (config.c); every other component registers one
 * (TERN_CONFIG_REGISTER: the registration cache, iofwd, and libtern-mpi's
 * MPI layer when it is loaded), each for a config struct of its own; each
 * netmod declares another one in its folder, registered with the netmod
 * (engine/netmod.h).  That is the settings registry: tern_init loads and
 * validates every table in it; tern_info prints them all.  An invalid
 * value is rejected with a message naming the variable and what it allows.
 * No component reads another's variables or sets them (setenv): a program
 * that chooses settings passes them to tern_init_ex.
 */
#ifndef TERN_ENGINE_CONFIG_H
#define TERN_ENGINE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tern/core.h> /* enum tern_wait_mode */
#include <tern/status.h>

/* "spin", "yield", "block" (TERN_WAIT_MODE's own names), "?" for another value */
const char *tern_wait_mode_name(uint64_t mode);

/* Bytes a string setting keeps (terminating NUL included). */
#define TERN_CFG_STR_MAX 256

typedef enum tern_cfg_type {
    TERN_CFG_UINT = 0,   /* uint64_t; k/K and m/M suffixes; [min, max] */
    TERN_CFG_POW2,       /* a TERN_CFG_UINT that must be a power of two */
    TERN_CFG_ENUM,       /* uint64_t index into names[0..max], given by name */
    TERN_CFG_STRING,     /* char[TERN_CFG_STR_MAX]; checked by check() when set */
} tern_cfg_type_t;

typedef struct tern_config_entry {
    const char *env;
    const char *desc;
    size_t offset;               /* into the owner's config struct */
    tern_cfg_type_t type;
    uint64_t def, min, max;      /* numbers and enums */
    const char *const *names;    /* TERN_CFG_ENUM: names[min..max] */
    const char *sdef;            /* TERN_CFG_STRING: default, shown as is */
    /* TERN_CFG_STRING: validate a set value (NULL: anything shorter than
     * TERN_CFG_STR_MAX); returns TERN_ERR_INVALID_PARAM with a message. */
    tern_status_t (*check)(const char *env, const char *value);
} tern_config_entry_t;

/* Entry constructors (designated initialisers: a new field gets zero). */
#define TERN_CFG_ENTRY_UINT(env_, struct_, field_, def_, min_, max_, desc_)                  \
    {.env = (env_), .desc = (desc_), .offset = offsetof(struct_, field_),                    \
     .type = TERN_CFG_UINT, .def = (def_), .min = (min_), .max = (max_)}
#define TERN_CFG_ENTRY_POW2(env_, struct_, field_, def_, min_, max_, desc_)                  \
    {.env = (env_), .desc = (desc_), .offset = offsetof(struct_, field_),                    \
     .type = TERN_CFG_POW2, .def = (def_), .min = (min_), .max = (max_)}
#define TERN_CFG_ENTRY_ENUM(env_, struct_, field_, def_, names_, nnames_, desc_)             \
    {.env = (env_), .desc = (desc_), .offset = offsetof(struct_, field_),                    \
     .type = TERN_CFG_ENUM, .def = (def_), .min = 0, .max = (nnames_) - 1, .names = (names_)}
#define TERN_CFG_ENTRY_STRING(env_, struct_, field_, sdef_, check_, desc_)                  \
    {.env = (env_), .desc = (desc_), .offset = offsetof(struct_, field_),                    \
     .type = TERN_CFG_STRING, .sdef = (sdef_), .check = (check_)}

/* A table and the struct it fills. */
typedef struct tern_config_table {
    const char *owner;                  /* "engine" or the netmod's name */
    const tern_config_entry_t *entries;
    size_t num_entries;
    size_t struct_size;                 /* bytes of the struct it fills */
    /* Cross-field rules once every entry is loaded (NULL: none). */
    tern_status_t (*validate)(const void *config);
    /* Defaults decided on this machine at run time (NULL: none): one line
     * into buf saying what config's unset values become here and why, for
     * tern_info; "" when there is nothing to say. */
    void (*explain)(const void *config, char *buf, size_t len);
} tern_config_table_t;

/* The engine's own settings. */
typedef struct tern_config {
    uint64_t eager_limit;      /* TERN_EAGER_LIMIT: largest eager payload */
    uint64_t wait_mode;        /* TERN_WAIT_MODE: spin | yield | block */
    uint64_t spin_count;       /* TERN_SPIN_COUNT: idle polls before yield/block */
    uint64_t health_ms;        /* TERN_HEALTH_MS: dead-peer check period when idle */
    uint64_t log_level;        /* TERN_LOG: 0 quiet .. 3 debug */
    uint64_t backtrace;        /* TERN_BACKTRACE: a backtrace on a fatal signal */
    uint64_t lmt_mode;         /* TERN_LMT_MODE: enum tern_lmt_mode, AUTO = by netmod/size */
    uint64_t num_workers;      /* TERN_NUM_WORKERS: workers per rank (same on every rank) */
    char netmods[TERN_CFG_STR_MAX]; /* TERN_NETMODS: "" = every built netmod */
    uint64_t fault_fence_late_ms; /* TERN_FAULT_FENCE_LATE_MS: test hook, 0 = off */
    uint64_t cma;              /* TERN_CMA: enum tern_cma_scope (engine/cma.h) */
    char cma_threshold[TERN_CFG_STR_MAX]; /* TERN_CMA_THRESHOLD: "auto" or bytes */
    char fault_cma_after[TERN_CFG_STR_MAX]; /* TERN_FAULT_CMA_EPERM_AFTER: "off" or bytes */
    uint64_t cma_threshold_bytes;   /* by tern_config_derive: TERN_CMA_AUTO for auto */
    uint64_t fault_cma_after_bytes; /* parsed: TERN_CMA_FAULT_OFF for off */
    uint64_t rma_map;          /* TERN_RMA_MAP: map peers' allocated regions (engine/rma.h) */
    char rma_cma_threshold[TERN_CFG_STR_MAX]; /* TERN_RMA_CMA_THRESHOLD: "auto" or bytes */
    uint64_t rma_cma_threshold_bytes; /* by tern_config_derive: TERN_CMA_AUTO for auto */
    uint64_t env_set;          /* bit i: entry i came from the environment */
} tern_config_t;

extern const tern_config_table_t tern_engine_config_table;

/*
 * Fill config (struct_size bytes) from the environment by table t.  *env_set
 * (may be NULL) gets bit i for entry i given in the environment.
 * TERN_ERR_INVALID_PARAM names the bad variable.
 */
tern_status_t tern_config_load_table(const tern_config_table_t *t, void *config,
                                     uint64_t *env_set);

/*
 * As tern_config_load_table, but the entries whose bit is set in `given`
 * (bit i: entry i) are not read from the environment: the caller sets them
 * (tern_init_ex's parameters).  They keep their default here and count as
 * set in *env_set, so no node default replaces them.
 */
tern_status_t tern_config_load_given(const tern_config_table_t *t, void *config, uint64_t given,
                                     uint64_t *env_set);

/* The engine's table into cfg (then tern_config_derive). */
tern_status_t tern_config_load(tern_config_t *cfg);
/* The fields of cfg computed from loaded ones (the same-host copy's sizes
 * from their strings); every loader of the engine's table calls it. */
tern_status_t tern_config_derive(tern_config_t *cfg);

/* Bit of the entry of t at offset `field` (0 when there is none). */
uint64_t tern_config_table_bit(const tern_config_table_t *t, size_t field);

/* True when the entry of t at offset `field` came from the environment. */
int tern_config_table_is_set(const tern_config_table_t *t, uint64_t env_set, size_t field);

/* Format the value of entry e held in config (or its default when config is
 * NULL) for display. */
void tern_config_format(const tern_config_entry_t *e, const void *config, char *buf, size_t len);

/* Format the range an entry allows ("128..65536 pow2", "spin|yield|block"). */
void tern_config_format_range(const tern_config_entry_t *e, char *buf, size_t len);

/*
 * The registry.  tern_config_register adds a component's table (from
 * TERN_CONFIG_REGISTER, when its library loads; a table registered twice,
 * or after 32 others, is refused with a warning).  The engine's own table
 * is always the first one.
 */
void tern_config_register(const tern_config_table_t *t);

#define TERN_CONFIG_REGISTER(table_)                                                     \
    static void __attribute__((constructor)) tern_config_register_##table_(void)         \
    {                                                                                    \
        tern_config_register(&(table_));                                                 \
    }

/* Every table of the registry: the components' (the engine's first, then
 * in registration order), then each registered netmod's that has one (by
 * priority).  *netmod (may be NULL) says which kind table i is. */
int tern_config_count(void);
const tern_config_table_t *tern_config_get(int i, bool *netmod);

/* The values of table t in effect in ctx, as it loaded them: the engine's
 * table its settings (an oversubscribed node's idle-wait defaults and
 * tern_init_ex's parameters applied), a netmod's the struct its instances
 * use (NULL when ctx does not use that netmod); NULL for any other table
 * (its component loads it itself).  Valid until tern_finalize. */
const void *tern_context_config(tern_context_t *ctx, const tern_config_table_t *t);

/* Load every component table but the engine's (which tern_config_load
 * reads) and drop the values: tern_init refuses a bad setting of any
 * component at once, not when the component first reads it.  The
 * netmods' tables are loaded where their instances are made. */
tern_status_t tern_config_check_components(void);

#endif
