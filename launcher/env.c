/*
 * Environment of the ranks: ternrun's own environment, minus every inherited
 * PMIX_* variable (so a ternrun started inside another PMIx job or under
 * mpirun does not hand its ranks the outer server's address), plus -x
 * exports, plus what PMIx_server_setup_fork adds later; with --mpich-abi,
 * tern's libmpich.so.12 directory first on LD_LIBRARY_PATH (mpich_abi.c).
 */
#include "launcher/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static bool is_exported(const struct ternrun_options *opt, const char *name, size_t len)
{
    for (size_t i = 0; i < opt->nexports; i++) {
        if (strlen(opt->exports[i].name) == len && strncmp(opt->exports[i].name, name, len) == 0) {
            return true;
        }
    }
    return false;
}

void ternrun_env_scrub_self(const struct ternrun_options *opt)
{
    size_t n = 0, nscrub = 0;
    char **names;

    for (char **e = environ; *e != NULL; e++) {
        n++;
    }
    names = calloc(n + 1, sizeof(*names));
    if (names == NULL) {
        ternrun_warn("out of memory: inherited PMIX_* variables not scrubbed");
        return;
    }
    /* collect first: unsetenv() reshuffles environ under our feet */
    for (size_t i = 0; i < n && environ[i] != NULL; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t len = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);

        if (strncmp(environ[i], "PMIX_", 5) == 0 && !is_exported(opt, environ[i], len)) {
            names[nscrub] = strndup(environ[i], len);
            if (names[nscrub] != NULL) {
                nscrub++;
            }
        }
    }
    for (size_t i = 0; i < nscrub; i++) {
        ternrun_vlog(2, "scrubbing inherited %s", names[i]);
        unsetenv(names[i]);
        free(names[i]);
    }
    if (nscrub > 0) {
        ternrun_vlog(1, "scrubbed %zu inherited PMIX_* variable(s) (use -x to keep one)", nscrub);
    }
    free(names);
}

static size_t env_count(char **env)
{
    size_t n = 0;

    while (env != NULL && env[n] != NULL) {
        n++;
    }
    return n;
}

static char **env_find(char **env, const char *name)
{
    size_t len = strlen(name);

    for (size_t i = 0; env != NULL && env[i] != NULL; i++) {
        if (strncmp(env[i], name, len) == 0 && env[i][len] == '=') {
            return &env[i];
        }
    }
    return NULL;
}

const char *ternrun_env_get(char **env, const char *name)
{
    char **slot = env_find(env, name);

    return slot ? *slot + strlen(name) + 1 : NULL;
}

int ternrun_env_set(char ***envp, const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 2;
    char *entry = malloc(len);
    char **slot, **tmp;
    size_t n;

    if (entry == NULL) {
        return -1;
    }
    snprintf(entry, len, "%s=%s", name, value);
    slot = env_find(*envp, name);
    if (slot != NULL) {
        free(*slot);
        *slot = entry;
        return 0;
    }
    n = env_count(*envp);
    tmp = realloc(*envp, (n + 2) * sizeof(*tmp));
    if (tmp == NULL) {
        free(entry);
        return -1;
    }
    tmp[n] = entry;
    tmp[n + 1] = NULL;
    *envp = tmp;
    return 0;
}

char **ternrun_env_build(const struct ternrun_options *opt)
{
    size_t n = env_count(environ);
    char **env = calloc(n + 1, sizeof(*env));

    if (env == NULL) {
        goto err_nomem;
    }
    for (size_t i = 0; i < n; i++) {
        env[i] = strdup(environ[i]);
        if (env[i] == NULL) {
            goto err_free;
        }
    }
    for (size_t i = 0; i < opt->nexports; i++) {
        const struct ternrun_export *x = &opt->exports[i];

        if (x->value != NULL && ternrun_env_set(&env, x->name, x->value) != 0) {
            goto err_free;
        }
    }
    if (ternrun_mpich_abi_env(opt, &env) != 0) {
        goto err_free;
    }
    return env;

err_free:
    ternrun_env_free(env);
err_nomem:
    ternrun_err("out of memory building the ranks' environment");
    return NULL;
}

void ternrun_env_free(char **env)
{
    for (size_t i = 0; env != NULL && env[i] != NULL; i++) {
        free(env[i]);
    }
    free(env);
}
