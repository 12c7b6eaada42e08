/* OSU-style MPI_Get_accumulate latency (bench/osu/osu_rma.c has the method and options) */
#define OSU_RMA_GET_ACC_LATENCY
#include "osu_rma.c"
