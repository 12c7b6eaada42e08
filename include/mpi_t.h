/* include/mpi_t.h — MPI's tool information interface (MPI_T, MPI-3.1
 * 14.3; mpi/mpit*.c), included by mpi.h: include <mpi.h>, not this file.
 * MPICH's ABI values, like the rest of mpi.h; mpi/pmpi.awk reads this file's
 * prototypes as it reads mpi.h's. */
#ifndef TERN_MPI_T_H
#define TERN_MPI_T_H
#ifndef MPI_VERSION
#error "include <mpi.h>, not mpi_t.h"
#endif
/* ---- the tool information interface (MPI_T, MPI-3.1 14.3; mpi/mpit*.c) ----
 * Usable before MPI_Init and after MPI_Finalize.  Control variables are
 * tern's TERN_* settings, performance variables the engine's counters
 * (docs/mpi.md, "Tool information").  Handles are pointers to the
 * library's structs (MPICH's types), the null ones NULL. */
struct MPIR_T_enum_s;
struct MPIR_T_cvar_handle_s;
struct MPIR_T_pvar_handle_s;
struct MPIR_T_pvar_session_s;
typedef struct MPIR_T_enum_s *MPI_T_enum;
typedef struct MPIR_T_cvar_handle_s *MPI_T_cvar_handle;
typedef struct MPIR_T_pvar_handle_s *MPI_T_pvar_handle;
typedef struct MPIR_T_pvar_session_s *MPI_T_pvar_session;
#define MPI_T_ENUM_NULL ((MPI_T_enum)NULL)
#define MPI_T_CVAR_HANDLE_NULL ((MPI_T_cvar_handle)NULL)
#define MPI_T_PVAR_HANDLE_NULL ((MPI_T_pvar_handle)NULL)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)NULL)
/* every handle of a session (MPI_T_pvar_start, _stop, _reset): data of
 * the library, as in MPICH */
extern struct MPIR_T_pvar_handle_s *const MPI_T_PVAR_ALL_HANDLES;
/* MPICH's values */
enum {
    MPI_T_VERBOSITY_USER_BASIC = 221,
    MPI_T_VERBOSITY_USER_DETAIL = 222,
    MPI_T_VERBOSITY_USER_ALL = 223,
    MPI_T_VERBOSITY_TUNER_BASIC = 224,
    MPI_T_VERBOSITY_TUNER_DETAIL = 225,
    MPI_T_VERBOSITY_TUNER_ALL = 226,
    MPI_T_VERBOSITY_MPIDEV_BASIC = 227,
    MPI_T_VERBOSITY_MPIDEV_DETAIL = 228,
    MPI_T_VERBOSITY_MPIDEV_ALL = 229
};
enum {
    MPI_T_BIND_NO_OBJECT = 9700,
    MPI_T_BIND_MPI_COMM = 9701,
    MPI_T_BIND_MPI_DATATYPE = 9702,
    MPI_T_BIND_MPI_ERRHANDLER = 9703,
    MPI_T_BIND_MPI_FILE = 9704,
    MPI_T_BIND_MPI_GROUP = 9705,
    MPI_T_BIND_MPI_OP = 9706,
    MPI_T_BIND_MPI_REQUEST = 9707,
    MPI_T_BIND_MPI_WIN = 9708,
    MPI_T_BIND_MPI_MESSAGE = 9709,
    MPI_T_BIND_MPI_INFO = 9710
};
enum {
    MPI_T_SCOPE_CONSTANT = 60438,
    MPI_T_SCOPE_READONLY = 60439,
    MPI_T_SCOPE_LOCAL = 60440,
    MPI_T_SCOPE_GROUP = 60441,
    MPI_T_SCOPE_GROUP_EQ = 60442,
    MPI_T_SCOPE_ALL = 60443,
    MPI_T_SCOPE_ALL_EQ = 60444
};
enum {
    MPI_T_PVAR_CLASS_STATE = 240,
    MPI_T_PVAR_CLASS_LEVEL = 241,
    MPI_T_PVAR_CLASS_SIZE = 242,
    MPI_T_PVAR_CLASS_PERCENTAGE = 243,
    MPI_T_PVAR_CLASS_HIGHWATERMARK = 244,
    MPI_T_PVAR_CLASS_LOWWATERMARK = 245,
    MPI_T_PVAR_CLASS_COUNTER = 246,
    MPI_T_PVAR_CLASS_AGGREGATE = 247,
    MPI_T_PVAR_CLASS_TIMER = 248,
    MPI_T_PVAR_CLASS_GENERIC = 249
};
/* its error codes (returned; no error handler is called) */
#define MPI_T_ERR_MEMORY 59
#define MPI_T_ERR_NOT_INITIALIZED 60
#define MPI_T_ERR_CANNOT_INIT 61
#define MPI_T_ERR_INVALID_INDEX 62
#define MPI_T_ERR_INVALID_ITEM 63
#define MPI_T_ERR_INVALID_HANDLE 64
#define MPI_T_ERR_OUT_OF_HANDLES 65
#define MPI_T_ERR_OUT_OF_SESSIONS 66
#define MPI_T_ERR_INVALID_SESSION 67
#define MPI_T_ERR_CVAR_SET_NOT_NOW 68
#define MPI_T_ERR_CVAR_SET_NEVER 69
#define MPI_T_ERR_PVAR_NO_STARTSTOP 70
#define MPI_T_ERR_PVAR_NO_WRITE 71
#define MPI_T_ERR_PVAR_NO_ATOMIC 72
#define MPI_T_ERR_INVALID_NAME 73
#define MPI_T_ERR_INVALID 74

int MPI_T_init_thread(int required, int *provided);
int MPI_T_finalize(void);
int MPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len);
int MPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len);
int MPI_T_cvar_get_num(int *num_cvar);
int MPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                        MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                        int *bind, int *scope);
int MPI_T_cvar_get_index(const char *name, int *cvar_index);
int MPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                            int *count);
int MPI_T_cvar_handle_free(MPI_T_cvar_handle *handle);
int MPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf);
int MPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf);
int MPI_T_pvar_get_num(int *num_pvar);
int MPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                        MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                        int *bind, int *readonly, int *continuous, int *atomic);
int MPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index);
int MPI_T_pvar_session_create(MPI_T_pvar_session *session);
int MPI_T_pvar_session_free(MPI_T_pvar_session *session);
int MPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                            MPI_T_pvar_handle *handle, int *count);
int MPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle);
int MPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int MPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int MPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf);
int MPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf);
int MPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int MPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf);
int MPI_T_category_get_num(int *num_cat);
int MPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                            int *num_cvars, int *num_pvars, int *num_categories);
int MPI_T_category_get_index(const char *name, int *cat_index);
int MPI_T_category_get_cvars(int cat_index, int len, int indices[]);
int MPI_T_category_get_pvars(int cat_index, int len, int indices[]);
int MPI_T_category_get_categories(int cat_index, int len, int indices[]);
int MPI_T_category_changed(int *update_number);

#endif
