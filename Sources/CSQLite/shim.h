#include <sqlite3.h>

// sqlite3_config is variadic, which Swift cannot call: one wrapper per setting muEval uses.

/// Turns off SQLite's memory statistics, which take a process-wide mutex on every allocation
/// (several per inserted row). Only valid before SQLite initialises, that is before the first open.
static inline int mueval_sqlite3_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
