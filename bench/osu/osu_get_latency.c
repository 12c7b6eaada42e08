/* OSU-style MPI_Get latency (bench/osu/osu_rma.c has the method and options) */
#define OSU_RMA_GET_LATENCY
#include "osu_rma.c"
