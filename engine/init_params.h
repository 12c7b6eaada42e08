/*
 * tern_init_ex's parameters (include/tern/core.h) as the engine takes them.
 */
#ifndef TERN_ENGINE_INIT_PARAMS_H
#define TERN_ENGINE_INIT_PARAMS_H

#include <stdbool.h>

#include <tern/core.h>

#include "engine/config.h"

/* Check every set field of p (NULL: none) before anything is done;
 * TERN_ERR_INVALID_PARAM naming the field (TERN_WIREUP_ADDRESS: rank,
 * size and job too).  *standalone: p asks for TERN_WIREUP_STANDALONE. */
tern_status_t tern_init_params_check(const tern_init_params_t *p, bool *standalone);

/* tern_config_load, with the fields p sets (checked) in place of their
 * variables, which are then not read; they count as set in cfg->env_set. */
tern_status_t tern_init_params_load(const tern_init_params_t *p, tern_config_t *cfg);

#endif
