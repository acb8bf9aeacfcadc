/*
 * fuzz/fuzz_http.c - idms_http_parse_request and the HTTP helpers
 * (server/http/http_parser.h) on arbitrary bytes.
 *
 * Properties:
 *  - the result is a head length in 1..min(len, IDMS_HTTP_MAX_HEAD),
 *    INCOMPLETE (only below IDMS_HTTP_MAX_HEAD bytes) or INVALID with one of
 *    the documented statuses and a reason;
 *  - a parsed request holds what the header promises: pointers inside the
 *    head, a token method, a visible-ASCII target within the limit, token
 *    field names, trimmed values without CR, LF or controls, one Host in
 *    HTTP/1.1, the Content-Length its field says;
 *  - parsing exactly the head again gives the same request;
 *  - a prefix gives INCOMPLETE or the whole input's answer;
 *  - the input read as a pipeline (head, Content-Length bytes of body, next
 *    head) holds all of the above for each request;
 *  - split_target, target_form, query_get, query_check, percent_decode,
 *    path_unreserved, accepts_json and h2_preface agree with simple
 *    reference versions written here and never write past their capacity
 *    (each output buffer is an allocation of exactly cap bytes);
 *  - path_unreserved changes no escape but those of unreserved characters:
 *    fully decoding its result gives what fully decoding its input gives;
 *  - h2_preface: a prefix of the input gives INCOMPLETE or the whole
 *    input's answer.
 */
#include "harness.h"

#include "http/http_parser.h"

struct outcome {
    ptrdiff_t r;
    int status;
    const char *reason;
    idms_http_request req;
};

static void parse_exact(const char *data, size_t len, struct outcome *o, fuzz_input *in)
{
    fuzz_input_new(in, (const uint8_t *)data, len);
    o->status = -7;
    o->reason = "junk";
    o->r = idms_http_parse_request(in->text, in->len, &o->req, &o->status, &o->reason);
}

static int is_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int inside(const char *p, size_t n, const char *base, size_t len)
{
    return p >= base && (size_t)(p - base) <= len && n <= len - (size_t)(p - base);
}

static int eq_nocase(const char *a, size_t n, const char *word)
{
    if (strlen(word) != n) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (fuzz_lower((unsigned char)a[i]) != word[i]) {
            return 0;
        }
    }
    return 1;
}

static void check_request(const idms_http_request *req, const char *base, size_t r)
{
    FUZZ_CHECK(r > 0 && r <= IDMS_HTTP_MAX_HEAD);
    FUZZ_CHECK(base[r - 1] == '\n');
    FUZZ_CHECK(req->method_len > 0 && inside(req->method, req->method_len, base, r));
    for (size_t i = 0; i < req->method_len; i++) {
        FUZZ_CHECK(is_tchar((unsigned char)req->method[i]));
    }
    FUZZ_CHECK(req->target_len > 0 && req->target_len <= IDMS_HTTP_MAX_TARGET);
    FUZZ_CHECK(inside(req->target, req->target_len, base, r));
    FUZZ_CHECK(req->target == req->method + req->method_len + 1);
    for (size_t i = 0; i < req->target_len; i++) {
        unsigned char c = (unsigned char)req->target[i];
        FUZZ_CHECK(c >= 0x21 && c <= 0x7E);
    }
    FUZZ_CHECK(req->minor_version == 0 || req->minor_version == 1);
    FUZZ_CHECK(req->keep_alive == 0 || req->keep_alive == 1);
    FUZZ_CHECK(req->n_headers <= IDMS_HTTP_MAX_HEADERS);
    int hosts = 0;
    int have_length = 0;
    for (size_t h = 0; h < req->n_headers; h++) {
        const idms_http_header *f = &req->headers[h];
        FUZZ_CHECK(f->name_len > 0 && inside(f->name, f->name_len, base, r));
        FUZZ_CHECK(inside(f->value, f->value_len, base, r));
        FUZZ_CHECK(f->value >= f->name + f->name_len + 1);
        for (size_t i = 0; i < f->name_len; i++) {
            FUZZ_CHECK(is_tchar((unsigned char)f->name[i]));
        }
        for (size_t i = 0; i < f->value_len; i++) {
            unsigned char c = (unsigned char)f->value[i];
            FUZZ_CHECK(c == '\t' || (c >= 0x20 && c != 0x7F));
        }
        if (f->value_len > 0) {
            FUZZ_CHECK(f->value[0] != ' ' && f->value[0] != '\t');
            FUZZ_CHECK(f->value[f->value_len - 1] != ' ' && f->value[f->value_len - 1] != '\t');
        }
        if (eq_nocase(f->name, f->name_len, "host")) {
            hosts++;
        }
        if (eq_nocase(f->name, f->name_len, "content-length")) {
            uint64_t v = 0;
            for (size_t i = 0; i < f->value_len; i++) {
                FUZZ_CHECK(f->value[i] >= '0' && f->value[i] <= '9');
                v = v * 10 + (uint64_t)(f->value[i] - '0');
            }
            FUZZ_CHECK(f->value_len > 0 && v == req->content_length);
            have_length = 1;
        }
        if (eq_nocase(f->name, f->name_len, "transfer-encoding")) {
            FUZZ_CHECK(eq_nocase(f->value, f->value_len, "identity"));
        }
        /* header_get finds the first field of that name. */
        char name[64];
        if (f->name_len < sizeof name) {
            memcpy(name, f->name, f->name_len);
            name[f->name_len] = '\0';
            const char *v = NULL;
            size_t vn = 0;
            FUZZ_CHECK(idms_http_header_get(req, name, &v, &vn) == 1);
            FUZZ_CHECK(v <= f->value);
        }
    }
    FUZZ_CHECK(hosts <= 1);
    FUZZ_CHECK(req->minor_version == 0 || hosts == 1);
    if (!have_length) {
        FUZZ_CHECK(req->content_length == 0);
    }
}

/* The same request, parsed from two buffers. */
static void check_same(const struct outcome *a, const char *abase, const struct outcome *b,
                       const char *bbase)
{
    FUZZ_CHECK(a->r == b->r && a->status == b->status && a->reason == b->reason);
    if (a->r <= 0) {
        return;
    }
    const idms_http_request *x = &a->req;
    const idms_http_request *y = &b->req;
    FUZZ_CHECK(x->method - abase == y->method - bbase && x->method_len == y->method_len);
    FUZZ_CHECK(x->target - abase == y->target - bbase && x->target_len == y->target_len);
    FUZZ_CHECK(x->minor_version == y->minor_version && x->keep_alive == y->keep_alive);
    FUZZ_CHECK(x->content_length == y->content_length && x->n_headers == y->n_headers);
    for (size_t h = 0; h < x->n_headers; h++) {
        FUZZ_CHECK(x->headers[h].name - abase == y->headers[h].name - bbase);
        FUZZ_CHECK(x->headers[h].name_len == y->headers[h].name_len);
        FUZZ_CHECK(x->headers[h].value - abase == y->headers[h].value - bbase);
        FUZZ_CHECK(x->headers[h].value_len == y->headers[h].value_len);
    }
}

/* ---- reference decoders -------------------------------------------------- */

/* Decodes src[0..len) into out (room for len bytes); -1 on a bad escape or a
 * NUL byte. */
static ptrdiff_t ref_decode(const char *src, size_t len, int plus, char *out)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)src[i];
        if (c == '%') {
            if (i + 2 >= len || !fuzz_is_hex((unsigned char)src[i + 1]) ||
                !fuzz_is_hex((unsigned char)src[i + 2])) {
                return -1;
            }
            char hex[3] = {src[i + 1], src[i + 2], 0};
            c = (unsigned char)strtoul(hex, NULL, 16);
            i += 2;
        } else if (plus && c == '+') {
            c = ' ';
        }
        if (c == 0) {
            return -1;
        }
        out[n++] = (char)c;
    }
    return (ptrdiff_t)n;
}

static int ref_unreserved(int c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c != 0 && strchr("-._~", c) != NULL);
}

/* The reference path_unreserved: an escape of an unreserved character
 * becomes that character, any other escape and byte stays; -1 for a
 * malformed escape. out has room for len bytes. */
static ptrdiff_t ref_path_unreserved(const char *src, size_t len, char *out)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (src[i] != '%') {
            out[n++] = src[i];
            continue;
        }
        if (i + 2 >= len || !fuzz_is_hex((unsigned char)src[i + 1]) ||
            !fuzz_is_hex((unsigned char)src[i + 2])) {
            return -1;
        }
        char hex[3] = {src[i + 1], src[i + 2], 0};
        int c = (int)strtoul(hex, NULL, 16);
        if (ref_unreserved(c)) {
            out[n++] = (char)c;
        } else {
            memcpy(out + n, src + i, 3);
            n += 3;
        }
        i += 2;
    }
    return (ptrdiff_t)n;
}

/* A path decoder under test, and its reference (out has room for len
 * bytes). */
typedef ptrdiff_t (*path_fn)(const char *src, size_t len, char *dst, size_t cap);
typedef ptrdiff_t (*ref_fn)(const char *src, size_t len, char *out);

static ptrdiff_t ref_path_decode(const char *src, size_t len, char *out)
{
    return ref_decode(src, len, 0, out);
}

/* Checks f(src) against ref with a dst of exactly cap bytes; with
 * same_full, also that fully decoding f's result gives what fully decoding
 * src gives (path_unreserved decodes nothing a second decoding would
 * see differently). */
static void check_path_fn(path_fn f, ref_fn ref, const char *src, size_t len, size_t cap,
                          int same_full)
{
    char *want = malloc(len + 1);
    FUZZ_CHECK(want != NULL);
    ptrdiff_t wn = ref(src, len, want);
    char *dst = malloc(cap > 0 ? cap : 1);
    FUZZ_CHECK(dst != NULL);
    ptrdiff_t n = f(src, len, cap > 0 ? dst : NULL, cap);
    if (wn < 0 || (size_t)wn + 1 > cap) {
        FUZZ_CHECK(n == -1);
        FUZZ_CHECK(cap == 0 || dst[0] == '\0');
    } else {
        FUZZ_CHECK(n == wn && (size_t)n <= len);
        FUZZ_CHECK(memcmp(dst, want, (size_t)n) == 0 && dst[n] == '\0');
    }
    if (same_full && n >= 0) {
        char *full_src = malloc(len + 1);
        char *full_dst = malloc(len + 1);
        FUZZ_CHECK(full_src != NULL && full_dst != NULL);
        ptrdiff_t a = ref_decode(src, len, 0, full_src);
        ptrdiff_t b = ref_decode(dst, (size_t)n, 0, full_dst);
        FUZZ_CHECK(a == b && (a < 0 || memcmp(full_src, full_dst, (size_t)a) == 0));
        free(full_src);
        free(full_dst);
    }
    free(dst);
    free(want);
}

/* The reference lookup: 1 with the decoded value (in want, *wn) of the first
 * pair whose decoded name is key, else 0; a bad value gives *wn = -1. */
static int ref_query_get(const char *q, size_t len, const char *key, char *want, ptrdiff_t *wn)
{
    char *name = malloc(len + 1);
    FUZZ_CHECK(name != NULL);
    size_t start = 0;
    int found = 0;
    while (start <= len && !found) {
        const char *amp = memchr(q + start, '&', len - start);
        size_t end = amp ? (size_t)(amp - q) : len;
        if (end > start) {
            const char *eq = memchr(q + start, '=', end - start);
            size_t name_end = eq ? (size_t)(eq - q) : end;
            ptrdiff_t nn = ref_decode(q + start, name_end - start, 1, name);
            /* A name with a NUL byte cannot equal a C string key. */
            /* A name with a bad escape or a NUL byte matches no key. */
            if (nn >= 0 && (size_t)nn == strlen(key) && memcmp(name, key, (size_t)nn) == 0) {
                size_t vs = eq ? name_end + 1 : end;
                *wn = ref_decode(q + vs, end - vs, 1, want);
                found = 1;
            }
        }
        start = end + 1;
    }
    free(name);
    return found;
}

static void check_query(const char *q, size_t len, const char *key, size_t cap)
{
    char *want = malloc(len + 1);
    FUZZ_CHECK(want != NULL);
    ptrdiff_t wn = 0;
    int found = ref_query_get(q, len, key, want, &wn);
    char *dst = malloc(cap > 0 ? cap : 1);
    FUZZ_CHECK(dst != NULL);
    size_t out_len = 12345;
    int rc = idms_http_query_get(q, len, key, cap > 0 ? dst : NULL, cap, &out_len);
    if (!found) {
        FUZZ_CHECK(rc == 0 && out_len == 0);
        FUZZ_CHECK(cap == 0 || dst[0] == '\0');
    } else if (wn < 0 || (size_t)wn + 1 > cap) {
        FUZZ_CHECK(rc == -1 && out_len == 0);
        FUZZ_CHECK(cap == 0 || dst[0] == '\0');
    } else {
        FUZZ_CHECK(rc == 1 && out_len == (size_t)wn);
        FUZZ_CHECK(memcmp(dst, want, out_len) == 0 && dst[out_len] == '\0');
    }
    free(dst);
    free(want);
}

/* The reference query_check: the first pair (in order) whose decoded name
 * is not a key or repeats one, as 1 (unknown) or 2 (repeated), else 0. */
static int ref_query_check(const char *q, size_t len, const char *const *keys, size_t *bad_at,
                           size_t *bad_len)
{
    char *name = malloc(len + 1);
    FUZZ_CHECK(name != NULL);
    int seen[8] = {0};
    size_t start = 0;
    int rc = 0;
    while (start < len && rc == 0) {
        const char *amp = memchr(q + start, '&', len - start);
        size_t end = amp ? (size_t)(amp - q) : len;
        if (end > start) {
            const char *eq = memchr(q + start, '=', end - start);
            size_t name_end = eq ? (size_t)(eq - q) : end;
            ptrdiff_t nn = ref_decode(q + start, name_end - start, 1, name);
            rc = 1;
            for (size_t k = 0; keys[k] != NULL; k++) {
                if (nn >= 0 && (size_t)nn == strlen(keys[k]) &&
                    memcmp(name, keys[k], (size_t)nn) == 0) {
                    rc = seen[k] ? 2 : 0;
                    seen[k] = 1;
                    break;
                }
            }
            if (rc != 0) {
                *bad_at = start;
                *bad_len = name_end - start;
            }
        }
        start = end + 1;
    }
    free(name);
    return rc;
}

static void check_query_check(const char *q, size_t len, const char *const *keys)
{
    size_t want_at = 0;
    size_t want_len = 0;
    int want = ref_query_check(q, len, keys, &want_at, &want_len);
    const char *name = NULL;
    size_t name_len = 12345;
    int rc = idms_http_query_check(q, len, keys, &name, &name_len);
    FUZZ_CHECK(rc == want);
    if (want == 0) {
        FUZZ_CHECK(name == NULL && name_len == 12345);
    } else {
        FUZZ_CHECK(name == q + want_at && name_len == want_len);
    }
}

/* target_form against the rule written out: "http" ["s"] "://" (any case
 * for the letters), a non-empty authority up to '/', '?' or '#', the rest. */
static void check_target_form(const char *t, size_t len)
{
    const char *rest = NULL;
    const char *auth = NULL;
    size_t rest_len = 99;
    size_t auth_len = 99;
    int form = idms_http_target_form(t, len, &rest, &rest_len, &auth, &auth_len);
    size_t scheme = 0;
    if (len >= 4 && eq_nocase(t, 4, "http")) {
        scheme = len >= 5 && fuzz_lower((unsigned char)t[4]) == 's' ? 5 : 4;
    }
    int absolute = scheme > 0 && len >= scheme + 3 && memcmp(t + scheme, "://", 3) == 0;
    if (!absolute) {
        FUZZ_CHECK(form == IDMS_HTTP_ORIGIN_FORM);
        FUZZ_CHECK(rest == t && rest_len == len && auth == t && auth_len == 0);
        return;
    }
    size_t a = scheme + 3;
    size_t e = a;
    while (e < len && t[e] != '/' && t[e] != '?' && t[e] != '#') {
        e++;
    }
    if (e == a) {
        FUZZ_CHECK(form == IDMS_HTTP_INVALID);
        FUZZ_CHECK(rest == t && rest_len == len && auth == t && auth_len == 0);
        return;
    }
    FUZZ_CHECK(form == IDMS_HTTP_ABSOLUTE_FORM);
    FUZZ_CHECK(auth == t + a && auth_len == e - a);
    FUZZ_CHECK(rest == t + e && rest_len == len - e);
}

/* ---- reference Accept negotiation ---------------------------------------- */

/* The parts of a list or a parameter list, split at sep outside
 * quoted-strings (a backslash in one escapes the next byte): the end of
 * the part that starts at i. */
static size_t ref_part_end(const char *s, size_t len, size_t i, char sep)
{
    int quoted = 0;
    for (; i < len; i++) {
        if (quoted && s[i] == '\\' && i + 1 < len) {
            i++;
        } else if (s[i] == '"') {
            quoted = !quoted;
        } else if (!quoted && s[i] == sep) {
            break;
        }
    }
    return i;
}

static int ref_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* qvalue in thousandths, -1 when it is not "0[.ddd]" or "1[.000]". */
static int ref_qvalue(const char *s, size_t len)
{
    char buf[8];
    if (len == 0 || len > 5 || memchr(s, '\0', len) != NULL) {
        return -1; /* a NUL inside is malformed, not the end of the value */
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (strcmp(buf, "1") == 0 || strcmp(buf, "1.") == 0 || strcmp(buf, "1.0") == 0 ||
        strcmp(buf, "1.00") == 0 || strcmp(buf, "1.000") == 0) {
        return 1000;
    }
    if (buf[0] != '0' || (len > 1 && buf[1] != '.')) {
        return -1;
    }
    int q = 0;
    int scale = 100;
    for (size_t i = 2; i < len; i++) {
        if (buf[i] < '0' || buf[i] > '9') {
            return -1;
        }
        q += (buf[i] - '0') * scale;
        scale /= 10;
    }
    return q;
}

/* 1 when s[0..len) is a token, case-insensitively equal to word when word
 * is given. */
static int ref_token(const char *s, size_t len, const char *word)
{
    if (len == 0) {
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        if (!is_tchar((unsigned char)s[i])) {
            return 0;
        }
    }
    return word == NULL || eq_nocase(s, len, word);
}

/* accepts_json by RFC 9110 section 12.5.1's rule, as the header states
 * it: per offer the q of the most specific range (highest q among equals),
 * JSON when its q is above 0 and above text's, or equal with a range as
 * specific, not the full wildcard. */
static int ref_accepts_json(const char *s, size_t len)
{
    static const char *const types[2] = {"application", "text"};
    static const char *const subs[2] = {"json", "plain"};
    int kind[2] = {0, 0};
    int qs[2] = {0, 0};
    for (size_t i = 0; i <= len;) {
        size_t e = ref_part_end(s, len, i, ',');
        size_t a = i;
        size_t b = e;
        i = e + 1;
        while (a < b && ref_ows(s[a])) {
            a++;
        }
        while (b > a && ref_ows(s[b - 1])) {
            b--;
        }
        if (a == b) {
            continue;
        }
        /* The range: up to the first ';', OWS before it dropped; no other
         * OWS in it. */
        size_t r = ref_part_end(s, b, a, ';');
        size_t re = r;
        while (re > a && ref_ows(s[re - 1])) {
            re--;
        }
        const char *slash = memchr(s + a, '/', re - a);
        if (slash == NULL) {
            continue;
        }
        size_t tl = (size_t)(slash - (s + a));
        const char *sub = slash + 1;
        size_t sl = re - a - tl - 1;
        if (!ref_token(s + a, tl, NULL) || !ref_token(sub, sl, NULL)) {
            continue;
        }
        int any_type = tl == 1 && s[a] == '*';
        int any_sub = sl == 1 && sub[0] == '*';
        if (any_type && !any_sub) {
            continue;
        }
        /* The parameters: the last q counts; a malformed one drops the
         * element. */
        int q = 1000;
        int bad = 0;
        for (size_t p = r; p < b && !bad;) {
            size_t pe = ref_part_end(s, b, p + 1, ';');
            size_t pa = p + 1;
            size_t pb = pe;
            p = pe;
            while (pa < pb && ref_ows(s[pa])) {
                pa++;
            }
            while (pb > pa && ref_ows(s[pb - 1])) {
                pb--;
            }
            if (pb - pa >= 2 && (s[pa] == 'q' || s[pa] == 'Q') && s[pa + 1] == '=') {
                q = ref_qvalue(s + pa + 2, pb - pa - 2);
                bad = q < 0;
            }
        }
        if (bad) {
            continue;
        }
        for (int o = 0; o < 2; o++) {
            int k = any_type                          ? 1
                    : !eq_nocase(s + a, tl, types[o]) ? 0
                    : any_sub                         ? 2
                    : eq_nocase(sub, sl, subs[o])     ? 3
                                                      : 0;
            if (k > kind[o] || (k > 0 && k == kind[o] && q > qs[o])) {
                kind[o] = k;
                qs[o] = q;
            }
        }
    }
    if (qs[0] == 0 || qs[0] < qs[1]) {
        return 0;
    }
    return qs[0] > qs[1] || (kind[0] >= kind[1] && kind[0] > 1);
}

static void check_h2_preface(const char *t, size_t len)
{
    static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    size_t n = len < 24 ? len : 24;
    int want = memcmp(t, preface, n) != 0 ? 0 : n == 24 ? 1 : IDMS_HTTP_INCOMPLETE;
    int got = idms_http_h2_preface(t, len);
    FUZZ_CHECK(got == want);
    for (size_t k = 0; k < len && k <= 24; k++) {
        int p = idms_http_h2_preface(t, k);
        FUZZ_CHECK(p == IDMS_HTTP_INCOMPLETE || p == got);
    }
}

/* split_target, then the helpers on its parts, with several capacities. */
static void check_helpers(const char *t, size_t len, uint32_t h)
{
    const char *path = NULL;
    const char *query = NULL;
    size_t path_len = 99;
    size_t query_len = 99;
    idms_http_split_target(t, len, &path, &path_len, &query, &query_len);
    FUZZ_CHECK(path == t && path_len <= len);
    FUZZ_CHECK(memchr(path, '?', path_len) == NULL && memchr(path, '#', path_len) == NULL);
    FUZZ_CHECK(inside(query, query_len, t, len));
    FUZZ_CHECK(memchr(query, '#', query_len) == NULL);
    if (query_len > 0) {
        FUZZ_CHECK(query == path + path_len + 1 && path[path_len] == '?');
    }
    size_t caps[4] = {0, 1, h % (len + 2), len + 1};
    for (int i = 0; i < 4; i++) {
        check_path_fn(idms_http_percent_decode, ref_path_decode, path, path_len, caps[i], 0);
        check_path_fn(idms_http_path_unreserved, ref_path_unreserved, path, path_len, caps[i], 1);
        check_query(query, query_len, "count", caps[i]);
        check_query(query, query_len, "prefix", caps[i]);
    }
    /* A key taken from the query itself, so that lookups hit. */
    char key[16];
    size_t k = 0;
    while (k < query_len && k < sizeof key - 1 && query[k] != '=' && query[k] != '&' &&
           query[k] != '%' && query[k] != '+' && query[k] != '\0') {
        key[k] = query[k];
        k++;
    }
    key[k] = '\0';
    check_query(query, query_len, key, caps[2]);
    check_query(query, query_len, key, len + 1);
    static const char *const ids[] = {"count", "prefix", NULL};
    static const char *const none[] = {NULL};
    const char *const mine[] = {key, "as", NULL};
    check_query_check(query, query_len, ids);
    check_query_check(query, query_len, none);
    check_query_check(query, query_len, mine);
    check_target_form(t, len);
    FUZZ_CHECK(idms_http_accepts_json(t, len) == ref_accepts_json(t, len));
    check_h2_preface(t, len);
}

/* All the properties for the request at data[0..size). Returns the head
 * length (or INCOMPLETE or INVALID) and sets *body to its Content-Length. */
static ptrdiff_t check_one(const char *data, size_t size, uint64_t *body)
{
    fuzz_input in;
    struct outcome whole;
    parse_exact(data, size, &whole, &in);
    size_t len = in.len;
    *body = whole.r > 0 ? whole.req.content_length : 0;

    if (whole.r == IDMS_HTTP_INVALID) {
        int s = whole.status;
        FUZZ_CHECK(s == 400 || s == 414 || s == 431 || s == 501 || s == 505);
        FUZZ_CHECK(whole.reason != NULL && whole.reason[0] != '\0');
    } else if (whole.r == IDMS_HTTP_INCOMPLETE) {
        FUZZ_CHECK(whole.status == 0 && whole.reason == NULL);
        FUZZ_CHECK(len < IDMS_HTTP_MAX_HEAD);
    } else {
        FUZZ_CHECK(whole.r > 0 && (size_t)whole.r <= len);
        FUZZ_CHECK(whole.status == 0 && whole.reason == NULL);
        check_request(&whole.req, in.text, (size_t)whole.r);
    }

    /* Parsing exactly the head again gives the same request. */
    if (whole.r > 0) {
        fuzz_input again_in;
        struct outcome again;
        parse_exact(in.text, (size_t)whole.r, &again, &again_in);
        check_same(&whole, in.text, &again, again_in.text);
        /* The helpers on the target. */
        uint32_t h = 2166136261u;
        for (size_t i = 0; i < len; i++) {
            h = (h ^ (uint8_t)in.text[i]) * 16777619u;
        }
        check_helpers(again.req.target, again.req.target_len, h);
        const char *accept = NULL;
        size_t accept_len = 0;
        if (idms_http_header_get(&again.req, "accept", &accept, &accept_len)) {
            FUZZ_CHECK(idms_http_accepts_json(accept, accept_len) ==
                       ref_accepts_json(accept, accept_len));
        }
        fuzz_input_free(&again_in);
    }

    /* Prefixes: INCOMPLETE or the whole input's answer. A few lengths: just
     * before the end of the head and of the input, and some spread over. */
    if (len > 0) {
        size_t ks[6] = {len - 1, len / 2, len / 3, (len * 7) / 8, 0, 0};
        if (whole.r > 0) {
            ks[4] = (size_t)whole.r - 1;
            ks[5] = (size_t)whole.r;
        }
        for (int i = 0; i < 6; i++) {
            fuzz_input pin;
            struct outcome p;
            parse_exact(in.text, ks[i], &p, &pin);
            if (whole.r > 0 && ks[i] >= (size_t)whole.r) {
                check_same(&whole, in.text, &p, pin.text);
            } else if (p.r != IDMS_HTTP_INCOMPLETE) {
                FUZZ_CHECK(whole.r == IDMS_HTTP_INVALID);
                FUZZ_CHECK(p.r == whole.r && p.status == whole.status && p.reason == whole.reason);
            }
            fuzz_input_free(&pin);
        }
    }

    fuzz_input_free(&in);
    return whole.r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The input as a pipeline: each head, its body skipped, the next. */
    const char *text = (const char *)data;
    size_t pos = 0;
    for (int i = 0; i < 64; i++) {
        uint64_t body = 0;
        ptrdiff_t r = check_one(text + pos, size - pos, &body);
        if (r <= 0 || body > size - pos - (size_t)r) {
            break;
        }
        pos += (size_t)r + (size_t)body;
    }

    /* The helpers on the raw bytes, for coverage of what a target cannot
     * hold (controls, NUL, spaces). */
    fuzz_input in;
    fuzz_input_new(&in, data, size);
    check_helpers(in.text, in.len, (uint32_t)size * 2654435761u);
    fuzz_input_free(&in);
    return 0;
}
