/*
 * Seed corpora of the harnesses, written by the harnesses themselves from
 * the real wire structs (and, for shm, the real segment code), so they
 * follow any change of format: run a harness with TERN_FUZZ_SEEDS=DIR and
 * it writes its seeds to DIR and exits.  The checked-in corpora
 * tests/fuzz/corpus/NAME were made that way:
 *   TERN_FUZZ_SEEDS=$srcdir/tests/fuzz/corpus/fuzz_pkt ./tests/fuzz/fuzz_pkt
 */
#ifndef TERN_TESTS_FUZZ_SEEDS_H
#define TERN_TESTS_FUZZ_SEEDS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SEEDS_ENV "TERN_FUZZ_SEEDS"

/* Write seed `name` of len bytes into the seeds directory (only while
 * seeds_maybe_write runs its writer). */
static inline void seed_write(const char *name, const void *data, size_t len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", getenv(SEEDS_ENV), name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

/* From LLVMFuzzerInitialize: with TERN_FUZZ_SEEDS set, write the seeds
 * (writer) and exit. */
static inline void seeds_maybe_write(void (*writer)(void))
{
    const char *dir = getenv(SEEDS_ENV);
    if (dir == NULL || *dir == '\0')
        return;
    mkdir(dir, 0755);
    writer();
    exit(0);
}

#endif
