/*
 * test_memcache_parser.c - idmintd's memcached request parser
 * (server/memcache/memcache_parser.c): the text commands as memcat,
 * pymemcache and katsubushi's clients send them, keys at and past 250
 * bytes, too many keys, a line too long, binary GET / VERSION / NOOP /
 * QUIT and an unknown opcode, headers that lie, pipelining and every
 * prefix.
 */
#include "testlib.h"

#include "memcache/memcache_parser.h"

static char *input_;

static ptrdiff_t parse_n(const char *text, size_t len, bool binary, idms_mc_request *req,
                         const char **reason)
{
    free(input_);
    input_ = test_exact_copy(text, len);
    return idms_mc_parse(input_, len, binary, req, reason);
}

static int key_is(const idms_mc_request *req, size_t i, const char *want)
{
    return i < req->nkeys && req->keys[i].len == strlen(want) &&
           memcmp(req->keys[i].ptr, want, req->keys[i].len) == 0;
}

/* Every proper prefix is INCOMPLETE, and the whole gives want. */
static int check_prefixes(const char *text, size_t len, bool binary, ptrdiff_t want,
                          const char *want_reason)
{
    idms_mc_request req;
    const char *reason = NULL;
    for (size_t k = 0; k <= len; k++) {
        ptrdiff_t r = parse_n(text, k, binary, &req, &reason);
        if (r == IDMS_MC_INCOMPLETE && k < len) {
            if (reason != NULL || req.nkeys != 0) {
                TEST_REPORT_("prefix %zu: INCOMPLETE with a reason or keys", k);
                return 0;
            }
            continue;
        }
        if (r != want || (want == IDMS_MC_INVALID && strcmp(reason, want_reason) != 0)) {
            TEST_REPORT_("prefix %zu of %zu: got %td (%s), want %td (%s)", k, len, r,
                         reason ? reason : "-", want, want_reason ? want_reason : "-");
            return 0;
        }
    }
    return 1;
}

#define T(s) s, sizeof(s) - 1

static void test_text_commands(void)
{
    idms_mc_request req;
    const char *reason = "x";
    ASSERT_EQ_INT(parse_n(T("get user\r\n"), false, &req, &reason), 10);
    ASSERT_TRUE(reason == NULL);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_GET);
    ASSERT_EQ_INT(req.nkeys, 1);
    ASSERT_TRUE(key_is(&req, 0, "user"));
    ASSERT_EQ_INT(parse_n(T("gets a  uuidv7 ulid\n"), false, &req, &reason), 20);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_GETS);
    ASSERT_EQ_INT(req.nkeys, 3);
    ASSERT_TRUE(key_is(&req, 0, "a") && key_is(&req, 1, "uuidv7") && key_is(&req, 2, "ulid"));
    ASSERT_EQ_INT(parse_n(T("stats\r\n"), false, &req, &reason), 7);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_STATS);
    ASSERT_EQ_INT(req.nkeys, 0);
    ASSERT_EQ_INT(parse_n(T("stats settings\r\n"), false, &req, &reason), 16);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_STATS);
    ASSERT_TRUE(key_is(&req, 0, "settings"));
    ASSERT_EQ_INT(parse_n(T("version\r\n"), false, &req, &reason), 9);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_VERSION);
    ASSERT_EQ_INT(parse_n(T("quit\r\n"), false, &req, &reason), 6);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_QUIT);
    /* Case-sensitive, as memcached; other commands are unknown. */
    ASSERT_EQ_INT(parse_n(T("GET a\r\n"), false, &req, &reason), 7);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_UNKNOWN);
    ASSERT_EQ_INT(parse_n(T("set a 0 0 1\r\n"), false, &req, &reason), 13);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_UNKNOWN);
    ASSERT_EQ_INT(parse_n(T("get\r\n"), false, &req, &reason), 5);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_UNKNOWN); /* memcached: ERROR */
    ASSERT_EQ_INT(parse_n(T("version now\r\n"), false, &req, &reason), 13);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_UNKNOWN);
    ASSERT_EQ_INT(parse_n(T("  \r\n"), false, &req, &reason), 4);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_EMPTY);
    ASSERT_TRUE(check_prefixes(T("get a b c\r\n"), false, 11, NULL));
    ASSERT_TRUE(check_prefixes(T("version\n"), false, 8, NULL));
}

static void test_text_limits(void)
{
    idms_mc_request req;
    const char *reason = NULL;
    char line[IDMS_MC_MAX_LINE + 64];
    /* A key of 250 bytes is fine, 251 is not (memcached's words). */
    memcpy(line, "get ", 4);
    memset(line + 4, 'k', 250);
    memcpy(line + 254, "\r\n", 2);
    ASSERT_EQ_INT(parse_n(line, 256, false, &req, &reason), 256);
    ASSERT_EQ_INT(req.keys[0].len, 250);
    memset(line + 4, 'k', 251);
    memcpy(line + 255, "\r\n", 2);
    ASSERT_EQ_INT(parse_n(line, 257, false, &req, &reason), IDMS_MC_INVALID);
    ASSERT_EQ_STR(reason, "CLIENT_ERROR bad command line format");
    ASSERT_TRUE(
        check_prefixes(line, 257, false, IDMS_MC_INVALID, "CLIENT_ERROR bad command line format"));
    ASSERT_EQ_INT(parse_n(T("get a\tb\r\n"), false, &req, &reason), IDMS_MC_INVALID);
    ASSERT_EQ_INT(req.nkeys, 0);
    /* Keys: 100 is fine, 101 too many. */
    size_t n = 3;
    memcpy(line, "get", 3);
    for (int k = 0; k < 101; k++) {
        memcpy(line + n, " k", 2);
        n += 2;
    }
    memcpy(line + n, "\r\n", 2);
    ASSERT_EQ_INT(parse_n(line, n + 2, false, &req, &reason), IDMS_MC_INVALID);
    ASSERT_EQ_STR(reason, "CLIENT_ERROR too many keys");
    ASSERT_EQ_INT(parse_n(line, n - 2, false, &req, &reason), IDMS_MC_INCOMPLETE);
    memcpy(line + n - 2, "\r\n", 2);
    ASSERT_EQ_INT(parse_n(line, n, false, &req, &reason), (ptrdiff_t)n);
    ASSERT_EQ_INT(req.nkeys, 100);
    /* A line: up to IDMS_MC_MAX_LINE bytes before the LF waits, one more
     * without an LF is refused. */
    memset(line, 'x', IDMS_MC_MAX_LINE + 1);
    ASSERT_EQ_INT(parse_n(line, IDMS_MC_MAX_LINE, false, &req, &reason), IDMS_MC_INCOMPLETE);
    ASSERT_EQ_INT(parse_n(line, IDMS_MC_MAX_LINE + 1, false, &req, &reason), IDMS_MC_INVALID);
    ASSERT_EQ_STR(reason, "CLIENT_ERROR line too long");
    line[IDMS_MC_MAX_LINE] = '\n';
    ASSERT_EQ_INT(parse_n(line, IDMS_MC_MAX_LINE + 1, false, &req, &reason), IDMS_MC_MAX_LINE + 1);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_UNKNOWN);
}

static size_t bin(char *out, uint8_t op, const char *key, uint8_t extras, uint32_t body,
                  uint32_t opaque)
{
    memset(out, 0, IDMS_MC_HEADER);
    size_t klen = key != NULL ? strlen(key) : 0;
    out[0] = (char)0x80;
    out[1] = (char)op;
    out[2] = (char)(klen >> 8);
    out[3] = (char)klen;
    out[4] = (char)extras;
    for (int i = 0; i < 4; i++) {
        out[8 + i] = (char)(body >> (24 - 8 * i));
        out[12 + i] = (char)(opaque >> (24 - 8 * i));
    }
    memset(out + IDMS_MC_HEADER, 'e', extras);
    if (klen > 0)
        memcpy(out + IDMS_MC_HEADER + extras, key, klen);
    return IDMS_MC_HEADER + body;
}

static void test_binary(void)
{
    char b[IDMS_MC_HEADER + IDMS_MC_MAX_BODY + 16];
    idms_mc_request req;
    const char *reason = NULL;
    size_t n = bin(b, IDMS_MC_OP_GET, "uuidv7", 0, 6, 0xdeadbeef);
    ASSERT_EQ_INT(parse_n(b, n, true, &req, &reason), (ptrdiff_t)n);
    ASSERT_TRUE(req.binary);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_GET);
    ASSERT_EQ_U64(req.opaque, 0xdeadbeef);
    ASSERT_TRUE(key_is(&req, 0, "uuidv7"));
    ASSERT_TRUE(check_prefixes(b, n, true, (ptrdiff_t)n, NULL));
    /* GETK: a GET whose reply carries the key; the opcode tells them apart. */
    n = bin(b, IDMS_MC_OP_GETK, "orders", 0, 6, 9);
    ASSERT_EQ_INT(parse_n(b, n, true, &req, &reason), (ptrdiff_t)n);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_GET);
    ASSERT_EQ_INT(req.opcode, IDMS_MC_OP_GETK);
    ASSERT_TRUE(key_is(&req, 0, "orders"));
    n = bin(b, IDMS_MC_OP_GETK, NULL, 0, 0, 1);
    ASSERT_EQ_INT(parse_n(b, n, true, &req, &reason), IDMS_MC_INVALID);
    n = bin(b, IDMS_MC_OP_VERSION, NULL, 0, 0, 7);
    ASSERT_EQ_INT(parse_n(b, n, true, &req, &reason), 24);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_VERSION);
    n = bin(b, IDMS_MC_OP_NOOP, NULL, 0, 0, 7);
    ASSERT_EQ_INT(parse_n(b, n, true, &req, &reason), 24);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_NOOP);
    n = bin(b, IDMS_MC_OP_QUIT, NULL, 0, 0, 7);
    ASSERT_EQ_INT(parse_n(b, n, true, &req, &reason), 24);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_QUIT);
    /* SET (0x01): unknown here, its body consumed. */
    n = bin(b, 0x01, "k", 8, 8 + 1 + 5, 1);
    ASSERT_EQ_INT(parse_n(b, n, true, &req, &reason), (ptrdiff_t)n);
    ASSERT_EQ_INT(req.cmd, IDMS_MC_UNKNOWN);
    ASSERT_EQ_INT(req.opcode, 0x01);
    /* Headers that lie. */
    n = bin(b, IDMS_MC_OP_GET, NULL, 0, 0, 1);
    ASSERT_EQ_INT(parse_n(b, n, true, &req, &reason), IDMS_MC_INVALID);
    ASSERT_EQ_STR(reason, "bad lengths");
    n = bin(b, IDMS_MC_OP_GET, "key", 0, 2, 1);
    ASSERT_EQ_INT(parse_n(b, 26, true, &req, &reason), IDMS_MC_INVALID);
    n = bin(b, IDMS_MC_OP_VERSION, NULL, 0, 3, 1);
    ASSERT_EQ_INT(parse_n(b, n, true, &req, &reason), IDMS_MC_INVALID);
    bin(b, IDMS_MC_OP_GET, "k", 0, IDMS_MC_MAX_BODY + 1, 1);
    ASSERT_EQ_INT(parse_n(b, IDMS_MC_HEADER, true, &req, &reason), IDMS_MC_INVALID);
    ASSERT_EQ_STR(reason, "body too large");
    ASSERT_EQ_INT(parse_n(T("get a\r\n"), true, &req, &reason), IDMS_MC_INVALID);
    ASSERT_EQ_STR(reason, "bad magic");
}

static void test_pipeline(void)
{
    const char text[] = "get a\r\ngets b c\r\nversion\r\n";
    size_t len = sizeof text - 1, at = 0;
    int cmds[3];
    idms_mc_request req;
    free(input_);
    input_ = NULL;
    char *copy = test_exact_copy(text, len);
    for (int i = 0; i < 3; i++) {
        ptrdiff_t r = idms_mc_parse(copy + at, len - at, false, &req, NULL);
        ASSERT_TRUE(r > 0);
        cmds[i] = req.cmd;
        at += (size_t)r;
    }
    free(copy);
    ASSERT_EQ_INT(at, len);
    ASSERT_EQ_INT(cmds[0], IDMS_MC_GET);
    ASSERT_EQ_INT(cmds[1], IDMS_MC_GETS);
    ASSERT_EQ_INT(cmds[2], IDMS_MC_VERSION);
}

static const struct test_case tests[] = {
    TEST(test_text_commands), TEST(test_text_limits), TEST(test_binary), TEST(test_pipeline), {0},
};

int main(int argc, char **argv)
{
    int rc = test_main(argc, argv, tests);
    free(input_);
    return rc;
}
