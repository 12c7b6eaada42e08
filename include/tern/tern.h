/* tern — umbrella header: include this one. */
#ifndef TERN_TERN_H
#define TERN_TERN_H

#include <tern/status.h>
#include <tern/core.h>
#include <tern/tagged.h>
#include <tern/rma.h>
#include <tern/iofwd.h>

#define TERN_VERSION_MAJOR 0
#define TERN_VERSION_MINOR 1

#endif
