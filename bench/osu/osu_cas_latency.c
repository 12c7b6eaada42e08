/* OSU-style MPI_Compare_and_swap latency (bench/osu/osu_rma.c has the method and options) */
#define OSU_RMA_CAS_LATENCY
#include "osu_rma.c"
