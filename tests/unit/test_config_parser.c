/*
 * test_config_parser.c - idmintd's config file syntax
 * (server/config/config_parser.c): errors with their line numbers, the
 * limits at and one past, every accepted form of an entry, and the
 * callback's power to stop the parse.
 */
#include "testlib.h"

#include "config/config_parser.h"

#define MAX_ENTRIES 16

/* What the callback saw. */
struct seen {
    size_t n;
    char key[MAX_ENTRIES][64];
    char value[MAX_ENTRIES][IDMS_CONFIG_MAX_LINE + 1];
    size_t value_len[MAX_ENTRIES];
    unsigned line[MAX_ENTRIES];
    size_t stop_at; /* return stop_rc for entry number stop_at (from 1); 0: never */
    int stop_rc;
    int bad; /* a promise of config_parser.h was broken */
};

static int collect(void *ctx, const char *key, size_t key_len, const char *value, size_t value_len,
                   unsigned line)
{
    struct seen *s = ctx;
    if (s->n == MAX_ENTRIES || key_len == 0 || key_len >= sizeof s->key[0] ||
        value_len > IDMS_CONFIG_MAX_LINE || value[value_len] != '\0' ||
        strlen(value) != value_len) {
        s->bad = 1;
        return 99;
    }
    memcpy(s->key[s->n], key, key_len);
    s->key[s->n][key_len] = '\0';
    memcpy(s->value[s->n], value, value_len + 1);
    s->value_len[s->n] = value_len;
    s->line[s->n] = line;
    s->n++;
    if (s->stop_at == s->n)
        return s->stop_rc;
    return 0;
}

static struct seen seen_;

/* Parses an exact-size copy of text[0..len). */
static int parse_n(const char *text, size_t len, unsigned *line, char *err, size_t err_cap)
{
    char *copy = test_exact_copy(text, len);
    int stop_at = (int)seen_.stop_at;
    int stop_rc = seen_.stop_rc;
    memset(&seen_, 0, sizeof seen_);
    seen_.stop_at = (size_t)stop_at;
    seen_.stop_rc = stop_rc;
    int rc = idms_config_parse(copy, len, collect, &seen_, line, err, err_cap);
    free(copy);
    return rc;
}

static int parse(const char *text, unsigned *line, char *err, size_t err_cap)
{
    return parse_n(text, strlen(text), line, err, err_cap);
}

/* ---- errors first ----------------------------------------------------------- */

#define T(s) s, sizeof(s) - 1

static const struct {
    const char *text;
    size_t len;
    unsigned line;
    const char *err;
} bad_cases[] = {
    {T("http = a\nHTTP = b\n"), 2,
     "invalid character 'H' in key at column 1 (keys are lowercase letters, digits and '-')"},
    {T("a_b = 1"), 1,
     "invalid character '_' in key at column 2 (keys are lowercase letters, digits and '-')"},
    {T("# c\n\n  = x\n"), 3, "missing key before '=' at column 3"},
    {T("a = 1\nnode\n"), 2, "missing value for 'node' (write \"node = value\")"},
    {T("node   # the node\n"), 1, "missing value for 'node' (write \"node = value\")"},
    {T("a = \"x"), 1, "unterminated quoted value (opened at column 5)"},
    {T("a = \"x\\"), 1, "unterminated quoted value (opened at column 5)"},
    {T("a = \"x\\n\""), 1, "unknown escape \\'n' at column 7 (only \\\" and \\\\ are escapes)"},
    {T("a = \"x\" y"), 1, "unexpected text after the closing quote at column 9"},
    {T("a = \"x\"\"y\""), 1, "unexpected text after the closing quote at column 8"},
    {T("a = b\x01"), 1, "control character 0x01 at column 6"},
    {T("a = b\rc\n"), 1, "control character 0x0d at column 6"},
    {T("a = \"\0\""), 1, "control character 0x00 at column 6"},
    {T("\n\n# \x7f\n"), 3, "control character 0x7f at column 3"},
    {T("a = b\n\xef\xbb\xbf c = d\n"), 2,
     "invalid character 0xef in key at column 1 (keys are lowercase letters, digits and '-')"},
};

static void config_reports_syntax_errors_with_line_numbers(void)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        unsigned line = 12345;
        char err[160];
        int rc = parse_n(bad_cases[i].text, bad_cases[i].len, &line, err, sizeof err);
        if (rc != -1 || line != bad_cases[i].line || strcmp(err, bad_cases[i].err) != 0)
            TEST_FAIL_("case %zu: rc %d line %u err \"%s\", want line %u \"%s\"", i, rc, line, err,
                       bad_cases[i].line, bad_cases[i].err);
    }
    /* Entries before the error have been passed on. */
    unsigned line = 0;
    ASSERT_EQ_INT(parse("http = a\nresp = b\nHTTP = c\nnode = 1\n", &line, NULL, 0), -1);
    ASSERT_EQ_INT(line, 3);
    ASSERT_EQ_U64(seen_.n, 2);
}

static void config_line_limit_at_and_one_past(void)
{
    /* "a = " + value, exactly the limit; then one byte more. */
    size_t max = IDMS_CONFIG_MAX_LINE;
    char *text = malloc(max + 8);
    if (text == NULL)
        abort();
    memcpy(text, "a = ", 4);
    memset(text + 4, 'v', max - 4);
    memcpy(text + max, "\r\n", 2);
    unsigned line = 0;
    char err[128];
    ASSERT_EQ_INT(parse_n(text, max + 2, &line, err, sizeof err), 0);
    ASSERT_EQ_U64(seen_.n, 1);
    ASSERT_EQ_U64(seen_.value_len[0], max - 4);
    ASSERT_EQ_INT(parse_n(text, max, &line, err, sizeof err), 0);
    ASSERT_EQ_U64(seen_.value_len[0], max - 4);
    text[max] = 'v';
    memcpy(text + max + 1, "\r\n", 2);
    ASSERT_EQ_INT(parse_n(text, max + 3, &line, err, sizeof err), -1);
    ASSERT_EQ_STR(err, "line is longer than 4096 bytes");
    ASSERT_EQ_INT(line, 1);
    ASSERT_EQ_INT(parse_n(text, max + 1, &line, err, sizeof err), -1);
    /* The longest quoted value decodes into the scratch buffer. */
    memcpy(text, "a \"", 3);
    memset(text + 3, 'q', max - 4);
    text[max - 1] = '"';
    ASSERT_EQ_INT(parse_n(text, max, &line, err, sizeof err), 0);
    ASSERT_EQ_U64(seen_.value_len[0], max - 4);
    free(text);
}

static void config_file_limit_at_and_one_past(void)
{
    size_t max = IDMS_CONFIG_MAX_FILE;
    char *text = malloc(max + 1);
    if (text == NULL)
        abort();
    /* Comment lines of 1024 bytes, then one entry at the very end. */
    for (size_t i = 0; i < max; i += 1024) {
        memset(text + i, ' ', 1023);
        text[i] = '#';
        text[i + 1023] = '\n';
    }
    memcpy(text + max - 6, "\na = b", 6);
    unsigned line = 0;
    char err[128];
    ASSERT_EQ_INT(parse_n(text, max, &line, err, sizeof err), 0);
    ASSERT_EQ_U64(seen_.n, 1);
    ASSERT_EQ_INT(line, 1025);
    ASSERT_EQ_INT(seen_.line[0], 1025);
    text[max] = '\n';
    ASSERT_EQ_INT(parse_n(text, max + 1, &line, err, sizeof err), -1);
    ASSERT_EQ_STR(err, "config file is larger than 1048576 bytes");
    ASSERT_EQ_INT(line, 0);
    ASSERT_EQ_U64(seen_.n, 0);
    free(text);
}

static void config_error_buffer_is_truncated_and_optional(void)
{
    char err[5];
    memset(err, '#', sizeof err);
    ASSERT_EQ_INT(parse("A = 1", NULL, err, sizeof err), -1);
    ASSERT_EQ_STR(err, "inva");
    ASSERT_EQ_INT(parse("A = 1", NULL, NULL, 0), -1);
    char one[1] = {'#'};
    ASSERT_EQ_INT(parse("A = 1", NULL, one, 0), -1);
    ASSERT_EQ_INT(one[0], '#');
    ASSERT_EQ_INT(parse("A = 1", NULL, one, 1), -1);
    ASSERT_EQ_INT(one[0], '\0');
}

/* ---- entries --------------------------------------------------------------- */

static void config_parses_entries_in_order(void)
{
    static const char text[] = "\xef\xbb\xbf# idmintd.conf\r\n"
                               "\r\n"
                               "http = 127.0.0.1:8080\r\n"
                               "  resp\t127.0.0.1:6380   # the '=' is optional\n"
                               "node=42\n"
                               "   # indented comment\n"
                               "layout = \"41:10:12\"\n"
                               "state-dir = /var/lib/idmintd\n"
                               "max-rewind = 10";
    unsigned line = 0;
    char err[128] = "junk";
    ASSERT_EQ_INT(parse(text, &line, err, sizeof err), 0);
    ASSERT_EQ_STR(err, "");
    ASSERT_EQ_INT(line, 9);
    ASSERT_EQ_U64(seen_.n, 6);
    static const char *const keys[] = {"http", "resp", "node", "layout", "state-dir", "max-rewind"};
    static const char *const values[] = {"127.0.0.1:8080", "127.0.0.1:6380",   "42",
                                         "41:10:12",       "/var/lib/idmintd", "10"};
    static const unsigned lines[] = {3, 4, 5, 7, 8, 9};
    for (size_t i = 0; i < 6; i++) {
        ASSERT_EQ_STR(seen_.key[i], keys[i]);
        ASSERT_EQ_STR(seen_.value[i], values[i]);
        ASSERT_EQ_INT(seen_.line[i], lines[i]);
    }
    ASSERT_TRUE(!seen_.bad);
}

static void config_value_forms(void)
{
    static const struct {
        const char *line;
        const char *value;
    } cases[] = {
        {"a = b", "b"},
        {"a=b", "b"},
        {"a b", "b"},
        {"a\tb", "b"},
        {"  a  =  b  c  ", "b  c"},
        {"a =", ""},
        {"a = ", ""},
        {"a = \"\"", ""},
        {"a = # only a comment", ""},
        {"a=#x", ""},
        {"a = b#c", "b#c"},
        {"a = b #c", "b"},
        {"a = b\t#c", "b"},
        {"a = \"b #c\" # d", "b #c"},
        {"a \"q\"", "q"},
        {"a = x = y", "x = y"},
        {"a == y", "= y"},
        {"a = \"\\\"\\\\\"", "\"\\"},
        {"a = \"  padded  \"  ", "  padded  "},
        {"a = b\"c", "b\"c"},
        {"a = b\\n", "b\\n"},
        {"prefix = caf\xc3\xa9", "caf\xc3\xa9"},
        {"0-9 = 1", "1"},
        {"a = b\r", "b"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[128];
        int rc = parse(cases[i].line, NULL, err, sizeof err);
        if (rc != 0 || seen_.n != 1 || strcmp(seen_.value[0], cases[i].value) != 0)
            TEST_FAIL_("case %zu \"%s\": rc %d (%s), %zu entries, value \"%s\"", i, cases[i].line,
                       rc, rc ? err : "", seen_.n, seen_.n ? seen_.value[0] : "");
    }
}

static void config_empty_and_comment_only_files(void)
{
    unsigned line = 99;
    ASSERT_EQ_INT(parse("", &line, NULL, 0), 0);
    ASSERT_EQ_INT(line, 0);
    ASSERT_EQ_INT(parse("\n\n", &line, NULL, 0), 0);
    ASSERT_EQ_INT(line, 2);
    ASSERT_EQ_INT(parse("# a\n  # b\n\t\n", &line, NULL, 0), 0);
    ASSERT_EQ_INT(line, 3);
    ASSERT_EQ_U64(seen_.n, 0);
    ASSERT_EQ_INT(parse("\xef\xbb\xbf", &line, NULL, 0), 0);
    ASSERT_EQ_INT(line, 0);
}

static void config_callback_can_stop_the_parse(void)
{
    unsigned line = 0;
    char err[64] = "junk";
    seen_.stop_at = 2;
    seen_.stop_rc = 7;
    ASSERT_EQ_INT(parse("a = 1\n\nb = 2\nc = 3\n", &line, err, sizeof err), 7);
    seen_.stop_at = 0;
    ASSERT_EQ_INT(line, 3);
    ASSERT_EQ_U64(seen_.n, 2);
    ASSERT_EQ_STR(err, "");
    /* ... even before a syntax error further down. */
    seen_.stop_at = 1;
    seen_.stop_rc = 3;
    ASSERT_EQ_INT(parse("a = 1\nB = 2\n", &line, err, sizeof err), 3);
    seen_.stop_at = 0;
    ASSERT_EQ_INT(line, 1);
}

static const struct test_case tests[] = {
    TEST(config_reports_syntax_errors_with_line_numbers),
    TEST(config_line_limit_at_and_one_past),
    TEST(config_file_limit_at_and_one_past),
    TEST(config_error_buffer_is_truncated_and_optional),
    TEST(config_parses_entries_in_order),
    TEST(config_value_forms),
    TEST(config_empty_and_comment_only_files),
    TEST(config_callback_can_stop_the_parse),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
