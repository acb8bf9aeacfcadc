/*
 * fuzz/fuzz_optvalue.c - the option values the CLI and idmintd share
 * (common/optvalue.c): counts and milliseconds within a range, epochs,
 * and a layout with an epoch and a node.
 *
 * The input is split at its first newline into two NUL-terminated texts
 * (a NUL byte inside ends a text early, as argv would).
 * Properties:
 *  - every call returns 0 or -1; on -1 the message is a NUL-terminated
 *    sentence inside its buffer and the output is untouched;
 *  - an accepted whole number or millisecond count lies in its range, and
 *    its decimal text is accepted again as the same value;
 *  - an accepted size lies in its range and its decimal text in bytes is
 *    accepted again as the same value;
 *  - an accepted duration lies in 1 .. its maximum, and its seconds
 *    written as NUMBERs (the largest units first) are accepted again as
 *    the same value;
 *  - an accepted epoch, printed as Unix ms, is accepted again unchanged;
 *  - an accepted layout formats, and the formatted layout resolves to the
 *    same layout; a node accepted for it is at most its largest node;
 *  - a listen address is refused with a sentence, or accepted as one
 *    kind; an accepted ADDR:PORT written back is accepted again as the
 *    same address and port;
 *  - an accepted origin is "*" or "scheme://host[:port]", the text in
 *    lower case, with no '/' after the "//", no '@', '?' or '#'; it is
 *    accepted again as itself, and so is the text in upper case; a
 *    refused one leaves the output alone.
 */
#include "harness.h"
#include "optvalue.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <sys/socket.h>

static void check_msg(const char *msg, size_t cap)
{
    FUZZ_CHECK(memchr(msg, '\0', cap) != NULL);
    FUZZ_CHECK(msg[0] != '\0');
}

static void whole(const char *text, const idmx_range *r)
{
    char msg[IDMX_OPT_MSG_CAP];
    uint64_t v = 12345, again = 0;
    if (idmx_parse_whole("-n", text, r, &v, msg, sizeof msg) != 0) {
        check_msg(msg, sizeof msg);
        FUZZ_CHECK(v == 12345);
        return;
    }
    FUZZ_CHECK(v >= r->min && v <= r->max);
    char back[32];
    snprintf(back, sizeof back, "%" PRIu64, v);
    FUZZ_CHECK(idmx_parse_whole("-n", back, r, &again, msg, sizeof msg) == 0 && again == v);
}

static void size_value(const char *text)
{
    char msg[IDMX_OPT_MSG_CAP];
    const idmx_range *r = &idmx_range_max_buffered;
    uint64_t v = 7, again = 0;
    if (idmx_parse_size("--max-buffered", text, r, &v, msg, sizeof msg) != 0) {
        check_msg(msg, sizeof msg);
        FUZZ_CHECK(v == 7);
        return;
    }
    FUZZ_CHECK(v >= r->min && v <= r->max);
    char back[32];
    snprintf(back, sizeof back, "%" PRIu64, v);
    FUZZ_CHECK(idmx_parse_size("--max-buffered", back, r, &again, msg, sizeof msg) == 0 &&
               again == v);
}

static void ms(const char *text, const idmx_range *r)
{
    char msg[IDMX_OPT_MSG_CAP];
    int64_t v = -7;
    if (idmx_parse_ms("--reserve", text, r, &v, msg, sizeof msg) != 0) {
        check_msg(msg, sizeof msg);
        FUZZ_CHECK(v == -7);
        return;
    }
    FUZZ_CHECK(v >= 0 && (uint64_t)v >= r->min && (uint64_t)v <= r->max);
}

static void epoch(const char *text)
{
    char msg[IDMX_OPT_MSG_CAP];
    int64_t v = 0, again = 1;
    if (idmx_parse_epoch(text, &v, msg, sizeof msg) != 0) {
        check_msg(msg, sizeof msg);
        return;
    }
    char back[32];
    snprintf(back, sizeof back, "%" PRId64, v);
    FUZZ_CHECK(idmx_parse_epoch(back, &again, msg, sizeof msg) == 0 && again == v);
}

static void layout(const char *spec, const char *ep, const char *node)
{
    char msg[IDMX_OPT_MSG_CAP];
    idm_sf_layout l, again;
    if (idmx_layout_resolve(spec, ep, &l, msg, sizeof msg) != 0) {
        check_msg(msg, sizeof msg);
        return;
    }
    char text[IDM_SF_SPEC_CAP];
    FUZZ_CHECK(idm_sf_layout_format(&l, text, sizeof text) == IDM_OK);
    FUZZ_CHECK(idmx_layout_resolve(text, NULL, &again, msg, sizeof msg) == 0);
    FUZZ_CHECK(again.epoch_ms == l.epoch_ms && again.unit_ms == l.unit_ms);
    FUZZ_CHECK(memcmp(again.bits, l.bits, sizeof l.bits) == 0);
    FUZZ_CHECK(memcmp(again.order, l.order, sizeof l.order) == 0);
    char name[IDM_SF_SPEC_CAP];
    idmx_layout_name(&l, name, sizeof name);
    FUZZ_CHECK(name[0] != '\0');
    uint64_t n = 0;
    if (idmx_parse_node("--node", node, &l, &n, msg, sizeof msg) == 0)
        FUZZ_CHECK(n <= idm_sf_layout_max_node(&l));
    else
        check_msg(msg, sizeof msg);
}

static void duration(const char *text)
{
    char msg[IDMX_OPT_MSG_CAP];
    const int64_t max_s = INT64_C(100) * 365 * 86400;
    int64_t v = 9, again = 0;
    if (idmx_parse_duration_s("--expires", text, max_s, &v, msg, sizeof msg) != 0) {
        check_msg(msg, sizeof msg);
        FUZZ_CHECK(v == 9);
        return;
    }
    FUZZ_CHECK(v >= 1 && v <= max_s);
    char back[96];
    int64_t d = v / 86400, h = v / 3600 % 24, m = v / 60 % 60, sec = v % 60;
    size_t n = 0;
    if (d > 0)
        n += (size_t)snprintf(back + n, sizeof back - n, "%" PRId64 "d", d);
    if (h > 0)
        n += (size_t)snprintf(back + n, sizeof back - n, "%" PRId64 "h", h);
    if (m > 0)
        n += (size_t)snprintf(back + n, sizeof back - n, "%" PRId64 "m", m);
    if (sec > 0)
        snprintf(back + n, sizeof back - n, "%" PRId64 "s", sec);
    FUZZ_CHECK(idmx_parse_duration_s("--expires", back, max_s, &again, msg, sizeof msg) == 0 &&
               again == v);
}

static void origin(const char *text)
{
    char msg[IDMX_OPT_MSG_CAP];
    size_t len = strlen(text);
    char out[64], again[64], upper[64];
    memset(out, 'x', sizeof out);
    if (idmx_parse_origin("--cors-origin", text, len, out, sizeof out, msg, sizeof msg) != 0) {
        check_msg(msg, sizeof msg);
        FUZZ_CHECK(out[0] == 'x' && out[sizeof out - 1] == 'x');
        return;
    }
    FUZZ_CHECK(len < sizeof out && strlen(out) == len);
    for (size_t i = 0; i < len; i++) {
        FUZZ_CHECK(out[i] == fuzz_lower((unsigned char)text[i]));
        FUZZ_CHECK(strchr("@?#", out[i]) == NULL);
    }
    if (strcmp(out, "*") != 0) {
        const char *sep = strstr(out, "://");
        FUZZ_CHECK(sep != NULL && sep > out && strchr(sep + 3, '/') == NULL);
    }
    FUZZ_CHECK(idmx_parse_origin("o", out, len, again, sizeof again, msg, sizeof msg) == 0);
    FUZZ_CHECK(strcmp(again, out) == 0);
    for (size_t i = 0; i <= len; i++)
        upper[i] = (char)(out[i] >= 'a' && out[i] <= 'z' ? out[i] - 'a' + 'A' : out[i]);
    FUZZ_CHECK(idmx_parse_origin("o", upper, len, again, sizeof again, msg, sizeof msg) == 0);
    FUZZ_CHECK(strcmp(again, out) == 0);
}

/* A listen address: its kind, a sentence on refusal; an accepted
 * ADDR:PORT written back (inet_ntop, brackets for IPv6) is accepted again
 * as the same address and port. */
static void listen_addr(const char *text)
{
    char msg[IDMX_OPT_MSG_CAP];
    struct sockaddr_storage sa, again;
    memset(&sa, 0, sizeof sa);
    int kind = idmx_parse_listen("--http", text, &sa, msg, sizeof msg);
    if (kind < 0) {
        check_msg(msg, sizeof msg);
        return;
    }
    FUZZ_CHECK(kind <= IDMX_LISTEN_SYSTEMD);
    if (kind != IDMX_LISTEN_INET)
        return;
    char host[INET6_ADDRSTRLEN], back[INET6_ADDRSTRLEN + 16];
    if (sa.ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)&sa;
        FUZZ_CHECK(inet_ntop(AF_INET, &a->sin_addr, host, sizeof host) != NULL);
        snprintf(back, sizeof back, "%s:%u", host, (unsigned)ntohs(a->sin_port));
    } else {
        FUZZ_CHECK(sa.ss_family == AF_INET6);
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&sa;
        FUZZ_CHECK(inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host) != NULL);
        snprintf(back, sizeof back, "[%s]:%u", host, (unsigned)ntohs(a->sin6_port));
    }
    memset(&again, 0, sizeof again);
    FUZZ_CHECK(idmx_parse_listen("--http", back, &again, msg, sizeof msg) == IDMX_LISTEN_INET);
    FUZZ_CHECK(memcmp(&sa, &again, sizeof sa) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *a = malloc(size + 1), *b;
    FUZZ_CHECK(a != NULL);
    memcpy(a, data, size);
    a[size] = '\0';
    char *nl = memchr(a, '\n', size);
    if (nl != NULL) {
        *nl = '\0';
        b = nl + 1;
    } else {
        b = a + size;
    }
    whole(a, &idmx_range_count);
    size_value(a);
    whole(a, &idmx_range_max_count);
    ms(a, &idmx_range_reserve_ms);
    ms(a, &idmx_range_max_rewind_ms);
    ms(a, &idmx_range_max_offset_ms);
    duration(a);
    epoch(a);
    layout(a, b[0] ? b : NULL, b);
    layout("twitter", a, b);
    origin(a);
    listen_addr(a);
    free(a);
    return 0;
}
