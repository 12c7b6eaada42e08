/*
 * How a derived datatype was made (MPI_Type_get_envelope / _get_contents):
 * the combiner and the constructor's integer, address and datatype
 * arguments, kept with the type.  The flattened type never needs its old
 * types, but _get_contents must hand them back, so the envelope holds a
 * reference on each derived one (released with the type) and returns a new
 * handle to it, which the caller frees (MPI-3.1 4.1.13).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

struct mpi_dt_env {
    int combiner;
    int ni, na, nd;
    int *ints;
    MPI_Aint *aints;
    MPI_Datatype *types;  /* as given (predefined ones are returned as they are) */
    mpi_dtype_t **held;   /* derived ones: referenced (NULL for predefined) */
};

void mpi_dt_env_free(struct mpi_dt_env *env)
{
    if (env == NULL)
        return;
    for (int i = 0; i < env->nd; i++)
        if (env->held[i] != NULL)
            mpi_dt_release(env->held[i]);
    free(env->ints);
    free(env->aints);
    free(env->types);
    free(env->held);
    free(env);
}

int mpi_dt_set_env(MPI_Datatype h, int combiner, int ni, const int *ints, int na,
                   const MPI_Aint *aints, int nd, const MPI_Datatype *types)
{
    mpi_dtype_t *t = mpi_dt_get(h);
    if (t == NULL)
        return MPI_ERR_TYPE;
    struct mpi_dt_env *env = calloc(1, sizeof(*env));
    if (env == NULL)
        return MPI_ERR_NO_MEM;
    env->combiner = combiner;
    env->ints = malloc(sizeof(int) * (size_t)(ni > 0 ? ni : 1));
    env->aints = malloc(sizeof(MPI_Aint) * (size_t)(na > 0 ? na : 1));
    env->types = malloc(sizeof(MPI_Datatype) * (size_t)(nd > 0 ? nd : 1));
    env->held = calloc((size_t)(nd > 0 ? nd : 1), sizeof(mpi_dtype_t *));
    if (env->ints == NULL || env->aints == NULL || env->types == NULL || env->held == NULL) {
        mpi_dt_env_free(env);
        return MPI_ERR_NO_MEM;
    }
    env->ni = ni;
    env->na = na;
    if (ni > 0)
        memcpy(env->ints, ints, sizeof(int) * (size_t)ni);
    if (na > 0)
        memcpy(env->aints, aints, sizeof(MPI_Aint) * (size_t)na);
    for (int i = 0; i < nd; i++) {
        env->types[i] = types[i];
        mpi_dtype_t *old = mpi_dt_predefined(types[i]) ? NULL : mpi_dt_get(types[i]);
        if (old != NULL && !old->pair) {
            mpi_dt_retain(old);
            env->held[i] = old;
        }
        env->nd = i + 1; /* what mpi_dt_env_free releases */
    }
    /* a type made through others (subarray, darray) says how the user made it */
    mpi_dt_env_free(t->env);
    t->env = env;
    return MPI_SUCCESS;
}

/* a derived type that was never recorded (the pair types): named */
static const struct mpi_dt_env *env_of(MPI_Datatype dt, int *e, const char *call)
{
    *e = mpi_check_init(call);
    if (*e != MPI_SUCCESS)
        return NULL;
    mpi_dt_view_t v;
    if (mpi_dt_lookup(dt, &v) == NULL) {
        *e = mpi_raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "%s: datatype %#x is not a valid datatype",
                       call, (unsigned)dt);
        return NULL;
    }
    const mpi_dtype_t *t = mpi_dt_predefined(dt) ? NULL : mpi_dt_get(dt);
    return t != NULL ? t->env : NULL;
}

int MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                          int *num_datatypes, int *combiner)
{
    int e;
    const struct mpi_dt_env *env = env_of(datatype, &e, "MPI_Type_get_envelope");
    if (e != MPI_SUCCESS)
        return e;
    if (num_integers == NULL || num_addresses == NULL || num_datatypes == NULL ||
        combiner == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Type_get_envelope: NULL argument");
    *combiner = env != NULL ? env->combiner : MPI_COMBINER_NAMED;
    *num_integers = env != NULL ? env->ni : 0;
    *num_addresses = env != NULL ? env->na : 0;
    *num_datatypes = env != NULL ? env->nd : 0;
    return MPI_SUCCESS;
}

int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                          int max_datatypes, int array_of_integers[],
                          MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    static const char call[] = "MPI_Type_get_contents";
    int e;
    const struct mpi_dt_env *env = env_of(datatype, &e, call);
    if (e != MPI_SUCCESS)
        return e;
    if (env == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "%s: datatype %#x is named "
                         "(MPI_COMBINER_NAMED has no contents)", call, (unsigned)datatype);
    if (max_integers < env->ni || max_addresses < env->na || max_datatypes < env->nd)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: room for %d / %d / %d, the envelope "
                         "says %d / %d / %d", call, max_integers, max_addresses, max_datatypes,
                         env->ni, env->na, env->nd);
    if ((env->ni > 0 && array_of_integers == NULL) ||
        (env->na > 0 && array_of_addresses == NULL) ||
        (env->nd > 0 && array_of_datatypes == NULL))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL array", call);
    if (env->ni > 0)
        memcpy(array_of_integers, env->ints, sizeof(int) * (size_t)env->ni);
    if (env->na > 0)
        memcpy(array_of_addresses, env->aints, sizeof(MPI_Aint) * (size_t)env->na);
    for (int i = 0; i < env->nd; i++) {
        if (env->held[i] == NULL) {
            array_of_datatypes[i] = env->types[i]; /* predefined: itself */
            continue;
        }
        /* a new handle to the same type, the caller's to free */
        mpi_dt_retain(env->held[i]);
        MPI_Datatype h = mpi_dt_register(env->held[i]);
        if (h == MPI_DATATYPE_NULL) {
            mpi_dt_release(env->held[i]);
            for (int k = 0; k < i; k++)
                if (env->held[k] != NULL)
                    MPI_Type_free(&array_of_datatypes[k]);
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: no memory for a handle",
                             call);
        }
        array_of_datatypes[i] = h;
    }
    return MPI_SUCCESS;
}
