/*
 * fuzz/fuzz_inspect.c - idm_inspect (recognition and every forced kind)
 * and idm_parse_128 on arbitrary bytes, with the twitter layout (NULL) and
 * the sonyflake preset.
 *
 * Properties:
 *  - a forced kind succeeds exactly when that kind's own parser accepts
 *    the text (for snowflakes: idm_sf_parse_decimal and idm_sf_decode), and
 *    then reports that kind and the same bits, fields and time;
 *  - recognition (IDM_KIND_AUTO) succeeds exactly when some forced kind
 *    does, and picks the first of uuid, ulid, ksuid, typeid, snowflake that
 *    does (inspect.h's rules: UUID forms first, 26 characters are a ULID,
 *    27 a KSUID, "_" a TypeID, 1 to 20 digits a snowflake);
 *  - idm_parse_128 agrees with recognition for uuid, ulid and typeid, and
 *    refuses KSUIDs and snowflakes with IDM_EUNSUPPORTED;
 *  - an unknown kind is IDM_EINVAL; refusals fill the error record; every
 *    time of a 128/160-bit ID formats as RFC 3339.
 */
#include "harness.h"

static const int kinds[] = {IDM_KIND_UUID, IDM_KIND_ULID, IDM_KIND_KSUID, IDM_KIND_TYPEID,
                            IDM_KIND_SNOWFLAKE};
#define NKINDS (sizeof kinds / sizeof kinds[0])

static void check_uuid_fields(const idm_uuid_fields *a, const idm_uuid_fields *b)
{
    FUZZ_CHECK(a->version == b->version);
    FUZZ_CHECK(a->variant == b->variant);
    FUZZ_CHECK(a->has_time == b->has_time);
    if (a->has_time) {
        FUZZ_CHECK(a->unix_ms == b->unix_ms);
    }
    FUZZ_CHECK(a->has_node == b->has_node);
    if (a->has_node) {
        FUZZ_CHECK(a->clock_seq == b->clock_seq);
        FUZZ_CHECK(a->node == b->node);
    }
}

/* Inspects as one forced kind and checks it against that kind's parser.
 * Returns 1 when the text is valid as that kind. */
static int check_forced(const fuzz_input *in, int kind, const idm_sf_layout *layout,
                        idm_inspection *out)
{
    idm_error err;
    fuzz_error_init(&err);
    int rc = idm_inspect(in->text, in->len, kind, layout, out, &err);
    if (rc != IDM_OK) {
        FUZZ_CHECK(rc == IDM_EPARSE);
        fuzz_check_error(rc, &err, in->len);
    } else {
        FUZZ_CHECK(out->kind == kind);
    }

    int valid = 0;
    switch (kind) {
    case IDM_KIND_UUID: {
        idm_uuid u;
        valid = idm_uuid_parse(in->text, in->len, &u, NULL) == IDM_OK;
        if (valid && rc == IDM_OK) {
            FUZZ_CHECK(memcmp(out->uuid.bytes, u.bytes, sizeof u.bytes) == 0);
            idm_uuid_fields f;
            idm_uuid_decode(&u, &f);
            check_uuid_fields(&out->fields, &f);
            FUZZ_CHECK(out->has_time == f.has_time);
            if (f.has_time) {
                FUZZ_CHECK(out->unix_ms == f.unix_ms);
            }
        }
        break;
    }
    case IDM_KIND_ULID: {
        idm_ulid u;
        valid = idm_ulid_parse(in->text, in->len, &u, NULL) == IDM_OK;
        if (valid && rc == IDM_OK) {
            FUZZ_CHECK(memcmp(out->uuid.bytes, u.bytes, sizeof u.bytes) == 0);
            FUZZ_CHECK(out->has_time == 1);
            FUZZ_CHECK(out->unix_ms == idm_ulid_unix_ms(&u));
        }
        break;
    }
    case IDM_KIND_KSUID: {
        idm_ksuid k;
        valid = idm_ksuid_parse(in->text, in->len, &k, NULL) == IDM_OK;
        if (valid && rc == IDM_OK) {
            FUZZ_CHECK(memcmp(out->ksuid.bytes, k.bytes, sizeof k.bytes) == 0);
            FUZZ_CHECK(out->has_time == 1);
            FUZZ_CHECK(out->unix_ms == idm_ksuid_unix_ms(&k));
        }
        break;
    }
    case IDM_KIND_TYPEID: {
        idm_typeid t;
        valid = idm_typeid_parse(in->text, in->len, &t, NULL) == IDM_OK;
        if (valid && rc == IDM_OK) {
            FUZZ_CHECK(out->typeid.prefix_len == t.prefix_len);
            FUZZ_CHECK(strcmp(out->typeid.prefix, t.prefix) == 0);
            FUZZ_CHECK(memcmp(out->uuid.bytes, t.uuid.bytes, sizeof t.uuid.bytes) == 0);
            idm_uuid_fields f;
            idm_uuid_decode(&t.uuid, &f);
            check_uuid_fields(&out->fields, &f);
            FUZZ_CHECK(out->has_time == f.has_time);
            if (f.has_time) {
                FUZZ_CHECK(out->unix_ms == f.unix_ms);
            }
        }
        break;
    }
    case IDM_KIND_SNOWFLAKE: {
        uint64_t id = 0;
        idm_sf_parts p;
        idm_sf_layout twitter;
        const idm_sf_layout *l = layout;
        if (l == NULL) {
            FUZZ_CHECK(idm_sf_layout_preset(&twitter, "twitter", 7, NULL) == IDM_OK);
            l = &twitter;
        }
        valid = idm_sf_parse_decimal(in->text, in->len, &id, NULL) == IDM_OK &&
                idm_sf_decode(l, id, &p, NULL) == IDM_OK;
        if (valid && rc == IDM_OK) {
            FUZZ_CHECK(out->snowflake == id);
            FUZZ_CHECK(out->parts.time_units == p.time_units);
            FUZZ_CHECK(out->parts.unix_ms == p.unix_ms);
            FUZZ_CHECK(out->parts.node == p.node);
            FUZZ_CHECK(out->parts.sequence == p.sequence);
            FUZZ_CHECK(out->has_time == 1);
            FUZZ_CHECK(out->unix_ms == p.unix_ms);
        }
        break;
    }
    default:
        abort();
    }
    if (valid != (rc == IDM_OK)) {
        fprintf(stderr, "inspect as %s says %s, the %s parser says %s\n", idm_kind_name(kind),
                rc == IDM_OK ? "valid" : err.msg, idm_kind_name(kind), valid ? "valid" : "invalid");
    }
    FUZZ_CHECK(valid == (rc == IDM_OK));
    if (valid && out->has_time && kind != IDM_KIND_SNOWFLAKE) {
        char t[IDM_RFC3339_CAP];
        FUZZ_CHECK(idm_time_format(out->unix_ms, t, sizeof t) == IDM_OK);
    }
    return valid;
}

static void check_layout(const fuzz_input *in, const idm_sf_layout *layout)
{
    int first_valid = -1;
    idm_inspection forced[NKINDS];
    memset(forced, 0, sizeof forced);
    for (size_t i = 0; i < NKINDS; i++) {
        int valid = check_forced(in, kinds[i], layout, &forced[i]);
        /* Recognition takes 1 to 20 digits as a snowflake; a forced
         * snowflake may have more (leading zeros). */
        if (kinds[i] == IDM_KIND_SNOWFLAKE && in->len > 20) {
            valid = 0;
        }
        if (valid && first_valid < 0) {
            first_valid = (int)i;
        }
    }

    idm_inspection autod;
    idm_error err;
    fuzz_error_init(&err);
    int rc = idm_inspect(in->text, in->len, IDM_KIND_AUTO, layout, &autod, &err);
    if (first_valid < 0) {
        FUZZ_CHECK(rc == IDM_EPARSE);
        fuzz_check_error(rc, &err, in->len);
    } else {
        if (rc != IDM_OK) {
            fprintf(stderr, "recognition refuses a valid %s: %s\n",
                    idm_kind_name(kinds[first_valid]), err.msg);
        }
        FUZZ_CHECK(rc == IDM_OK);
        FUZZ_CHECK(autod.kind == kinds[first_valid]);
        const idm_inspection *f = &forced[first_valid];
        FUZZ_CHECK(autod.has_time == f->has_time);
        if (f->has_time) {
            FUZZ_CHECK(autod.unix_ms == f->unix_ms);
        }
        if (autod.kind == IDM_KIND_KSUID) {
            FUZZ_CHECK(memcmp(autod.ksuid.bytes, f->ksuid.bytes, sizeof f->ksuid.bytes) == 0);
        } else if (autod.kind == IDM_KIND_SNOWFLAKE) {
            FUZZ_CHECK(autod.snowflake == f->snowflake);
        } else {
            FUZZ_CHECK(memcmp(autod.uuid.bytes, f->uuid.bytes, sizeof f->uuid.bytes) == 0);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static idm_sf_layout sonyflake;
    static int have_sonyflake;
    if (!have_sonyflake) {
        FUZZ_CHECK(idm_sf_layout_preset(&sonyflake, "sonyflake", 9, NULL) == IDM_OK);
        have_sonyflake = 1;
    }

    fuzz_input in;
    fuzz_input_new(&in, data, size);
    check_layout(&in, NULL);
    check_layout(&in, &sonyflake);

    /* idm_parse_128 against recognition. */
    idm_inspection autod;
    memset(&autod, 0, sizeof autod);
    int arc = idm_inspect(in.text, in.len, IDM_KIND_AUTO, NULL, &autod, NULL);
    idm_uuid bits;
    memset(&bits, 0, sizeof bits);
    int kind = -1;
    idm_error err;
    fuzz_error_init(&err);
    int prc = idm_parse_128(in.text, in.len, &bits, &kind, &err);
    if (arc == IDM_OK && (autod.kind == IDM_KIND_KSUID || autod.kind == IDM_KIND_SNOWFLAKE)) {
        FUZZ_CHECK(prc == IDM_EUNSUPPORTED);
        FUZZ_CHECK(err.code == prc);
    } else if (arc == IDM_OK) {
        FUZZ_CHECK(prc == IDM_OK);
        FUZZ_CHECK(kind == autod.kind);
        FUZZ_CHECK(memcmp(bits.bytes, autod.uuid.bytes, sizeof bits.bytes) == 0);
    } else {
        FUZZ_CHECK(prc != IDM_OK);
        FUZZ_CHECK(err.code == prc);
        FUZZ_CHECK(memchr(err.msg, '\0', sizeof err.msg) != NULL);
    }

    /* Unknown kinds. */
    FUZZ_CHECK(idm_inspect(in.text, in.len, 6, NULL, &autod, NULL) == IDM_EINVAL);
    FUZZ_CHECK(idm_inspect(in.text, in.len, -1, NULL, &autod, NULL) == IDM_EINVAL);

    fuzz_input_free(&in);
    return 0;
}
