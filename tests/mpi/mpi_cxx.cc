// C++ program on tern's MPI layer (tests/mpi/mpi.sh), built with
// ternmpicxx: mpi.h from C++ (extern "C", its macros and handle types in
// C++ expressions), a ring of std::vector payloads, a derived type, an
// allreduce and an error handler returning an error.  Plain MPI: passes
// under MPICH's mpicxx too.  Prints "ok rank R" or "FAIL ...".
#include <mpi.h>

#include <cstdio>
#include <numeric>
#include <vector>

static int rank, size, failures;

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            std::printf("FAIL rank %d line %d: ", rank, __LINE__);                        \
            std::printf(__VA_ARGS__);                                                     \
            std::printf("\n");                                                            \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    std::vector<double> out(1000), in(1000, -1.0);
    std::iota(out.begin(), out.end(), 1000.0 * rank);
    MPI_Status st;
    MPI_Sendrecv(out.data(), (int)out.size(), MPI_DOUBLE, right, 5, in.data(), (int)in.size(),
                 MPI_DOUBLE, left, 5, MPI_COMM_WORLD, &st);
    int count = -1;
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK(count == 1000 && st.MPI_SOURCE == left, "sendrecv: count %d source %d", count,
          st.MPI_SOURCE);
    for (int i = 0; i < 1000; i++)
        if (in[i] != 1000.0 * left + i) {
            CHECK(false, "sendrecv: element %d is %g", i, in[i]);
            break;
        }

    // every other int of 20, as a vector type, received as 10 contiguous ints
    MPI_Datatype every_other;
    MPI_Type_vector(10, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    std::vector<int> v(20), got(10, -1);
    std::iota(v.begin(), v.end(), 100 * rank);
    MPI_Sendrecv(v.data(), 1, every_other, right, 6, got.data(), 10, MPI_INT, left, 6,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 10; i++)
        CHECK(got[i] == 100 * left + 2 * i, "vector type: element %d is %d", i, got[i]);
    MPI_Type_free(&every_other);

    long mine = rank + 1, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == (long)size * (size + 1) / 2, "allreduce %ld", sum);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int e = MPI_Send(out.data(), 1, MPI_DOUBLE, size, 0, MPI_COMM_WORLD); // no such rank
    int cls = -1;
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_RANK, "send to rank %d: class %d", size, cls);

    if (failures == 0)
        std::printf("ok rank %d\n", rank);
    MPI_Finalize();
    return failures != 0;
}
