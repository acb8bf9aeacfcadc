/*
 * test_ulid_text.c - ULID text form and timestamp (src/ulid/ulid_text.c)
 * against the ULID spec's examples (tests/vectors/ulid.txt).
 */
#include "testlib.h"

#include "vecfile.h"

#include <idmint/idmint.h>

#include <ctype.h>

/* The seed of this program's test data (test_rng_next). */
static uint64_t rng_state = 0x13198a2e03707344u;

/* idm_ulid_parse on a copy of exactly len bytes (test_exact_copy); out is an
 * idm_ulid. A test_parse_fn. */
static int parse_exact(const char *text, size_t len, void *out, idm_error *err)
{
    char *copy = test_exact_copy(text, len);
    int rc = idm_ulid_parse(copy, len, out, err);
    free(copy);
    return rc;
}

static void ulid_parse_rejects_bad_input_at_its_offset(void)
{
    struct vec_file v;
    idm_ulid u;
    int bad = vec_check_bad(&v, "ulid.txt", 1, parse_exact, &u, sizeof u);
    ASSERT_TRUE(bad >= 15);
}

static void ulid_parse_gives_the_contract_messages(void)
{
    idm_ulid u;
    idm_error err;
    /* idmint(1)'s example diagnostic (DESCRIPTION). */
    ASSERT_EQ_INT(idm_ulid_parse("8ZZZZZZZZZZZZZZZZZZZZZZZZZ", 26, &u, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "ULID exceeds 128 bits (first character above 7)");
    /* The reason alone: the CLI adds "idmint: INPUT: " in front. */
    ASSERT_EQ_INT(idm_ulid_parse("01ARZ3NDEKTSV4RRFFQ69G5FA", 25, &u, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "ULID must be 26 characters, got 25");
    ASSERT_EQ_INT(err.offset, 25);
    ASSERT_EQ_INT(idm_ulid_parse("01ARZ3NDEKTSV4RRFFQ69G5FAL", 26, &u, &err), IDM_EPARSE);
    ASSERT_TRUE(strstr(err.msg, "'L' at position 26") != NULL);
    ASSERT_TRUE(strstr(err.msg, "01ARZ") == NULL);
    memset(&u, 0xaa, sizeof u);
    ASSERT_EQ_INT(idm_ulid_parse("01ARZ3NDEKTSV4RRFFQ69G5FAL", 26, &u, NULL), IDM_EPARSE);
    ASSERT_EQ_INT(u.bytes[0], 0xaa);
}

static void ulid_parse_rejects_every_bad_byte_at_every_position(void)
{
    static const char alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZabcdefghjkmnpqrstvwxyz";
    idm_ulid u;
    ASSERT_TRUE(test_check_bad_bytes(parse_exact, &u, "01ARZ3NDEKTSV4RRFFQ69G5FAV", 26, alphabet));
}

static void ulid_format_needs_room_for_the_nul(void)
{
    idm_ulid u;
    memset(&u, 0, sizeof u);
    char buf[IDM_ULID_STRLEN + 1];
    memset(buf, '#', sizeof buf);
    ASSERT_EQ_INT(idm_ulid_format(&u, buf, IDM_ULID_STRLEN), IDM_ENOSPC);
    ASSERT_EQ_INT(buf[0], '#');
    ASSERT_EQ_INT(idm_ulid_format(&u, buf, sizeof buf), IDM_OK);
    ASSERT_EQ_STR(buf, "00000000000000000000000000");
}

/* ok INPUT CANONICAL UNIX_MS TIME UUID (ulid.txt) */
static void check_spec_vector(const struct vec_file *v)
{
    idm_ulid u;
    idm_error err;
    if (parse_exact(v->fields[1].s, v->fields[1].len, &u, &err) != IDM_OK)
        TEST_FAIL_("%s", err.msg);
    char text[IDM_ULID_STRLEN + 1], t[IDM_RFC3339_CAP], uuid[IDM_UUID_STRLEN + 1];
    ASSERT_OK(idm_ulid_format(&u, text, sizeof text), (idm_error *)NULL);
    ASSERT_EQ_STR(text, v->fields[2].s);
    ASSERT_EQ_INT(idm_ulid_unix_ms(&u), vec_ll(v, 3));
    ASSERT_OK(idm_time_format(idm_ulid_unix_ms(&u), t, sizeof t), (idm_error *)NULL);
    ASSERT_EQ_STR(t, v->fields[4].s);
    idm_uuid as_uuid;
    memcpy(as_uuid.bytes, u.bytes, 16);
    ASSERT_OK(idm_uuid_format(&as_uuid, uuid, sizeof uuid), (idm_error *)NULL);
    ASSERT_EQ_STR(uuid, v->fields[5].s);
}

static void ulid_matches_spec_vectors(void)
{
    struct vec_file v;
    int ok = vec_each(&v, "ulid.txt", "ok", 6, "bad", check_spec_vector);
    ASSERT_TRUE(ok >= 8);
}

static void ulid_roundtrips_and_sorts_like_its_bytes(void)
{
    idm_ulid prev;
    char prev_text[IDM_ULID_STRLEN + 1] = {0};
    for (int i = 0; i < 100000; i++) {
        idm_ulid u, back;
        idm_error err;
        for (int k = 0; k < 16; k++)
            u.bytes[k] = (uint8_t)test_rng_next(&rng_state);
        if (i % 7 == 0)
            memset(u.bytes + 6, 0, 10);
        char text[IDM_ULID_STRLEN + 1];
        ASSERT_OK(idm_ulid_format(&u, text, sizeof text), &err);
        ASSERT_EQ_INT(strlen(text), IDM_ULID_STRLEN);
        ASSERT_OK(parse_exact(text, IDM_ULID_STRLEN, &back, &err), &err);
        ASSERT_EQ_MEM(back.bytes, u.bytes, 16);
        for (int k = 0; k < IDM_ULID_STRLEN; k++)
            text[k] = (char)tolower((unsigned char)text[k]);
        ASSERT_OK(parse_exact(text, IDM_ULID_STRLEN, &back, &err), &err);
        ASSERT_EQ_MEM(back.bytes, u.bytes, 16);
        uint64_t ms = 0;
        for (int k = 0; k < 6; k++)
            ms = ms << 8 | u.bytes[k];
        ASSERT_EQ_U64((uint64_t)idm_ulid_unix_ms(&u), ms);

        /* The canonical text sorts exactly as the bytes do. */
        ASSERT_OK(idm_ulid_format(&u, text, sizeof text), &err);
        if (i > 0) {
            int by_bytes = memcmp(prev.bytes, u.bytes, 16);
            int by_text = strcmp(prev_text, text);
            ASSERT_TRUE((by_bytes < 0) == (by_text < 0) && (by_bytes == 0) == (by_text == 0));
        }
        prev = u;
        memcpy(prev_text, text, sizeof text);
    }
}

static const struct test_case tests[] = {
    TEST(ulid_parse_rejects_bad_input_at_its_offset),
    TEST(ulid_parse_gives_the_contract_messages),
    TEST(ulid_parse_rejects_every_bad_byte_at_every_position),
    TEST(ulid_format_needs_room_for_the_nul),
    TEST(ulid_matches_spec_vectors),
    TEST(ulid_roundtrips_and_sorts_like_its_bytes),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
