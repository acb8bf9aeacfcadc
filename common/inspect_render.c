/*
 * inspect_render.c - JSON and readable renderings of an idm_inspection
 * (see inspect_render.h; the member list is man/idmint.1's, "inspect").
 *
 * One walk over the members drives both forms, so that the CLI's text, the
 * CLI's JSON and the server's JSON cannot drift apart.
 */
#include "inspect_render.h"

#include "json.h"

#include <idmint/error.h>
#include <idmint/rfc3339.h>

#include <string.h>

typedef struct renderer {
    idmx_outbuf *b;
    int json;
    int first;
} renderer;

static void begin(renderer *r, idmx_outbuf *b, int json)
{
    r->b = b;
    r->json = json;
    r->first = 1;
    if (json) {
        idmx_outbuf_putc(b, '{');
    }
}

static int end(renderer *r)
{
    if (r->json) {
        idmx_outbuf_putc(r->b, '}');
    }
    return r->b->err;
}

/* Writes the member name and separator. */
static void key(renderer *r, const char *name)
{
    if (r->json) {
        if (!r->first) {
            idmx_outbuf_append(r->b, ", ", 2);
        }
        idmx_json_string(r->b, name, strlen(name));
        idmx_outbuf_append(r->b, ": ", 2);
    } else {
        idmx_outbuf_puts(r->b, name);
        idmx_outbuf_append(r->b, ": ", 2);
    }
    r->first = 0;
}

static void value_end(renderer *r)
{
    if (!r->json) {
        idmx_outbuf_putc(r->b, '\n');
    }
}

static void field_str(renderer *r, const char *name, const char *s, size_t len)
{
    key(r, name);
    if (r->json) {
        idmx_json_string(r->b, s, len);
    } else {
        idmx_outbuf_append(r->b, s, len);
    }
    value_end(r);
}

static void field_cstr(renderer *r, const char *name, const char *s)
{
    field_str(r, name, s, strlen(s));
}

static void field_null(renderer *r, const char *name)
{
    key(r, name);
    idmx_outbuf_puts(r->b, r->json ? "null" : "none");
    value_end(r);
}

static void field_u64(renderer *r, const char *name, uint64_t v)
{
    key(r, name);
    idmx_outbuf_u64(r->b, v);
    value_end(r);
}

static void field_i64(renderer *r, const char *name, int64_t v)
{
    key(r, name);
    idmx_outbuf_i64(r->b, v);
    value_end(r);
}

/* n bytes as lowercase hex, a string in JSON. */
static void field_hex(renderer *r, const char *name, const uint8_t *p, size_t n)
{
    key(r, name);
    if (r->json) {
        idmx_outbuf_putc(r->b, '"');
    }
    idmx_outbuf_hex(r->b, p, n);
    if (r->json) {
        idmx_outbuf_putc(r->b, '"');
    }
    value_end(r);
}

/* unix_ms and time. A time whose year needs more than six digits cannot be
 * written in the contract's form; it is then null while unix_ms stays. */
static void fields_time(renderer *r, int has_time, int64_t unix_ms)
{
    if (!has_time) {
        field_null(r, "unix_ms");
        field_null(r, "time");
        return;
    }
    field_i64(r, "unix_ms", unix_ms);
    char t[IDM_RFC3339_CAP];
    if (idm_time_format(unix_ms, t, sizeof t) == IDM_OK) {
        field_cstr(r, "time", t);
    } else {
        field_null(r, "time");
    }
}

static void field_uuid(renderer *r, const char *name, const idm_uuid *u)
{
    char s[IDM_UUID_STRLEN + 1];
    if (idm_uuid_format(u, s, sizeof s) == IDM_OK) {
        field_cstr(r, name, s);
    } else {
        field_null(r, name);
    }
}

static void fields_uuid(renderer *r, const idm_inspection *in)
{
    field_uuid(r, "uuid", &in->uuid);
    field_i64(r, "version", in->fields.version);
    field_cstr(r, "variant", idmx_uuid_variant_name(in->fields.variant));
    if (in->fields.has_node) {
        field_u64(r, "clock_seq", in->fields.clock_seq);
        /* The 48-bit node as 12 hex digits, from its big-endian bytes. */
        uint8_t node[6];
        for (int i = 0; i < 6; i++) {
            node[i] = (uint8_t)(in->fields.node >> (8 * (5 - i)));
        }
        field_hex(r, "node", node, sizeof node);
    }
}

static void fields_ulid(renderer *r, const idm_inspection *in)
{
    idm_ulid u;
    char s[IDM_ULID_STRLEN + 1];
    memcpy(u.bytes, in->uuid.bytes, sizeof u.bytes);
    field_uuid(r, "uuid", &in->uuid);
    if (idm_ulid_format(&u, s, sizeof s) == IDM_OK) {
        field_cstr(r, "ulid", s);
    } else {
        field_null(r, "ulid");
    }
    field_hex(r, "random", u.bytes + 6, 10); /* 80 bits after the 48-bit time */
}

static void fields_ksuid(renderer *r, const idm_inspection *in)
{
    char s[IDM_KSUID_STRLEN + 1];
    if (idm_ksuid_format(&in->ksuid, s, sizeof s) == IDM_OK) {
        field_cstr(r, "ksuid", s);
    } else {
        field_null(r, "ksuid");
    }
    field_hex(r, "payload", in->ksuid.bytes + 4, 16); /* 128 bits after the 32-bit time */
}

static void fields_typeid(renderer *r, const idm_inspection *in)
{
    char s[IDM_TYPEID_STRLEN_MAX + 1];
    field_uuid(r, "uuid", &in->uuid);
    if (idm_typeid_format(in->typeid.prefix, in->typeid.prefix_len, &in->uuid, s, sizeof s, NULL) ==
        IDM_OK) {
        field_cstr(r, "typeid", s);
    } else {
        field_null(r, "typeid");
    }
    field_str(r, "prefix", in->typeid.prefix, in->typeid.prefix_len);
}

static void fields_snowflake(renderer *r, const idm_inspection *in, const idm_sf_layout *layout)
{
    char id[21];
    size_t id_len = idm_sf_format_decimal(in->snowflake, id, sizeof id);
    field_str(r, "id", id, id_len);

    idm_sf_layout twitter;
    if (layout == NULL && idm_sf_layout_preset(&twitter, "twitter", 7, NULL) == IDM_OK) {
        layout = &twitter;
    }
    char name[IDM_SF_SPEC_CAP];
    if (layout != NULL && idm_sf_layout_format(layout, name, sizeof name) == IDM_OK) {
        field_cstr(r, "layout", name);
    } else {
        field_null(r, "layout");
    }
    field_u64(r, "node", in->parts.node);
    field_u64(r, "sequence", in->parts.sequence);
}

static int render(idmx_outbuf *b, int json, const char *input, size_t len, const idm_inspection *in,
                  const idm_sf_layout *layout)
{
    renderer r;
    begin(&r, b, json);
    field_str(&r, "input", input, len);
    const char *kind = idm_kind_name(in->kind);
    field_cstr(&r, "kind", kind != NULL ? kind : "unknown");
    fields_time(&r, in->has_time, in->unix_ms);
    switch (in->kind) {
    case IDM_KIND_UUID:
        fields_uuid(&r, in);
        break;
    case IDM_KIND_ULID:
        fields_ulid(&r, in);
        break;
    case IDM_KIND_KSUID:
        fields_ksuid(&r, in);
        break;
    case IDM_KIND_TYPEID:
        fields_typeid(&r, in);
        break;
    case IDM_KIND_SNOWFLAKE:
        fields_snowflake(&r, in, layout);
        break;
    default:
        break;
    }
    return end(&r);
}

int idmx_inspect_json(idmx_outbuf *b, const char *input, size_t len, const idm_inspection *in,
                      const idm_sf_layout *layout)
{
    return render(b, 1, input, len, in, layout);
}

int idmx_inspect_text(idmx_outbuf *b, const char *input, size_t len, const idm_inspection *in,
                      const idm_sf_layout *layout)
{
    return render(b, 0, input, len, in, layout);
}

int idmx_inspect_json_error(idmx_outbuf *b, const char *input, size_t len, const char *reason)
{
    renderer r;
    begin(&r, b, 1);
    field_str(&r, "input", input, len);
    field_cstr(&r, "error", reason);
    return end(&r);
}

const char *idmx_uuid_variant_name(int variant)
{
    switch (variant) {
    case IDM_UUID_VARIANT_NCS:
        return "ncs";
    case IDM_UUID_VARIANT_RFC9562:
        return "rfc9562";
    case IDM_UUID_VARIANT_MICROSOFT:
        return "microsoft";
    case IDM_UUID_VARIANT_FUTURE:
        return "future";
    default:
        return "unknown";
    }
}
