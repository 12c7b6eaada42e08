/* OSU-style MPI_Fetch_and_op latency (bench/osu/osu_rma.c has the method and options) */
#define OSU_RMA_FOP_LATENCY
#include "osu_rma.c"
