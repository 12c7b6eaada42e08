/*
 * The dynamic processes' files (dyn_peers.c, dyn_port.c, dyn_spawn.c):
 * what they share beside inter.h.
 *
 * Their own traffic goes through worker 0 (ports are worker 0's) in the
 * layer's dynamic space (MPI_SPACE_DYN) with 64-bit tags whose top byte
 * says what a message is:
 *   DYN_HELLO    a process of another job that connected to this one's
 *                port says who it is (dyn_peers.c)
 *   DYN_CONNREQ  | port id: MPI_Comm_connect's root asks the process that
 *                opened the port for an intercommunicator (dyn_port.c)
 *   DYN_LINK     | conversation: the answer, then the two roots' steps of
 *                the new intercommunicator
 */
#ifndef TERN_MPI_DYN_H
#define TERN_MPI_DYN_H

#include "mpi/inter.h"

#pragma GCC visibility push(hidden)

#define DYN_HELLO (1ull << 56)
#define DYN_CONNREQ (2ull << 56)
#define DYN_LINK (3ull << 56)
#define DYN_KIND_MASK (0xffull << 56)
#define DYN_MAGIC 0x4d444e54u /* "TNDM" */

/* dyn_peers.c: this process's job (the identities' job) and the table of
 * processes of other jobs reached: a pair seen here as (job, rank) ->
 * tern peer id */
uint64_t mpi_dyn_job(void);
void mpi_dyn_known(uint64_t job, int rank, int peer);
/* a tern port name for tern_port_connect from its address bytes, and
 * back (the MPI port names carry it compacted: dyn_port.c); false: not
 * one */
bool mpi_dyn_addr_of(const char *tern_port, unsigned char *addr, size_t *len, size_t max);
void mpi_dyn_port_of(const unsigned char *addr, size_t len, char *tern_port);
/* wait for a tern operation on worker 0, taking hellos meanwhile; _until:
 * TERN_ERR_TIMED_OUT (r still pending) at deadline (MPI_Wtime's clock;
 * 0: none) */
tern_status_t mpi_dyn_wait(tern_request_t *r, tern_recv_info_t *info);
tern_status_t mpi_dyn_wait_until(tern_request_t *r, tern_recv_info_t *info, double deadline);

/* dyn_port.c: the internal forms of the calls of ports, for spawn (the
 * parent accepts on a port of its own, the children connect to it) and
 * join.  A port name of this process (MPI_MAX_PORT_NAME). */
int mpi_dyn_open_port(char *name, const char *call);
void mpi_dyn_close_port(const char *name);
int mpi_dyn_accept(const char *name, int root, MPI_Comm comm, MPI_Comm *out, const char *call);
/* tern_port: the opener's tern port name when known otherwise (join), or
 * NULL */
int mpi_dyn_connect(const char *name, const char *tern_port, int root, MPI_Comm comm,
                    MPI_Comm *out, const char *call);
/* MPI_Comm_connect's: info (the root's) may say how long to wait for the
 * accept ("timeout") */
int mpi_dyn_connect_info(const char *name, const char *tern_port, int root, MPI_Comm comm,
                         MPI_Info info, MPI_Comm *out, const char *call);

#pragma GCC visibility pop

#endif
