/*
 * etcd_gw.c - etcd v3's JSON gateway over libcurl (etcd_gw.h): one easy
 * handle per coordinator, so that requests reuse its connection; the
 * servers of the URL tried in turn; answers parsed by jansson; base64 by
 * OpenSSL (the project's own dependency), as the gateway carries keys and
 * values base64-encoded.
 *
 * Error answers come as HTTP 4xx/5xx with {"error": "...", "message":
 * "...", "code": N}; a stream's (/v3/lease/keepalive) as HTTP 200 with
 * {"error": {"message": ...}}. Both become IDMC_ERROR with the message.
 *
 * Left out: TLS and authentication (the URL has no room for them yet).
 */
#include "etcd_gw.h"

#include <curl/curl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most of an answer kept: `lease list` of a few thousand nodes with
 * their holder lines is well below it; more is not an etcd we understand. */
#define BODY_MAX (16u << 20)

typedef struct body {
    char *p;
    size_t len, cap;
    bool too_big;
} body;

struct idmc_gw {
    const idmc_target *target;
    int64_t timeout_ms;
    CURL *curl;
    struct curl_slist *headers;
    size_t good;   /* the server that answered last: tried first */
    bool answered; /* the last call got an HTTP answer from someone */
    body in;
    char err[CURL_ERROR_SIZE];
};

/* ---- encodings --------------------------------------------------------- */

json_t *idmc_gw_b64(const char *s)
{
    size_t len = strlen(s);
    if (len > (size_t)INT32_MAX / 2)
        return NULL;
    size_t n = 4 * ((len + 2) / 3) + 1;
    unsigned char *dst = malloc(n);
    if (dst == NULL)
        return NULL;
    EVP_EncodeBlock(dst, (const unsigned char *)s, (int)len);
    json_t *j = json_string((const char *)dst);
    free(dst);
    return j;
}

/* EVP_DecodeBlock decodes whole groups and returns '=' padding as zero
 * bytes, which are taken off here. */
char *idmc_gw_unb64(const json_t *j)
{
    const char *s = json_string_value(j);
    if (s == NULL)
        return NULL;
    size_t len = strlen(s);
    if (len % 4 != 0 || len > (size_t)INT32_MAX / 2)
        return NULL;
    char *dst = malloc(len / 4 * 3 + 1);
    if (dst == NULL)
        return NULL;
    int n = EVP_DecodeBlock((unsigned char *)dst, (const unsigned char *)s, (int)len);
    if (n < 0) {
        free(dst);
        return NULL;
    }
    for (size_t i = len; i > 0 && s[i - 1] == '=' && n > 0; i--)
        n--;
    dst[n] = '\0';
    return dst;
}

int idmc_gw_parse_i64(const char *s, int64_t *v)
{
    if (*s == '\0' || strlen(s) > 19)
        return -1;
    int64_t r = 0;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        int d = *s - '0';
        if (r > (INT64_MAX - d) / 10)
            return -1;
        r = r * 10 + d;
    }
    *v = r;
    return 0;
}

int idmc_gw_get_i64(const json_t *obj, const char *name, int64_t *v)
{
    json_t *j = json_object_get(obj, name);
    if (j == NULL) {
        *v = 0;
        return 0;
    }
    if (json_is_integer(j)) {
        *v = (int64_t)json_integer_value(j);
        return 0;
    }
    const char *s = json_string_value(j);
    if (s == NULL)
        return -1;
    /* Only a lease's TTL is ever negative (-1: expired). */
    bool minus = s[0] == '-';
    if (idmc_gw_parse_i64(s + minus, v) != 0)
        return -1;
    if (minus)
        *v = -*v;
    return 0;
}

json_t *idmc_gw_i64(int64_t v)
{
    char s[24];
    snprintf(s, sizeof s, "%" PRId64, v);
    return json_string(s);
}

/* ---- requests ---------------------------------------------------------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;

static void curl_init(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t on_body(char *p, size_t size, size_t n, void *user)
{
    body *b = user;
    size_t len = size * n;
    if (len > BODY_MAX - b->len) {
        b->too_big = true;
        return 0; /* aborts the transfer */
    }
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap == 0 ? 4096 : b->cap;
        while (cap < b->len + len + 1)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (q == NULL)
            return 0;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, len);
    b->len += len;
    b->p[b->len] = '\0';
    return len;
}

int idmc_gw_new(const idmc_target *t, int64_t timeout_ms, idmc_gw **out, char *msg, size_t cap)
{
    *out = NULL;
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK) {
        snprintf(msg, cap, "libcurl did not initialise: %s", curl_easy_strerror(curl_init_rc));
        return IDMC_ERROR;
    }
    idmc_gw *g = calloc(1, sizeof *g);
    if (g == NULL) {
        snprintf(msg, cap, "out of memory");
        return IDMC_ERROR;
    }
    g->target = t;
    g->timeout_ms = timeout_ms;
    g->curl = curl_easy_init();
    g->headers = curl_slist_append(NULL, "Content-Type: application/json");
    struct curl_slist *h = g->headers != NULL ? curl_slist_append(g->headers, "Expect:") : NULL;
    if (g->curl == NULL || h == NULL) {
        idmc_gw_free(g);
        snprintf(msg, cap, "out of memory");
        return IDMC_ERROR;
    }
    CURL *k = g->curl;
    /* No signals: the caller's threads are not curl's to interrupt (and
     * name resolution then has no alarm(), but the threaded resolver of
     * Debian's libcurl needs none). */
    curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
    /* The gateway is reached directly: no proxy from the environment (the
     * library reads none), no redirects. */
    curl_easy_setopt(k, CURLOPT_PROXY, "");
    curl_easy_setopt(k, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(k, CURLOPT_HTTPHEADER, g->headers);
    curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(k, CURLOPT_WRITEDATA, &g->in);
    curl_easy_setopt(k, CURLOPT_ERRORBUFFER, g->err);
    curl_easy_setopt(k, CURLOPT_TCP_NODELAY, 1L);
    *out = g;
    return 0;
}

void idmc_gw_free(idmc_gw *g)
{
    if (g == NULL)
        return;
    curl_easy_cleanup(g->curl);
    curl_slist_free_all(g->headers);
    free(g->in.p);
    free(g);
}

void idmc_gw_where(const idmc_gw *g, char *dst, size_t cap)
{
    const idmc_endpoint *ep = &g->target->ep[g->good];
    snprintf(dst, cap, "etcd at %s:%d", ep->host, ep->port);
}

void idmc_gw_unexpected(const idmc_gw *g, const char *what, char *msg, size_t cap)
{
    char w[300];
    idmc_gw_where(g, w, sizeof w);
    snprintf(msg, cap, "%s answered something unexpected: %s", w, what);
}

bool idmc_gw_answered(const idmc_gw *g)
{
    return g->answered;
}

/* The reason in an error answer: {"error": "...", "message": "..."} or a
 * stream's {"error": {"message": "..."}}; NULL when there is none. */
static const char *error_text(const json_t *resp)
{
    json_t *err = json_object_get(resp, "error");
    const char *s = json_string_value(json_object_get(resp, "message"));
    if (s == NULL)
        s = json_string_value(err);
    if (s == NULL)
        s = json_string_value(json_object_get(err, "message"));
    return s;
}

/* "HTTP 503: REASON" from a 503's body (etcd: no leader, say). */
static void unavailable(const body *in, char *dst, size_t cap)
{
    json_t *resp = in->p != NULL ? json_loadb(in->p, in->len, 0, NULL) : NULL;
    const char *s = error_text(resp);
    snprintf(dst, cap, "HTTP 503: %s", s != NULL ? s : "unavailable");
    json_decref(resp);
}

/* Whether a failed transfer is worth trying on the next server: it did not
 * reach this one, or this one did not answer in time. */
static bool try_next(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
        return true;
    default:
        return false;
    }
}

/* One POST of text to one server: the curl result, *status the HTTP status. */
static CURLcode post_one(idmc_gw *g, size_t i, const char *path, const char *text, long *status)
{
    const idmc_endpoint *ep = &g->target->ep[i];
    char url[400];
    snprintf(url, sizeof url, "http://%s:%d%s", ep->host, ep->port, path);
    long timeout = (long)g->timeout_ms;
    g->in.len = 0;
    g->in.too_big = false;
    g->err[0] = '\0';
    curl_easy_setopt(g->curl, CURLOPT_URL, url);
    curl_easy_setopt(g->curl, CURLOPT_POSTFIELDS, text);
    curl_easy_setopt(g->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(text));
    curl_easy_setopt(g->curl, CURLOPT_TIMEOUT_MS, timeout);
    curl_easy_setopt(g->curl, CURLOPT_CONNECTTIMEOUT_MS, timeout);
    CURLcode rc = curl_easy_perform(g->curl);
    *status = 0;
    if (rc == CURLE_OK)
        curl_easy_getinfo(g->curl, CURLINFO_RESPONSE_CODE, status);
    return rc;
}

int idmc_gw_call(idmc_gw *g, const char *path, json_t *req, json_t **out, char *msg, size_t cap)
{
    *out = NULL;
    g->answered = false;
    char *text = req != NULL ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (text == NULL) {
        snprintf(msg, cap, "out of memory");
        return IDMC_ERROR;
    }
    size_t n = g->target->n;
    size_t at = 0; /* bytes of msg used by the failures so far */
    msg[0] = '\0';
    int result = IDMC_ERROR;
    for (size_t k = 0; k < n; k++) {
        size_t i = (g->good + k) % n;
        const idmc_endpoint *ep = &g->target->ep[i];
        long status;
        CURLcode rc = post_one(g, i, path, text, &status);
        if (rc != CURLE_OK || status == 503) {
            char why[CURL_ERROR_SIZE + 64];
            if (rc != CURLE_OK && g->in.too_big)
                snprintf(why, sizeof why, "an answer over %u bytes", BODY_MAX);
            else if (rc != CURLE_OK)
                snprintf(why, sizeof why, "%s",
                         g->err[0] != '\0' ? g->err : curl_easy_strerror(rc));
            else
                unavailable(&g->in, why, sizeof why);
            if (at < cap) {
                int w = snprintf(msg + at, cap - at, "%s%s:%d: %s", k == 0 ? "etcd at " : "; at ",
                                 ep->host, ep->port, why);
                at = w < 0 ? cap : at + (size_t)w;
            }
            if (rc == CURLE_OK || try_next(rc))
                continue;
            break;
        }
        g->good = i;
        g->answered = true;
        json_t *resp = json_loadb(g->in.p != NULL ? g->in.p : "", g->in.len, 0, NULL);
        if (status != 200) {
            const char *s = error_text(resp);
            snprintf(msg, cap, "etcd at %s:%d: %s: HTTP %ld: %s", ep->host, ep->port, path, status,
                     s != NULL ? s : "(no reason given)");
            json_decref(resp);
            break;
        }
        if (!json_is_object(resp)) {
            snprintf(msg, cap, "etcd at %s:%d: %s: the answer is not a JSON object", ep->host,
                     ep->port, path);
            json_decref(resp);
            break;
        }
        if (json_object_get(resp, "error") != NULL) {
            const char *s = error_text(resp);
            snprintf(msg, cap, "etcd at %s:%d: %s: %s", ep->host, ep->port, path,
                     s != NULL ? s : "an error without a reason");
            json_decref(resp);
            break;
        }
        *out = resp;
        result = 0;
        break;
    }
    free(text);
    return result;
}
