/*
 * text_fns.c - ULID, TypeID and KSUID, their conversions, and
 * idmint_inspect.
 *
 *   ulid() text                     monotonic within the backend
 *   ulid_to_uuid(text) uuid         the same 128 bits (case-insensitive)
 *   uuid_to_ulid(uuid) text
 *   typeid(prefix text) text        prefix + "_" + a UUIDv7 in base32; the
 *                                   UUIDv7 comes from uuidv7()'s generator,
 *                                   so TypeIDs sort with uuidv7() values
 *   typeid_to_uuid(text) uuid
 *   uuid_to_typeid(prefix text, uuid) text
 *   ksuid() text                    monotonic within the backend
 *   idmint_inspect(id text, layout text DEFAULT 'twitter') jsonb
 *                                   the object `idmint inspect --json`
 *                                   prints (common/inspect_render.c)
 *
 * ulid(), typeid() and ksuid() mint through the library's format table
 * (idm_format_next_text_n). Bad text raises 22P02 (invalid_text_representation) with the library's
 * reason as the detail; a bad prefix is 22P02 too (it is text that is not
 * a TypeID prefix); a bad layout is 22023.
 */
#include "pg_idmint.h"

#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/uuid.h"

#include "inspect_render.h"

static text *text_of(const char *s, size_t len)
{
    return cstring_to_text_with_len(s, (int)len);
}

static void uuid_out_of(pg_uuid_t *dst, const uint8_t *bytes)
{
    memcpy(dst->data, bytes, UUID_LEN);
}

/* One ID of format (the library's table, idmint/format.h) from the
 * backend's generator, as text; what names it in the error. prefix: for
 * typeid, already checked. */
static text *mint_text(int format, const char *prefix, size_t prefix_len, const char *what)
{
    char buf[IDM_FORMAT_TEXT_MAX];
    size_t len = 0;
    idm_error err;
    pgi_error_init(&err);
    int rc = idm_format_next_text_n(idm_format_by_id(format), pgi_gen(), prefix, prefix_len, buf,
                                    sizeof buf, 1, 0, &len, &err);
    if (unlikely(rc != IDM_OK))
        pgi_raise(rc, &err, what);
    return text_of(buf, len);
}

/* --- ULID --------------------------------------------------------------------- */

static text *ulid_text(const idm_ulid *u)
{
    char buf[IDM_ULID_STRLEN + 1];
    int rc = idm_ulid_format(u, buf, sizeof buf);
    if (rc != IDM_OK)
        pgi_raise(rc, NULL, "could not write a ULID");
    return text_of(buf, IDM_ULID_STRLEN);
}

PG_FUNCTION_INFO_V1(pg_idmint_ulid);
Datum pg_idmint_ulid(PG_FUNCTION_ARGS)
{
    (void)fcinfo;
    PG_RETURN_TEXT_P(mint_text(IDM_FORMAT_ULID, NULL, 0, "could not mint a ULID"));
}

PG_FUNCTION_INFO_V1(pg_idmint_ulid_to_uuid);
Datum pg_idmint_ulid_to_uuid(PG_FUNCTION_ARGS)
{
    text *t = PG_GETARG_TEXT_PP(0);
    idm_ulid u;
    idm_error err = {0};
    if (idm_ulid_parse(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &u, &err) != IDM_OK)
        pgi_raise_input("ULID", VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &err);
    pg_uuid_t *out = palloc(sizeof *out);
    uuid_out_of(out, u.bytes);
    PG_RETURN_UUID_P(out);
}

PG_FUNCTION_INFO_V1(pg_idmint_uuid_to_ulid);
Datum pg_idmint_uuid_to_ulid(PG_FUNCTION_ARGS)
{
    pg_uuid_t *in = PG_GETARG_UUID_P(0);
    idm_ulid u;
    memcpy(u.bytes, in->data, UUID_LEN);
    PG_RETURN_TEXT_P(ulid_text(&u));
}

/* --- TypeID ---------------------------------------------------------------------- */

static text *typeid_text(text *prefix, const idm_uuid *u)
{
    char buf[IDM_TYPEID_STRLEN_MAX + 1];
    idm_error err;
    pgi_error_init(&err);
    const char *p = VARDATA_ANY(prefix);
    size_t plen = VARSIZE_ANY_EXHDR(prefix);
    if (idm_typeid_format(p, plen, u, buf, sizeof buf, &err) != IDM_OK)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                 errmsg("invalid TypeID prefix: \"%.*s\"", (int)Min(plen, 200), p),
                 errdetail("%s", err.msg),
                 errhint("A prefix is at most 63 characters of a-z and _, neither first nor "
                         "last, or empty.")));
    return text_of(buf, strlen(buf));
}

PG_FUNCTION_INFO_V1(pg_idmint_typeid);
Datum pg_idmint_typeid(PG_FUNCTION_ARGS)
{
    text *prefix = PG_GETARG_TEXT_PP(0);
    idm_error err;
    pgi_error_init(&err);
    /* Checked before minting, so a bad prefix costs no UUID. */
    if (idm_typeid_check_prefix(VARDATA_ANY(prefix), VARSIZE_ANY_EXHDR(prefix), &err) != IDM_OK)
        (void)typeid_text(prefix, &(idm_uuid){{0}});
    PG_RETURN_TEXT_P(mint_text(IDM_FORMAT_TYPEID, VARDATA_ANY(prefix), VARSIZE_ANY_EXHDR(prefix),
                               "could not mint a TypeID"));
}

PG_FUNCTION_INFO_V1(pg_idmint_typeid_to_uuid);
Datum pg_idmint_typeid_to_uuid(PG_FUNCTION_ARGS)
{
    text *t = PG_GETARG_TEXT_PP(0);
    idm_typeid tid;
    idm_error err = {0};
    if (idm_typeid_parse(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &tid, &err) != IDM_OK)
        pgi_raise_input("TypeID", VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &err);
    pg_uuid_t *out = palloc(sizeof *out);
    uuid_out_of(out, tid.uuid.bytes);
    PG_RETURN_UUID_P(out);
}

PG_FUNCTION_INFO_V1(pg_idmint_uuid_to_typeid);
Datum pg_idmint_uuid_to_typeid(PG_FUNCTION_ARGS)
{
    text *prefix = PG_GETARG_TEXT_PP(0);
    pg_uuid_t *in = PG_GETARG_UUID_P(1);
    idm_uuid u;
    memcpy(u.bytes, in->data, UUID_LEN);
    PG_RETURN_TEXT_P(typeid_text(prefix, &u));
}

/* --- KSUID ------------------------------------------------------------------------- */

PG_FUNCTION_INFO_V1(pg_idmint_ksuid);
Datum pg_idmint_ksuid(PG_FUNCTION_ARGS)
{
    (void)fcinfo;
    PG_RETURN_TEXT_P(mint_text(IDM_FORMAT_KSUID, NULL, 0, "could not mint a KSUID"));
}

/* --- idmint_inspect ------------------------------------------------------------------ */

PG_FUNCTION_INFO_V1(pg_idmint_inspect);
Datum pg_idmint_inspect(PG_FUNCTION_ARGS)
{
    text *t = PG_GETARG_TEXT_PP(0);
    idm_sf_layout layout;
    pgi_layout_arg(PG_GETARG_TEXT_PP(1), &layout);
    const char *s = VARDATA_ANY(t);
    size_t len = VARSIZE_ANY_EXHDR(t);
    idm_inspection in;
    idm_error err = {0};
    if (idm_inspect(s, len, IDM_KIND_AUTO, &layout, &in, &err) != IDM_OK)
        pgi_raise_input("ID", s, len, &err);
    /* A decoded ID is at most 90 characters; its object fits with room to
     * spare (escaping can at most sextuple the input). */
    char buf[2048];
    idmx_outbuf b;
    idmx_outbuf_init(&b, buf, sizeof buf - 1, NULL, NULL);
    if (idmx_inspect_json(&b, s, len, &in, &layout) != 0)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("idmint_inspect: the description does not fit in %zu bytes",
                               sizeof buf)));
    buf[b.len] = '\0';
    return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf));
}
