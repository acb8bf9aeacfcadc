/*
 * test_common.c - the front ends' shared helpers (common/): JSON string
 * escaping must yield valid JSON whatever bytes come in, the inspect
 * renderer must produce the members man/idmint.1 lists, in the fixed buffers that
 * both the CLI and the server hand it, and the option values that idmint
 * and idmintd share (optvalue.h) must be parsed alike: negative and
 * RFC 3339 epochs, ranges, junk and overflow.
 */
#include "inspect_render.h"
#include "json.h"
#include "optvalue.h"
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

/* ---- option values (optvalue.h) -------------------------------------------- */

static char msg_[IDMX_OPT_MSG_CAP];

/* The message of a parse expected to fail, or "(accepted)". */
static const char *whole_msg(const char *name, const char *text, const idmx_range *r)
{
    uint64_t v = 12345;
    msg_[0] = '\0';
    if (idmx_parse_whole(name, text, r, &v, msg_, sizeof msg_) == 0)
        return "(accepted)";
    if (v != 12345)
        return "(output written on failure)";
    return msg_;
}

static const char *epoch_msg(const char *text)
{
    int64_t v = 12345;
    msg_[0] = '\0';
    if (idmx_parse_epoch(text, &v, msg_, sizeof msg_) == 0)
        return "(accepted)";
    if (v != 12345)
        return "(output written on failure)";
    return msg_;
}

static int contains(const char *s, const char *part)
{
    return strstr(s, part) != NULL;
}

static void test_whole_junk_is_not_a_whole_number(void)
{
    const char *junk[] = {"", "abc", "+5", " 5", "5 ", "0x10", "1e3", "5.0", "-", "--5", "1_000"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        const char *m = whole_msg("--count", junk[i], &idmx_range_count);
        ASSERT_TRUE(contains(m, "not a whole number"));
    }
    ASSERT_TRUE(contains(whole_msg("-n", NULL, &idmx_range_count), "not a whole number"));
    ASSERT_EQ_STR(whole_msg("--max-count", "abc", &idmx_range_max_count),
                  "invalid --max-count 'abc': not a whole number (expected 1 to 10000000)");
}

static void test_whole_negative_and_overflow_are_out_of_range(void)
{
    ASSERT_EQ_STR(whole_msg("-n", "-5", &idmx_range_count),
                  "invalid -n '-5': out of range (expected 0 to 18446744073709551615)");
    ASSERT_TRUE(
        contains(whole_msg("-n", "18446744073709551616", &idmx_range_count), "out of range"));
    ASSERT_TRUE(
        contains(whole_msg("-n", "99999999999999999999999", &idmx_range_count), "out of range"));
}

static void test_whole_range_edges(void)
{
    uint64_t v = 0;
    ASSERT_EQ_INT(idmx_parse_whole("-n", "0", &idmx_range_count, &v, msg_, sizeof msg_), 0);
    ASSERT_EQ_U64(v, 0);
    ASSERT_EQ_INT(
        idmx_parse_whole("-n", "18446744073709551615", &idmx_range_count, &v, msg_, sizeof msg_),
        0);
    ASSERT_EQ_U64(v, UINT64_MAX);
    ASSERT_EQ_INT(
        idmx_parse_whole("--max-count", "10000000", &idmx_range_max_count, &v, msg_, sizeof msg_),
        0);
    ASSERT_EQ_U64(v, 10000000);
    ASSERT_EQ_STR(whole_msg("--max-count", "0", &idmx_range_max_count),
                  "invalid --max-count '0': out of range (expected 1 to 10000000)");
    ASSERT_EQ_STR(whole_msg("max-count", "10000001", &idmx_range_max_count),
                  "invalid max-count '10000001': out of range (expected 1 to 10000000)");
    ASSERT_EQ_STR(whole_msg("--max-connections", "0", &idmx_range_max_connections),
                  "invalid --max-connections '0': out of range (expected 1 to 1000000)");
    ASSERT_EQ_STR(whole_msg("--node", "4611686018427387904", &idmx_range_node),
                  "invalid --node '4611686018427387904': out of range (expected 0 to "
                  "4611686018427387903)");
}

static void test_ms_options_name_their_unit(void)
{
    int64_t ms = 0;
    ASSERT_EQ_STR(whole_msg("--reserve", "9", &idmx_range_reserve_ms),
                  "invalid --reserve '9': out of range (expected 10 to 3600000 ms)");
    ASSERT_EQ_INT(idmx_parse_ms("--reserve", "10", &idmx_range_reserve_ms, &ms, msg_, sizeof msg_),
                  0);
    ASSERT_EQ_INT(ms, 10);
    ASSERT_EQ_INT(idmx_parse_ms("--max-rewind", "9223372036854", &idmx_range_max_rewind_ms, &ms,
                                msg_, sizeof msg_),
                  0);
    ASSERT_EQ_INT(ms, INT64_MAX / 1000000);
    ms = 7;
    ASSERT_EQ_INT(idmx_parse_ms("--max-rewind", "9223372036855", &idmx_range_max_rewind_ms, &ms,
                                msg_, sizeof msg_),
                  -1);
    ASSERT_EQ_INT(ms, 7);
    ASSERT_EQ_STR(
        msg_,
        "invalid --max-rewind '9223372036855': out of range (expected 0 to 9223372036854 ms)");
    ASSERT_EQ_STR(whole_msg("idle-timeout", "-1", &idmx_range_idle_timeout_ms),
                  "invalid idle-timeout '-1': out of range (expected 0 to 86400000 ms)");
}

static void test_epoch_unix_ms_negative_and_edges(void)
{
    int64_t ms = 0;
    ASSERT_EQ_INT(idmx_parse_epoch("-1000", &ms, msg_, sizeof msg_), 0);
    ASSERT_EQ_INT(ms, -1000);
    ASSERT_EQ_INT(idmx_parse_epoch("0", &ms, msg_, sizeof msg_), 0);
    ASSERT_EQ_INT(ms, 0);
    ASSERT_EQ_INT(idmx_parse_epoch("1288834974657", &ms, msg_, sizeof msg_), 0);
    ASSERT_EQ_INT(ms, 1288834974657);
    ASSERT_EQ_INT(idmx_parse_epoch("-9223372036854775808", &ms, msg_, sizeof msg_), 0);
    ASSERT_EQ_INT(ms, INT64_MIN);
    ASSERT_EQ_INT(idmx_parse_epoch("9223372036854775807", &ms, msg_, sizeof msg_), 0);
    ASSERT_EQ_INT(ms, INT64_MAX);
}

static void test_epoch_rfc3339(void)
{
    int64_t ms = 0;
    ASSERT_EQ_INT(idmx_parse_epoch("2025-01-01T00:00:00Z", &ms, msg_, sizeof msg_), 0);
    ASSERT_EQ_INT(ms, 1735689600000);
    ASSERT_EQ_INT(idmx_parse_epoch("2025-01-01T08:00:00+08:00", &ms, msg_, sizeof msg_), 0);
    ASSERT_EQ_INT(ms, 1735689600000);
    ASSERT_EQ_INT(idmx_parse_epoch("1969-12-31T23:59:59.000Z", &ms, msg_, sizeof msg_), 0);
    ASSERT_EQ_INT(ms, -1000);
}

static void test_epoch_overflow_and_junk(void)
{
    ASSERT_EQ_STR(epoch_msg("9223372036854775808"),
                  "invalid epoch '9223372036854775808': out of range (Unix milliseconds from "
                  "-9223372036854775808 to 9223372036854775807)");
    ASSERT_TRUE(contains(epoch_msg("-9223372036854775809"), "out of range"));
    ASSERT_TRUE(contains(epoch_msg("99999999999999999999999"), "out of range"));
    const char *junk[] = {
        "",           "yesterday", "+1000", " 1000", "1000ms", "1e3", "2025-13-01T00:00:00Z",
        "2025-01-01", "-"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        const char *m = epoch_msg(junk[i]);
        ASSERT_TRUE(contains(m, "expected Unix milliseconds or an RFC 3339 time"));
    }
    ASSERT_TRUE(contains(epoch_msg(NULL), "invalid epoch ''"));
}

static const char *layout_text(const idm_sf_layout *l)
{
    static char name[IDM_SF_SPEC_CAP];
    idmx_layout_name(l, name, sizeof name);
    return name;
}

static void test_layout_resolve_default_preset_spec(void)
{
    idm_sf_layout l;
    ASSERT_EQ_INT(idmx_layout_resolve(NULL, NULL, &l, msg_, sizeof msg_), 0);
    ASSERT_EQ_STR(layout_text(&l), "twitter");
    ASSERT_EQ_INT(l.epoch_ms, 1288834974657);
    ASSERT_EQ_INT(idmx_layout_resolve("sonyflake", NULL, &l, msg_, sizeof msg_), 0);
    ASSERT_EQ_STR(layout_text(&l), "sonyflake");
    ASSERT_EQ_INT(
        idmx_layout_resolve("time=41,node=10,seq=12,unit=1ms,epoch=0", NULL, &l, msg_, sizeof msg_),
        0);
    ASSERT_EQ_INT(l.epoch_ms, 0);
}

static void test_layout_resolve_negative_and_rfc3339_epoch(void)
{
    idm_sf_layout l;
    ASSERT_EQ_INT(idmx_layout_resolve("twitter", "-1000", &l, msg_, sizeof msg_), 0);
    ASSERT_EQ_INT(l.epoch_ms, -1000);
    ASSERT_EQ_STR(layout_text(&l), "time=41,node=10,seq=12,unit=1ms,epoch=-1000");
    ASSERT_EQ_INT(idmx_layout_resolve(NULL, "2025-01-01T00:00:00Z", &l, msg_, sizeof msg_), 0);
    ASSERT_EQ_INT(l.epoch_ms, 1735689600000);
    /* The preset's own epoch keeps its name. */
    ASSERT_EQ_INT(idmx_layout_resolve("twitter", "1288834974657", &l, msg_, sizeof msg_), 0);
    ASSERT_EQ_STR(layout_text(&l), "twitter");
}

static void test_layout_resolve_errors_leave_output(void)
{
    idm_sf_layout l, before;
    ASSERT_EQ_INT(idmx_layout_resolve("discord", NULL, &l, msg_, sizeof msg_), 0);
    before = l;
    ASSERT_EQ_INT(idmx_layout_resolve("frob", NULL, &l, msg_, sizeof msg_), -1);
    ASSERT_TRUE(strncmp(msg_, "invalid layout 'frob': ", 23) == 0);
    ASSERT_EQ_INT(idmx_layout_resolve("", NULL, &l, msg_, sizeof msg_), -1);
    ASSERT_TRUE(strncmp(msg_, "invalid layout '': ", 19) == 0);
    ASSERT_EQ_INT(idmx_layout_resolve("twitter", "yesterday", &l, msg_, sizeof msg_), -1);
    ASSERT_TRUE(contains(msg_, "invalid epoch 'yesterday'"));
    ASSERT_EQ_INT(idmx_layout_resolve("twitter", "", &l, msg_, sizeof msg_), -1);
    /* An epoch the layout's range cannot take from there. */
    ASSERT_EQ_INT(idmx_layout_resolve("twitter", "9223372036854775807", &l, msg_, sizeof msg_), -1);
    ASSERT_TRUE(strncmp(msg_, "invalid epoch '9223372036854775807' for layout 'twitter': ", 58) ==
                0);
    ASSERT_EQ_MEM(&l, &before, sizeof l);
}

static void test_node_within_layout(void)
{
    idm_sf_layout l;
    uint64_t node = 7;
    ASSERT_EQ_INT(idmx_layout_resolve("twitter", NULL, &l, msg_, sizeof msg_), 0);
    ASSERT_EQ_INT(idmx_parse_node("--node", "1023", &l, &node, msg_, sizeof msg_), 0);
    ASSERT_EQ_U64(node, 1023);
    node = 7;
    ASSERT_EQ_INT(idmx_parse_node("--node", "1024", &l, &node, msg_, sizeof msg_), -1);
    ASSERT_EQ_STR(msg_, "--node 1024 is out of range 0..1023 for layout twitter");
    ASSERT_EQ_INT(idmx_parse_node("--node", "-1", &l, &node, msg_, sizeof msg_), -1);
    ASSERT_EQ_STR(msg_, "--node '-1' is out of range 0..1023 for layout twitter");
    ASSERT_EQ_INT(idmx_parse_node("--node", "abc", &l, &node, msg_, sizeof msg_), -1);
    ASSERT_EQ_STR(msg_, "invalid --node 'abc': not a whole number (expected 0..1023 for layout "
                        "twitter)");
    ASSERT_EQ_INT(idmx_parse_node("--node", "99999999999999999999", &l, &node, msg_, sizeof msg_),
                  -1);
    ASSERT_TRUE(contains(msg_, "out of range 0..1023"));
    ASSERT_EQ_U64(node, 7);
    ASSERT_EQ_INT(idmx_layout_resolve("sonyflake", NULL, &l, msg_, sizeof msg_), 0);
    ASSERT_EQ_INT(idmx_check_node("--node", 65535, &l, msg_, sizeof msg_), 0);
    ASSERT_EQ_INT(idmx_check_node("--node", 65536, &l, msg_, sizeof msg_), -1);
    ASSERT_EQ_STR(msg_, "--node 65536 is out of range 0..65535 for layout sonyflake");
}

static void test_messages_bounded(void)
{
    char big[300], small[16];
    memset(big, '7', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    /* A long value is quoted up to 64 bytes. */
    const char *m = whole_msg("--count", big, &idmx_range_count);
    ASSERT_TRUE(strlen(m) < 64 + 80);
    /* A small cap truncates and still terminates. */
    uint64_t v;
    memset(small, 'x', sizeof small);
    ASSERT_EQ_INT(idmx_parse_whole("--count", "abc", &idmx_range_count, &v, small, sizeof small),
                  -1);
    ASSERT_EQ_U64(strlen(small), sizeof small - 1);
    ASSERT_EQ_INT(idmx_parse_whole("--count", "abc", &idmx_range_count, &v, NULL, 0), -1);
}

static const struct test_case tests[] = {
    TEST(test_json_escape_too_small_is_reported),
    TEST(test_json_escape_quotes_backslash_controls),
    TEST(test_json_escape_utf8),
    TEST(test_inspect_json_members),
    TEST(test_inspect_json_fixed_buffer_overflow_is_enospc),
    TEST(test_whole_junk_is_not_a_whole_number),
    TEST(test_whole_negative_and_overflow_are_out_of_range),
    TEST(test_whole_range_edges),
    TEST(test_ms_options_name_their_unit),
    TEST(test_epoch_unix_ms_negative_and_edges),
    TEST(test_epoch_rfc3339),
    TEST(test_epoch_overflow_and_junk),
    TEST(test_layout_resolve_default_preset_spec),
    TEST(test_layout_resolve_negative_and_rfc3339_epoch),
    TEST(test_layout_resolve_errors_leave_output),
    TEST(test_node_within_layout),
    TEST(test_messages_bounded),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
