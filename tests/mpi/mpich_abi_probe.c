/*
 * tests/mpi/mpich_abi.sh's first program (issue 24), built with MPICH's
 * mpicc.mpich: it uses no handle, so it runs on tern's libmpich.so.12
 * whatever tern's handle values are.  It calls MPI_Init,
 * MPI_Get_library_version (also as PMPI_, the profiling name a tool calls)
 * and MPI_Finalize only, and names every data
 * object MPICH's mpi.h lets a C program reference, so that the program
 * does not even start when the library lacks one (data is bound at load
 * time), and compares the ones whose value MPICH fixes.  It prints which
 * library answered and which files of /proc/self/maps hold the MPI code,
 * for the script to check that the process ran tern:
 *
 *   abi-probe version: <MPI_Get_library_version>
 *   abi-probe maps: <path> (one line per MPI library mapped)
 *   abi-probe ok
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#ifndef MPICH_NUMVERSION
#error "build this with MPICH's mpicc (mpicc.mpich): it checks MPICH's ABI"
#endif

static int fails;

static void check(int cond, const char *what)
{
    if (!cond) {
        printf("abi-probe FAIL: %s\n", what);
        fails++;
    }
}

/* the MPI libraries the process mapped: tern's or MPICH's */
static void print_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096], last[4096] = "";

    if (f == NULL) {
        printf("abi-probe maps: cannot read /proc/self/maps\n");
        return;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        char *path = strchr(line, '/');

        if (path == NULL || (strstr(path, "libmpi") == NULL && strstr(path, "libtern") == NULL))
            continue;
        path[strcspn(path, "\n")] = '\0';
        if (strcmp(path, last) != 0) /* one line per file, not per mapping */
            printf("abi-probe maps: %s\n", path);
        snprintf(last, sizeof(last), "%s", path);
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = -1;

    check(MPI_Init(&argc, &argv) == MPI_SUCCESS, "MPI_Init");
    check(MPI_Get_library_version(version, &len) == MPI_SUCCESS, "MPI_Get_library_version");
    check(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && (size_t)len == strlen(version),
          "MPI_Get_library_version's length is the string's");
    printf("abi-probe version: %s\n", len > 0 ? version : "(none)");
    char pversion[MPI_MAX_LIBRARY_VERSION_STRING];
    int plen = -1;
    check(PMPI_Get_library_version(pversion, &plen) == MPI_SUCCESS && plen == len &&
              memcmp(pversion, version, (size_t)(len > 0 ? len : 0)) == 0,
          "PMPI_Get_library_version answers as MPI_Get_library_version");

    /* the data objects (docs/mpi.md, "Running MPICH-built programs"): distinct
     * non-NULL marks */
    check(MPI_UNWEIGHTED != NULL && MPI_WEIGHTS_EMPTY != NULL &&
              MPI_UNWEIGHTED != MPI_WEIGHTS_EMPTY,
          "MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY");
    check(MPI_T_PVAR_ALL_HANDLES != NULL, "MPI_T_PVAR_ALL_HANDLES");
    /* the F08 status sentinels point at MPICH's two objects */
    check(MPI_F08_STATUS_IGNORE == &MPIR_F08_MPI_STATUS_IGNORE_OBJ, "MPI_F08_STATUS_IGNORE");
    check(MPI_F08_STATUSES_IGNORE == MPIR_F08_MPI_STATUSES_IGNORE_OBJ, "MPI_F08_STATUSES_IGNORE");
    /* referenced for the load, their values are the Fortran binding's */
    printf("abi-probe data: %p %p %p %p\n", (void *)MPI_F_STATUS_IGNORE,
           (void *)MPI_F_STATUSES_IGNORE, (void *)&MPIR_F08_MPI_IN_PLACE,
           (void *)&MPIR_F08_MPI_BOTTOM);

    print_maps();
    check(MPI_Finalize() == MPI_SUCCESS, "MPI_Finalize");
    if (fails == 0)
        printf("abi-probe ok\n");
    return fails == 0 ? 0 : 1;
}
