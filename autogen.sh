#!/bin/sh
# Regenerate the build system (configure, Makefile.in, libtool scripts).
set -e
cd "$(dirname "$0")"
autoreconf --install --force --warnings=all,no-portability
