/*
 * test_formats.c - the one table of formats (common/formats.h) that
 * idmint gen and idmintd share: every entry sits at its id, in the order
 * of man/idmint.1's FORMATS (idmintd's metrics follow it), the lookups find
 * exactly the names, and each entry's facts agree with the library (the
 * IDM_FORMAT_* codes write texts of the stated length) and with
 * man/idmint.1 (time-ordered formats, prefixes).
 */
#include "formats.h"
#include "testlib.h"

#include <idmint/idmint.h>

static void test_formats_lookup_unknown_is_null(void)
{
    ASSERT_TRUE(idmx_format_by_name(NULL, 0) == NULL);
    ASSERT_TRUE(idmx_format_by_name("", 0) == NULL);
    ASSERT_TRUE(idmx_format_by_name("frob", 4) == NULL);
    ASSERT_TRUE(idmx_format_by_name("UUIDV7", 6) == NULL);
    ASSERT_TRUE(idmx_format_by_name("uuid", 4) == NULL);
    ASSERT_TRUE(idmx_format_by_name("uuidv7 ", 7) == NULL);
    ASSERT_TRUE(idmx_format_by_name("snowflakes", 10) == NULL);
}

static void test_formats_entries_sit_at_their_ids_in_contract_order(void)
{
    static const char *const contract[IDMX_FMT_COUNT] = {
        "uuidv7", "uuidv4", "ulid", "ksuid", "snowflake", "typeid", "token", "traceparent"};
    for (int i = 0; i < IDMX_FMT_COUNT; i++) {
        ASSERT_EQ_INT(idmx_formats[i].id, i);
        ASSERT_EQ_STR(idmx_formats[i].name, contract[i]);
        const idmx_format *f = idmx_format_by_name(contract[i], strlen(contract[i]));
        ASSERT_TRUE(f == &idmx_formats[i]);
    }
}

/* Each entry is the library's row of the same index (idmint/format.h). */
static void test_formats_are_the_librarys_rows(void)
{
    ASSERT_EQ_U64(idm_format_count(), IDMX_FMT_COUNT);
    for (int i = 0; i < IDMX_FMT_COUNT; i++) {
        const idm_format *lib = idm_format_at((size_t)i);
        ASSERT_TRUE(idmx_formats[i].lib == lib);
        ASSERT_TRUE(idmx_formats[i].name == lib->name);
        ASSERT_EQ_INT(idmx_formats[i].prefix, lib->prefix);
        ASSERT_EQ_U64(idmx_formats[i].text_max, lib->text_max);
    }
}

static void test_formats_lookup_takes_exactly_len_bytes(void)
{
    /* A slice of a longer text, as idmintd's router and RESP hand it. */
    const idmx_format *f = idmx_format_by_name("ulid?count=3", 4);
    ASSERT_TRUE(f != NULL && f->id == IDMX_FMT_ULID);
    ASSERT_TRUE(idmx_format_by_name("ulid", 3) == NULL);
}

static void test_formats_contract_facts(void)
{
    /* idmint(1): "every time-ordered format (uuidv7, ulid, ksuid,
     * snowflake, typeid)"; --prefix "required" for typeid, "when --prefix
     * is given" for token. */
    for (int i = 0; i < IDMX_FMT_COUNT; i++) {
        int id = idmx_formats[i].id;
        int ordered = id == IDMX_FMT_UUIDV7 || id == IDMX_FMT_ULID || id == IDMX_FMT_KSUID ||
                      id == IDMX_FMT_SNOWFLAKE || id == IDMX_FMT_TYPEID;
        ASSERT_EQ_INT(idmx_formats[i].time_ordered, ordered);
        int prefix = id == IDMX_FMT_TYPEID  ? IDMX_PREFIX_REQUIRED
                     : id == IDMX_FMT_TOKEN ? IDMX_PREFIX_OPTIONAL
                                            : IDMX_PREFIX_NONE;
        ASSERT_EQ_INT(idmx_formats[i].prefix, prefix);
        ASSERT_TRUE(idmx_formats[i].text_max >= idmx_formats[i].text_len);
        ASSERT_TRUE(idmx_formats[i].text_len > 0);
    }
}

static void test_formats_lib_codes(void)
{
    ASSERT_EQ_INT(idmx_formats[IDMX_FMT_UUIDV7].lib_format, IDM_FORMAT_UUIDV7);
    ASSERT_EQ_INT(idmx_formats[IDMX_FMT_UUIDV4].lib_format, IDM_FORMAT_UUIDV4);
    ASSERT_EQ_INT(idmx_formats[IDMX_FMT_ULID].lib_format, IDM_FORMAT_ULID);
    ASSERT_EQ_INT(idmx_formats[IDMX_FMT_KSUID].lib_format, IDM_FORMAT_KSUID);
    ASSERT_EQ_INT(idmx_formats[IDMX_FMT_SNOWFLAKE].lib_format, 0);
    ASSERT_EQ_INT(idmx_formats[IDMX_FMT_TYPEID].lib_format, 0);
    ASSERT_EQ_INT(idmx_formats[IDMX_FMT_TOKEN].lib_format, 0);
    ASSERT_EQ_INT(idmx_formats[IDMX_FMT_TRACEPARENT].lib_format, 0);
}

/* The stated lengths are what the library writes. */
static void test_formats_text_lengths_match_the_library(void)
{
    idm_gen *g = NULL;
    idm_error err = {0};
    idm_gen_config cfg = {0};
    cfg.flags = IDM_GEN_UNSHARED;
    ASSERT_OK(idm_gen_new(&g, &cfg, &err), &err);
    char text[IDM_TYPEID_STRLEN_MAX + 2];
    for (int i = 0; i < IDMX_FMT_COUNT; i++) {
        const idmx_format *f = &idmx_formats[i];
        if (f->lib_format == 0) {
            continue;
        }
        size_t len = 0;
        ASSERT_OK(idm_gen_next_text_n(g, f->lib_format, text, f->text_len + 1, 1, IDM_TEXT_NEWLINE,
                                      &len, &err),
                  &err);
        ASSERT_EQ_U64(len, f->text_len + 1);
    }
    ASSERT_OK(idm_token_next(g, "", 0, text, sizeof text, &err), &err);
    ASSERT_EQ_U64(strlen(text), idmx_formats[IDMX_FMT_TOKEN].text_len);
    memset(text, 0, sizeof text);
    ASSERT_OK(idm_traceparent_next(g, text, sizeof text, &err), &err);
    ASSERT_EQ_U64(strlen(text), idmx_formats[IDMX_FMT_TRACEPARENT].text_len);
    idm_uuid u;
    ASSERT_OK(idm_uuidv7_next_n(g, &u, 1, &err), &err);
    ASSERT_OK(idm_typeid_format("", 0, &u, text, sizeof text, &err), &err);
    ASSERT_EQ_U64(strlen(text), idmx_formats[IDMX_FMT_TYPEID].text_len);
    idm_gen_free(g);
    char digits[32];
    snprintf(digits, sizeof digits, "%llu", (unsigned long long)UINT64_MAX);
    ASSERT_EQ_U64(strlen(digits), idmx_formats[IDMX_FMT_SNOWFLAKE].text_max);
}

static void test_formats_list_for_messages(void)
{
    char buf[IDMX_FORMAT_LIST_CAP];
    size_t n = idmx_format_list(buf, sizeof buf, IDMX_LIST_ALL, "or");
    ASSERT_EQ_STR(buf, "uuidv7, uuidv4, ulid, ksuid, snowflake, typeid, token or traceparent");
    ASSERT_EQ_U64(n, strlen(buf));
    idmx_format_list(buf, sizeof buf, IDMX_LIST_PREFIXED, "and");
    ASSERT_EQ_STR(buf, "typeid and token");
    idmx_format_list(buf, sizeof buf, IDMX_LIST_TIME_ORDERED, "and");
    ASSERT_EQ_STR(buf, "uuidv7, ulid, ksuid, snowflake and typeid");
    idmx_format_list(buf, sizeof buf, IDMX_LIST_PREFIXED | IDMX_LIST_TIME_ORDERED, "and");
    ASSERT_EQ_STR(buf, "typeid");
}

/* idmint inspect --as's message, from idm_kind_name. */
static void test_formats_kind_list(void)
{
    char buf[IDMX_FORMAT_LIST_CAP];
    ASSERT_EQ_U64(idmx_kind_list(buf, sizeof buf, "or"), strlen(buf));
    ASSERT_EQ_STR(buf, "uuid, ulid, ksuid, typeid or snowflake");
    ASSERT_EQ_U64(idmx_kind_list(buf, 10, "or"), (size_t)-1);
    ASSERT_EQ_STR(buf, "");
}

static void test_formats_list_too_small_is_reported(void)
{
    char buf[20];
    memset(buf, 'x', sizeof buf);
    ASSERT_EQ_U64(idmx_format_list(buf, sizeof buf, IDMX_LIST_ALL, "or"), (size_t)-1);
    ASSERT_EQ_STR(buf, "");
    ASSERT_EQ_U64(idmx_format_list(buf, 0, IDMX_LIST_ALL, "or"), (size_t)-1);
}

static const struct test_case tests[] = {
    TEST(test_formats_lookup_unknown_is_null),
    TEST(test_formats_entries_sit_at_their_ids_in_contract_order),
    TEST(test_formats_are_the_librarys_rows),
    TEST(test_formats_lookup_takes_exactly_len_bytes),
    TEST(test_formats_contract_facts),
    TEST(test_formats_lib_codes),
    TEST(test_formats_text_lengths_match_the_library),
    TEST(test_formats_list_for_messages),
    TEST(test_formats_list_too_small_is_reported),
    TEST(test_formats_kind_list),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
