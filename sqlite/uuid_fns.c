/*
 * uuid_fns.c - UUIDs under three sets of names.
 *
 * PostgreSQL 18:
 *   uuidv4()                    text, a UUIDv4
 *   uuidv7()                    text, a UUIDv7 strictly greater than every
 *                               one this connection made before
 *   uuid_extract_timestamp(X)   integer Unix ms of a version 1 or 7 UUID of
 *                               the RFC 9562 variant, else NULL
 *   uuid_extract_version(X)     integer version of an RFC 9562 variant
 *                               UUID, else NULL
 * sqlean's uuid extension (its behaviour exactly):
 *   uuid4(), gen_random_uuid()  as uuidv4()
 *   uuid7()                     as uuidv7()
 *   uuid7(S)                    S an integer: a UUIDv7 whose time is S
 *                               seconds since 1970 (S * 1000 ms, kept to
 *                               48 bits as sqlean does), random otherwise;
 *                               S anything else: as uuid7()
 *   uuid_str(X)                 the canonical text of X, or NULL
 *   uuid_blob(X)                the 16 bytes of X, or NULL
 *   uuid7_timestamp_ms(X)       integer Unix ms of a UUID whose version
 *                               nibble is 7, else NULL
 * SQLite's ext/misc/uuid.c: uuid() (as uuidv4()), uuid_str, uuid_blob
 * (the same as sqlean's: sqlean's are uuid.c's). Ours: uuidv7_blob(),
 * uuidv7() as a 16-byte blob.
 *
 * Input X of every reader: a 16-byte blob, or text in uuid.c's grammar
 * (read_uuid below); anything else (NULL, numbers, other blobs, bad text)
 * gives NULL, as in sqlean and uuid.c. Text out is lowercase 8-4-4-4-12.
 */
#include "ext.h"
#include "uuid_text.h"

#include <string.h>

/* --- reading ------------------------------------------------------------------ */

/* X as a UUID: 0, or -1 when it is not one. */
static int read_uuid(sqlite3_value *x, idm_uuid *out)
{
    switch (sqlite3_value_type(x)) {
    case SQLITE_TEXT:
        return idmsq_uuid_text_read((const char *)sqlite3_value_text(x),
                                    (size_t)sqlite3_value_bytes(x), out);
    case SQLITE_BLOB:
        if (sqlite3_value_bytes(x) != (int)sizeof out->bytes)
            return -1;
        memcpy(out->bytes, sqlite3_value_blob(x), sizeof out->bytes);
        return 0;
    default:
        return -1;
    }
}

static void result_text(sqlite3_context *ctx, const idm_uuid *u)
{
    char buf[IDM_UUID_STRLEN + 1];
    if (idm_uuid_format(u, buf, sizeof buf) != IDM_OK) {
        sqlite3_result_error(ctx, "could not write a UUID", -1);
        return;
    }
    sqlite3_result_text(ctx, buf, IDM_UUID_STRLEN, SQLITE_TRANSIENT);
}

static void result_blob(sqlite3_context *ctx, const idm_uuid *u)
{
    sqlite3_result_blob(ctx, u->bytes, (int)sizeof u->bytes, SQLITE_TRANSIENT);
}

/* --- minting ------------------------------------------------------------------ */

/* One UUID of version 4 or 7 from the connection's generator, as the
 * call's result (text, or a blob when as_blob). */
static void mint(sqlite3_context *ctx, int version, int as_blob)
{
    idm_gen *g = idmsq_conn_of(ctx)->gen;
    idm_uuid u;
    idm_error err = {0};
    int rc = version == 4 ? idm_uuidv4_next_n(g, &u, 1, &err) : idm_uuidv7_next_n(g, &u, 1, &err);
    if (rc != IDM_OK)
        idmsq_error(ctx, version == 4 ? "could not mint a UUIDv4" : "could not mint a UUIDv7", rc,
                    &err);
    else if (as_blob)
        result_blob(ctx, &u);
    else
        result_text(ctx, &u);
}

static void fn_uuidv4(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    (void)argv;
    mint(ctx, 4, 0);
}

static void fn_uuidv7(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    (void)argv;
    mint(ctx, 7, 0);
}

static void fn_uuidv7_blob(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    (void)argv;
    mint(ctx, 7, 1);
}

/* sqlean's uuid7(S): with an integer S, a UUIDv7 at S seconds whose other
 * bits are random (no order among them: the time is the caller's, as in
 * sqlean, which wraps S * 1000 to 48 bits; so do we, to give the same
 * UUID prefix for the same S). Otherwise the connection's next UUIDv7. */
static void fn_uuid7(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    if (argc == 0 || sqlite3_value_type(argv[0]) != SQLITE_INTEGER) {
        mint(ctx, 7, 0);
        return;
    }
    uint64_t unix_ms = (uint64_t)sqlite3_value_int64(argv[0]) * 1000u;
    idm_uuid u;
    idm_error err = {0};
    int rc = idm_gen_random(idmsq_conn_of(ctx)->gen, u.bytes, sizeof u.bytes, &err);
    if (rc != IDM_OK) {
        idmsq_error(ctx, "could not mint a UUIDv7", rc, &err);
        return;
    }
    /* RFC 9562 §5.7: 48 bits of Unix ms, version 7, variant 10. */
    for (int i = 0; i < 6; i++)
        u.bytes[i] = (uint8_t)(unix_ms >> (40 - 8 * i));
    u.bytes[6] = (uint8_t)((u.bytes[6] & 0x0f) | 0x70);
    u.bytes[8] = (uint8_t)((u.bytes[8] & 0x3f) | 0x80);
    result_text(ctx, &u);
}

/* --- reading functions -------------------------------------------------------- */

static void fn_uuid_str(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    idm_uuid u;
    if (read_uuid(argv[0], &u) == 0)
        result_text(ctx, &u);
}

static void fn_uuid_blob(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    idm_uuid u;
    if (read_uuid(argv[0], &u) == 0)
        result_blob(ctx, &u);
}

/* sqlean's test: the version nibble only (a v7 of any variant, so
 * sqlean's '00000000-0000-7000-0000-000000000000' has time 0). The library
 * decodes the time of the RFC 9562 variant only: the copy it reads has
 * those two bits set, which leaves the 48 time bits as they are. */
static void fn_uuid7_timestamp_ms(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    idm_uuid u;
    if (read_uuid(argv[0], &u) != 0 || idm_uuid_version(&u) != 7)
        return;
    u.bytes[8] = (uint8_t)((u.bytes[8] & 0x3f) | 0x80);
    idm_uuid_fields f;
    idm_uuid_decode(&u, &f);
    sqlite3_result_int64(ctx, f.unix_ms);
}

/* PostgreSQL 18's test: the RFC 9562 variant, then version 1 or 7. Unix
 * ms (a version 1 UUID's 100-ns ticks truncated), not text: SQLite has no
 * timestamp type, an integer sorts and compares without parsing, and
 * datetime(ms / 1000.0, 'unixepoch') or the library's inspect give text. */
static void fn_uuid_extract_timestamp(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    idm_uuid u;
    if (read_uuid(argv[0], &u) != 0 || idm_uuid_variant(&u) != IDM_UUID_VARIANT_RFC9562)
        return;
    int version = idm_uuid_version(&u);
    if (version != 1 && version != 7)
        return;
    idm_uuid_fields f;
    idm_uuid_decode(&u, &f);
    if (f.has_time)
        sqlite3_result_int64(ctx, f.unix_ms);
}

static void fn_uuid_extract_version(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    idm_uuid u;
    if (read_uuid(argv[0], &u) != 0 || idm_uuid_variant(&u) != IDM_UUID_VARIANT_RFC9562)
        return;
    sqlite3_result_int(ctx, idm_uuid_version(&u));
}

const idmsq_fn idmsq_uuid_fns[] = {
    {"uuidv4", 0, IDMSQ_GENERATOR, fn_uuidv4},
    {"uuid4", 0, IDMSQ_GENERATOR, fn_uuidv4},
    {"gen_random_uuid", 0, IDMSQ_GENERATOR, fn_uuidv4},
    {"uuid", 0, IDMSQ_GENERATOR, fn_uuidv4},
    {"uuidv7", 0, IDMSQ_GENERATOR, fn_uuidv7},
    {"uuidv7_blob", 0, IDMSQ_GENERATOR, fn_uuidv7_blob},
    {"uuid7", 0, IDMSQ_GENERATOR, fn_uuid7},
    {"uuid7", 1, IDMSQ_GENERATOR, fn_uuid7},
    {"uuid_str", 1, IDMSQ_PURE, fn_uuid_str},
    {"uuid_blob", 1, IDMSQ_PURE, fn_uuid_blob},
    {"uuid7_timestamp_ms", 1, IDMSQ_PURE, fn_uuid7_timestamp_ms},
    {"uuid_extract_timestamp", 1, IDMSQ_PURE, fn_uuid_extract_timestamp},
    {"uuid_extract_version", 1, IDMSQ_PURE, fn_uuid_extract_version},
    {NULL, 0, 0, NULL},
};
