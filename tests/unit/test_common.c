/*
 * test_common.c - the front ends' shared helpers (common/): JSON string
 * escaping must yield valid JSON whatever bytes come in, and the inspect
 * renderer must produce the CONTRACT.md members, in the fixed buffers that
 * both the CLI and the server hand it.
 */
#include "inspect_render.h"
#include "json.h"
#include "outbuf.h"
#include "testlib.h"

static const char *esc(const char *s, size_t len)
{
    static char out[256];
    if (idmx_json_escape(s, len, out, sizeof out) == (size_t)-1)
        return "(overflow)";
    return out;
}

static void test_json_escape_too_small_is_reported(void)
{
    char out[4];
    ASSERT_EQ_U64(idmx_json_escape("abcdef", 6, out, sizeof out), (size_t)-1);
    ASSERT_EQ_STR(out, "");
}

static void test_json_escape_quotes_backslash_controls(void)
{
    ASSERT_EQ_STR(esc("a\"b\\c", 5), "\"a\\\"b\\\\c\"");
    ASSERT_EQ_STR(esc("\n\r\t\b\f", 5), "\"\\n\\r\\t\\b\\f\"");
    ASSERT_EQ_STR(esc("\x01\x1f", 2), "\"\\u0001\\u001f\"");
    ASSERT_EQ_STR(esc("a\0b", 3), "\"a\\u0000b\"");
}

static void test_json_escape_utf8(void)
{
    /* Well-formed UTF-8 (2, 3 and 4 bytes) passes unchanged. */
    ASSERT_EQ_STR(esc("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9), "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
    /* Stray continuation, truncated sequence, overlong, surrogate, > U+10FFFF. */
    ASSERT_EQ_STR(esc("\x80", 1), "\"\\ufffd\"");
    ASSERT_EQ_STR(esc("\xe2\x82", 2), "\"\\ufffd\\ufffd\"");
    ASSERT_EQ_STR(esc("\xc0\xaf", 2), "\"\\ufffd\\ufffd\"");
    ASSERT_EQ_STR(esc("\xed\xa0\x80", 3), "\"\\ufffd\\ufffd\\ufffd\"");
    ASSERT_EQ_STR(esc("\xf4\x90\x80\x80", 4), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
}

static const char *render_json(const char *input)
{
    static char out[1024];
    idm_inspection in;
    idm_error err;
    idmx_outbuf b;
    idmx_outbuf_init(&b, out, sizeof out - 1, NULL, NULL);
    if (idm_inspect(input, strlen(input), IDM_KIND_AUTO, NULL, &in, &err) != IDM_OK)
        idmx_inspect_json_error(&b, input, strlen(input), err.msg);
    else
        idmx_inspect_json(&b, input, strlen(input), &in, NULL);
    if (idmx_outbuf_flush(&b) != 0)
        return "(overflow)";
    out[b.len] = '\0';
    return out;
}

static void test_inspect_json_members(void)
{
    ASSERT_EQ_STR(render_json("017F22E2-79B0-7CC3-98C4-DC0C0C07398F"),
                  "{\"input\": \"017F22E2-79B0-7CC3-98C4-DC0C0C07398F\", \"kind\": \"uuid\", "
                  "\"unix_ms\": 1645557742000, \"time\": \"2022-02-22T19:22:22.000Z\", "
                  "\"uuid\": \"017f22e2-79b0-7cc3-98c4-dc0c0c07398f\", \"version\": 7, "
                  "\"variant\": \"rfc9562\"}");
    ASSERT_EQ_STR(render_json("1212161070186418176"),
                  "{\"input\": \"1212161070186418176\", \"kind\": \"snowflake\", "
                  "\"unix_ms\": 1577836694653, \"time\": \"2019-12-31T23:58:14.653Z\", "
                  "\"id\": \"1212161070186418176\", \"layout\": \"twitter\", \"node\": 77, "
                  "\"sequence\": 0}");
    const char *bad = render_json("x\"y");
    ASSERT_TRUE(strncmp(bad, "{\"input\": \"x\\\"y\", \"error\": \"", 27) == 0);
}

static void test_inspect_json_fixed_buffer_overflow_is_enospc(void)
{
    char out[16];
    idm_inspection in;
    idm_error err;
    idmx_outbuf b;
    idmx_outbuf_init(&b, out, sizeof out, NULL, NULL);
    ASSERT_OK(idm_inspect("01ARZ3NDEKTSV4RRFFQ69G5FAV", 26, IDM_KIND_AUTO, NULL, &in, &err), &err);
    ASSERT_TRUE(idmx_inspect_json(&b, "01ARZ3NDEKTSV4RRFFQ69G5FAV", 26, &in, NULL) != 0);
    ASSERT_EQ_INT(b.err, IDM_ENOSPC);
}

static const struct test_case tests[] = {
    TEST(test_json_escape_too_small_is_reported),
    TEST(test_json_escape_quotes_backslash_controls),
    TEST(test_json_escape_utf8),
    TEST(test_inspect_json_members),
    TEST(test_inspect_json_fixed_buffer_overflow_is_enospc),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
