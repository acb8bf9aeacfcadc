/*
 * test_typeid.c - TypeID prefix rule, parsing and formatting
 * (src/typeid/typeid.c) against the TypeID spec's valid and invalid cases
 * (tests/vectors/typeid_valid.txt, typeid_invalid.txt).
 */
#include "testlib.h"

#include "vecfile.h"

#include <idmint/idmint.h>

#include <stdbool.h>

/* The seed of this program's test data (test_rng_next). */
static uint64_t rng_state = 0x082efa98ec4e6c89u;

/* idm_typeid_parse on a copy of exactly len bytes (test_exact_copy); out is an
 * idm_typeid. A test_parse_fn. */
static int parse_exact(const char *text, size_t len, void *out, idm_error *err)
{
    char *copy = test_exact_copy(text, len);
    int rc = idm_typeid_parse(copy, len, out, err);
    free(copy);
    return rc;
}

static int uuid_from_text(const char *text, idm_uuid *out)
{
    idm_error err;
    return idm_uuid_parse(text, strlen(text), out, &err);
}

/* ---- errors first ------------------------------------------------------------ */

static void typeid_parse_rejects_spec_invalid_cases(void)
{
    /* Records: bad NAME TYPEID OFFSET, and nothing but bad records. */
    struct vec_file v;
    idm_typeid t;
    int bad = vec_check_bad(&v, "typeid_invalid.txt", 2, parse_exact, &t, sizeof t);
    ASSERT_TRUE(bad >= 19);
    ASSERT_EQ_INT(bad, v.records);
}

static void typeid_parse_explains_the_error(void)
{
    idm_typeid t;
    idm_error err;
    ASSERT_EQ_INT(idm_typeid_parse("prefix_1234567890123456789012345", 32, &t, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "TypeID suffix must be 26 characters, got 25");
    ASSERT_EQ_INT(idm_typeid_parse("prefix_8zzzzzzzzzzzzzzzzzzzzzzzzz", 33, &t, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "TypeID suffix exceeds 128 bits (first character above 7)");
    ASSERT_EQ_INT(idm_typeid_parse("prefix__00000000000000000000000000", 34, &t, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "TypeID prefix must not end with '_'");
    ASSERT_EQ_INT(idm_typeid_parse("PREFIX_00000000000000000000000000", 33, &t, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "TypeID prefix must be lowercase ('P' at position 1)");
    ASSERT_EQ_INT(idm_typeid_parse("prefix_0123456789ABCDEFGHJKMNPQRS", 33, &t, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "TypeID suffix must be lowercase ('A' at position 11)");
    ASSERT_EQ_INT(idm_typeid_parse("_00000000000000000000000000", 27, &t, &err), IDM_EPARSE);
    ASSERT_TRUE(strstr(err.msg, "separator but no prefix") != NULL);
    ASSERT_EQ_INT(idm_typeid_parse("pr\xc3\xa9"
                                   "fix_00000000000000000000000000",
                                   34, &t, &err),
                  IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "TypeID prefix has an invalid character byte 0xc3 at position 3 "
                           "(expected a-z or '_')");
    memset(&t, 0xaa, sizeof t);
    ASSERT_EQ_INT(idm_typeid_parse("prefix_8zzzzzzzzzzzzzzzzzzzzzzzzz", 33, &t, NULL), IDM_EPARSE);
    ASSERT_EQ_INT((unsigned char)t.prefix[0], 0xaa);
}

static void typeid_check_prefix_applies_the_rule(void)
{
    idm_error err;
    static const char max[] = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk";
    ASSERT_OK(idm_typeid_check_prefix("", 0, &err), &err);
    ASSERT_OK(idm_typeid_check_prefix(NULL, 0, &err), &err);
    ASSERT_OK(idm_typeid_check_prefix("user", 4, &err), &err);
    ASSERT_OK(idm_typeid_check_prefix("a_b", 3, &err), &err);
    ASSERT_OK(idm_typeid_check_prefix(max, 63, &err), &err);

    struct {
        const char *prefix;
        size_t offset;
    } bad[] = {{"_user", 0}, {"user_", 4}, {"_", 0},     {"User", 0},
               {"us3r", 2},  {"us-er", 2}, {"us er", 2}, {"\xff", 0}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        ASSERT_EQ_INT(idm_typeid_check_prefix(bad[i].prefix, strlen(bad[i].prefix), &err),
                      IDM_EINVAL);
        ASSERT_EQ_INT(err.code, IDM_EINVAL);
        ASSERT_EQ_INT(err.offset, bad[i].offset);
    }
    char long_prefix[65];
    memset(long_prefix, 'a', 64);
    long_prefix[64] = '\0';
    ASSERT_EQ_INT(idm_typeid_check_prefix(long_prefix, 64, &err), IDM_EINVAL);
    ASSERT_EQ_INT(err.offset, 63);
    ASSERT_EQ_STR(err.msg, "TypeID prefix must be at most 63 characters, got 64");
    /* Every byte that is not [a-z_] is rejected at its offset. */
    for (int c = 0; c < 256; c++) {
        if ((c >= 'a' && c <= 'z') || c == '_')
            continue;
        char p[3] = {'a', (char)c, 'a'};
        ASSERT_EQ_INT(idm_typeid_check_prefix(p, 3, &err), IDM_EINVAL);
        ASSERT_EQ_INT(err.offset, 1);
    }
}

static void typeid_format_rejects_bad_prefix_and_small_buffer(void)
{
    idm_uuid u;
    idm_error err;
    char buf[IDM_TYPEID_STRLEN_MAX + 1];
    memset(&u, 0, sizeof u);
    memset(buf, '#', sizeof buf);
    ASSERT_EQ_INT(idm_typeid_format("User", 4, &u, buf, sizeof buf, &err), IDM_EINVAL);
    ASSERT_EQ_INT(err.offset, 0);
    ASSERT_EQ_INT(buf[0], '#');
    /* "user_" + 26 + NUL = 32 bytes; a bare suffix needs 27. */
    ASSERT_EQ_INT(idm_typeid_format("user", 4, &u, buf, 31, &err), IDM_ENOSPC);
    ASSERT_EQ_INT(buf[0], '#');
    ASSERT_OK(idm_typeid_format("user", 4, &u, buf, 32, &err), &err);
    ASSERT_EQ_STR(buf, "user_00000000000000000000000000");
    ASSERT_EQ_INT(idm_typeid_format("", 0, &u, buf, 26, &err), IDM_ENOSPC);
    ASSERT_OK(idm_typeid_format(NULL, 0, &u, buf, 27, &err), &err);
    ASSERT_EQ_STR(buf, "00000000000000000000000000");
}

/* ---- vectors ----------------------------------------------------------------- */

/* ok NAME TYPEID PREFIX UUID (typeid_valid.txt) */
static void check_valid_case(const struct vec_file *v)
{
    idm_typeid t;
    idm_error err;
    idm_uuid want;
    if (parse_exact(v->fields[2].s, v->fields[2].len, &t, &err) != IDM_OK)
        TEST_FAIL_("%s: %s", v->fields[1].s, err.msg);
    ASSERT_EQ_STR(t.prefix, v->fields[3].s);
    ASSERT_EQ_INT(t.prefix_len, v->fields[3].len);
    ASSERT_OK(uuid_from_text(v->fields[4].s, &want), (idm_error *)NULL);
    ASSERT_EQ_MEM(t.uuid.bytes, want.bytes, 16);

    char text[IDM_TYPEID_STRLEN_MAX + 1];
    ASSERT_OK(idm_typeid_format(v->fields[3].s, v->fields[3].len, &want, text, sizeof text, &err),
              &err);
    ASSERT_EQ_STR(text, v->fields[2].s);
}

static void typeid_matches_spec_valid_cases(void)
{
    struct vec_file v;
    int ok = vec_each(&v, "typeid_valid.txt", "ok", 5, NULL, check_valid_case);
    ASSERT_TRUE(ok >= 9);
}

/* ---- properties -------------------------------------------------------------- */

static void typeid_roundtrips_random_prefixes_and_uuids(void)
{
    for (int i = 0; i < 50000; i++) {
        char prefix[IDM_TYPEID_PREFIX_MAX + 1];
        size_t len = (size_t)(test_rng_next(&rng_state) % (IDM_TYPEID_PREFIX_MAX + 1));
        for (size_t k = 0; k < len; k++) {
            bool edge = k == 0 || k == len - 1;
            uint64_t r = test_rng_next(&rng_state) % 27;
            prefix[k] = (char)(r == 26 && !edge ? '_' : 'a' + (int)(r % 26));
        }
        prefix[len] = '\0';
        idm_uuid u;
        for (int k = 0; k < 16; k++)
            u.bytes[k] = (uint8_t)test_rng_next(&rng_state);

        char text[IDM_TYPEID_STRLEN_MAX + 1];
        idm_error err;
        ASSERT_OK(idm_typeid_format(prefix, len, &u, text, sizeof text, &err), &err);
        ASSERT_EQ_INT(strlen(text), len + (len ? 1 : 0) + IDM_TYPEID_SUFFIX_LEN);
        idm_typeid t;
        ASSERT_OK(parse_exact(text, strlen(text), &t, &err), &err);
        ASSERT_EQ_STR(t.prefix, prefix);
        ASSERT_EQ_MEM(t.uuid.bytes, u.bytes, 16);

        /* The suffix is the ULID text of the same bits, in lowercase. */
        idm_ulid as_ulid;
        char ulid[IDM_ULID_STRLEN + 1];
        memcpy(as_ulid.bytes, u.bytes, 16);
        ASSERT_OK(idm_ulid_format(&as_ulid, ulid, sizeof ulid), &err);
        const char *suffix = text + strlen(text) - IDM_TYPEID_SUFFIX_LEN;
        for (int k = 0; k < IDM_ULID_STRLEN; k++) {
            char want = ulid[k] >= 'A' ? (char)(ulid[k] + 32) : ulid[k];
            if (suffix[k] != want)
                TEST_FAIL_("suffix of %s differs from ULID %s at %d", text, ulid, k);
        }
    }
}

static const struct test_case tests[] = {
    TEST(typeid_parse_rejects_spec_invalid_cases),
    TEST(typeid_parse_explains_the_error),
    TEST(typeid_check_prefix_applies_the_rule),
    TEST(typeid_format_rejects_bad_prefix_and_small_buffer),
    TEST(typeid_matches_spec_valid_cases),
    TEST(typeid_roundtrips_random_prefixes_and_uuids),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
