/*
 * test_http_parser.c - idmintd's HTTP/1.x request-head parser and helpers
 * (server/http/http_parser.c): every refusal with its status, the limits at
 * and one past, pipelining, every prefix of valid and invalid heads, and the
 * target, query, percent-decoding and Accept helpers.
 */
#include "testlib.h"

#include "http/http_parser.h"

/* The parser's input lives in an allocation of exactly its size
 * (test_exact_copy), so ASan catches a read past len; the request's
 * pointers point into it, so it stays alive until the next parse. */
static char *input_;
static size_t input_len_;

static ptrdiff_t parse_n(const char *text, size_t len, idms_http_request *req, int *status,
                         const char **reason)
{
    free(input_);
    input_ = test_exact_copy(text, len);
    input_len_ = len;
    return idms_http_parse_request(input_, len, req, status, reason);
}

static ptrdiff_t parse(const char *text, idms_http_request *req, int *status, const char **reason)
{
    return parse_n(text, strlen(text), req, status, reason);
}

/* 1 when p[0..n) is the NUL-terminated want. */
static int span_is(const char *p, size_t n, const char *want)
{
    return strlen(want) == n && memcmp(p, want, n) == 0;
}

/* Checks that every proper prefix of text[0..len) is INCOMPLETE and the whole
 * gives want (a length, or INVALID with want_status). Returns 1 or reports. */
static int check_prefixes(const char *text, size_t len, ptrdiff_t want, int want_status)
{
    idms_http_request req;
    int status = -1;
    const char *reason = NULL;
    for (size_t k = 0; k < len; k++) {
        ptrdiff_t r = parse_n(text, k, &req, &status, &reason);
        if (r == IDMS_HTTP_INCOMPLETE) {
            if (status != 0 || reason != NULL) {
                TEST_REPORT_("prefix %zu: INCOMPLETE with status %d", k, status);
                return 0;
            }
            continue;
        }
        /* A decision on a prefix must be the whole input's decision. */
        if (r != want || (want == IDMS_HTTP_INVALID && status != want_status)) {
            TEST_REPORT_("prefix %zu of %zu: got %td status %d, whole wants %td status %d", k, len,
                         r, status, want, want_status);
            return 0;
        }
    }
    ptrdiff_t r = parse_n(text, len, &req, &status, &reason);
    if (r != want || (want == IDMS_HTTP_INVALID && status != want_status)) {
        TEST_REPORT_("whole: got %td status %d (%s), want %td status %d", r, status,
                     reason ? reason : "-", want, want_status);
        return 0;
    }
    return 1;
}

/* ---- refusals first ----------------------------------------------------- */

struct bad_case {
    const char *text;
    size_t len;
    int status;
    const char *reason;
};

/* The text and its length (the texts may hold NUL bytes). */
#define T(s) s, sizeof(s) - 1

static const struct bad_case bad_cases[] = {
    /* request-line */
    {T("GET  / HTTP/1.1\r\nHost: a\r\n\r\n"), 400, "malformed request line"},
    {T(" GET / HTTP/1.1\r\nHost: a\r\n\r\n"), 400, "malformed request line"},
    {T("GET / HTTP/1.1 \r\nHost: a\r\n\r\n"), 400, "malformed HTTP version"},
    {T("GET /\tx HTTP/1.1\r\nHost: a\r\n\r\n"), 400, "invalid character in request target"},
    {T("GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n"), 400, "invalid character in request target"},
    {T("GET /\x7f HTTP/1.1\r\nHost: a\r\n\r\n"), 400, "invalid character in request target"},
    {T("GET /\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n"), 400, "invalid character in request target"},
    {T("GET /\0 HTTP/1.1\r\nHost: a\r\n\r\n"), 400, "invalid character in request target"},
    {T("GET /\r\n\r\n"), 400, "invalid character in request target"},
    {T("GET\r\n\r\n"), 400, "invalid character in method"},
    {T("G(T / HTTP/1.1\r\nHost: a\r\n\r\n"), 400, "invalid character in method"},
    {T("GET / http/1.1\r\nHost: a\r\n\r\n"), 400, "malformed HTTP version"},
    {T("GET / HTTP/1.10\r\nHost: a\r\n\r\n"), 400, "malformed HTTP version"},
    {T("GET / HTTP/1\r\nHost: a\r\n\r\n"), 400, "malformed HTTP version"},
    {T("GET / HTTP/x.1\r\nHost: a\r\n\r\n"), 400, "malformed HTTP version"},
    {T("GET / HTTP/1.1\rHost: a\r\n\r\n"), 400, "bare CR in request head"},
    {T("\r\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"), 400, "bare CR in request head"},
    {T("GET / HTTP/2.0\r\nHost: a\r\n\r\n"), 505, "HTTP version not supported"},
    {T("GET / HTTP/0.9\r\n\r\n"), 505, "HTTP version not supported"},
    /* header lines */
    {T("GET / HTTP/1.1\r\nHost : a\r\n\r\n"), 400, "whitespace before colon in header field"},
    {T("GET / HTTP/1.1\r\nHost\t: a\r\n\r\n"), 400, "whitespace before colon in header field"},
    {T("GET / HTTP/1.1\r\nHost: a\r\nX: b\r\n c\r\n\r\n"), 400,
     "header line starts with whitespace (obs-fold)"},
    {T("GET / HTTP/1.1\r\n Host: a\r\n\r\n"), 400, "header line starts with whitespace (obs-fold)"},
    {T("GET / HTTP/1.1\r\n: a\r\nHost: a\r\n\r\n"), 400, "empty header field name"},
    {T("GET / HTTP/1.1\r\nHost\r\n\r\n"), 400, "invalid character in header field name"},
    {T("GET / HTTP/1.1\r\nHo(st: a\r\n\r\n"), 400, "invalid character in header field name"},
    {T("GET / HTTP/1.1\r\nHost: a\x01\r\n\r\n"), 400, "invalid character in header field value"},
    {T("GET / HTTP/1.1\r\nHost: a\x7f\r\n\r\n"), 400, "invalid character in header field value"},
    {T("GET / HTTP/1.1\r\nHost: a\0\r\n\r\n"), 400, "invalid character in header field value"},
    {T("GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n"), 400, "bare CR in request head"},
    {T("GET / HTTP/1.1\r\nHost: a\r\n\r\r\n"), 400, "bare CR in request head"},
    /* framing */
    {T("GET / HTTP/1.1\r\n\r\n"), 400, "missing Host header"},
    {T("GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n"), 400, "more than one Host header"},
    {T("GET / HTTP/1.0\r\nHost: a\r\nHOST: b\r\n\r\n"), 400, "more than one Host header"},
    {T("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n"), 400, "invalid Content-Length"},
    {T("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n"), 400, "invalid Content-Length"},
    {T("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n"), 400, "invalid Content-Length"},
    {T("POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n"), 400, "invalid Content-Length"},
    {T("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n"), 400,
     "invalid Content-Length"},
    {T("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1 2\r\n\r\n"), 400, "invalid Content-Length"},
    {T("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 18446744073709551616\r\n\r\n"), 400,
     "invalid Content-Length"},
    {T("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"), 400,
     "conflicting Content-Length"},
    {T("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"), 501,
     "Transfer-Encoding is not supported: idmintd takes no request bodies"},
    {T("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"), 501,
     "Transfer-Encoding is not supported: idmintd takes no request bodies"},
    {T("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"),
     501, "Transfer-Encoding is not supported: idmintd takes no request bodies"},
    {T("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:  \r\n\r\n"), 400,
     "empty Transfer-Encoding"},
};

static void http_rejects_each_invalid_class_with_its_status(void)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const struct bad_case *c = &bad_cases[i];
        size_t len = c->len;
        idms_http_request req;
        int status = 0;
        const char *reason = NULL;
        ptrdiff_t r = parse_n(c->text, len, &req, &status, &reason);
        if (r != IDMS_HTTP_INVALID || status != c->status || reason == NULL ||
            strcmp(reason, c->reason) != 0)
            TEST_FAIL_("case %zu: got %td status %d reason \"%s\", want status %d \"%s\"", i, r,
                       status, reason ? reason : "(null)", c->status, c->reason);
        /* And every prefix is INCOMPLETE or the same refusal. */
        if (!check_prefixes(c->text, len, IDMS_HTTP_INVALID, c->status))
            TEST_FAIL_("case %zu", i);
    }
}

static void http_invalid_accepts_null_status_and_reason(void)
{
    idms_http_request req;
    free(input_);
    input_ = test_exact_copy("GET / HTTP/2.0\r\n\r\n", 18);
    ASSERT_EQ_INT(idms_http_parse_request(input_, 18, &req, NULL, NULL), IDMS_HTTP_INVALID);
}

/* ---- limits --------------------------------------------------------------- */

/* "GET /" + pad + " HTTP/1.1\r\nHost: a\r\n" + headers + "\r\n" in buf. */
static size_t build_request(char *buf, size_t cap, size_t target_len, size_t n_headers,
                            size_t value_pad)
{
    size_t n = 0;
    n += (size_t)snprintf(buf + n, cap - n, "GET /");
    for (size_t i = 1; i < target_len; i++)
        buf[n++] = 'a';
    n += (size_t)snprintf(buf + n, cap - n, " HTTP/1.1\r\nHost: a\r\n");
    for (size_t i = 1; i < n_headers; i++)
        n += (size_t)snprintf(buf + n, cap - n, "X-%zu: v\r\n", i);
    if (value_pad > 0) {
        n += (size_t)snprintf(buf + n, cap - n, "X-Pad: ");
        for (size_t i = 0; i < value_pad; i++)
            buf[n++] = 'p';
        buf[n++] = '\r';
        buf[n++] = '\n';
    }
    buf[n++] = '\r';
    buf[n++] = '\n';
    return n;
}

static void http_target_limit_at_and_one_past(void)
{
    static char buf[IDMS_HTTP_MAX_HEAD * 2];
    idms_http_request req;
    int status = 0;
    const char *reason = NULL;
    size_t n = build_request(buf, sizeof buf, IDMS_HTTP_MAX_TARGET, 1, 0);
    ASSERT_EQ_INT(parse_n(buf, n, &req, &status, &reason), (ptrdiff_t)n);
    ASSERT_EQ_U64(req.target_len, IDMS_HTTP_MAX_TARGET);
    n = build_request(buf, sizeof buf, IDMS_HTTP_MAX_TARGET + 1, 1, 0);
    ASSERT_EQ_INT(parse_n(buf, n, &req, &status, &reason), IDMS_HTTP_INVALID);
    ASSERT_EQ_INT(status, 414);
    ASSERT_EQ_STR(reason, "request target too long");
    /* Decided as soon as the target is one byte too long, before its end. */
    ASSERT_EQ_INT(parse_n(buf, 5 + IDMS_HTTP_MAX_TARGET, &req, &status, &reason),
                  IDMS_HTTP_INVALID);
    ASSERT_EQ_INT(status, 414);
    ASSERT_EQ_INT(parse_n(buf, 4 + IDMS_HTTP_MAX_TARGET, &req, &status, &reason),
                  IDMS_HTTP_INCOMPLETE);
}

static void http_header_count_limit_at_and_one_past(void)
{
    static char buf[IDMS_HTTP_MAX_HEAD];
    idms_http_request req;
    int status = 0;
    const char *reason = NULL;
    size_t n = build_request(buf, sizeof buf, 1, IDMS_HTTP_MAX_HEADERS, 0);
    ASSERT_EQ_INT(parse_n(buf, n, &req, &status, &reason), (ptrdiff_t)n);
    ASSERT_EQ_U64(req.n_headers, IDMS_HTTP_MAX_HEADERS);
    n = build_request(buf, sizeof buf, 1, IDMS_HTTP_MAX_HEADERS + 1, 0);
    ASSERT_EQ_INT(parse_n(buf, n, &req, &status, &reason), IDMS_HTTP_INVALID);
    ASSERT_EQ_INT(status, 431);
    ASSERT_EQ_STR(reason, "too many header fields");
    ASSERT_TRUE(check_prefixes(buf, n, IDMS_HTTP_INVALID, 431));
}

static void http_head_size_limit_at_and_one_past(void)
{
    static char buf[IDMS_HTTP_MAX_HEAD * 2];
    idms_http_request req;
    int status = 0;
    const char *reason = NULL;
    /* Size the padding so that the head is exactly the limit. */
    size_t base = build_request(buf, sizeof buf, 1, 1, 1) - 1;
    size_t pad = IDMS_HTTP_MAX_HEAD - base;
    size_t n = build_request(buf, sizeof buf, 1, 1, pad);
    ASSERT_EQ_U64(n, IDMS_HTTP_MAX_HEAD);
    ASSERT_EQ_INT(parse_n(buf, n, &req, &status, &reason), (ptrdiff_t)n);
    /* Pipelined input after it does not count against the limit. */
    memcpy(buf + n, "GET / HTTP/1.1\r\n", 16);
    ASSERT_EQ_INT(parse_n(buf, n + 16, &req, &status, &reason), (ptrdiff_t)n);
    ASSERT_EQ_INT(parse_n(buf, n - 1, &req, &status, &reason), IDMS_HTTP_INCOMPLETE);

    n = build_request(buf, sizeof buf, 1, 1, pad + 1);
    ASSERT_EQ_U64(n, IDMS_HTTP_MAX_HEAD + 1);
    ASSERT_EQ_INT(parse_n(buf, n, &req, &status, &reason), IDMS_HTTP_INVALID);
    ASSERT_EQ_INT(status, 431);
    ASSERT_EQ_STR(reason, "request head too large");
    /* With MAX_HEAD bytes and no end yet, waiting cannot help: 431 now. */
    ASSERT_EQ_INT(parse_n(buf, IDMS_HTTP_MAX_HEAD, &req, &status, &reason), IDMS_HTTP_INVALID);
    ASSERT_EQ_INT(status, 431);
    ASSERT_EQ_INT(parse_n(buf, IDMS_HTTP_MAX_HEAD - 1, &req, &status, &reason),
                  IDMS_HTTP_INCOMPLETE);

    /* Empty lines before the request-line count too. */
    memset(buf, '\n', IDMS_HTTP_MAX_HEAD);
    ASSERT_EQ_INT(parse_n(buf, IDMS_HTTP_MAX_HEAD - 1, &req, &status, &reason),
                  IDMS_HTTP_INCOMPLETE);
    ASSERT_EQ_INT(parse_n(buf, IDMS_HTTP_MAX_HEAD, &req, &status, &reason), IDMS_HTTP_INVALID);
    ASSERT_EQ_INT(status, 431);
}

/* ---- valid requests ------------------------------------------------------- */

static void http_parses_what_curl_sends(void)
{
    static const char text[] = "GET /v1/ids/snowflake?count=3 HTTP/1.1\r\n"
                               "Host: 127.0.0.1:8080\r\n"
                               "User-Agent: curl/7.88.1\r\n"
                               "Accept: */*\r\n"
                               "\r\n";
    idms_http_request req;
    int status = -1;
    const char *reason = "x";
    ASSERT_EQ_INT(parse(text, &req, &status, &reason), (ptrdiff_t)strlen(text));
    ASSERT_EQ_INT(status, 0);
    ASSERT_TRUE(reason == NULL);
    ASSERT_TRUE(span_is(req.method, req.method_len, "GET"));
    ASSERT_TRUE(span_is(req.target, req.target_len, "/v1/ids/snowflake?count=3"));
    ASSERT_EQ_INT(req.minor_version, 1);
    ASSERT_EQ_U64(req.n_headers, 3);
    ASSERT_TRUE(span_is(req.headers[0].name, req.headers[0].name_len, "Host"));
    ASSERT_TRUE(span_is(req.headers[0].value, req.headers[0].value_len, "127.0.0.1:8080"));
    ASSERT_TRUE(span_is(req.headers[2].name, req.headers[2].name_len, "Accept"));
    ASSERT_TRUE(span_is(req.headers[2].value, req.headers[2].value_len, "*/*"));
    ASSERT_EQ_INT(req.keep_alive, 1);
    ASSERT_EQ_U64(req.content_length, 0);
    /* The pointers point into the input. */
    ASSERT_TRUE(req.method == input_);
    ASSERT_TRUE(req.target == input_ + 4);
}

static void http_keep_alive_follows_version_and_connection(void)
{
    static const struct {
        const char *text;
        int keep_alive;
    } cases[] = {
        {"GET / HTTP/1.1\r\nHost: a\r\n\r\n", 1},
        {"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", 0},
        {"GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, CLOSE\r\n\r\n", 0},
        {"GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n", 1},
        {"GET / HTTP/1.1\r\nHost: a\r\nConnection: closed\r\n\r\n", 1},
        {"GET / HTTP/1.1\r\nHost: a\r\nConnection: x\r\nConnection: ,close,\r\n\r\n", 0},
        {"GET / HTTP/1.0\r\n\r\n", 0},
        {"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", 1},
        {"GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", 0},
        {"GET / HTTP/1.0\r\nConnection: close\r\nConnection: keep-alive\r\n\r\n", 0},
        {"GET / HTTP/1.0\r\nConnection:  keep-alive \t\r\n\r\n", 1},
        {"GET / HTTP/1.2\r\nHost: a\r\n\r\n", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        idms_http_request req;
        int status = 0;
        const char *reason = NULL;
        ptrdiff_t r = parse(cases[i].text, &req, &status, &reason);
        if (r != (ptrdiff_t)strlen(cases[i].text))
            TEST_FAIL_("case %zu: got %td (%s)", i, r, reason ? reason : "-");
        if (req.keep_alive != cases[i].keep_alive)
            TEST_FAIL_("case %zu: keep_alive %d", i, req.keep_alive);
    }
    idms_http_request req;
    ASSERT_TRUE(parse("GET / HTTP/1.2\r\nHost: a\r\n\r\n", &req, NULL, NULL) > 0);
    ASSERT_EQ_INT(req.minor_version, 1);
    ASSERT_TRUE(parse("GET / HTTP/1.0\r\n\r\n", &req, NULL, NULL) > 0);
    ASSERT_EQ_INT(req.minor_version, 0);
}

static void http_tolerates_empty_lines_and_bare_lf(void)
{
    idms_http_request req;
    int status = 0;
    const char *reason = NULL;
    static const char crlf_first[] = "\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n";
    ASSERT_EQ_INT(parse(crlf_first, &req, &status, &reason), (ptrdiff_t)strlen(crlf_first));
    ASSERT_TRUE(req.method == input_ + 4);
    static const char lf[] = "\nGET /x HTTP/1.1\nHost: a\n\n";
    ASSERT_EQ_INT(parse(lf, &req, &status, &reason), (ptrdiff_t)strlen(lf));
    ASSERT_TRUE(span_is(req.target, req.target_len, "/x"));
    ASSERT_TRUE(span_is(req.headers[0].value, req.headers[0].value_len, "a"));
    static const char mixed[] = "GET / HTTP/1.1\nHost: a\r\nX: y\n\r\n";
    ASSERT_EQ_INT(parse(mixed, &req, &status, &reason), (ptrdiff_t)strlen(mixed));
    ASSERT_EQ_U64(req.n_headers, 2);
}

static void http_trims_values_and_keeps_obs_text(void)
{
    idms_http_request req;
    static const char text[] = "GET / HTTP/1.1\r\nHost:a\r\nX-A: \t a b \t\r\nX-B:\r\nX-C:   \r\n"
                               "X-D: caf\xc3\xa9\r\n\r\n";
    ASSERT_EQ_INT(parse(text, &req, NULL, NULL), (ptrdiff_t)strlen(text));
    ASSERT_EQ_U64(req.n_headers, 5);
    ASSERT_TRUE(span_is(req.headers[0].value, req.headers[0].value_len, "a"));
    ASSERT_TRUE(span_is(req.headers[1].value, req.headers[1].value_len, "a b"));
    ASSERT_EQ_U64(req.headers[2].value_len, 0);
    ASSERT_EQ_U64(req.headers[3].value_len, 0);
    ASSERT_TRUE(span_is(req.headers[4].value, req.headers[4].value_len, "caf\xc3\xa9"));
}

static void http_content_length_and_identity(void)
{
    idms_http_request req;
    int status = 0;
    const char *reason = NULL;
    ASSERT_TRUE(parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 42\r\n\r\n", &req, &status,
                      &reason) > 0);
    ASSERT_EQ_U64(req.content_length, 42);
    ASSERT_TRUE(parse("POST / HTTP/1.1\r\nHost: a\r\ncontent-length: 007\r\n"
                      "Content-Length: 7\r\n\r\n",
                      &req, &status, &reason) > 0);
    ASSERT_EQ_U64(req.content_length, 7);
    ASSERT_TRUE(parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 18446744073709551615\r\n\r\n",
                      &req, &status, &reason) > 0);
    ASSERT_EQ_U64(req.content_length, UINT64_MAX);
    ASSERT_TRUE(parse("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Identity\r\n"
                      "Content-Length: 2\r\n\r\n",
                      &req, &status, &reason) > 0);
    ASSERT_EQ_U64(req.content_length, 2);
}

/* Three requests back to back, one with a body, as a pipelining client
 * (wrk with a pipeline script, or curl --http1.1 with several URLs) sends. */
static void http_parses_pipelined_requests_in_turn(void)
{
    static const char text[] = "GET /v1/ids/snowflake HTTP/1.1\r\nHost: x\r\n\r\n"
                               "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
                               "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    size_t len = strlen(text);
    free(input_);
    input_ = test_exact_copy(text, len);
    static const char *const targets[] = {"/v1/ids/snowflake", "/p", "/healthz"};
    size_t pos = 0;
    for (int i = 0; i < 3; i++) {
        idms_http_request req;
        int status = 0;
        const char *reason = NULL;
        ptrdiff_t r = idms_http_parse_request(input_ + pos, len - pos, &req, &status, &reason);
        if (r <= 0)
            TEST_FAIL_("request %d at %zu: %td (%s)", i, pos, r, reason ? reason : "-");
        ASSERT_TRUE(span_is(req.target, req.target_len, targets[i]));
        ASSERT_EQ_INT(req.keep_alive, i < 2);
        pos += (size_t)r;
        ASSERT_TRUE(req.content_length <= len - pos);
        pos += (size_t)req.content_length;
    }
    ASSERT_EQ_U64(pos, len);
    idms_http_request req;
    ASSERT_EQ_INT(idms_http_parse_request(input_ + pos, 0, &req, NULL, NULL), IDMS_HTTP_INCOMPLETE);
}

static const char *const valid_heads[] = {
    "GET /v1/ids/snowflake?count=3 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
    "User-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n",
    "GET /v1/ids/snowflake HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
    "GET /api/snowflake/get/leaf HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\n\r\n",
    "\r\nGET /healthz HTTP/1.1\nHost: a\n\n",
    "GET /metrics HTTP/1.1\r\nHost: a\r\nAccept: application/openmetrics-text;version=1.0.0,"
    "text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\nAccept-Encoding: gzip\r\n\r\n",
    "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\nTransfer-Encoding: identity\r\n\r\n",
};

static void http_every_prefix_of_a_valid_head_is_incomplete(void)
{
    for (size_t i = 0; i < sizeof valid_heads / sizeof valid_heads[0]; i++) {
        size_t len = strlen(valid_heads[i]);
        if (!check_prefixes(valid_heads[i], len, (ptrdiff_t)len, 0))
            TEST_FAIL_("head %zu", i);
    }
}

/* ---- helpers -------------------------------------------------------------- */

static void http_header_get_ignores_case_and_takes_the_first(void)
{
    idms_http_request req;
    ASSERT_TRUE(parse("GET / HTTP/1.1\r\nHost: a\r\naccept: one\r\nACCEPT: two\r\n\r\n", &req, NULL,
                      NULL) > 0);
    const char *v = NULL;
    size_t n = 0;
    ASSERT_EQ_INT(idms_http_header_get(&req, "Accept", &v, &n), 1);
    ASSERT_TRUE(span_is(v, n, "one"));
    ASSERT_EQ_INT(idms_http_header_get(&req, "HOST", &v, &n), 1);
    ASSERT_TRUE(span_is(v, n, "a"));
    v = "untouched";
    ASSERT_EQ_INT(idms_http_header_get(&req, "Accep", &v, &n), 0);
    ASSERT_EQ_INT(idms_http_header_get(&req, "Accepts", &v, &n), 0);
    ASSERT_EQ_STR(v, "untouched");
}

static void http_split_target_cases(void)
{
    static const struct {
        const char *target, *path, *query;
    } cases[] = {
        {"/v1/ids/uuidv7?count=5", "/v1/ids/uuidv7", "count=5"},
        {"/healthz", "/healthz", ""},
        {"/a?", "/a", ""},
        {"/a?b?c", "/a", "b?c"},
        {"/a#frag", "/a", ""},
        {"/a?x=1#frag?y", "/a", "x=1"},
        {"?q", "", "q"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path, *query;
        size_t path_len, query_len;
        idms_http_split_target(cases[i].target, strlen(cases[i].target), &path, &path_len, &query,
                               &query_len);
        if (!span_is(path, path_len, cases[i].path) || !span_is(query, query_len, cases[i].query))
            TEST_FAIL_("case %zu: \"%.*s\" \"%.*s\"", i, (int)path_len, path, (int)query_len,
                       query);
    }
}

/* idms_http_target_form on an exact-size copy of target. */
static void http_target_form_cases(void)
{
    static const struct {
        const char *target;
        int form;
        const char *rest, *authority;
    } cases[] = {
        {"/v1/ids/uuidv7?count=5", IDMS_HTTP_ORIGIN_FORM, "/v1/ids/uuidv7?count=5", ""},
        {"http://127.0.0.1:8080/v1/ids/ulid?count=2", IDMS_HTTP_ABSOLUTE_FORM,
         "/v1/ids/ulid?count=2", "127.0.0.1:8080"},
        {"https://h/healthz", IDMS_HTTP_ABSOLUTE_FORM, "/healthz", "h"},
        {"HTTP://H:1/x", IDMS_HTTP_ABSOLUTE_FORM, "/x", "H:1"},
        {"HtTpS://[::1]:8080/a#f", IDMS_HTTP_ABSOLUTE_FORM, "/a#f", "[::1]:8080"},
        {"http://h", IDMS_HTTP_ABSOLUTE_FORM, "", "h"},
        {"http://h?q=1", IDMS_HTTP_ABSOLUTE_FORM, "?q=1", "h"},
        {"http://u@h#x", IDMS_HTTP_ABSOLUTE_FORM, "#x", "u@h"},
        {"http:///v1/ids/ulid", IDMS_HTTP_INVALID, "http:///v1/ids/ulid", ""},
        {"http://", IDMS_HTTP_INVALID, "http://", ""},
        {"https://?x", IDMS_HTTP_INVALID, "https://?x", ""},
        /* not absolute-form for this server: routed (and refused) as they are */
        {"*", IDMS_HTTP_ORIGIN_FORM, "*", ""},
        {"example.com:443", IDMS_HTTP_ORIGIN_FORM, "example.com:443", ""},
        {"ftp://h/x", IDMS_HTTP_ORIGIN_FORM, "ftp://h/x", ""},
        {"http:/h/x", IDMS_HTTP_ORIGIN_FORM, "http:/h/x", ""},
        {"httpx://h/x", IDMS_HTTP_ORIGIN_FORM, "httpx://h/x", ""},
        {"https:/", IDMS_HTTP_ORIGIN_FORM, "https:/", ""},
        {"http:", IDMS_HTTP_ORIGIN_FORM, "http:", ""},
        {"/http://h/x", IDMS_HTTP_ORIGIN_FORM, "/http://h/x", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = strlen(cases[i].target);
        char *copy = test_exact_copy(cases[i].target, len);
        const char *rest = NULL, *auth = NULL;
        size_t rest_len = 99, auth_len = 99;
        int form = idms_http_target_form(copy, len, &rest, &rest_len, &auth, &auth_len);
        int ok = form == cases[i].form && span_is(rest, rest_len, cases[i].rest) &&
                 span_is(auth, auth_len, cases[i].authority) && rest >= copy &&
                 rest + rest_len == copy + len && auth >= copy && auth + auth_len <= copy + len;
        free(copy);
        if (!ok)
            TEST_FAIL_("case %zu \"%s\": form %d, rest \"%.*s\", authority \"%.*s\"", i,
                       cases[i].target, form, (int)rest_len, rest, (int)auth_len, auth);
    }
}

/* idms_http_query_check on an exact-size copy of query: the result, and the
 * offending name ("" when none). */
static int query_check(const char *query, const char *const *names, char *bad, size_t cap)
{
    size_t len = strlen(query);
    char *copy = test_exact_copy(query, len);
    const char *name = "untouched";
    size_t name_len = strlen(name);
    int rc = idms_http_query_check(copy, len, names, &name, &name_len);
    if (rc != 0 && (name < copy || name + name_len > copy + len))
        rc = -99; /* the name points outside the query */
    snprintf(bad, cap, "%.*s", (int)name_len, name);
    free(copy);
    return rc;
}

static void http_query_check_cases(void)
{
    static const char *const ids[] = {"count", "prefix", NULL};
    static const char *const none[] = {NULL};
    static const struct {
        const char *query;
        int ids_rc;
        const char *ids_bad;
        int none_rc;
    } cases[] = {
        {"", 0, "untouched", 0},
        {"&&", 0, "untouched", 0},
        {"count=5", 0, "untouched", IDMS_HTTP_QUERY_UNKNOWN},
        {"count=5&prefix=user", 0, "untouched", IDMS_HTTP_QUERY_UNKNOWN},
        {"&prefix=a&&count=1&", 0, "untouched", IDMS_HTTP_QUERY_UNKNOWN},
        {"pre%66ix=a&count", 0, "untouched", IDMS_HTTP_QUERY_UNKNOWN},
        {"cuont=5", IDMS_HTTP_QUERY_UNKNOWN, "cuont", IDMS_HTTP_QUERY_UNKNOWN},
        {"count=5&Count=1", IDMS_HTTP_QUERY_UNKNOWN, "Count", IDMS_HTTP_QUERY_UNKNOWN},
        {"count=1&count=1", IDMS_HTTP_QUERY_REPEATED, "count", IDMS_HTTP_QUERY_UNKNOWN},
        {"prefix=a&co%75nt=1&count=2", IDMS_HTTP_QUERY_REPEATED, "count", IDMS_HTTP_QUERY_UNKNOWN},
        {"count=1&x&count=2", IDMS_HTTP_QUERY_UNKNOWN, "x", IDMS_HTTP_QUERY_UNKNOWN},
        {"=1", IDMS_HTTP_QUERY_UNKNOWN, "", IDMS_HTTP_QUERY_UNKNOWN},
        {"%zz=1", IDMS_HTTP_QUERY_UNKNOWN, "%zz", IDMS_HTTP_QUERY_UNKNOWN},
        {"cou%nt=1", IDMS_HTTP_QUERY_UNKNOWN, "cou%nt", IDMS_HTTP_QUERY_UNKNOWN},
        {"count%00=1", IDMS_HTTP_QUERY_UNKNOWN, "count%00", IDMS_HTTP_QUERY_UNKNOWN},
        {"count+=1", IDMS_HTTP_QUERY_UNKNOWN, "count+", IDMS_HTTP_QUERY_UNKNOWN},
        {"count=a=b", 0, "untouched", IDMS_HTTP_QUERY_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char bad[64];
        int rc = query_check(cases[i].query, ids, bad, sizeof bad);
        if (rc != cases[i].ids_rc || strcmp(bad, cases[i].ids_bad) != 0)
            TEST_FAIL_("\"%s\": got %d '%s', want %d '%s'", cases[i].query, rc, bad,
                       cases[i].ids_rc, cases[i].ids_bad);
        rc = query_check(cases[i].query, none, bad, sizeof bad);
        if (rc != cases[i].none_rc)
            TEST_FAIL_("\"%s\" with no keys: got %d, want %d", cases[i].query, rc,
                       cases[i].none_rc);
    }
}

/* idms_http_query_get on an exact-size copy of query into a dst of cap. */
static int query_get(const char *query, const char *key, char *dst, size_t cap, size_t *out_len)
{
    char *copy = test_exact_copy(query, strlen(query));
    int rc = idms_http_query_get(copy, strlen(query), key, dst, cap, out_len);
    free(copy);
    return rc;
}

static void http_query_get_finds_and_decodes(void)
{
    char dst[16];
    size_t n = 99;
    ASSERT_EQ_INT(query_get("count=5&prefix=usr", "prefix", dst, sizeof dst, &n), 1);
    ASSERT_EQ_STR(dst, "usr");
    ASSERT_EQ_U64(n, 3);
    ASSERT_EQ_INT(query_get("count=5&prefix=usr", "count", dst, sizeof dst, &n), 1);
    ASSERT_EQ_STR(dst, "5");
    ASSERT_EQ_INT(query_get("a=x+y%2Bz%41", "a", dst, sizeof dst, &n), 1);
    ASSERT_EQ_STR(dst, "x y+zA");
    ASSERT_EQ_INT(query_get("pre%66ix=p&count=2", "prefix", dst, sizeof dst, &n), 1);
    ASSERT_EQ_STR(dst, "p");
    ASSERT_EQ_INT(query_get("a+b=1", "a b", dst, sizeof dst, &n), 1);
    ASSERT_EQ_STR(dst, "1");
    ASSERT_EQ_INT(query_get("flag&x=1", "flag", dst, sizeof dst, &n), 1);
    ASSERT_EQ_STR(dst, "");
    ASSERT_EQ_U64(n, 0);
    ASSERT_EQ_INT(query_get("x=1&x=2", "x", dst, sizeof dst, &n), 1);
    ASSERT_EQ_STR(dst, "1");
    ASSERT_EQ_INT(query_get("&&x=a=b&", "x", dst, sizeof dst, &n), 1);
    ASSERT_EQ_STR(dst, "a=b");
    ASSERT_EQ_INT(query_get("x=", "x", dst, sizeof dst, NULL), 1);
    ASSERT_EQ_STR(dst, "");
    /* absent */
    ASSERT_EQ_INT(query_get("count=5", "coun", dst, sizeof dst, &n), 0);
    ASSERT_EQ_STR(dst, "");
    ASSERT_EQ_U64(n, 0);
    ASSERT_EQ_INT(query_get("", "count", dst, sizeof dst, &n), 0);
    ASSERT_EQ_INT(query_get("%zzcount=1", "count", dst, sizeof dst, &n), 0);
    ASSERT_EQ_INT(query_get("cou%nt=1", "count", dst, sizeof dst, &n), 0);
}

static void http_query_get_refuses_bad_values(void)
{
    char dst[8];
    size_t n = 99;
    ASSERT_EQ_INT(query_get("a=%4", "a", dst, sizeof dst, &n), -1);
    ASSERT_EQ_STR(dst, "");
    ASSERT_EQ_INT(query_get("a=%g1", "a", dst, sizeof dst, &n), -1);
    ASSERT_EQ_INT(query_get("a=%", "a", dst, sizeof dst, &n), -1);
    ASSERT_EQ_INT(query_get("a=x%00y", "a", dst, sizeof dst, &n), -1);
    /* the capacity: seven bytes and the NUL fit in eight, eight do not */
    ASSERT_EQ_INT(query_get("a=1234567", "a", dst, 8, &n), 1);
    ASSERT_EQ_STR(dst, "1234567");
    ASSERT_EQ_INT(query_get("a=12345678", "a", dst, 8, &n), -1);
    ASSERT_EQ_STR(dst, "");
    ASSERT_EQ_INT(query_get("a=", "a", dst, 1, &n), 1);
    ASSERT_EQ_INT(query_get("a=1", "a", dst, 1, &n), -1);
    ASSERT_EQ_INT(query_get("a=", "a", NULL, 0, &n), -1);
    ASSERT_EQ_INT(query_get("b=", "a", NULL, 0, &n), 0);
}

/* A path decoder (idms_http_percent_decode, idms_http_path_unreserved) on
 * an exact copy of src into exactly cap bytes (ASan sees overruns), the
 * result copied to dst. */
static ptrdiff_t path_exact(ptrdiff_t (*fn)(const char *, size_t, char *, size_t), const char *src,
                            char *dst, size_t cap)
{
    char *copy = test_exact_copy(src, strlen(src));
    char *out = malloc(cap ? cap : 1);
    if (out == NULL)
        abort();
    ptrdiff_t r = fn(copy, strlen(src), out, cap);
    if (cap > 0)
        memcpy(dst, out, cap);
    free(copy);
    free(out);
    return r;
}

static ptrdiff_t decode_exact(const char *src, char *dst, size_t cap)
{
    return path_exact(idms_http_percent_decode, src, dst, cap);
}

static void http_percent_decode_cases(void)
{
    char dst[32];
    ASSERT_EQ_INT(decode_exact("abc", dst, sizeof dst), 3);
    ASSERT_EQ_STR(dst, "abc");
    ASSERT_EQ_INT(decode_exact("a%2Fb%2fc+d", dst, sizeof dst), 7);
    ASSERT_EQ_STR(dst, "a/b/c+d");
    ASSERT_EQ_INT(decode_exact("%e2%82%ac", dst, sizeof dst), 3);
    ASSERT_EQ_STR(dst, "\xe2\x82\xac");
    ASSERT_EQ_INT(decode_exact("", dst, 1), 0);
    ASSERT_EQ_STR(dst, "");
    ASSERT_EQ_INT(decode_exact("%", dst, sizeof dst), -1);
    ASSERT_EQ_STR(dst, "");
    ASSERT_EQ_INT(decode_exact("a%4", dst, sizeof dst), -1);
    ASSERT_EQ_INT(decode_exact("%G0", dst, sizeof dst), -1);
    ASSERT_EQ_INT(decode_exact("%0g", dst, sizeof dst), -1);
    ASSERT_EQ_INT(decode_exact("a%00", dst, sizeof dst), -1);
    /* capacity: exact fit, one short, none */
    ASSERT_EQ_INT(decode_exact("ab%63", dst, 4), 3);
    ASSERT_EQ_STR(dst, "abc");
    ASSERT_EQ_INT(decode_exact("ab%63", dst, 3), -1);
    ASSERT_EQ_STR(dst, "");
    char none[1] = {'#'};
    ASSERT_EQ_INT(idms_http_percent_decode("a", 1, none, 0), -1);
    ASSERT_EQ_INT(none[0], '#');
}

/* The byte variants (segment tags, checked as bytes after): a %00 is a
 * NUL byte in the result, counted in its length; the rest as above. */
static void http_decode_bytes_keeps_nul(void)
{
    char dst[16];
    char *copy = test_exact_copy("a%00b", 5);
    ASSERT_EQ_INT(idms_http_percent_decode_bytes(copy, 5, dst, sizeof dst), 3);
    ASSERT_TRUE(memcmp(dst, "a\0b", 4) == 0);
    ASSERT_EQ_INT(idms_http_percent_decode_bytes(copy, 5, dst, 3), -1);
    ASSERT_EQ_STR(dst, "");
    free(copy);
    copy = test_exact_copy("a%0", 3);
    ASSERT_EQ_INT(idms_http_percent_decode_bytes(copy, 3, dst, sizeof dst), -1);
    free(copy);
    copy = test_exact_copy("x=1&bizType=ab%00+c", 19);
    size_t n = 99;
    ASSERT_EQ_INT(idms_http_query_get_bytes(copy, 19, "bizType", dst, sizeof dst, &n), 1);
    ASSERT_EQ_U64(n, 5);
    ASSERT_TRUE(memcmp(dst, "ab\0 c", 6) == 0);
    ASSERT_EQ_INT(idms_http_query_get(copy, 19, "bizType", dst, sizeof dst, &n), -1);
    ASSERT_EQ_INT(idms_http_query_get_bytes(copy, 19, "nope", dst, sizeof dst, &n), 0);
    free(copy);
}

/* tinyid's parameters: the query's and a form body's together, the first
 * value of each (the query's first), how often each was given, unknown
 * names ignored, a value too long or malformed flagged. */
static void http_form_fields_cases(void)
{
    char biz[8], batch[8], token[4];
    idms_http_field f[3] = {{.key = "bizType", .dst = biz, .cap = sizeof biz},
                            {.key = "batchSize", .dst = batch, .cap = sizeof batch},
                            {.key = "token", .dst = token, .cap = sizeof token}};
    char *q = test_exact_copy("bizType=te%73t&_=17&batchSize=+2", 32);
    char *b = test_exact_copy("token=abc&bizType=other&x", 25);
    idms_http_form_fields(q, 32, b, 25, f, 3);
    ASSERT_EQ_STR(biz, "test");
    ASSERT_EQ_U64(f[0].len, 4);
    ASSERT_EQ_U64(f[0].given, 2);
    ASSERT_EQ_STR(batch, " 2");
    ASSERT_EQ_U64(f[1].given, 1);
    ASSERT_EQ_STR(token, "abc");
    ASSERT_EQ_INT(f[2].bad, 0);
    free(q);
    free(b);
    /* Too long for its buffer, and a malformed escape: flagged, "". */
    q = test_exact_copy("token=abcd&bizType=a%zz", 23);
    idms_http_form_fields(q, 23, "", 0, f, 3);
    ASSERT_EQ_INT(f[2].bad, 1);
    ASSERT_EQ_STR(token, "");
    ASSERT_EQ_INT(f[0].bad, 1);
    ASSERT_EQ_U64(f[1].given, 0);
    ASSERT_EQ_STR(batch, "");
    free(q);
    /* A %00 is kept, for the tag's check to name. */
    q = test_exact_copy("bizType=a%00b", 13);
    idms_http_form_fields(q, 13, NULL, 0, f, 3);
    ASSERT_EQ_U64(f[0].len, 3);
    ASSERT_TRUE(memcmp(biz, "a\0b", 4) == 0);
    free(q);
    ASSERT_EQ_INT(idms_http_is_form("application/x-www-form-urlencoded", 33), 1);
    ASSERT_EQ_INT(idms_http_is_form("Application/X-WWW-Form-Urlencoded; charset=UTF-8", 49), 1);
    ASSERT_EQ_INT(idms_http_is_form("application/x-www-form-urlencodedx", 34), 0);
    ASSERT_EQ_INT(idms_http_is_form("text/plain", 10), 0);
}

static int accepts(const char *value)
{
    char *copy = test_exact_copy(value, strlen(value));
    int r = idms_http_accepts_json(copy, strlen(value));
    free(copy);
    return r;
}

static void http_accepts_json_cases(void)
{
    static const struct {
        const char *accept;
        int json;
    } cases[] = {
        {"application/json", 1},
        {"application/json, text/plain;q=0.5", 1},
        {"*/*", 0},
        {"", 0},
        {"text/plain", 0},
        {"text/plain, application/json", 1},
        {"application/json, */*", 1},
        {"APPLICATION/JSON", 1},
        {"application/json; charset=utf-8", 1},
        {"application/json ; q=0.9 , text/plain ; q=0.8", 1},
        {"application/json;q=0", 0},
        {"application/json;q=0.000", 0},
        {"application/json;q=0.001", 1},
        {"application/json;q=0.5, */*", 0},
        {"application/json;q=0.5, text/plain;q=0.4, */*", 1},
        {"application/json;q=0.9, text/*", 0},
        {"application/json;q=0.9, text/*;q=0.8, */*", 1},
        {"application/json;q=1.5", 0},
        {"application/json;q=1.000", 1},
        {"application/json;q=1.001", 0},
        {"application/json;q=0.5555", 0},
        {"application/json;q=", 0},
        {"application/*", 1},
        {"application/jsonx", 0},
        {"application/json x", 0},
        {"text/plain;x=\"a,application/json\"", 0},
        {"text/plain;x=\"a\\\",b\";q=0.1, application/json", 1},
        {"application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", 0},
        {",, application/json ,,", 1},
        /* Each offer (application/json, text/plain) takes the q of its most
         * specific matching range; a tie goes to JSON when its range is at
         * least as specific as text's and is not the full wildcard. */
        {"Application/*", 1},
        {"application/* ;q=1", 1},
        {"application/*, */*", 1},
        {"*/*;q=0.5, application/*", 1},
        {"*/*;q=0.8, application/json", 1},
        {"application/json;q=0.9, text/plain;q=0.1", 1},
        {"text/plain;q=0.9, */*;q=0.1", 0},
        {"*/*;q=0.1, text/plain;q=0", 1},
        {"*/*;q=0.1, text/*;q=0", 1},
        {"application/*;q=0, */*", 0},
        {"application/json;q=0, application/*", 0},
        {"application/*;q=0.5, application/json;q=0", 0},
        {"application/json;q=0.2, application/*;q=0.9, text/plain;q=0.5", 0},
        {"text/*, application/*", 1},
        {"text/plain, application/*", 0},
        {"text/plain;q=0.5, application/*;q=0.6", 1},
        {"*/*;q=0", 0},
        {"*/json", 0},
        {"application/", 0},
        {"/json", 0},
        {"application/json/x", 0},
        {"image/png", 0},
        {"application/xml, application/*;q=0.1", 1},
        {"application/json;q=0.5;charset=utf-8, text/plain;q=0.4", 1},
        {"application/json;Q=0.3, text/plain;q=0.4", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (accepts(cases[i].accept) != cases[i].json)
            TEST_FAIL_("\"%s\": want %d", cases[i].accept, cases[i].json);
    }
}

/* RFC 3986 section 2.3: escapes of ALPHA, DIGIT, '-', '.', '_' and '~' are
 * decoded; every other escape is kept as sent, so that the route's own
 * decoder (a tag, an ID) sees it once; a malformed escape gives -1. */
static void http_path_unreserved_cases(void)
{
    static const struct {
        const char *src;
        size_t cap; /* 0: the whole buffer */
        ptrdiff_t want_len;
        const char *want; /* "" for -1 */
    } cases[] = {
        {"/v1/ids/uuid%76%37", 0, 14, "/v1/ids/uuidv7"},
        {"%41%5a%61%7A%30%39%2D%2e%5F%7e", 0, 10, "AZaz09-._~"},
        {"/a%2Fb%3F%25%20%00%2B%40%C3%A9", 0, 30, "/a%2Fb%3F%25%20%00%2B%40%C3%A9"},
        /* %25 stays: "%2541" is never turned into "%41", then into "A". */
        {"%2541", 0, 5, "%2541"},
        {"plain", 0, 5, "plain"},
        {"", 1, 0, ""},
        {"%", 0, -1, ""},
        {"a%4", 0, -1, ""},
        {"%%34%31", 0, -1, ""},
        {"%zz%41", 0, -1, ""},
        /* capacity: the decoded length and its NUL */
        {"ab%63", 4, 3, "abc"},
        {"ab%63", 3, -1, ""},
    };
    char dst[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t cap = cases[i].cap > 0 ? cases[i].cap : sizeof dst;
        ptrdiff_t n = path_exact(idms_http_path_unreserved, cases[i].src, dst, cap);
        if (n != cases[i].want_len || strcmp(dst, cases[i].want) != 0)
            TEST_FAIL_("\"%s\" (cap %zu): got %td \"%s\", want %td \"%s\"", cases[i].src, cap, n,
                       dst, cases[i].want_len, cases[i].want);
    }
    char none[1] = {'#'};
    ASSERT_EQ_INT(idms_http_path_unreserved("a", 1, none, 0), -1);
    ASSERT_EQ_INT(none[0], '#');
}

static int h2(const char *text, size_t len)
{
    char *copy = test_exact_copy(text, len);
    int r = idms_http_h2_preface(copy, len);
    free(copy);
    return r;
}

/* RFC 9113 section 3.4: the 24 bytes of the client's connection preface;
 * every proper prefix of it is INCOMPLETE, anything else 0. */
static void http_h2_preface_cases(void)
{
    static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    ASSERT_EQ_INT(sizeof preface - 1, 24);
    ASSERT_EQ_INT(h2(preface, 24), 1);
    for (size_t k = 0; k < 24; k++)
        ASSERT_EQ_INT(h2(preface, k), IDMS_HTTP_INCOMPLETE);
    /* what follows (the client's SETTINGS frame) does not matter */
    ASSERT_EQ_INT(h2("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4", 28), 1);
    ASSERT_EQ_INT(h2("PRI * HTTP/2.0\r\n\r\nSX\r\n\r\n", 24), 0);
    ASSERT_EQ_INT(h2("PRI * HTTP/2.0\r\n\r\nS", 19), IDMS_HTTP_INCOMPLETE);
    ASSERT_EQ_INT(h2("PRI / HTTP/1.1\r\n", 16), 0);
    ASSERT_EQ_INT(h2("GET / HTTP/1.1\r\n", 16), 0);
    ASSERT_EQ_INT(h2("pri", 3), 0);
    /* The HTTP/1 parser keeps its answer for a request line of version 2 that
     * is not the preface (505). */
    idms_http_request req;
    int status = 0;
    ASSERT_EQ_INT(parse("PRI * HTTP/2.0\r\n\r\nSX\r\n\r\n", &req, &status, NULL),
                  IDMS_HTTP_INVALID);
    ASSERT_EQ_INT(status, 505);
}

static const struct test_case tests[] = {
    TEST(http_rejects_each_invalid_class_with_its_status),
    TEST(http_invalid_accepts_null_status_and_reason),
    TEST(http_target_limit_at_and_one_past),
    TEST(http_header_count_limit_at_and_one_past),
    TEST(http_head_size_limit_at_and_one_past),
    TEST(http_parses_what_curl_sends),
    TEST(http_keep_alive_follows_version_and_connection),
    TEST(http_tolerates_empty_lines_and_bare_lf),
    TEST(http_trims_values_and_keeps_obs_text),
    TEST(http_content_length_and_identity),
    TEST(http_parses_pipelined_requests_in_turn),
    TEST(http_every_prefix_of_a_valid_head_is_incomplete),
    TEST(http_header_get_ignores_case_and_takes_the_first),
    TEST(http_split_target_cases),
    TEST(http_target_form_cases),
    TEST(http_query_check_cases),
    TEST(http_query_get_finds_and_decodes),
    TEST(http_query_get_refuses_bad_values),
    TEST(http_percent_decode_cases),
    TEST(http_decode_bytes_keeps_nul),
    TEST(http_form_fields_cases),
    TEST(http_accepts_json_cases),
    TEST(http_path_unreserved_cases),
    TEST(http_h2_preface_cases),
    {0},
};

int main(int argc, char **argv)
{
    int rc = test_main(argc, argv, tests);
    free(input_);
    return rc;
}
