/*
 * test_format.c - the library's format table (idmint/format.h): error
 * paths first (unknown names and ids, prefixes a format refuses, too
 * little room, snowflakes through an idm_gen), then the table's facts
 * against what each entry point does: every minted text has the stated
 * length, parses back as its format, is recognised by idm_inspect as the
 * stated kind, and the time-ordered ones increase and can be observed.
 */
#include "testlib.h"

#include <idmint/idmint.h>

static idm_gen *new_gen(void)
{
    idm_gen *g = NULL;
    idm_error err = {0};
    if (idm_gen_new(&g, NULL, &err) != IDM_OK)
        return NULL;
    return g;
}

static const idm_format *named(const char *name)
{
    return idm_format_by_name(name, strlen(name));
}

static void test_format_lookup_unknown_is_null(void)
{
    ASSERT_TRUE(idm_format_by_name(NULL, 0) == NULL);
    ASSERT_TRUE(idm_format_by_name("", 0) == NULL);
    ASSERT_TRUE(idm_format_by_name("UUIDV7", 6) == NULL);
    ASSERT_TRUE(idm_format_by_name("uuid", 4) == NULL);
    ASSERT_TRUE(idm_format_by_name("uuidv7 ", 7) == NULL);
    ASSERT_TRUE(idm_format_by_name("ulid?count=3", 12) == NULL);
    ASSERT_TRUE(idm_format_by_name("ulid?count=3", 4) == named("ulid")); /* only len bytes */
    ASSERT_TRUE(idm_format_by_name("uli", 3) == NULL);
    ASSERT_TRUE(idm_format_by_id(0) == NULL);
    ASSERT_TRUE(idm_format_by_id(-1) == NULL);
    ASSERT_TRUE(idm_format_by_id(9) == NULL);
    ASSERT_TRUE(idm_format_at(idm_format_count()) == NULL);
}

static void test_format_numbers_and_order(void)
{
    /* The first four are idm_gen_next_text_n's codes since 0.1: ABI. */
    ASSERT_EQ_INT(IDM_FORMAT_UUIDV4, 1);
    ASSERT_EQ_INT(IDM_FORMAT_UUIDV7, 2);
    ASSERT_EQ_INT(IDM_FORMAT_ULID, 3);
    ASSERT_EQ_INT(IDM_FORMAT_KSUID, 4);
    static const char *const order[] = {"uuidv7",    "uuidv4", "ulid",  "ksuid",
                                        "snowflake", "typeid", "token", "traceparent"};
    static const int ids[] = {IDM_FORMAT_UUIDV7, IDM_FORMAT_UUIDV4,     IDM_FORMAT_ULID,
                              IDM_FORMAT_KSUID,  IDM_FORMAT_SNOWFLAKE,  IDM_FORMAT_TYPEID,
                              IDM_FORMAT_TOKEN,  IDM_FORMAT_TRACEPARENT};
    ASSERT_EQ_U64(idm_format_count(), 8);
    for (size_t i = 0; i < idm_format_count(); i++) {
        const idm_format *f = idm_format_at(i);
        ASSERT_EQ_STR(f->name, order[i]);
        ASSERT_EQ_INT(f->id, ids[i]);
        ASSERT_TRUE(idm_format_by_id(f->id) == f);
        ASSERT_TRUE(named(f->name) == f);
        ASSERT_TRUE(f->text_len > 0 && f->text_max >= f->text_len);
        ASSERT_TRUE(f->text_max <= IDM_FORMAT_TEXT_MAX);
        ASSERT_EQ_INT(f->minted_by,
                      f->id == IDM_FORMAT_SNOWFLAKE ? IDM_FORMAT_BY_SNOWFLAKE : IDM_FORMAT_BY_GEN);
    }
}

static void test_format_facts(void)
{
    ASSERT_EQ_U64(named("uuidv7")->bits, 128);
    ASSERT_EQ_U64(named("ksuid")->bits, 160);
    ASSERT_EQ_U64(named("snowflake")->bits, 64);
    ASSERT_EQ_U64(named("snowflake")->text_len, 20);
    ASSERT_EQ_U64(named("typeid")->text_max, IDM_TYPEID_STRLEN_MAX);
    ASSERT_EQ_U64(named("token")->text_max, IDM_TOKEN_STRLEN_MAX);
    ASSERT_EQ_INT(named("typeid")->prefix, IDM_PREFIX_REQUIRED);
    ASSERT_EQ_INT(named("token")->prefix, IDM_PREFIX_OPTIONAL);
    ASSERT_EQ_INT(named("ulid")->prefix, IDM_PREFIX_NONE);
    ASSERT_EQ_INT(named("uuidv4")->kind, IDM_KIND_UUID);
    ASSERT_EQ_INT(named("typeid")->kind, IDM_KIND_TYPEID);
    ASSERT_EQ_INT(named("token")->kind, 0);
    ASSERT_EQ_INT(named("traceparent")->kind, 0);
    int ordered = 0;
    for (size_t i = 0; i < idm_format_count(); i++)
        ordered += idm_format_at(i)->time_ordered;
    ASSERT_EQ_INT(ordered, 5); /* uuidv7, ulid, ksuid, snowflake, typeid */
    ASSERT_TRUE(!named("uuidv4")->time_ordered && !named("token")->time_ordered);
}

static void test_format_text_len_and_prefix_rule(void)
{
    idm_error err = {0};
    ASSERT_EQ_U64(idm_format_text_len(named("typeid"), 0), 26); /* a bare suffix */
    ASSERT_EQ_U64(idm_format_text_len(named("typeid"), 4), 31);
    ASSERT_EQ_U64(idm_format_text_len(named("typeid"), 63), 90);
    ASSERT_EQ_U64(idm_format_text_len(named("typeid"), 64), 0);
    ASSERT_EQ_U64(idm_format_text_len(named("token"), 0), 22);
    ASSERT_EQ_U64(idm_format_text_len(named("token"), 2), 25);
    ASSERT_EQ_U64(idm_format_text_len(named("uuidv7"), 0), 36);
    ASSERT_EQ_U64(idm_format_text_len(named("uuidv7"), 3), 0);
    ASSERT_EQ_U64(idm_format_text_len(NULL, 0), 0);
    ASSERT_EQ_INT(idm_format_check_prefix(named("uuidv7"), "user", 4, &err), IDM_EINVAL);
    ASSERT_EQ_STR(err.msg, "uuidv7 takes no prefix");
    ASSERT_EQ_INT(idm_format_check_prefix(named("typeid"), NULL, 0, &err), IDM_EINVAL);
    ASSERT_EQ_STR(err.msg, "typeid needs a prefix");
    ASSERT_OK(idm_format_check_prefix(named("typeid"), "", 0, &err), &err); /* given empty */
    ASSERT_OK(idm_format_check_prefix(named("uuidv7"), NULL, 0, &err), &err);
    ASSERT_EQ_INT(idm_format_check_prefix(named("typeid"), "User", 4, &err), IDM_EINVAL);
    ASSERT_EQ_U64(err.offset, 0);
    ASSERT_EQ_INT(idm_format_check_prefix(named("token"), "sk_", 3, &err), IDM_EINVAL);
    ASSERT_TRUE(strstr(err.msg, "token prefix") != NULL);
    ASSERT_OK(idm_format_check_prefix(named("token"), "", 0, &err), &err);
    ASSERT_OK(idm_format_check_prefix(named("token"), "sk", 2, &err), &err);
    ASSERT_OK(idm_format_check_prefix(named("typeid"), "user", 4, &err), &err);
}

static void test_format_mint_refusals(void)
{
    idm_gen *g = new_gen();
    ASSERT_TRUE(g != NULL);
    char buf[256];
    size_t len = 99;
    idm_error err = {0};
    ASSERT_EQ_INT(
        idm_format_next_text_n(named("snowflake"), g, NULL, 0, buf, sizeof buf, 1, 0, &len, &err),
        IDM_EUNSUPPORTED);
    ASSERT_EQ_U64(len, 0);
    ASSERT_EQ_INT(
        idm_format_next_text_n(named("typeid"), g, NULL, 0, buf, sizeof buf, 1, 0, &len, &err),
        IDM_EINVAL);
    ASSERT_EQ_INT(
        idm_format_next_text_n(named("ulid"), g, "x", 1, buf, sizeof buf, 1, 0, &len, &err),
        IDM_EINVAL);
    ASSERT_EQ_INT(
        idm_format_next_text_n(named("ulid"), g, NULL, 0, buf, sizeof buf, 1, 4, &len, &err),
        IDM_EINVAL);
    ASSERT_EQ_INT(idm_format_next_text_n(NULL, g, NULL, 0, buf, sizeof buf, 1, 0, &len, &err),
                  IDM_EINVAL);
    /* Room for 2 of 3 typeids with newlines: refused before minting. */
    ASSERT_EQ_INT(idm_format_next_text_n(named("typeid"), g, "user", 4, buf, 64, 3,
                                         IDM_TEXT_NEWLINE, &len, &err),
                  IDM_ENOSPC);
    ASSERT_EQ_U64(len, 0);
    ASSERT_OK(idm_format_next_text_n(named("typeid"), g, "user", 4, buf, 62, 2, 0, &len, &err),
              &err);
    ASSERT_EQ_U64(len, 62);
    /* An empty TypeID prefix: the bare suffix. */
    ASSERT_OK(idm_format_next_text_n(named("typeid"), g, "", 0, buf, 26, 1, 0, &len, &err), &err);
    ASSERT_EQ_U64(len, 26);
    idm_gen_free(g);
}

/* Every format an idm_gen mints: lengths, parse back, inspect's kind, order. */
static void test_format_mint_parse_inspect_roundtrip(void)
{
    idm_gen *g = new_gen();
    ASSERT_TRUE(g != NULL);
    enum { N = 300 };
    static char buf[N * (IDM_FORMAT_TEXT_MAX + 1)];
    for (size_t i = 0; i < idm_format_count(); i++) {
        const idm_format *f = idm_format_at(i);
        if (f->minted_by != IDM_FORMAT_BY_GEN)
            continue;
        const char *prefix = f->prefix == IDM_PREFIX_NONE ? "" : "user";
        size_t plen = strlen(prefix);
        size_t one = idm_format_text_len(f, plen);
        size_t len = 0;
        idm_error err = {0};
        ASSERT_OK(idm_format_next_text_n(f, g, prefix, plen, buf, sizeof buf, N, IDM_TEXT_NEWLINE,
                                         &len, &err),
                  &err);
        ASSERT_EQ_U64(len, N * (one + 1));
        for (size_t k = 0; k < N; k++) {
            const char *id = buf + k * (one + 1);
            ASSERT_TRUE(id[one] == '\n');
            idm_format_value v;
            ASSERT_OK(idm_format_parse(f, id, one, &v, &err), &err);
            ASSERT_EQ_INT(v.format, f->id);
            ASSERT_EQ_U64(v.prefix_len, f->prefix == IDM_PREFIX_NONE ? 0 : plen);
            if (f->kind != 0) {
                idm_inspection in;
                ASSERT_OK(idm_inspect(id, one, IDM_KIND_AUTO, NULL, &in, &err), &err);
                ASSERT_EQ_INT(in.kind, f->kind);
            }
            if (f->time_ordered && k > 0)
                ASSERT_TRUE(memcmp(id - one - 1, id, one) < 0);
        }
        /* Without newlines: the same lengths back to back. */
        ASSERT_OK(idm_format_next_text_n(f, g, prefix, plen, buf, one * 2, 2, 0, &len, &err), &err);
        ASSERT_EQ_U64(len, one * 2);
        idm_format_value v;
        ASSERT_OK(idm_format_parse(f, buf, one, &v, &err), &err);
        ASSERT_OK(idm_format_parse(f, buf + one, one, &v, &err), &err);
    }
    idm_gen_free(g);
}

static void test_format_parse_refusals(void)
{
    idm_format_value v;
    idm_error err = {0};
    const char *v4 = "919108f7-52d1-4320-9bac-f847db4148a8";
    const char *v7 = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";
    ASSERT_EQ_INT(idm_format_parse(named("uuidv7"), v4, strlen(v4), &v, &err), IDM_EUNSUPPORTED);
    ASSERT_EQ_STR(err.msg, "its UUID is version 4, not 7");
    ASSERT_EQ_INT(idm_format_parse(named("uuidv4"), v7, strlen(v7), &v, &err), IDM_EUNSUPPORTED);
    ASSERT_OK(idm_format_parse(named("uuidv7"), v7, strlen(v7), &v, &err), &err);
    ASSERT_EQ_U64(v.len, 16);
    ASSERT_EQ_INT(v.bytes[0], 0x01);
    ASSERT_EQ_INT(idm_format_parse(named("uuidv7"), "x", 1, &v, &err), IDM_EPARSE);
    ASSERT_EQ_INT(idm_format_parse(named("typeid"), "user_01h455vb4pex5vsknk084", 26, &v, &err),
                  IDM_EPARSE);
    /* A TypeID of a UUIDv4. */
    ASSERT_EQ_INT(
        idm_format_parse(named("typeid"), "user_4h44h0xmpk86gbkz1r8ydm4a58", 31, &v, &err),
        IDM_EUNSUPPORTED);
    ASSERT_OK(idm_format_parse(named("snowflake"), "1541815603606036480", 19, &v, &err), &err);
    ASSERT_EQ_U64(v.number, 1541815603606036480u);
    ASSERT_EQ_U64(v.len, 8);
    ASSERT_EQ_INT(idm_format_parse(named("snowflake"), "18446744073709551616", 20, &v, &err),
                  IDM_EPARSE);
    ASSERT_EQ_INT(idm_format_parse(named("ksuid"), "", 0, &v, &err), IDM_EPARSE);
    ASSERT_EQ_INT(idm_format_parse(NULL, "x", 1, &v, &err), IDM_EINVAL);
    ASSERT_EQ_INT(idm_format_parse(named("ulid"), "x", 1, NULL, &err), IDM_EINVAL);
    /* Tokens: [PREFIX_] and 22 base62 characters of at most 128 bits. */
    ASSERT_OK(idm_format_parse(named("token"), "sk_0000000000000000000001", 25, &v, &err), &err);
    ASSERT_EQ_STR(v.prefix, "sk");
    ASSERT_EQ_U64(v.len, 0);
    ASSERT_OK(idm_format_parse(named("token"), "7N42dgm5tFLK9N8MT7fHC7", 22, &v, &err), &err);
    ASSERT_EQ_INT(idm_format_parse(named("token"), "zzzzzzzzzzzzzzzzzzzzzz", 22, &v, &err),
                  IDM_EPARSE);
    ASSERT_EQ_INT(idm_format_parse(named("token"), "_0000000000000000000001", 23, &v, &err),
                  IDM_EPARSE);
    ASSERT_EQ_INT(idm_format_parse(named("token"), "sk-0000000000000000000001", 25, &v, &err),
                  IDM_EPARSE);
    ASSERT_EQ_U64(err.offset, 2);
    ASSERT_EQ_INT(idm_format_parse(named("token"), "Sk_0000000000000000000001", 25, &v, &err),
                  IDM_EPARSE);
    ASSERT_EQ_INT(idm_format_parse(named("token"), "sk_000000000000000000000!", 25, &v, &err),
                  IDM_EPARSE);
    ASSERT_EQ_U64(err.offset, 24);
    ASSERT_EQ_INT(idm_format_parse(named("token"), "short", 5, &v, &err), IDM_EPARSE);
    const char *tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    ASSERT_OK(idm_format_parse(named("traceparent"), tp, strlen(tp), &v, &err), &err);
    ASSERT_EQ_U64(v.len, 26);
    ASSERT_EQ_INT(v.bytes[1], 0x4b);
    ASSERT_EQ_INT(v.bytes[25], 1);
}

static void test_format_observe(void)
{
    idm_gen *g = new_gen();
    ASSERT_TRUE(g != NULL);
    idm_error err = {0};
    idm_format_value v;
    ASSERT_OK(idm_format_parse(named("snowflake"), "1", 1, &v, &err), &err);
    ASSERT_EQ_INT(idm_format_observe(named("snowflake"), g, &v, 500, &err), IDM_EUNSUPPORTED);
    ASSERT_EQ_INT(idm_format_observe(named("uuidv4"), g, &v, 500, &err), IDM_EUNSUPPORTED);
    ASSERT_EQ_INT(idm_format_observe(named("ulid"), g, &v, 500, &err), IDM_EINVAL);
    ASSERT_EQ_INT(idm_format_observe(named("ulid"), NULL, &v, 500, &err), IDM_EINVAL);
    /* A ULID far in the future is refused; one just minted is followed. */
    ASSERT_OK(idm_format_parse(named("ulid"), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ", 26, &v, &err), &err);
    ASSERT_EQ_INT(idm_format_observe(named("ulid"), g, &v, 500, &err), IDM_EOFFSET);
    for (size_t i = 0; i < idm_format_count(); i++) {
        const idm_format *f = idm_format_at(i);
        if (!f->time_ordered || f->minted_by != IDM_FORMAT_BY_GEN)
            continue;
        const char *prefix = f->prefix == IDM_PREFIX_REQUIRED ? "user" : "";
        size_t plen = strlen(prefix), one = idm_format_text_len(f, plen), len = 0;
        char seen[IDM_FORMAT_TEXT_MAX], next[IDM_FORMAT_TEXT_MAX];
        /* Another generator's ID, then this one's: after it. */
        idm_gen *other = new_gen();
        ASSERT_TRUE(other != NULL);
        ASSERT_OK(idm_format_next_text_n(f, other, prefix, plen, seen, one, 1, 0, &len, &err),
                  &err);
        idm_gen_free(other);
        ASSERT_OK(idm_format_parse(f, seen, one, &v, &err), &err);
        ASSERT_OK(idm_format_observe(f, g, &v, 500, &err), &err);
        ASSERT_OK(idm_format_next_text_n(f, g, prefix, plen, next, one, 1, 0, &len, &err), &err);
        ASSERT_TRUE(memcmp(seen, next, one) < 0);
    }
    idm_gen_free(g);
}

static const struct test_case tests[] = {
    TEST(test_format_lookup_unknown_is_null),
    TEST(test_format_numbers_and_order),
    TEST(test_format_facts),
    TEST(test_format_text_len_and_prefix_rule),
    TEST(test_format_mint_refusals),
    TEST(test_format_mint_parse_inspect_roundtrip),
    TEST(test_format_parse_refusals),
    TEST(test_format_observe),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
