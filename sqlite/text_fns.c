/*
 * text_fns.c - ULID, KSUID, TypeID and idmint_inspect.
 *
 *   ulid()                      text, monotonic within the connection
 *   ksuid()                     text, monotonic within the connection
 *   typeid(prefix)              text, prefix + "_" + a UUIDv7 in base32
 *                               (the bare base32 for ''); the UUIDv7
 *                               comes from uuidv7()'s generator, so
 *                               TypeIDs sort with uuidv7() values
 *   idmint_inspect(X [, layout]) text, the JSON object that
 *                               `idmint inspect --json` prints
 *                               (common/inspect_render.c); X is any ID's
 *                               text, or a 16-byte blob (a UUID); layout
 *                               names the snowflake layout (twitter)
 *
 * NULL in gives NULL out. A bad prefix, ID or layout is an error naming
 * the input and the library's reason.
 */
#include "ext.h"

#include "inspect_render.h"

#include <stdio.h>
#include <string.h>

/* One ID of format from the connection's generator. */
static void mint_text(sqlite3_context *ctx, int format, const char *prefix, size_t prefix_len,
                      const char *what)
{
    char buf[IDM_FORMAT_TEXT_MAX];
    size_t len = 0;
    idm_error err = {0};
    int rc = idm_format_next_text_n(idm_format_by_id(format), idmsq_conn_of(ctx)->gen, prefix,
                                    prefix_len, buf, sizeof buf, 1, 0, &len, &err);
    if (rc != IDM_OK) {
        idmsq_error(ctx, what, rc, &err);
        return;
    }
    sqlite3_result_text(ctx, buf, (int)len, SQLITE_TRANSIENT);
}

static void fn_ulid(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    (void)argv;
    mint_text(ctx, IDM_FORMAT_ULID, NULL, 0, "ulid: could not mint a ULID");
}

static void fn_ksuid(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    (void)argv;
    mint_text(ctx, IDM_FORMAT_KSUID, NULL, 0, "ksuid: could not mint a KSUID");
}

/* "what 'input'" for messages, the input cut to 100 bytes. */
static void name_input(char *dst, size_t cap, const char *what, const char *s, int len)
{
    snprintf(dst, cap, "%s '%.*s'", what, len > 100 ? 100 : len, s);
}

static void fn_typeid(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
        return;
    const char *p = (const char *)sqlite3_value_text(argv[0]);
    int len = sqlite3_value_bytes(argv[0]);
    if (p == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    /* Checked before minting, so a bad prefix costs no UUID. */
    idm_error err = {0};
    int rc = idm_typeid_check_prefix(p, (size_t)len, &err);
    if (rc != IDM_OK) {
        char what[160];
        name_input(what, sizeof what, "typeid: invalid prefix", p, len);
        idmsq_error(ctx, what, rc, &err);
        return;
    }
    mint_text(ctx, IDM_FORMAT_TYPEID, p, (size_t)len, "typeid: could not mint a TypeID");
}

static void fn_inspect(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
        return;
    idm_sf_layout layout;
    idm_error err = {0};
    int rc;
    if (argc > 1 && sqlite3_value_type(argv[1]) != SQLITE_NULL) {
        const char *l = (const char *)sqlite3_value_text(argv[1]);
        int llen = sqlite3_value_bytes(argv[1]);
        rc = l == NULL ? IDM_ENOMEM : idm_sf_layout_parse(&layout, l, (size_t)llen, &err);
        if (rc != IDM_OK) {
            char what[160];
            name_input(what, sizeof what, "idmint_inspect: invalid snowflake layout",
                       l != NULL ? l : "", llen);
            idmsq_error(ctx, what, rc, &err);
            return;
        }
    } else {
        rc = idm_sf_layout_preset(&layout, "twitter", 7, &err);
        if (rc != IDM_OK) {
            idmsq_error(ctx, "idmint_inspect", rc, &err);
            return;
        }
    }
    /* A 16-byte blob is a UUID (uuid_blob's form): inspect its text. */
    char uuid_text[IDM_UUID_STRLEN + 1];
    const char *s;
    int len;
    if (sqlite3_value_type(argv[0]) == SQLITE_BLOB && sqlite3_value_bytes(argv[0]) == 16) {
        idm_uuid u;
        memcpy(u.bytes, sqlite3_value_blob(argv[0]), sizeof u.bytes);
        if (idm_uuid_format(&u, uuid_text, sizeof uuid_text) != IDM_OK) {
            sqlite3_result_error(ctx, "idmint_inspect: could not write a UUID", -1);
            return;
        }
        s = uuid_text;
        len = IDM_UUID_STRLEN;
    } else {
        s = (const char *)sqlite3_value_text(argv[0]);
        len = sqlite3_value_bytes(argv[0]);
        if (s == NULL) {
            sqlite3_result_error_nomem(ctx);
            return;
        }
    }
    idm_inspection in;
    rc = idm_inspect(s, (size_t)len, IDM_KIND_AUTO, &layout, &in, &err);
    if (rc != IDM_OK) {
        char what[160];
        name_input(what, sizeof what, "idmint_inspect: invalid ID", s, len);
        idmsq_error(ctx, what, rc, &err);
        return;
    }
    /* A decoded ID is at most 90 characters; its object fits with room to
     * spare (escaping can at most sextuple the input). */
    char buf[2048];
    idmx_outbuf b;
    idmx_outbuf_init(&b, buf, sizeof buf, NULL, NULL);
    if (idmx_inspect_json(&b, s, (size_t)len, &in, &layout) != 0) {
        sqlite3_result_error(ctx, "idmint_inspect: the description does not fit", -1);
        return;
    }
    sqlite3_result_text(ctx, buf, (int)b.len, SQLITE_TRANSIENT);
}

const idmsq_fn idmsq_text_fns[] = {
    {"ulid", 0, IDMSQ_GENERATOR, fn_ulid},         {"ksuid", 0, IDMSQ_GENERATOR, fn_ksuid},
    {"typeid", 1, IDMSQ_GENERATOR, fn_typeid},     {"idmint_inspect", 1, IDMSQ_PURE, fn_inspect},
    {"idmint_inspect", 2, IDMSQ_PURE, fn_inspect}, {NULL, 0, 0, NULL},
};
