#pragma once
#include <sqlite3.h>

/// `sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0)`, which Swift cannot call
/// (`sqlite3_config` is variadic). Only before SQLite initializes itself:
/// afterwards it answers `SQLITE_MISUSE` and changes nothing.
static inline int flowd_sqlite3_config_no_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
