/* OSU-style MPI_Accumulate latency (bench/osu/osu_rma.c has the method and options) */
#define OSU_RMA_ACC_LATENCY
#include "osu_rma.c"
