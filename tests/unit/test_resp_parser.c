/*
 * test_resp_parser.c - idmintd's RESP2 request parser
 * (server/resp/resp_parser.c): malformed counts and lengths, multibulk and
 * inline commands as redis-cli and redis-benchmark send them, pipelining,
 * every prefix, and the limits at and one past.
 */
#include "testlib.h"

#include "resp/resp_parser.h"

/* The input, in an allocation of exactly its size (test_exact_copy), kept
 * until the next parse because the arguments point into it. */
static char *input_;

static ptrdiff_t parse_n(const char *text, size_t len, idms_resp_command *cmd, const char **reason)
{
    free(input_);
    input_ = test_exact_copy(text, len);
    return idms_resp_parse(input_, len, cmd, reason);
}

static int arg_is(const idms_resp_command *cmd, size_t i, const char *want)
{
    return i < cmd->argc && cmd->argv[i].len == strlen(want) &&
           memcmp(cmd->argv[i].ptr, want, cmd->argv[i].len) == 0;
}

/* Every proper prefix of text[0..len) is INCOMPLETE or gives the whole
 * input's answer, which is want (with want_reason when INVALID). */
static int check_prefixes(const char *text, size_t len, ptrdiff_t want, const char *want_reason)
{
    idms_resp_command cmd;
    const char *reason = NULL;
    for (size_t k = 0; k <= len; k++) {
        ptrdiff_t r = parse_n(text, k, &cmd, &reason);
        if (r == IDMS_RESP_INCOMPLETE && k < len) {
            if (reason != NULL || cmd.argc != 0) {
                TEST_REPORT_("prefix %zu: INCOMPLETE with a reason or arguments", k);
                return 0;
            }
            continue;
        }
        if (r != want || (want == IDMS_RESP_INVALID && strcmp(reason, want_reason) != 0)) {
            TEST_REPORT_("prefix %zu of %zu: got %td (%s), want %td (%s)", k, len, r,
                         reason ? reason : "-", want, want_reason ? want_reason : "-");
            return 0;
        }
    }
    return 1;
}

/* ---- refusals first ----------------------------------------------------- */

#define T(s) s, sizeof(s) - 1

static const struct {
    const char *text;
    size_t len;
    const char *reason;
} bad_cases[] = {
    /* counts */
    {T("*x\r\n"), "Protocol error: invalid multibulk length"},
    {T("*\r\n"), "Protocol error: invalid multibulk length"},
    {T("*01\r\n"), "Protocol error: invalid multibulk length"},
    {T("*-0\r\n"), "Protocol error: invalid multibulk length"},
    {T("*-\r\n"), "Protocol error: invalid multibulk length"},
    {T("*+1\r\n"), "Protocol error: invalid multibulk length"},
    {T("* 1\r\n"), "Protocol error: invalid multibulk length"},
    {T("*1 \r\n"), "Protocol error: invalid multibulk length"},
    {T("*1\n$4\nPING\n"), "Protocol error: invalid multibulk length"},
    {T("*1\rx"), "Protocol error: invalid multibulk length"},
    {T("*65\r\n"), "Protocol error: invalid multibulk length"},
    {T("*99999999999999999999\r\n"), "Protocol error: invalid multibulk length"},
    {T("*-9223372036854775809\r\n"), "Protocol error: invalid multibulk length"},
    /* bulks */
    {T("*1\r\nPING\r\n"), "Protocol error: expected '$', got 'P'"},
    {T("*2\r\n$1\r\na\r\n:1\r\n"), "Protocol error: expected '$', got ':'"},
    {T("*1\r\n\r\n"), "Protocol error: expected '$', got something else"},
    {T("*1\r\n\x80"), "Protocol error: expected '$', got something else"},
    {T("*1\r\n$-1\r\n"), "Protocol error: invalid bulk length"},
    {T("*1\r\n$\r\n\r\n"), "Protocol error: invalid bulk length"},
    {T("*1\r\n$x\r\n"), "Protocol error: invalid bulk length"},
    {T("*1\r\n$04\r\nPING\r\n"), "Protocol error: invalid bulk length"},
    {T("*1\r\n$4\nPING\r\n"), "Protocol error: invalid bulk length"},
    {T("*1\r\n$65537\r\n"), "Protocol error: invalid bulk length"},
    {T("*1\r\n$18446744073709551616\r\n"), "Protocol error: invalid bulk length"},
    /* the CRLF after a bulk argument */
    {T("*1\r\n$4\r\nPINGxx"), "Protocol error: expected CRLF after bulk argument"},
    {T("*1\r\n$4\r\nPING\n"), "Protocol error: expected CRLF after bulk argument"},
    {T("*1\r\n$4\r\nPING\rx"), "Protocol error: expected CRLF after bulk argument"},
    {T("*1\r\n$3\r\nPING\r\n"), "Protocol error: expected CRLF after bulk argument"},
};

static void resp_rejects_malformed_frames_with_redis_wording(void)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        idms_resp_command cmd;
        const char *reason = NULL;
        ptrdiff_t r = parse_n(bad_cases[i].text, bad_cases[i].len, &cmd, &reason);
        if (r != IDMS_RESP_INVALID || reason == NULL || strcmp(reason, bad_cases[i].reason) != 0)
            TEST_FAIL_("case %zu: got %td (%s), want \"%s\"", i, r, reason ? reason : "-",
                       bad_cases[i].reason);
        ASSERT_EQ_U64(cmd.argc, 0);
        if (!check_prefixes(bad_cases[i].text, bad_cases[i].len, IDMS_RESP_INVALID,
                            bad_cases[i].reason))
            TEST_FAIL_("case %zu", i);
    }
}

static void resp_reason_may_be_null(void)
{
    idms_resp_command cmd;
    ASSERT_EQ_INT(parse_n(T("*x\r\n"), &cmd, NULL), IDMS_RESP_INVALID);
    ASSERT_EQ_INT(parse_n(T("PING\r\n"), &cmd, NULL), 6);
    const char *reason = "stale";
    ASSERT_EQ_INT(parse_n(T("PING\r\n"), &cmd, &reason), 6);
    ASSERT_TRUE(reason == NULL);
    reason = "stale";
    ASSERT_EQ_INT(parse_n(T("PI"), &cmd, &reason), IDMS_RESP_INCOMPLETE);
    ASSERT_TRUE(reason == NULL);
}

/* ---- valid commands ------------------------------------------------------- */

static void resp_parses_what_redis_tools_send(void)
{
    idms_resp_command cmd;
    const char *reason = NULL;
    /* redis-benchmark's side connection, then its PING and our NEXT. */
    ASSERT_EQ_INT(parse_n(T("*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$4\r\nsave\r\n"), &cmd, &reason),
                  35);
    ASSERT_EQ_U64(cmd.argc, 3);
    ASSERT_TRUE(arg_is(&cmd, 0, "CONFIG"));
    ASSERT_TRUE(arg_is(&cmd, 1, "GET"));
    ASSERT_TRUE(arg_is(&cmd, 2, "save"));
    ASSERT_TRUE(cmd.argv[0].ptr == input_ + 8);
    ASSERT_EQ_INT(parse_n(T("*1\r\n$4\r\nPING\r\n"), &cmd, &reason), 14);
    ASSERT_EQ_U64(cmd.argc, 1);
    ASSERT_TRUE(arg_is(&cmd, 0, "PING"));
    ASSERT_EQ_INT(parse_n(T("*2\r\n$4\r\nNEXT\r\n$9\r\nsnowflake\r\n"), &cmd, &reason), 29);
    ASSERT_TRUE(arg_is(&cmd, 1, "snowflake"));
    /* redis-cli asks for command docs when it starts. */
    ASSERT_EQ_INT(parse_n(T("*2\r\n$7\r\nCOMMAND\r\n$4\r\nDOCS\r\n"), &cmd, &reason), 27);
    ASSERT_TRUE(arg_is(&cmd, 0, "COMMAND"));
    /* Binary-safe: CR, LF and NUL inside an argument, and an empty one. */
    ASSERT_EQ_INT(parse_n(T("*2\r\n$4\r\na\r\n\0\r\n$0\r\n\r\n"), &cmd, &reason), 20);
    ASSERT_EQ_U64(cmd.argc, 2);
    ASSERT_EQ_U64(cmd.argv[0].len, 4);
    ASSERT_EQ_MEM(cmd.argv[0].ptr, "a\r\n\0", 4);
    ASSERT_EQ_U64(cmd.argv[1].len, 0);
}

static void resp_empty_commands_are_consumed(void)
{
    static const struct {
        const char *text;
        size_t len;
    } cases[] = {
        {T("*0\r\n")}, {T("*-1\r\n")}, {T("*-9223372036854775808\r\n")},
        {T("\r\n")},   {T("\n")},      {T(" \t \r\n")},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        idms_resp_command cmd;
        const char *reason = NULL;
        ptrdiff_t r = parse_n(cases[i].text, cases[i].len, &cmd, &reason);
        if (r != (ptrdiff_t)cases[i].len || cmd.argc != 0)
            TEST_FAIL_("case %zu: got %td argc %zu", i, r, cmd.argc);
    }
}

static void resp_inline_commands_split_on_blanks(void)
{
    idms_resp_command cmd;
    const char *reason = NULL;
    ASSERT_EQ_INT(parse_n(T("PING\r\n"), &cmd, &reason), 6);
    ASSERT_EQ_U64(cmd.argc, 1);
    ASSERT_TRUE(arg_is(&cmd, 0, "PING"));
    ASSERT_EQ_INT(parse_n(T("NEXT snowflake 5\n"), &cmd, &reason), 17);
    ASSERT_EQ_U64(cmd.argc, 3);
    ASSERT_TRUE(arg_is(&cmd, 2, "5"));
    ASSERT_EQ_INT(parse_n(T("  NEXT\t\v\f snowflake  \r\n"), &cmd, &reason), 23);
    ASSERT_EQ_U64(cmd.argc, 2);
    ASSERT_TRUE(arg_is(&cmd, 0, "NEXT"));
    ASSERT_TRUE(arg_is(&cmd, 1, "snowflake"));
    /* A CR inside the line separates, as isspace() does for Redis. */
    ASSERT_EQ_INT(parse_n(T("a\rb\r\r\n"), &cmd, &reason), 6);
    ASSERT_EQ_U64(cmd.argc, 2);
    ASSERT_TRUE(arg_is(&cmd, 1, "b"));
    /* Quotes are not interpreted. */
    ASSERT_EQ_INT(parse_n(T("SET \"a b\"\n"), &cmd, &reason), 10);
    ASSERT_EQ_U64(cmd.argc, 3);
    ASSERT_TRUE(arg_is(&cmd, 1, "\"a"));
    ASSERT_TRUE(arg_is(&cmd, 2, "b\""));
    /* Only the first line is the command. */
    ASSERT_EQ_INT(parse_n(T("PING\nPING\n"), &cmd, &reason), 5);
}

/* redis-benchmark -P 3 writes its commands back to back; a telnet user may
 * mix in an inline one. */
static void resp_parses_pipelined_commands_in_turn(void)
{
    static const char text[] = "*2\r\n$4\r\nNEXT\r\n$9\r\nsnowflake\r\n"
                               "*0\r\n"
                               "*2\r\n$4\r\nNEXT\r\n$9\r\nsnowflake\r\n"
                               "PING\r\n"
                               "*1\r\n$4\r\nQUIT\r\n";
    size_t len = sizeof text - 1;
    free(input_);
    input_ = test_exact_copy(text, len);
    static const size_t argcs[] = {2, 0, 2, 1, 1};
    size_t pos = 0;
    for (size_t i = 0; i < 5; i++) {
        idms_resp_command cmd;
        const char *reason = NULL;
        ptrdiff_t r = idms_resp_parse(input_ + pos, len - pos, &cmd, &reason);
        if (r <= 0 || cmd.argc != argcs[i])
            TEST_FAIL_("command %zu at %zu: %td argc %zu", i, pos, r, cmd.argc);
        pos += (size_t)r;
    }
    ASSERT_EQ_U64(pos, len);
}

static void resp_every_prefix_of_a_valid_command_is_incomplete(void)
{
    static const struct {
        const char *text;
        size_t len;
    } cases[] = {
        {T("*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$10\r\nappendonly\r\n")},
        {T("*1\r\n$4\r\nPING\r\n")},
        {T("*2\r\n$4\r\nNEXT\r\n$9\r\nsnowflake\r\n")},
        {T("*3\r\n$4\r\nNEXT\r\n$6\r\nuuidv7\r\n$3\r\n100\r\n")},
        {T("*-1\r\n")},
        {T("NEXT snowflake\r\n")},
        {T("PING\n")},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!check_prefixes(cases[i].text, cases[i].len, (ptrdiff_t)cases[i].len, NULL))
            TEST_FAIL_("case %zu", i);
    }
}

/* ---- limits --------------------------------------------------------------- */

/* A multibulk of n arguments of arg_len bytes each, in a malloc'd buffer
 * (the caller frees it); *len gets its length. */
static char *build_multibulk(size_t n, size_t arg_len, size_t *len)
{
    size_t cap = 32 + n * (arg_len + 32);
    char *buf = malloc(cap);
    if (buf == NULL)
        abort();
    size_t pos = (size_t)snprintf(buf, cap, "*%zu\r\n", n);
    for (size_t i = 0; i < n; i++) {
        pos += (size_t)snprintf(buf + pos, cap - pos, "$%zu\r\n", arg_len);
        memset(buf + pos, 'x', arg_len);
        pos += arg_len;
        buf[pos++] = '\r';
        buf[pos++] = '\n';
    }
    *len = pos;
    return buf;
}

static void resp_argument_count_limit_at_and_one_past(void)
{
    idms_resp_command cmd;
    const char *reason = NULL;
    size_t len = 0;
    char *text = build_multibulk(IDMS_RESP_MAX_ARGS, 1, &len);
    ASSERT_EQ_INT(parse_n(text, len, &cmd, &reason), (ptrdiff_t)len);
    ASSERT_EQ_U64(cmd.argc, IDMS_RESP_MAX_ARGS);
    free(text);
    text = build_multibulk(IDMS_RESP_MAX_ARGS + 1, 1, &len);
    /* Refused at the count line, before the arguments arrive. */
    ASSERT_EQ_INT(parse_n(text, 5, &cmd, &reason), IDMS_RESP_INVALID);
    ASSERT_EQ_STR(reason, "Protocol error: invalid multibulk length");
    free(text);

    /* Inline: 64 words, then 65. */
    char line[IDMS_RESP_MAX_ARGS * 2 + 8];
    size_t n = 0;
    for (int i = 0; i < IDMS_RESP_MAX_ARGS; i++) {
        line[n++] = 'a';
        line[n++] = ' ';
    }
    line[n] = '\n';
    ASSERT_EQ_INT(parse_n(line, n + 1, &cmd, &reason), (ptrdiff_t)(n + 1));
    ASSERT_EQ_U64(cmd.argc, IDMS_RESP_MAX_ARGS);
    line[n++] = 'b';
    line[n] = '\n';
    ASSERT_EQ_INT(parse_n(line, n + 1, &cmd, &reason), IDMS_RESP_INVALID);
    ASSERT_EQ_STR(reason, "Protocol error: too many arguments in inline request");
}

static void resp_bulk_length_limit_at_and_one_past(void)
{
    idms_resp_command cmd;
    const char *reason = NULL;
    size_t len = 0;
    char *text = build_multibulk(1, IDMS_RESP_MAX_BULK, &len);
    ASSERT_EQ_INT(parse_n(text, len, &cmd, &reason), (ptrdiff_t)len);
    ASSERT_EQ_U64(cmd.argv[0].len, IDMS_RESP_MAX_BULK);
    ASSERT_EQ_INT(parse_n(text, len - 1, &cmd, &reason), IDMS_RESP_INCOMPLETE);
    free(text);
    text = build_multibulk(1, IDMS_RESP_MAX_BULK + 1, &len);
    ASSERT_EQ_INT(parse_n(text, len, &cmd, &reason), IDMS_RESP_INVALID);
    ASSERT_EQ_STR(reason, "Protocol error: invalid bulk length");
    /* Refused at the length line: no need to wait for the data. */
    ASSERT_EQ_INT(parse_n(text, 12, &cmd, &reason), IDMS_RESP_INVALID);
    free(text);
}

static void resp_inline_length_limit_at_and_one_past(void)
{
    idms_resp_command cmd;
    const char *reason = NULL;
    size_t max = IDMS_RESP_MAX_INLINE;
    char *line = malloc(max + 8);
    if (line == NULL)
        abort();
    memset(line, 'a', max + 8);
    /* exactly the limit, with CRLF and with LF */
    line[max] = '\r';
    line[max + 1] = '\n';
    ASSERT_EQ_INT(parse_n(line, max + 2, &cmd, &reason), (ptrdiff_t)(max + 2));
    ASSERT_EQ_U64(cmd.argv[0].len, max);
    line[max] = '\n';
    ASSERT_EQ_INT(parse_n(line, max + 1, &cmd, &reason), (ptrdiff_t)(max + 1));
    /* one past */
    line[max] = 'a';
    line[max + 1] = '\n';
    ASSERT_EQ_INT(parse_n(line, max + 2, &cmd, &reason), IDMS_RESP_INVALID);
    ASSERT_EQ_STR(reason, "Protocol error: too big inline request");
    line[max + 1] = '\r';
    line[max + 2] = '\n';
    ASSERT_EQ_INT(parse_n(line, max + 3, &cmd, &reason), IDMS_RESP_INVALID);
    /* no line end: incomplete while it could still fit, then refused */
    memset(line, 'a', max + 8);
    ASSERT_EQ_INT(parse_n(line, max + 1, &cmd, &reason), IDMS_RESP_INCOMPLETE);
    ASSERT_EQ_INT(parse_n(line, max + 2, &cmd, &reason), IDMS_RESP_INVALID);
    ASSERT_EQ_STR(reason, "Protocol error: too big inline request");
    free(line);
}

static void resp_max_command_is_the_largest_command(void)
{
    idms_resp_command cmd;
    const char *reason = NULL;
    size_t len = 0;
    char *text = build_multibulk(IDMS_RESP_MAX_ARGS, IDMS_RESP_MAX_BULK, &len);
    ASSERT_EQ_U64(len, IDMS_RESP_MAX_COMMAND);
    ASSERT_EQ_INT(parse_n(text, len, &cmd, &reason), (ptrdiff_t)len);
    ASSERT_EQ_U64(cmd.argc, IDMS_RESP_MAX_ARGS);
    ASSERT_EQ_INT(parse_n(text, len - 1, &cmd, &reason), IDMS_RESP_INCOMPLETE);
    free(text);
}

static const struct test_case tests[] = {
    TEST(resp_rejects_malformed_frames_with_redis_wording),
    TEST(resp_reason_may_be_null),
    TEST(resp_parses_what_redis_tools_send),
    TEST(resp_empty_commands_are_consumed),
    TEST(resp_inline_commands_split_on_blanks),
    TEST(resp_parses_pipelined_commands_in_turn),
    TEST(resp_every_prefix_of_a_valid_command_is_incomplete),
    TEST(resp_argument_count_limit_at_and_one_past),
    TEST(resp_bulk_length_limit_at_and_one_past),
    TEST(resp_inline_length_limit_at_and_one_past),
    TEST(resp_max_command_is_the_largest_command),
    {0},
};

int main(int argc, char **argv)
{
    int rc = test_main(argc, argv, tests);
    free(input_);
    return rc;
}
