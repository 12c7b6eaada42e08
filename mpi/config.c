/*
 * The MPI layer's settings (TERN_MPI_*): a table in tern's settings
 * registry (engine/config.h), registered when libtern-mpi loads.  So
 * tern_init, called by MPI_Init, refuses a bad value on every rank with a
 * message naming the variable and its range, and tern_info lists them.
 * MPI_Init then reads them into mpi.cfg (MPI_T's control variables read it,
 * and may write it: mpi/mpit_cvar.c).  The registry's calls are
 * libtern's private interface (TERN_PRIVATE_0.0 in engine/libtern.map).
 */
#include "mpi/mpit.h" /* engine/config.h, mpi_internal.h, mpi_config_struct */

#define T mpi_config_t
static const tern_config_entry_t entries[] = {
    TERN_CFG_ENTRY_UINT("TERN_MPI_BCAST_LONG", T, bcast_long, 12288, 1, 1ull << 40,
                        "MPI_Bcast of at least this many bytes, on at least "
                        "TERN_MPI_BCAST_MIN_PROCS ranks, uses scatter + ring allgather; below "
                        "it, a binomial tree"),
    TERN_CFG_ENTRY_UINT("TERN_MPI_BCAST_MIN_PROCS", T, bcast_min_procs, 8, 1, 1u << 24,
                        "fewest ranks on which MPI_Bcast uses scatter + ring allgather "
                        "(TERN_MPI_BCAST_LONG)"),
    TERN_CFG_ENTRY_UINT("TERN_MPI_ALLREDUCE_LONG", T, allreduce_long, 2048, 0, 1ull << 40,
                        "MPI_Allreduce of more than this many bytes with a commutative op uses "
                        "reduce-scatter + allgather (Rabenseifner); up to it, recursive "
                        "doubling"),
    TERN_CFG_ENTRY_UINT("TERN_MPI_CONNECT_TIMEOUT", T, connect_timeout, 180, 0, 1u << 30,
                        "seconds MPI_Comm_connect waits for an MPI_Comm_accept on an open port "
                        "before it fails with MPI_ERR_PORT (0: no limit); its info key "
                        "\"timeout\" sets it for one call, as MPICH's"),
};
#undef T

static const tern_config_table_t mpi_config_table = {
    .owner = "mpi",
    .entries = entries,
    .num_entries = sizeof(entries) / sizeof(entries[0]),
    .struct_size = sizeof(mpi_config_t),
};
TERN_CONFIG_REGISTER(mpi_config_table)

mpi_config_t *mpi_config_struct(const tern_config_table_t *t)
{
    return t == &mpi_config_table ? &mpi.cfg : NULL;
}

int mpi_config_load(void)
{
    if (tern_config_load_table(&mpi_config_table, &mpi.cfg, NULL) == TERN_OK)
        return MPI_SUCCESS;
    return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Init: %s", tern_last_error());
}
