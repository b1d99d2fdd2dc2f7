// Header-only shim over Debian's libsqlite3 (a system library target compiles no C).
#ifndef LIVECONTROLS_SQLITE_SHIM_H
#define LIVECONTROLS_SQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT: SQLite copies the bound text before the call returns.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }
#endif
