/*
 * test_inspect.c - kind recognition, decoding and 128-bit parsing
 * (src/inspect/inspect.c) against tests/vectors/inspect.txt, and against
 * every other vector file, so that inspect agrees with each format's own
 * parser.
 */
#include "testlib.h"

#include "vecfile.h"

#include <idmint/idmint.h>

/* idm_inspect and idm_parse_128 on a copy of exactly len bytes
 * (test_exact_copy), so that ASan catches any read past len. */
static int inspect_exact(const char *text, size_t len, int kind, const idm_sf_layout *layout,
                         idm_inspection *out, idm_error *err)
{
    char *copy = test_exact_copy(text, len);
    int rc = idm_inspect(copy, len, kind, layout, out, err);
    free(copy);
    return rc;
}

static int parse_128_exact(const char *text, size_t len, idm_uuid *out, int *kind, idm_error *err)
{
    char *copy = test_exact_copy(text, len);
    int rc = idm_parse_128(copy, len, out, kind, err);
    free(copy);
    return rc;
}

static int kind_of(const struct vec_file *v, int i)
{
    return idm_kind_from_name(v->fields[i].s, v->fields[i].len);
}

/* Checks an inspection against UNIX_MS and DETAIL fields (see
 * tests/vectors/inspect.txt); returns 0 and prints on mismatch. */
static int check_inspection(const struct vec_file *v, const idm_inspection *in, int ms_field)
{
    char detail[64] = {0};
    switch (in->kind) {
    case IDM_KIND_UUID:
    case IDM_KIND_ULID:
    case IDM_KIND_TYPEID:
        if (idm_uuid_format(&in->uuid, detail, sizeof detail) != IDM_OK)
            return 0;
        break;
    case IDM_KIND_KSUID:
        for (int k = 0; k < 20; k++)
            snprintf(detail + 2 * k, 3, "%02x", in->ksuid.bytes[k]);
        break;
    case IDM_KIND_SNOWFLAKE:
        snprintf(detail, sizeof detail, "%llu/%llu", (unsigned long long)in->parts.node,
                 (unsigned long long)in->parts.sequence);
        break;
    default:
        return 0;
    }
    int ok = strcmp(detail, v->fields[ms_field + 1].s) == 0;
    if (vec_is(v, ms_field, "-"))
        ok = ok && !in->has_time;
    else
        ok = ok && in->has_time && in->unix_ms == vec_ll(v, ms_field);
    if (!ok)
        fprintf(stderr, "%s:%d: got has_time %d unix_ms %lld detail %s\n", v->path, v->line_no,
                in->has_time, (long long)in->unix_ms, detail);
    return ok;
}

/* ---- errors first ------------------------------------------------------------ */

static void inspect_kind_names_roundtrip(void)
{
    static const char *const names[] = {"uuid", "ulid", "ksuid", "typeid", "snowflake"};
    ASSERT_TRUE(idm_kind_name(IDM_KIND_AUTO) == NULL);
    ASSERT_TRUE(idm_kind_name(-1) == NULL);
    ASSERT_TRUE(idm_kind_name(6) == NULL);
    for (int k = IDM_KIND_UUID; k <= IDM_KIND_SNOWFLAKE; k++) {
        ASSERT_EQ_STR(idm_kind_name(k), names[k - 1]);
        ASSERT_EQ_INT(idm_kind_from_name(names[k - 1], strlen(names[k - 1])), k);
    }
    ASSERT_EQ_INT(idm_kind_from_name("UUID", 4), -1);
    ASSERT_EQ_INT(idm_kind_from_name("uui", 3), -1);
    ASSERT_EQ_INT(idm_kind_from_name("uuidx", 4), IDM_KIND_UUID); /* only len bytes */
    ASSERT_EQ_INT(idm_kind_from_name("uuidx", 5), -1);
    ASSERT_EQ_INT(idm_kind_from_name("", 0), -1);
    ASSERT_EQ_INT(idm_kind_from_name("auto", 4), -1);
}

static void inspect_rejects_unknown_kinds(void)
{
    idm_inspection in;
    idm_error err;
    ASSERT_EQ_INT(idm_inspect("0", 1, 99, NULL, &in, &err), IDM_EINVAL);
    ASSERT_EQ_INT(err.code, IDM_EINVAL);
    ASSERT_EQ_INT(idm_inspect("0", 1, -1, NULL, &in, &err), IDM_EINVAL);
}

static void inspect_reports_errors_at_their_offset(void)
{
    struct vec_file v;
    if (!vec_open(&v, "inspect.txt"))
        TEST_FAIL_("cannot open %s", v.path);
    int errors = 0, n;
    for (n = vec_next(&v); n > 0; n = vec_next(&v)) {
        int forced = vec_is(&v, 0, "error-as");
        if (!vec_is(&v, 0, "error") && !forced)
            continue;
        int kind = forced ? kind_of(&v, 1) : IDM_KIND_AUTO;
        const struct vec_field *input = &v.fields[forced ? 2 : 1];
        int offset_field = forced ? 3 : 2;
        if (n != offset_field + 1 || kind < 0)
            TEST_FAIL_("%s:%d: malformed record", v.path, v.line_no);
        idm_inspection in;
        idm_error err;
        memset(&err, 0, sizeof err);
        int rc = inspect_exact(input->s, input->len, kind, NULL, &in, &err);
        if (rc != IDM_EPARSE || err.code != IDM_EPARSE)
            TEST_FAIL_("%s:%d: rc %d: %s", v.path, v.line_no, rc, err.msg);
        if (!vec_is(&v, offset_field, "-") && (long long)err.offset != vec_ll(&v, offset_field))
            TEST_FAIL_("%s:%d: offset %zu: %s", v.path, v.line_no, err.offset, err.msg);
        if (err.msg[0] == '\0')
            TEST_FAIL_("%s:%d: no message", v.path, v.line_no);
        /* Reasons never repeat the input (the CLI prefixes it). */
        if (input->len >= 6 && strstr(err.msg, input->s) != NULL)
            TEST_FAIL_("%s:%d: message repeats the input: %s", v.path, v.line_no, err.msg);
        errors++;
    }
    ASSERT_TRUE(n == 0);
    vec_close(&v);
    ASSERT_TRUE(errors >= 20);
}

static void inspect_explains_unrecognised_text(void)
{
    idm_inspection in;
    idm_error err;
    ASSERT_EQ_INT(idm_inspect("hello", 5, IDM_KIND_AUTO, NULL, &in, &err), IDM_EPARSE);
    ASSERT_TRUE(strstr(err.msg, "not a recognised ID") != NULL);
    ASSERT_TRUE(strstr(err.msg, "5 characters") != NULL);
    ASSERT_TRUE(strstr(err.msg, "ULID: 26") != NULL);
    ASSERT_EQ_INT(idm_inspect("", 0, IDM_KIND_AUTO, NULL, &in, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "empty input is not an ID");
    ASSERT_EQ_INT(idm_inspect("12345 ", 6, IDM_KIND_AUTO, NULL, &in, &err), IDM_EPARSE);
    ASSERT_TRUE(strstr(err.msg, "ends with whitespace") != NULL);
    ASSERT_EQ_INT(idm_inspect("123456789012345678901", 21, IDM_KIND_AUTO, NULL, &in, &err),
                  IDM_EPARSE);
    ASSERT_TRUE(strstr(err.msg, "21 digits") != NULL);
    /* Shape decides the parser, whose reason is then specific. */
    ASSERT_EQ_INT(idm_inspect("8ZZZZZZZZZZZZZZZZZZZZZZZZZ", 26, IDM_KIND_AUTO, NULL, &in, &err),
                  IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "ULID exceeds 128 bits (first character above 7)");
    ASSERT_EQ_INT(idm_inspect("user_01h455vb4pex5vsknk084", 26, IDM_KIND_AUTO, NULL, &in, &err),
                  IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "TypeID suffix must be 26 characters, got 21");
    ASSERT_EQ_INT(
        idm_inspect("017f22e2-79b0-7cc3-98c4-dc0c0c07398", 35, IDM_KIND_AUTO, NULL, &in, &err),
        IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "UUID must be 36 characters (32 without hyphens), got 35");
}

/* ---- vectors ----------------------------------------------------------------- */

static void inspect_matches_vectors(void)
{
    struct vec_file v;
    if (!vec_open(&v, "inspect.txt"))
        TEST_FAIL_("cannot open %s", v.path);
    int count = 0, n;
    for (n = vec_next(&v); n > 0; n = vec_next(&v)) {
        idm_inspection in;
        idm_error err;
        memset(&in, 0, sizeof in);
        if (vec_is(&v, 0, "auto")) {
            ASSERT_EQ_INT(n, 5);
            if (idm_inspect(v.fields[1].s, v.fields[1].len, IDM_KIND_AUTO, NULL, &in, &err) !=
                IDM_OK)
                TEST_FAIL_("%s:%d: %s", v.path, v.line_no, err.msg);
            if (in.kind != kind_of(&v, 2))
                TEST_FAIL_("%s:%d: kind %d", v.path, v.line_no, in.kind);
            ASSERT_TRUE(check_inspection(&v, &in, 3));
            count++;
        } else if (vec_is(&v, 0, "as")) {
            ASSERT_EQ_INT(n, 5);
            int kind = kind_of(&v, 1);
            if (inspect_exact(v.fields[2].s, v.fields[2].len, kind, NULL, &in, &err) != IDM_OK)
                TEST_FAIL_("%s:%d: %s", v.path, v.line_no, err.msg);
            ASSERT_EQ_INT(in.kind, kind);
            ASSERT_TRUE(check_inspection(&v, &in, 3));
            count++;
        } else if (vec_is(&v, 0, "layout")) {
            idm_sf_layout layout;
            ASSERT_EQ_INT(n, 5);
            ASSERT_OK(idm_sf_layout_preset(&layout, v.fields[1].s, v.fields[1].len, &err), &err);
            if (idm_inspect(v.fields[2].s, v.fields[2].len, IDM_KIND_AUTO, &layout, &in, &err) !=
                IDM_OK)
                TEST_FAIL_("%s:%d: %s", v.path, v.line_no, err.msg);
            ASSERT_EQ_INT(in.kind, IDM_KIND_SNOWFLAKE);
            ASSERT_TRUE(check_inspection(&v, &in, 3));
            count++;
        }
    }
    ASSERT_TRUE(n == 0);
    vec_close(&v);
    ASSERT_TRUE(count >= 25);
}

static void inspect_fills_the_typeid_and_uuid_fields(void)
{
    idm_inspection in;
    idm_error err;
    const char *t = "prefix_01h455vb4pex5vsknk084sn02q";
    ASSERT_OK(idm_inspect(t, strlen(t), IDM_KIND_AUTO, NULL, &in, &err), &err);
    ASSERT_EQ_STR(in.typeid.prefix, "prefix");
    ASSERT_EQ_INT(in.typeid.prefix_len, 6);
    ASSERT_EQ_MEM(in.typeid.uuid.bytes, in.uuid.bytes, 16);
    ASSERT_EQ_INT(in.fields.version, 7);
    ASSERT_EQ_INT(in.fields.variant, IDM_UUID_VARIANT_RFC9562);

    const char *v1 = "C232AB00-9414-11EC-B3C8-9F6BDECED846";
    ASSERT_OK(idm_inspect(v1, strlen(v1), IDM_KIND_AUTO, NULL, &in, &err), &err);
    ASSERT_EQ_INT(in.fields.version, 1);
    ASSERT_EQ_INT(in.fields.has_node, 1);
    ASSERT_EQ_INT(in.fields.clock_seq, 0x33c8);
    ASSERT_EQ_U64(in.fields.node, 0x9f6bdeced846ULL);

    const char *sf = "1541815603606036480";
    ASSERT_OK(idm_inspect(sf, strlen(sf), IDM_KIND_AUTO, NULL, &in, &err), &err);
    ASSERT_EQ_U64(in.snowflake, 1541815603606036480ULL);
    ASSERT_EQ_U64(in.parts.time_units, 1541815603606036480ULL >> 22);

    /* A failed call leaves *out alone. */
    memset(&in, 0x5a, sizeof in);
    ASSERT_EQ_INT(idm_inspect("8ZZZZZZZZZZZZZZZZZZZZZZZZZ", 26, IDM_KIND_AUTO, NULL, &in, NULL),
                  IDM_EPARSE);
    ASSERT_EQ_INT(in.kind, 0x5a5a5a5a);
}

/* Every valid ID in the per-format vector files is recognised as its kind
 * (a bare TypeID suffix as a ULID, with the same bits) with the same time. */
static void inspect_agrees_with_every_format_vector(void)
{
    static const struct {
        const char *file;
        const char *tag;
        int field;
        int kind;
    } sources[] = {
        {"uuid_rfc9562.txt", "uuid", 1, IDM_KIND_UUID}, {"uuid_forms.txt", "ok", 1, IDM_KIND_UUID},
        {"ulid.txt", "ok", 1, IDM_KIND_ULID},           {"ksuid.txt", "ok", 1, IDM_KIND_KSUID},
        {"typeid_valid.txt", "ok", 2, IDM_KIND_TYPEID},
    };
    int count = 0;
    for (size_t s = 0; s < sizeof sources / sizeof sources[0]; s++) {
        struct vec_file v;
        if (!vec_open(&v, sources[s].file))
            TEST_FAIL_("cannot open %s", v.path);
        int n;
        for (n = vec_next(&v); n > 0; n = vec_next(&v)) {
            if (!vec_is(&v, 0, sources[s].tag))
                continue;
            const struct vec_field *f = &v.fields[sources[s].field];
            idm_inspection in;
            idm_error err;
            if (inspect_exact(f->s, f->len, IDM_KIND_AUTO, NULL, &in, &err) != IDM_OK)
                TEST_FAIL_("%s:%d: %s", v.path, v.line_no, err.msg);
            int want = sources[s].kind;
            if (want == IDM_KIND_TYPEID && memchr(f->s, '_', f->len) == NULL)
                want = IDM_KIND_ULID;
            if (in.kind != want)
                TEST_FAIL_("%s:%d: kind %d, want %d", v.path, v.line_no, in.kind, want);

            /* The forced kind gives the same bits, and the same time
             * unless recognition chose another kind (a bare TypeID read
             * as a ULID has the ULID's time). */
            idm_inspection forced;
            ASSERT_OK(idm_inspect(f->s, f->len, sources[s].kind, NULL, &forced, &err), &err);
            ASSERT_EQ_MEM(forced.uuid.bytes, in.uuid.bytes, 16);
            if (want == sources[s].kind) {
                ASSERT_EQ_INT(forced.has_time, in.has_time);
                ASSERT_EQ_INT(forced.unix_ms, in.unix_ms);
            }

            if (want != IDM_KIND_KSUID) {
                idm_uuid bits;
                int kind = -1;
                ASSERT_OK(idm_parse_128(f->s, f->len, &bits, &kind, &err), &err);
                ASSERT_EQ_INT(kind, want);
                ASSERT_EQ_MEM(bits.bytes, in.uuid.bytes, 16);
            }
            count++;
        }
        ASSERT_TRUE(n == 0);
        vec_close(&v);
    }
    ASSERT_TRUE(count >= 50);
}

static void parse_128_matches_vectors(void)
{
    struct vec_file v;
    if (!vec_open(&v, "inspect.txt"))
        TEST_FAIL_("cannot open %s", v.path);
    int count = 0, n;
    for (n = vec_next(&v); n > 0; n = vec_next(&v)) {
        idm_uuid bits;
        idm_error err;
        int kind = -1;
        memset(&err, 0, sizeof err);
        if (vec_is(&v, 0, "p128")) {
            idm_uuid want;
            ASSERT_EQ_INT(n, 4);
            if (parse_128_exact(v.fields[1].s, v.fields[1].len, &bits, &kind, &err) != IDM_OK)
                TEST_FAIL_("%s:%d: %s", v.path, v.line_no, err.msg);
            ASSERT_EQ_INT(kind, kind_of(&v, 2));
            ASSERT_OK(idm_uuid_parse(v.fields[3].s, v.fields[3].len, &want, &err), &err);
            ASSERT_EQ_MEM(bits.bytes, want.bytes, 16);
            count++;
        } else if (vec_is(&v, 0, "p128-unsupported")) {
            ASSERT_EQ_INT(n, 3);
            int rc = parse_128_exact(v.fields[1].s, v.fields[1].len, &bits, &kind, &err);
            if (rc != IDM_EUNSUPPORTED || err.code != IDM_EUNSUPPORTED)
                TEST_FAIL_("%s:%d: rc %d: %s", v.path, v.line_no, rc, err.msg);
            ASSERT_EQ_INT(kind, kind_of(&v, 2));
            ASSERT_TRUE(strstr(err.msg, "128-bit") != NULL);
            count++;
        } else if (vec_is(&v, 0, "p128-error")) {
            ASSERT_EQ_INT(n, 3);
            int rc = parse_128_exact(v.fields[1].s, v.fields[1].len, &bits, NULL, &err);
            if (rc != IDM_EPARSE || (long long)err.offset != vec_ll(&v, 2))
                TEST_FAIL_("%s:%d: rc %d offset %zu: %s", v.path, v.line_no, rc, err.offset,
                           err.msg);
            count++;
        }
    }
    ASSERT_TRUE(n == 0);
    vec_close(&v);
    ASSERT_TRUE(count >= 10);
}

static const struct test_case tests[] = {
    TEST(inspect_kind_names_roundtrip),
    TEST(inspect_rejects_unknown_kinds),
    TEST(inspect_reports_errors_at_their_offset),
    TEST(inspect_explains_unrecognised_text),
    TEST(inspect_matches_vectors),
    TEST(inspect_fills_the_typeid_and_uuid_fields),
    TEST(inspect_agrees_with_every_format_vector),
    TEST(parse_128_matches_vectors),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
