/*
 * idmint_sqlite.h - idmint's SQL functions in SQLite, for programs that
 * link the extension statically (libidmint_sqlite.a) instead of loading
 * idmint_sqlite.so.
 *
 * Register the functions in every connection opened afterwards:
 *
 *     sqlite3_auto_extension((void (*)(void))sqlite3_idmintsqlite_init);
 *
 * or in one connection:
 *
 *     char *msg = NULL;
 *     int rc = sqlite3_idmintsqlite_init(db, &msg, NULL);
 *
 * The static library is built with SQLITE_CORE, so it calls the linked
 * SQLite directly and the third argument is ignored (NULL is fine). The
 * loadable module exports the same name: SQLite derives it from the file
 * name idmint_sqlite (sqlite3_ + its letters, lowercased + _init).
 */
#ifndef IDMINT_SQLITE_H
#define IDMINT_SQLITE_H

#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Registers every function (sqlite/README.md lists them) in db. Returns
 * SQLITE_OK, or an SQLite error code with *pzErrMsg (when pzErrMsg is not
 * NULL) set to a message from sqlite3_malloc that the caller frees with
 * sqlite3_free. Thread-safe: as the connection. */
int sqlite3_idmintsqlite_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi);

#ifdef __cplusplus
}
#endif

#endif
