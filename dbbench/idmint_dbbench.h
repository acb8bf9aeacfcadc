/*
 * idmint_dbbench.h - the databases of `idmint bench btree` (issue #12,
 * docs/btree.md): one table per ID format, batches of keys inserted, and
 * what the database says about the primary key's B-tree afterwards.
 *
 * A component of its own (dbbench/, the static library idmint_dbbench)
 * beside libidmint, which stays OpenSSL-only: the database clients live
 * here. Each backend is built when its client library is found
 * (IDM_COORD_REQUIRED=ON makes a missing one an error):
 *
 *   sqlite:PATH                  dbb_sqlite.c (sqlite3): the embedded
 *                                default, the file created when missing
 *   postgresql://... postgres:// dbb_pg.c (libpq): a libpq URI
 *   mysql://USER:PASS@HOST:PORT/DB  (mariadb:// too; PASS and :PORT may
 *                                be left out; ?socket=PATH for a Unix
 *                                socket; ?key=uuid for a UUID column)
 *                                dbb_mysql.c (libmariadb): MariaDB or
 *                                MySQL, InnoDB
 *
 * Tables: the caller names them; every name starts with IDMB_TABLE_PREFIX
 * and the backends refuse any other (they only create and drop their own).
 * One table per run of a format:
 *
 *   key bytes   PostgreSQL    SQLite (WITHOUT ROWID)   MySQL (InnoDB)
 *   8           bigint        INTEGER                  BIGINT
 *   16          uuid          BLOB                     BINARY(16), or UUID
 *                                                      with ?key=uuid (MariaDB
 *                                                      10.7+: it stores some
 *                                                      versions' fields swapped)
 *   20          bytea         BLOB                     BINARY(20)
 *
 * as `id ... PRIMARY KEY, n BIGINT NOT NULL` (n: the row's number), so the
 * primary key is the B-tree under test: PostgreSQL's TABLE_pkey index,
 * SQLite's table b-tree itself, InnoDB's clustered index.
 *
 * Keys arrive as big-endian bytes: 8-byte keys are signed 64-bit integers
 * (bigint, snowflake), 16- and 20-byte keys the ID's bytes (a UUID's, a
 * ULID's, a KSUID's), whose byte order is the B-tree's order.
 *
 * Counters are cumulative readings of the database (or the process), taken
 * before and after some work; stats are taken once a table is filled.
 * Figures a database does not report are -1 (densities: < 0).
 *
 * Calls block on the database. One handle is used by one thread at a time.
 * Errors (docs/CONTRIBUTING.md, "Errors"): 0 or a positive IDMB_E* code,
 * and, when the caller passes an idmb_error (NULL is allowed), the code
 * and a NUL-terminated message in it, written only when the call fails
 * (a successful call leaves it as it was). The message names the
 * database and says what to do, e.g.
 *   "postgresql://...: connection refused (is the server running?)"
 *   "pgstatindex needs the pgstattuple extension: CREATE EXTENSION pgstattuple
 *    (Debian: postgresql-contrib), or allow this role to create it"
 *   "this SQLite has no dbstat table (built without SQLITE_ENABLE_DBSTAT_VTAB)"
 * Passwords never appear in messages (URLs are shown with the password
 * replaced by "***").
 */
#ifndef IDMINT_DBBENCH_H
#define IDMINT_DBBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IDMB_TABLE_PREFIX "idmint_bench_"
#define IDMB_TABLE_MAX 63 /* bytes of a table name, prefix included */
#define IDMB_ERR_CAP 512

/* Results: 0 or one of these. The list is append-only: a code is never
 * renumbered or reused. */
enum {
    IDMB_OK = 0,
    IDMB_EUSAGE = 1,       /* a bad URL, table name or argument */
    IDMB_EUNSUPPORTED = 2, /* a URL of a kind this build has no client for */
    IDMB_EDB = 3,          /* the database failed or could not be reached */
    IDMB_EMISSING = 4,     /* the database lacks what a figure needs (pgstattuple, dbstat) */
    IDMB_EABORTED = 5      /* the caller's row callback stopped idmb_scan */
};

/* One failure: its code and what happened (the caller's; see "Errors"). */
typedef struct idmb_error {
    int code;
    char msg[IDMB_ERR_CAP];
} idmb_error;

/* Fixed text for a code ("unknown error" for others). The string is
 * static. Thread-safe: yes (pure function). */
const char *idmb_strerror(int code);

typedef enum idmb_kind { IDMB_SQLITE = 1, IDMB_POSTGRESQL = 2, IDMB_MYSQL = 3 } idmb_kind;

/* A parsed mysql:// URL (pure parser; fuzz/fuzz_dbbench_url.c). */
typedef struct idmb_mysql_url {
    char user[128];
    char password[128];
    char host[256];   /* "" with a socket */
    unsigned port;    /* 0: the client's default (3306) */
    char db[128];
    char socket[512]; /* "" unless ?socket=PATH */
    bool uuid_column; /* ?key=uuid: 16-byte keys in a MariaDB UUID column */
} idmb_mysql_url;

/* Parses len bytes of "mysql://" or "mariadb://" URL: USER[:PASS]@HOST[:PORT]/DB
 * [?socket=PATH][&key=uuid] (parameters in any order, joined by '&'); user,
 * password and db may be %-encoded. IDMB_EUSAGE with
 * a message (never quoting the password) when malformed. */
int idmb_mysql_url_parse(const char *url, size_t len, idmb_mysql_url *out, idmb_error *err);

/* The kind of database a URL names (0 when none), and the URL as it may be
 * shown (the password replaced by "***"), NUL-terminated into dst. */
idmb_kind idmb_url_kind(const char *url);
void idmb_url_redact(const char *url, char *dst, size_t cap);

/* Which backends this build has (for --help and the tests). */
bool idmb_have(idmb_kind kind);

typedef struct idmb_db idmb_db;

/* Connects (SQLite: opens or creates the file). For PostgreSQL it also
 * makes sure pgstatindex can be called (CREATE EXTENSION IF NOT EXISTS
 * pgstattuple when the role may; else IDMB_EMISSING with the message
 * above) and sets synchronous_commit = off for the session (inserts
 * commit per batch; the WAL bytes are read with pg_current_wal_insert_lsn,
 * right under asynchronous commit). For SQLite it checks that dbstat
 * exists (IDMB_EMISSING) and uses journal_mode=WAL, synchronous=NORMAL. */
int idmb_open(const char *url, idmb_db **out, idmb_error *err);
void idmb_close(idmb_db *db);
idmb_kind idmb_db_kind(const idmb_db *db);
/* "PostgreSQL 15.18", "SQLite 3.40.1", "MariaDB 10.11.19": for reports. */
const char *idmb_db_version(const idmb_db *db);

/* Drops the table if it exists, then creates it for keys of key_bytes (8,
 * 16 or 20) as above. */
int idmb_create_table(idmb_db *db, const char *table, int key_bytes, idmb_error *err);

/* Inserts n rows in one transaction: keys[i * key_bytes ...] as id and
 * first_n + i as n. A duplicate key is IDMB_EDB saying so (the generator
 * under test repeated a key). */
int idmb_insert(idmb_db *db, const char *table, int key_bytes, const uint8_t *keys, size_t n,
                int64_t first_n, idmb_error *err);

int idmb_drop_table(idmb_db *db, const char *table, idmb_error *err);

/* Cumulative readings, -1 where not reported:
 *   wal_bytes      PostgreSQL: pg_current_wal_insert_lsn() as a byte count;
 *                  MySQL: Innodb_os_log_written (the redo log)
 *   bytes_written  SQLite: this process's write_bytes in /proc/self/io
 *                  (what reached the block layer, journal included)
 *   buffer_reads   blocks read into the database's cache: PostgreSQL
 *                  (pg_stat_database.blks_read of this database, after
 *                  pg_stat_force_next_flush), SQLite (SQLITE_DBSTATUS_CACHE_MISS),
 *                  MySQL (Innodb_buffer_pool_reads)
 *   buffer_writes  blocks written from it: PostgreSQL (pg_stat_bgwriter's
 *                  buffers_checkpoint + buffers_clean + buffers_backend:
 *                  server-wide), SQLite (SQLITE_DBSTATUS_CACHE_WRITE),
 *                  MySQL (Innodb_buffer_pool_pages_flushed) */
typedef struct idmb_counters {
    int64_t wal_bytes;
    int64_t bytes_written;
    int64_t buffer_reads;
    int64_t buffer_writes;
} idmb_counters;

int idmb_read_counters(idmb_db *db, idmb_counters *out, idmb_error *err);

/* The filled table's primary key, -1 / < 0 where not reported:
 *   index_bytes        PostgreSQL pg_relation_size(TABLE_pkey); SQLite
 *                      dbstat's pages of the table (its b-tree); MySQL
 *                      innodb_index_stats size * page size (after ANALYZE
 *                      TABLE)
 *   leaf_pages         pgstatindex.leaf_pages; dbstat's leaf pages;
 *                      innodb_index_stats n_leaf_pages
 *   leaf_density       0..1: pgstatindex.avg_leaf_density / 100; SQLite
 *                      sum(pgsize - unused) / sum(pgsize) over leaf pages;
 *                      MySQL: not reported
 *   leaf_fragmentation 0..1: pgstatindex.leaf_fragmentation / 100 (leaves
 *                      out of key order on disk); others: not reported
 *   table_bytes        the heap (PostgreSQL pg_relation_size(TABLE));
 *                      SQLite/InnoDB: the same as index_bytes (the key's
 *                      b-tree is the table)
 *   page_bytes         the B-tree's page size (8192, 4096, 16384) */
typedef struct idmb_stats {
    int64_t index_bytes;
    int64_t leaf_pages;
    double leaf_density;
    double leaf_fragmentation;
    int64_t table_bytes;
    int64_t page_bytes;
} idmb_stats;

int idmb_read_stats(idmb_db *db, const char *table, idmb_stats *out, idmb_error *err);

/* ---- reading a column (idmint audit) ------------------------------------ */

/* Connects to read, changing nothing: a SQLite file is opened read-only
 * (it must exist), PostgreSQL gets no extension and no setting; no dbstat
 * or pgstattuple is needed. The handle serves idmb_scan and idmb_close. */
int idmb_open_reader(const char *url, idmb_db **out, idmb_error *err);

/* Checks an identifier for idmb_scan: 1 to 63 bytes of [A-Za-z0-9_$],
 * not starting with a digit or '$'; with dotted, also SCHEMA.NAME (each
 * part so). It is then quoted as the database quotes names ("x" or `x`),
 * so its case is kept. IDMB_EUSAGE with a message quoting it. A pure
 * function (fuzz/fuzz_dbbench_ident.c). */
int idmb_ident_check(const char *what, const char *name, bool dotted, idmb_error *err);

/* One value of a scanned column: text (text and character columns, and
 * integers as decimal), or bytes (binary, len bytes: bytea, BLOB,
 * BINARY/VARBINARY, PostgreSQL's uuid as its 16 bytes); data NULL for an
 * SQL NULL. Returns 0 to go on, non-zero to stop the scan. */
typedef int (*idmb_row_fn)(void *ctx, const void *data, size_t len, bool binary);

/* Reads column of table row by row (streamed: the rows are not held in
 * memory), ordered by order_by when it is not NULL (else in the order
 * the database returns them), and hands each value to fn. Names are
 * checked by idmb_ident_check (table dotted). Returns IDMB_OK,
 * IDMB_EUSAGE, IDMB_EDB (the database's message: no such table or
 * column, a column type it cannot hand over), or IDMB_EABORTED when fn
 * stopped it. */
int idmb_scan(idmb_db *db, const char *table, const char *column, const char *order_by,
              idmb_row_fn fn, void *ctx, idmb_error *err);

#endif
