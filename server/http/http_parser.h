/*
 * server/http/http_parser.h - idmintd's HTTP/1.x request-head parser and the
 * small helpers its routes need (target split, query lookup, percent
 * decoding, Accept negotiation).
 *
 * Specification: RFC 9112 (HTTP/1.1 message syntax) and RFC 9110 (semantics).
 * The parser is incremental in the picohttpparser sense: the caller appends
 * bytes to its buffer and calls again from the start of the request; it
 * allocates nothing, keeps no state between calls, never reads buf[len] or
 * beyond, and every pointer it returns points into buf.
 *
 * What it accepts:
 *  - any number of empty lines before the request-line (RFC 9112 section
 *    2.2), counted in the returned head length;
 *  - CRLF line ends, and a bare LF as well (the leniency RFC 9112 section 2.2
 *    allows); a CR that is not followed by LF is invalid (400);
 *  - request-line = method SP request-target SP "HTTP/" DIGIT "." DIGIT,
 *    with exactly one SP between the parts; the method is a token, the target
 *    any run of visible ASCII characters (0x21-0x7E: the router decides what
 *    it means; origin-form starts with '/', and idms_http_target_form finds
 *    the origin-form part of an absolute-form target);
 *  - header fields: token ":" OWS value OWS, with the surrounding OWS (SP,
 *    HTAB) trimmed from the value; values may hold SP, HTAB, visible ASCII
 *    and obs-text (0x80-0xFF).
 *
 * What it refuses, with the status to answer:
 *  400  a malformed request-line or header line, a bare CR, a control
 *       character (or DEL) in the target or a header, whitespace between a
 *       field name and its colon, obs-fold (a header line starting with SP or
 *       HTAB: RFC 9112 section 5.2 lets a server refuse it), an invalid or
 *       conflicting Content-Length (repeated identical values are accepted,
 *       a comma list is not), an empty Transfer-Encoding, an HTTP/1.1
 *       request without a Host header or any request with two (RFC 9112
 *       section 3.2);
 *  414  a request-target longer than IDMS_HTTP_MAX_TARGET;
 *  431  a head longer than IDMS_HTTP_MAX_HEAD, or more than
 *       IDMS_HTTP_MAX_HEADERS header fields;
 *  501  a Transfer-Encoding other than "identity" (chunked request bodies are
 *       refused: idmintd's routes take no body);
 *  505  an HTTP major version other than 1 ("HTTP/2.0", "HTTP/0.9").
 * HTTP/1.2 to HTTP/1.9 are taken as HTTP/1.1 (RFC 9110 section 6.2).
 *
 * Every decision is made at a fixed byte of the input, in input order, so a
 * prefix of the input gives either IDMS_HTTP_INCOMPLETE or the same answer
 * as the whole input (the fuzz harness checks this). A complete head ends
 * with LF, so after INCOMPLETE a caller may wait for new input holding an
 * LF (or for the buffer to reach IDMS_HTTP_MAX_HEAD) before parsing again:
 * that keeps a client trickling bytes from costing a re-parse per byte
 * (picohttpparser's last_len serves the same end).
 *
 * Left out: chunked bodies, trailers, the Host value's syntax, Expect:
 * 100-continue, request smuggling through proxies that disagree with RFC 9112
 * (idmintd refuses every ambiguous framing instead).
 */
#ifndef IDMS_HTTP_PARSER_H
#define IDMS_HTTP_PARSER_H

#include <stddef.h>
#include <stdint.h>

/* Limits. A head (empty lines before the request-line, request-line, header
 * lines and the blank line) is at most IDMS_HTTP_MAX_HEAD bytes, so a read
 * buffer of that size always suffices: INCOMPLETE is returned only while
 * len < IDMS_HTTP_MAX_HEAD. */
#define IDMS_HTTP_MAX_HEAD    16384
#define IDMS_HTTP_MAX_TARGET  8192
#define IDMS_HTTP_MAX_HEADERS 32

/* idms_http_parse_request's results other than a head length. */
#define IDMS_HTTP_INVALID    (-1)
#define IDMS_HTTP_INCOMPLETE (-2)

/* One header field. name and value point into the parsed buffer and are not
 * NUL-terminated; the value has its surrounding whitespace trimmed and may
 * be empty. */
typedef struct idms_http_header {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
} idms_http_header;

/* A parsed request head. Every pointer points into the parsed buffer. */
typedef struct idms_http_request {
    const char *method; /* a token, case-sensitive ("GET") */
    size_t method_len;
    const char *target; /* raw request-target (path?query, or absolute-form) */
    size_t target_len;  /* 1..IDMS_HTTP_MAX_TARGET */
    int minor_version;  /* HTTP/1.0 -> 0, HTTP/1.1 (and 1.2-1.9) -> 1 */
    idms_http_header headers[IDMS_HTTP_MAX_HEADERS]; /* in input order */
    size_t n_headers;
    /* HTTP/1.1: 1 unless a Connection header lists "close"; HTTP/1.0: 1 only
     * when a Connection header lists "keep-alive" and none lists "close".
     * Tokens are matched case-insensitively in every Connection field. */
    int keep_alive;
    uint64_t content_length; /* 0 when absent; the caller skips that many body bytes */
} idms_http_request;

/*
 * Parses one request head at buf[0..len).
 *
 * Returns the head's length in bytes (> 0, at most IDMS_HTTP_MAX_HEAD,
 * including any empty lines before the request-line and the final blank
 * line) when it is complete; the body (req->content_length bytes) and any
 * pipelined request follow it. Returns IDMS_HTTP_INCOMPLETE when more input
 * is needed and the head is still within the limits, or IDMS_HTTP_INVALID
 * with *status set to the status to answer (400, 414, 431, 501 or 505; see
 * the file comment) and *reason to a static, human-readable string; the
 * connection should be closed after answering.
 *
 * *status and *reason are set on every call (0 and NULL unless INVALID);
 * either pointer may be NULL. *req is filled only on success; on other
 * results its contents are unspecified. Never reads buf[len] or beyond.
 * Thread-safe: yes (no shared state).
 */
ptrdiff_t idms_http_parse_request(const char *buf, size_t len, idms_http_request *req, int *status,
                                  const char **reason);

/*
 * Finds the first header whose name equals name (a NUL-terminated string)
 * case-insensitively. Returns 1 and sets *value and *value_len (pointing into
 * the parsed buffer), or 0 when there is none (value and value_len are then
 * left alone). Thread-safe: yes.
 */
int idms_http_header_get(const idms_http_request *req, const char *name, const char **value,
                         size_t *value_len);

/*
 * Splits a request-target into its path (everything before the first '?')
 * and its query (after that '?', without it; empty when there is none). A
 * '#' fragment, which clients should not send, ends the part it appears in
 * and is dropped. The outputs point into target. Thread-safe: yes.
 */
void idms_http_split_target(const char *target, size_t len, const char **path, size_t *path_len,
                            const char **query, size_t *query_len);

/* idms_http_target_form's results. */
#define IDMS_HTTP_ORIGIN_FORM   0
#define IDMS_HTTP_ABSOLUTE_FORM 1

/*
 * Finds the origin-form part of a request-target (RFC 9112 section 3.2).
 * An absolute-form target, "http://" or "https://" (the scheme in any case)
 * then an authority (up to the first '/', '?' or '#') then the rest
 * (RFC 9112 section 3.2.2: a server MUST accept it), gives
 * IDMS_HTTP_ABSOLUTE_FORM with *authority set to the authority and *rest
 * to what follows it (possibly empty: "http://h" means "/"). Any other
 * target (origin-form, asterisk-form, authority-form, other schemes) gives
 * IDMS_HTTP_ORIGIN_FORM with *rest the whole target and *authority_len 0.
 * An http(s) target with an empty authority ("http:///x") gives
 * IDMS_HTTP_INVALID: RFC 9110 section 4.2.1 says to reject it. Every output
 * points into target (authority at target when there is none).
 * Thread-safe: yes.
 */
int idms_http_target_form(const char *target, size_t len, const char **rest, size_t *rest_len,
                          const char **authority, size_t *authority_len);

/* idms_http_query_check's results other than 0. */
#define IDMS_HTTP_QUERY_UNKNOWN  1
#define IDMS_HTTP_QUERY_REPEATED 2
#define IDMS_HTTP_QUERY_MAX_KEYS 64

/*
 * Checks an application/x-www-form-urlencoded query against the keys a
 * route takes: names is an array of NUL-terminated keys ended by NULL (at
 * most IDMS_HTTP_QUERY_MAX_KEYS; names[0] may be NULL: no keys). Pairs are
 * split and names decoded as idms_http_query_get does (empty pairs are
 * skipped; a name with a malformed escape matches no key). Returns 0 when
 * every pair's name is one of the keys and none is given twice; otherwise
 * IDMS_HTTP_QUERY_UNKNOWN or IDMS_HTTP_QUERY_REPEATED for the first pair, in
 * query order, that is not a key or repeats an earlier one, with *name and
 * *name_len set to that pair's name as sent (not decoded; it points into
 * query and may be empty). name and name_len are left alone on 0.
 * Thread-safe: yes.
 */
int idms_http_query_check(const char *query, size_t len, const char *const *names,
                          const char **name, size_t *name_len);

/*
 * Looks key (NUL-terminated, compared with the decoded names) up in an
 * application/x-www-form-urlencoded query ("a=1&b=x+y"): pairs are split at
 * '&' (empty pairs are skipped), a pair without '=' has an empty value, '+'
 * decodes to a space and %XX to its byte; the first pair whose name matches
 * wins. Its value is decoded into dst, which is NUL-terminated, and its
 * length stored in *out_len (out_len may be NULL).
 *
 * Returns 1 when found, 0 when absent (dst is then "" when cap > 0), or -1
 * when the value has a malformed escape, decodes to a NUL byte, or does not
 * fit in cap bytes with its NUL (dst is then "" when cap > 0). Names with a
 * malformed escape never match. Never writes past dst[cap - 1].
 * Thread-safe: yes.
 */
int idms_http_query_get(const char *query, size_t len, const char *key, char *dst, size_t cap,
                        size_t *out_len);

/*
 * idms_http_query_get for a value that is checked as bytes afterwards (a
 * segment tag: idmseg_tag_valid, <idmint/segstore.h>): the same, except that a %00 decodes to a
 * NUL byte in dst (counted in *out_len) instead of failing, so that the
 * checker can name it. Thread-safe: yes.
 */
int idms_http_query_get_bytes(const char *query, size_t len, const char *key, char *dst,
                              size_t cap, size_t *out_len);

/*
 * One parameter of a route that reads its parameters as a Java servlet's
 * getParameter does (tinyid's routes): from the query and from an
 * application/x-www-form-urlencoded body together. The caller sets key
 * (NUL-terminated, compared with the decoded names), dst and cap;
 * idms_http_form_fields sets the rest.
 */
typedef struct idms_http_field {
    const char *key;
    char *dst;      /* the first value, decoded as idms_http_query_get_bytes does */
    size_t cap;     /* dst's bytes, its NUL included */
    size_t len;     /* the first value's decoded length */
    uint32_t given; /* pairs named key, the query's then the body's (saturating) */
    int bad;        /* the first value has a malformed escape or does not fit in cap */
} idms_http_field;

/*
 * Collects fields[0..n) from query[0..query_len) and then body[0..body_len)
 * (either may be empty), both split and decoded as idms_http_query_get
 * does ('&' between pairs, empty pairs skipped, '+' a space, %XX a byte, a
 * %00 kept as a NUL byte for the caller's check to name): each field gets
 * the first value given for its key, in the query first, and the number of
 * pairs that named it. Names that match no key are ignored, as a servlet
 * ignores parameters it is not asked for. Never reads past either input or
 * writes past a dst's cap; allocates nothing. Thread-safe: yes.
 */
void idms_http_form_fields(const char *query, size_t query_len, const char *body, size_t body_len,
                           idms_http_field *fields, size_t n);

/*
 * Whether a Content-Type value[0..len) is application/x-www-form-urlencoded
 * (case-insensitive; parameters such as "; charset=UTF-8" ignored): 1 or 0.
 * Thread-safe: yes.
 */
int idms_http_is_form(const char *value, size_t len);

/*
 * Percent-decodes a path segment src[0..len) into dst (cap bytes, always
 * NUL-terminated when cap > 0). '+' stays '+'. Returns the decoded length,
 * or -1 for a malformed escape ('%' not followed by two hex digits), a
 * result that does not fit in cap bytes with its NUL, or an escape that
 * decodes to a NUL byte (dst is then "" when cap > 0). Never writes past
 * dst[cap - 1]. Thread-safe: yes.
 */
ptrdiff_t idms_http_percent_decode(const char *src, size_t len, char *dst, size_t cap);

/*
 * idms_http_percent_decode for a segment that is checked as bytes
 * afterwards (a segment tag): a %00 decodes to a NUL byte in dst (counted
 * in the length) instead of failing. -1 only for a malformed escape or no
 * room. Thread-safe: yes.
 */
ptrdiff_t idms_http_percent_decode_bytes(const char *src, size_t len, char *dst, size_t cap);

/*
 * Decides between JSON and text/plain from an Accept header value
 * accept[0..len) (RFC 9110 section 12.5.1), for a route that offers both.
 * Each of the two offers takes the q of the most specific media range that
 * matches it (application/json, else the application wildcard, else the
 * full wildcard; text/plain, else the text wildcard, else the full
 * wildcard), the highest q when that range is listed more than once; an
 * offer no range matches has q 0 (not acceptable). Returns 1 when JSON's q
 * is above 0 and above text's, or equal to text's with a range at least as
 * specific as text's that is not the full wildcard (the client asked for
 * JSON by name or by its type at least as precisely as for text); returns 0
 * otherwise, so the full wildcard alone, an absent header (len 0) and a
 * list that accepts neither give text/plain, idmintd's default (no 406).
 * Media-type parameters other than q are ignored; an element that is not a
 * media range (a type and a subtype, both tokens, or a wildcard: "STAR/json"
 * is not one) or whose q is malformed is ignored. With STAR standing for '*'
 * (which cannot follow '/' in a comment):
 *
 *   "application/json"                        -> 1
 *   "application/STAR"                        -> 1
 *   "application/json;q=0.9, text/plain;q=0.1" -> 1
 *   "STAR/STAR;q=0.1, text/plain;q=0"          -> 1 (text refused)
 *   "text/plain, application/json"            -> 1 (equal q: JSON was named)
 *   "text/plain, application/STAR"            -> 0 (text named more precisely)
 *   "application/json;q=0.5, STAR/STAR"       -> 0
 *   "STAR/STAR"                               -> 0
 * Thread-safe: yes.
 */
int idms_http_accepts_json(const char *accept, size_t len);

/*
 * Decodes, in a request path src[0..len), the escapes of unreserved
 * characters (RFC 3986 section 2.3: ALPHA, DIGIT, '-', '.', '_' and '~'),
 * which are the same as the characters themselves (section 6.2.2.2), so
 * that "/v1/ids/uuid%76%37" routes as "/v1/ids/uuidv7". Every other escape
 * is copied as sent: a reserved character keeps its meaning ("%2F" is not a
 * '/', "%3F" not a '?'), and the route that decodes its segment (an ID, a
 * segment tag: idms_http_percent_decode) decodes each escape once, since
 * this step never makes a '%' of its own: fully decoding the result gives
 * what fully decoding src gives. The result is never longer than src; it
 * goes into dst (cap bytes, NUL-terminated when cap > 0).
 *
 * Returns the result's length, or -1 (dst "" when cap > 0) for a malformed
 * escape ('%' not followed by two hex digits) or a result that does not
 * fit in cap bytes with its NUL; the caller then routes the path as sent,
 * and a route that decodes it refuses the escape as it would have.
 * Never writes past dst[cap - 1]. Thread-safe: yes.
 */
ptrdiff_t idms_http_path_unreserved(const char *src, size_t len, char *dst, size_t cap);

/* The connection preface of an HTTP/2 client with prior knowledge (RFC 9113
 * section 3.4): 24 bytes, chosen so that an HTTP/1.1 server refuses them. */
#define IDMS_HTTP_H2_PREFACE     "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define IDMS_HTTP_H2_PREFACE_LEN 24

/*
 * Returns 1 when buf[0..len) starts with the HTTP/2 connection preface,
 * IDMS_HTTP_INCOMPLETE when it is a proper prefix of it (len < 24: wait
 * for more, as for a head), 0 otherwise. idms_http_parse_request answers
 * the preface's first line with 505, which an HTTP/2 client cannot read: a
 * server that sees this answers in HTTP/2's own framing instead (a SETTINGS
 * frame, then GOAWAY with HTTP_1_1_REQUIRED) and closes. The preface ends
 * with LF, so a caller that waits for an LF after INCOMPLETE (see above)
 * still sees it whole. Never reads buf[len] or beyond. Thread-safe: yes.
 */
int idms_http_h2_preface(const char *buf, size_t len);

#endif
