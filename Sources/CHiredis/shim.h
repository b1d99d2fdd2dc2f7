// Header-only shim over Debian's libhiredis 0.14 (a system library target compiles no C).
// No pkgConfig in Package.swift: hiredis.pc adds -D_FILE_OFFSET_BITS=64, which SwiftPM warns about, and
// <hiredis/hiredis.h> needs no flags.
#ifndef LIVECONTROLS_HIREDIS_SHIM_H
#define LIVECONTROLS_HIREDIS_SHIM_H
#include <hiredis/hiredis.h>
#endif
