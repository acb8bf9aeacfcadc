/*
 * test_uuid_text.c - UUID text forms and field decoding (src/uuid/uuid_text.c)
 * against RFC 9562's examples (tests/vectors/uuid_rfc9562.txt) and the
 * text-form cases in tests/vectors/uuid_forms.txt.
 */
#include "testlib.h"

#include "vecfile.h"

#include <idmint/idmint.h>

#include <ctype.h>
#include <stdbool.h>

/* The seed of this program's test data (test_rng_next). */
static uint64_t rng_state = 0x243f6a8885a308d3u;

/* idm_uuid_parse on a copy of exactly len bytes (test_exact_copy); out is an
 * idm_uuid. A test_parse_fn. */
static int parse_exact(const char *text, size_t len, void *out, idm_error *err)
{
    char *copy = test_exact_copy(text, len);
    int rc = idm_uuid_parse(copy, len, out, err);
    free(copy);
    return rc;
}

static const char *variant_name(int v)
{
    switch (v) {
    case IDM_UUID_VARIANT_NCS:
        return "ncs";
    case IDM_UUID_VARIANT_RFC9562:
        return "rfc9562";
    case IDM_UUID_VARIANT_MICROSOFT:
        return "microsoft";
    case IDM_UUID_VARIANT_FUTURE:
        return "future";
    default:
        return "?";
    }
}

static void lower(char *s)
{
    for (; *s; s++)
        *s = (char)tolower((unsigned char)*s);
}

/* ---- errors first ------------------------------------------------------------ */

static void uuid_parse_rejects_bad_forms_at_their_offset(void)
{
    struct vec_file v;
    idm_uuid u;
    int bad = vec_check_bad(&v, "uuid_forms.txt", 1, parse_exact, &u, sizeof u);
    ASSERT_TRUE(bad >= 20);
}

static void uuid_parse_explains_the_error(void)
{
    idm_uuid u;
    idm_error err;
    ASSERT_EQ_INT(idm_uuid_parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398", 35, &u, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "UUID must be 36 characters (32 without hyphens), got 35");
    ASSERT_EQ_INT(idm_uuid_parse("017f22e2-79b0-7cc3x98c4-dc0c0c07398f", 36, &u, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "UUID has 'x' at position 19 where '-' belongs");
    ASSERT_EQ_INT(idm_uuid_parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398g", 36, &u, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg,
                  "UUID has an invalid character 'g' at position 36 (expected a hex digit)");
    ASSERT_EQ_INT(idm_uuid_parse("{017f22e2-79b0-7cc3-98c4-dc0c0c07398f", 37, &u, &err),
                  IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "UUID in braces must be 38 characters (34 without hyphens), got 37");
    ASSERT_EQ_INT(idm_uuid_parse("urn:uuid:017f22e2", 17, &u, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "UUID in urn:uuid: form must be 45 characters, got 17");
    ASSERT_EQ_INT(idm_uuid_parse("", 0, &u, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "UUID is empty");
    /* A failed parse leaves *out alone, and NULL err is allowed. */
    memset(&u, 0xaa, sizeof u);
    ASSERT_EQ_INT(idm_uuid_parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398g", 36, &u, NULL), IDM_EPARSE);
    ASSERT_EQ_INT(u.bytes[0], 0xaa);
    ASSERT_EQ_INT(u.bytes[15], 0xaa);
}

static void uuid_parse_rejects_every_bad_byte_at_every_position(void)
{
    static const char canonical[] = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";
    char text[37];
    for (size_t pos = 0; pos < 36; pos++) {
        bool hyphen = pos == 8 || pos == 13 || pos == 18 || pos == 23;
        for (int c = 0; c < 256; c++) {
            bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
            if (hyphen ? c == '-' : hex)
                continue;
            /* Position 8 decides the form: a hex digit there makes it the
             * 32-digit form, which then fails at the next hyphen (13). */
            size_t want = pos == 8 && hex ? 13 : pos;
            /* A leading '{' makes it the braced form, whose body then has
             * a hex digit where its hyphen belongs: the 32-digit form,
             * which fails at the first hyphen (8). */
            if (pos == 0 && c == '{')
                want = 8;
            memcpy(text, canonical, 36);
            text[pos] = (char)c;
            idm_uuid u;
            idm_error err;
            memset(&err, 0, sizeof err);
            int rc = parse_exact(text, 36, &u, &err);
            if (rc != IDM_EPARSE || err.offset != want)
                TEST_FAIL_("byte 0x%02x at %zu: rc %d offset %zu", c, pos, rc, err.offset);
        }
    }
}

static void uuid_format_needs_room_for_the_nul(void)
{
    idm_uuid u;
    memset(&u, 0x11, sizeof u);
    char buf[IDM_UUID_STRLEN + 1];
    memset(buf, '#', sizeof buf);
    ASSERT_EQ_INT(idm_uuid_format(&u, buf, IDM_UUID_STRLEN), IDM_ENOSPC);
    ASSERT_EQ_INT(buf[0], '#');
    ASSERT_EQ_INT(idm_uuid_format(&u, buf, 0), IDM_ENOSPC);
    ASSERT_EQ_INT(idm_uuid_format(&u, buf, sizeof buf), IDM_OK);
    ASSERT_EQ_STR(buf, "11111111-1111-1111-1111-111111111111");
}

/* ---- vectors ----------------------------------------------------------------- */

/* ok INPUT CANONICAL (uuid_forms.txt) */
static void check_form(const struct vec_file *v)
{
    idm_uuid u;
    idm_error err;
    char text[IDM_UUID_STRLEN + 1];
    if (parse_exact(v->fields[1].s, v->fields[1].len, &u, &err) != IDM_OK)
        TEST_FAIL_("%s", err.msg);
    ASSERT_OK(idm_uuid_format(&u, text, sizeof text), (idm_error *)NULL);
    ASSERT_EQ_STR(text, v->fields[2].s);
}

static void uuid_parse_accepts_every_form(void)
{
    struct vec_file v;
    int ok = vec_each(&v, "uuid_forms.txt", "ok", 3, "bad", check_form);
    ASSERT_TRUE(ok >= 10);
}

/* uuid TEXT VERSION VARIANT UNIX_MS TIME CLOCK_SEQ NODE (uuid_rfc9562.txt) */
static void check_rfc9562_vector(const struct vec_file *v)
{
    idm_uuid u;
    idm_error err;
    if (parse_exact(v->fields[1].s, v->fields[1].len, &u, &err) != IDM_OK)
        TEST_FAIL_("%s", err.msg);

    char text[IDM_UUID_STRLEN + 1], want[IDM_UUID_STRLEN + 1];
    ASSERT_OK(idm_uuid_format(&u, text, sizeof text), (idm_error *)NULL);
    snprintf(want, sizeof want, "%s", v->fields[1].s);
    lower(want);
    ASSERT_EQ_STR(text, want);

    idm_uuid_fields f;
    memset(&f, 0x5a, sizeof f);
    idm_uuid_decode(&u, &f);
    ASSERT_EQ_INT(f.version, vec_ll(v, 2));
    ASSERT_EQ_INT(idm_uuid_version(&u), vec_ll(v, 2));
    ASSERT_EQ_STR(variant_name(f.variant), v->fields[3].s);
    ASSERT_EQ_STR(variant_name(idm_uuid_variant(&u)), v->fields[3].s);
    if (vec_is(v, 4, "-")) {
        ASSERT_EQ_INT(f.has_time, 0);
    } else {
        char t[IDM_RFC3339_CAP];
        ASSERT_EQ_INT(f.has_time, 1);
        ASSERT_EQ_INT(f.unix_ms, vec_ll(v, 4));
        ASSERT_OK(idm_time_format(f.unix_ms, t, sizeof t), (idm_error *)NULL);
        ASSERT_EQ_STR(t, v->fields[5].s);
    }
    if (vec_is(v, 6, "-")) {
        ASSERT_EQ_INT(f.has_node, 0);
    } else {
        char node[13];
        ASSERT_EQ_INT(f.has_node, 1);
        ASSERT_EQ_INT(f.clock_seq, vec_ll(v, 6));
        snprintf(node, sizeof node, "%012llx", (unsigned long long)f.node);
        ASSERT_EQ_STR(node, v->fields[7].s);
    }
}

static void uuid_decode_matches_rfc9562_vectors(void)
{
    struct vec_file v;
    int count = vec_each(&v, "uuid_rfc9562.txt", "uuid", 8, NULL, check_rfc9562_vector);
    ASSERT_TRUE(count >= 20);
}

static void uuid_version_and_variant_cover_every_byte(void)
{
    idm_uuid u;
    memset(&u, 0, sizeof u);
    for (int b = 0; b < 256; b++) {
        u.bytes[6] = (uint8_t)b;
        u.bytes[8] = (uint8_t)b;
        ASSERT_EQ_INT(idm_uuid_version(&u), b >> 4);
        int want = b < 0x80   ? IDM_UUID_VARIANT_NCS
                   : b < 0xc0 ? IDM_UUID_VARIANT_RFC9562
                   : b < 0xe0 ? IDM_UUID_VARIANT_MICROSOFT
                              : IDM_UUID_VARIANT_FUTURE;
        ASSERT_EQ_INT(idm_uuid_variant(&u), want);
    }
}

/* ---- properties -------------------------------------------------------------- */

static void uuid_roundtrips_random_values_in_every_form(void)
{
    for (int i = 0; i < 50000; i++) {
        idm_uuid u, back;
        idm_error err;
        for (int k = 0; k < 16; k++)
            u.bytes[k] = (uint8_t)test_rng_next(&rng_state);
        char canon[IDM_UUID_STRLEN + 1];
        ASSERT_OK(idm_uuid_format(&u, canon, sizeof canon), &err);

        char form[64];
        char hex[33];
        size_t h = 0;
        for (size_t k = 0; k < IDM_UUID_STRLEN; k++) {
            if (canon[k] != '-')
                hex[h++] = canon[k];
        }
        hex[h] = '\0';
        /* canonical, braced, URN, 32 hex digits, braced 32 hex digits */
        static const char *const opens[5] = {"", "{", "urn:uuid:", "", "{"};
        static const char *const closes[5] = {"", "}", "", "", "}"};
        for (int f = 0; f < 5; f++) {
            int len =
                snprintf(form, sizeof form, "%s%s%s", opens[f], f < 3 ? canon : hex, closes[f]);
            if (test_rng_next(&rng_state) & 1) {
                for (int k = 0; k < len; k++)
                    form[k] = (char)toupper((unsigned char)form[k]);
            }
            memset(&back, 0, sizeof back);
            if (parse_exact(form, (size_t)len, &back, &err) != IDM_OK)
                TEST_FAIL_("%s: %s", form, err.msg);
            ASSERT_EQ_MEM(back.bytes, u.bytes, 16);
        }
    }
}

static void uuid_decode_v7_and_v1_time_properties(void)
{
    /* v7: the first 48 bits are the time, whatever the rest holds. */
    for (int i = 0; i < 10000; i++) {
        idm_uuid u;
        for (int k = 0; k < 16; k++)
            u.bytes[k] = (uint8_t)test_rng_next(&rng_state);
        u.bytes[6] = (uint8_t)(0x70 | (u.bytes[6] & 0x0f));
        u.bytes[8] = (uint8_t)(0x80 | (u.bytes[8] & 0x3f));
        uint64_t ms = 0;
        for (int k = 0; k < 6; k++)
            ms = ms << 8 | u.bytes[k];
        idm_uuid_fields f;
        idm_uuid_decode(&u, &f);
        ASSERT_EQ_INT(f.has_time, 1);
        ASSERT_EQ_INT(f.has_node, 0);
        ASSERT_EQ_U64((uint64_t)f.unix_ms, ms);

        /* v1 and v6 hold the same 60 bits in different orders and must
         * agree; the time floors, so it never exceeds the exact value. */
        uint64_t ticks = test_rng_next(&rng_state) >> 4;
        idm_uuid v1, v6;
        memset(&v1, 0, sizeof v1);
        v1.bytes[0] = (uint8_t)(ticks >> 24);
        v1.bytes[1] = (uint8_t)(ticks >> 16);
        v1.bytes[2] = (uint8_t)(ticks >> 8);
        v1.bytes[3] = (uint8_t)ticks;
        v1.bytes[4] = (uint8_t)(ticks >> 40);
        v1.bytes[5] = (uint8_t)(ticks >> 32);
        v1.bytes[6] = (uint8_t)(0x10 | (ticks >> 56));
        v1.bytes[7] = (uint8_t)(ticks >> 48);
        v1.bytes[8] = 0x80;
        memset(&v6, 0, sizeof v6);
        for (int k = 0; k < 4; k++)
            v6.bytes[k] = (uint8_t)(ticks >> (52 - 8 * k));
        v6.bytes[4] = (uint8_t)(ticks >> 20);
        v6.bytes[5] = (uint8_t)(ticks >> 12);
        v6.bytes[6] = (uint8_t)(0x60 | ((ticks >> 8) & 0x0f));
        v6.bytes[7] = (uint8_t)ticks;
        v6.bytes[8] = 0x80;
        idm_uuid_fields f1, f6;
        idm_uuid_decode(&v1, &f1);
        idm_uuid_decode(&v6, &f6);
        ASSERT_EQ_INT(f1.unix_ms, f6.unix_ms);
        long long exact_100ns = (long long)ticks - 122192928000000000LL;
        ASSERT_TRUE((long long)f1.unix_ms * 10000 <= exact_100ns);
        ASSERT_TRUE(((long long)f1.unix_ms + 1) * 10000 > exact_100ns);
    }
}

static const struct test_case tests[] = {
    TEST(uuid_parse_rejects_bad_forms_at_their_offset),
    TEST(uuid_parse_explains_the_error),
    TEST(uuid_parse_rejects_every_bad_byte_at_every_position),
    TEST(uuid_format_needs_room_for_the_nul),
    TEST(uuid_parse_accepts_every_form),
    TEST(uuid_decode_matches_rfc9562_vectors),
    TEST(uuid_version_and_variant_cover_every_byte),
    TEST(uuid_roundtrips_random_values_in_every_form),
    TEST(uuid_decode_v7_and_v1_time_properties),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
