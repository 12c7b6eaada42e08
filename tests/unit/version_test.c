/*
 * Unit test of tern_version() through libtern.so, as a program sees it:
 * the string is configure's version (PACKAGE_VERSION of this build), the
 * numbers are that string's, each out-pointer may be NULL, and the call
 * is the same before any tern_init and from another thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <tern/tern.h>

#include "tests/unit/expect.h"

static void *other_thread(void *arg)
{
    (void)arg;
    return (void *)tern_version(NULL, NULL, NULL);
}

int main(void)
{
    unsigned major = 99, minor = 99, patch = 99;
    const char *v = tern_version(&major, &minor, &patch);
    EXPECT(v != NULL && strcmp(v, PACKAGE_VERSION) == 0, "tern_version() is \"%s\", configure "
           "says \"%s\"", v ? v : "(null)", PACKAGE_VERSION);
    char numbers[64];
    snprintf(numbers, sizeof(numbers), "%u.%u.%u", major, minor, patch);
    EXPECT(v != NULL && strncmp(v, numbers, strlen(numbers)) == 0,
           "numbers %s are not those of \"%s\"", numbers, v ? v : "(null)");
    EXPECT(major != 99 && minor != 99 && patch != 99, "a number was not written");

    unsigned m2 = 7;
    EXPECT(tern_version(NULL, NULL, NULL) == v, "NULL out-pointers: another string");
    EXPECT(tern_version(&m2, NULL, NULL) == v && m2 == major, "major alone: %u", m2);

    pthread_t th;
    void *got = NULL;
    EXPECT(pthread_create(&th, NULL, other_thread, NULL) == 0, "pthread_create");
    pthread_join(th, &got);
    EXPECT(got == (void *)v, "another thread got another string");

    if (failures) {
        fprintf(stderr, "version_test: %d failure(s)\n", failures);
        return 1;
    }
    printf("version_test: libtern %s (%u.%u.%u)\n", v, major, minor, patch);
    return 0;
}
