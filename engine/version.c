/*
 * tern_version(): the library's own version, configure's AC_INIT
 * (PACKAGE_VERSION, config.h), compiled into libtern: a program asking
 * learns which libtern it runs on, whatever it was built against.
 */
#include <stdio.h>

#include <tern/core.h>

const char *tern_version(unsigned *major, unsigned *minor, unsigned *patch)
{
    unsigned v[3] = {0, 0, 0};
    /* "MAJOR.MINOR.PATCH", possibly followed by a suffix ("0.2.0rc1") */
    (void)sscanf(PACKAGE_VERSION, "%u.%u.%u", &v[0], &v[1], &v[2]);
    if (major != NULL)
        *major = v[0];
    if (minor != NULL)
        *minor = v[1];
    if (patch != NULL)
        *patch = v[2];
    return PACKAGE_VERSION;
}
