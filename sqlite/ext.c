/*
 * ext.c - idmint_sqlite's entry point: makes a connection's state and
 * registers the functions of uuid_fns.c, text_fns.c and snowflake_fns.c.
 *
 * Loaded with `.load idmint_sqlite` or load_extension('idmint_sqlite'),
 * SQLite looks for sqlite3_idmintsqlite_init: "sqlite3_", the letters of
 * the file name after any "lib" and before the first ".", lowercased, and
 * "_init". Linked statically, the same function registers them
 * (idmint_sqlite.h).
 *
 * Each connection gets its own generator, so uuidv7() is strictly
 * increasing per connection (as PostgreSQL's is per backend), and its own
 * handle on the database's host-wide snowflake state (snowflake_fns.c).
 * Left out on purpose: a process-wide generator (connections would
 * contend on one state for no gain in order the SQL can see).
 */
#include "ext.h"

#include "idmint_sqlite.h"

#include <stdio.h>
#include <string.h>

SQLITE_EXTENSION_INIT1

void idmsq_error(sqlite3_context *ctx, const char *what, int rc, const idm_error *err)
{
    if (rc == IDM_ENOMEM) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    const char *reason = err != NULL && err->msg[0] != '\0' ? err->msg : idm_strerror(rc);
    char msg[IDM_ERROR_MSG_CAP + 128];
    snprintf(msg, sizeof msg, "%s: %s", what, reason);
    sqlite3_result_error(ctx, msg, -1);
}

static void conn_release(void *p)
{
    idmsq_conn *c = p;
    if (--c->refs > 0)
        return;
    idmsq_snowflake_close(c);
    idm_gen_free(c->gen);
    sqlite3_free(c);
}

static int register_all(idmsq_conn *c, const idmsq_fn *fns)
{
    for (const idmsq_fn *f = fns; f->name != NULL; f++) {
        /* SQLite calls conn_release when the function is dropped, and also
         * when registering it fails: count the reference first. */
        c->refs++;
        int rc = sqlite3_create_function_v2(c->db, f->name, f->nargs, f->flags, c, f->fn, NULL,
                                            NULL, conn_release);
        if (rc != SQLITE_OK)
            return rc;
    }
    return SQLITE_OK;
}

#ifdef _WIN32
__declspec(dllexport)
#endif
    int sqlite3_idmintsqlite_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi)
{
    SQLITE_EXTENSION_INIT2(pApi);
    idmsq_conn *c = sqlite3_malloc(sizeof *c);
    if (c == NULL)
        return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    c->db = db;
    /* The connection's own reference, dropped below once every function
     * holds one (or registration failed). */
    c->refs = 1;
    idm_error err = {0};
    int rc = idm_gen_new(&c->gen, NULL, &err);
    if (rc != IDM_OK) {
        if (pzErrMsg != NULL)
            *pzErrMsg = sqlite3_mprintf("idmint_sqlite: could not make a generator: %s",
                                        err.msg[0] != '\0' ? err.msg : idm_strerror(rc));
        conn_release(c);
        return rc == IDM_ENOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
    }
    const idmsq_fn *tables[] = {idmsq_uuid_fns, idmsq_text_fns, idmsq_snowflake_fns};
    int src = SQLITE_OK;
    for (size_t i = 0; i < sizeof tables / sizeof tables[0] && src == SQLITE_OK; i++)
        src = register_all(c, tables[i]);
    if (src != SQLITE_OK && pzErrMsg != NULL)
        *pzErrMsg = sqlite3_mprintf("idmint_sqlite: could not register the functions: %s",
                                    sqlite3_errmsg(db));
    conn_release(c);
    return src;
}
