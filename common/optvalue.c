/*
 * optvalue.c - see optvalue.h. The text checks are optparse's
 * (idmx_parse_u64, idmx_parse_i64), the layout and time parsers the
 * library's; what is here is the ranges and the messages.
 */
#include "optvalue.h"

#include "optparse.h"

#include <arpa/inet.h>
#include <assert.h>
#include <ctype.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* clang-format off */
const idmx_range idmx_range_count = {0, UINT64_MAX, NULL};
const idmx_range idmx_range_max_count = {1, 10000000, NULL};
/* The generator and idmintd turn milliseconds into nanoseconds and add
 * them to times: at most INT64_MAX / 10^6 ms (about 292 years) cannot
 * overflow there. */
const idmx_range idmx_range_max_rewind_ms = {0, INT64_MAX / 1000000, "ms"};
const idmx_range idmx_range_max_offset_ms = {0, INT64_C(0xFFFFFFFFFFFF), "ms"};
const idmx_range idmx_range_reserve_ms = {10, 3600000, "ms"};
const idmx_range idmx_range_idle_timeout_ms = {0, 86400000, "ms"};
const idmx_range idmx_range_max_connections = {1, 1000000, NULL};
/* Each live segment tag holds an allocator and about 1.5 KiB. */
const idmx_range idmx_range_segment_tags = {1, 1000000, NULL};
const idmx_range idmx_range_max_buffered = {UINT64_C(1) << 20, UINT64_C(1) << 40, "bytes"};
const idmx_range idmx_range_node = {0, (UINT64_C(1) << 62) - 1, NULL};
/* etcd grants leases of 2 s at least; a day is far beyond any use. */
const idmx_range idmx_range_lease_ttl = {2, 86400, "s"};
/* clang-format on */

/* The text of a failed library call: its message, or the code's text. */
static const char *reason(const idm_error *err, int rc)
{
    return err->msg[0] != '\0' ? err->msg : idm_strerror(rc);
}

#if defined(__GNUC__)
static void set_msg(char *msg, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#endif

static void set_msg(char *msg, size_t cap, const char *fmt, ...)
{
    va_list ap;
    if (msg == NULL || cap == 0) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
}

enum { WHOLE_OK = 0, WHOLE_SYNTAX = 1, WHOLE_RANGE = 2 };

/* Sorts text into a whole number (*out set), "not a number" and "a number
 * out of 0..2^64-1" (a minus sign followed by digits, or too many
 * digits), which deserve different messages. */
static int classify_whole(const char *text, uint64_t *out)
{
    if (text == NULL) {
        return WHOLE_SYNTAX;
    }
    if (idmx_parse_u64(text, out) == 0) {
        return WHOLE_OK;
    }
    const char *digits = text[0] == '-' ? text + 1 : text;
    if (digits[0] == '\0' || strspn(digits, "0123456789") != strlen(digits)) {
        return WHOLE_SYNTAX;
    }
    return WHOLE_RANGE;
}

int idmx_parse_whole(const char *name, const char *text, const idmx_range *r, uint64_t *out,
                     char *msg, size_t cap)
{
    uint64_t v = 0;
    int kind = classify_whole(text, &v);
    if (kind == WHOLE_OK && (v < r->min || v > r->max)) {
        kind = WHOLE_RANGE;
    }
    if (kind == WHOLE_OK) {
        *out = v;
        return 0;
    }
    const char *unit = r->unit != NULL ? r->unit : "";
    set_msg(msg, cap, "invalid %s '%.64s': %s (expected %" PRIu64 " to %" PRIu64 "%s%s)", name,
            text != NULL ? text : "", kind == WHOLE_SYNTAX ? "not a whole number" : "out of range",
            r->min, r->max, unit[0] != '\0' ? " " : "", unit);
    return -1;
}

int idmx_parse_ms(const char *name, const char *text, const idmx_range *r, int64_t *out, char *msg,
                  size_t cap)
{
    uint64_t v;
    assert(r->max <= (uint64_t)INT64_MAX);
    if (r->max > (uint64_t)INT64_MAX) {
        set_msg(msg, cap, "%s: range above INT64_MAX ms (a bug)", name);
        return -1;
    }
    if (idmx_parse_whole(name, text, r, &v, msg, cap) != 0) {
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

int idmx_parse_duration_s(const char *name, const char *text, int64_t max_s, int64_t *out,
                          char *msg, size_t cap)
{
    static const char units[] = "dhms";
    static const int64_t unit_s[] = {86400, 3600, 60, 1};
    const char *t = text != NULL ? text : "";
    const char *s = t;
    int64_t total = 0;
    int next_unit = 0; /* units must come largest first, each once */
    if (*s == '\0') {
        set_msg(msg, cap, "invalid %s '': expected a duration such as 30s, 15m, 2h, 7d or 1h30m",
                name);
        return -1;
    }
    while (*s != '\0') {
        uint64_t v = 0;
        const char *digits = s;
        while (*s >= '0' && *s <= '9') {
            if (v > (uint64_t)max_s) {
                break;
            }
            v = v * 10 + (uint64_t)(*s - '0');
            s++;
        }
        const char *u = *s != '\0' ? strchr(units, *s) : NULL;
        if (s == digits || u == NULL || (int)(u - units) < next_unit) {
            set_msg(msg, cap,
                    "invalid %s '%.64s': expected a duration such as 30s, 15m, 2h, 7d or 1h30m "
                    "(units d, h, m, s, largest first)",
                    name, t);
            return -1;
        }
        next_unit = (int)(u - units) + 1;
        int64_t per = unit_s[u - units];
        if (v > (uint64_t)max_s || (int64_t)v > (max_s - total) / per) {
            set_msg(msg, cap, "invalid %s '%.64s': longer than %lld seconds", name, t,
                    (long long)max_s);
            return -1;
        }
        total += (int64_t)v * per;
        s++;
    }
    if (total < 1) {
        set_msg(msg, cap, "invalid %s '%.64s': must be at least 1 second", name, t);
        return -1;
    }
    *out = total;
    return 0;
}

int idmx_parse_node_range(const char *name, const char *text, uint64_t *lo, uint64_t *hi, char *msg,
                          size_t cap)
{
    const char *t = text != NULL ? text : "";
    const char *dots = strstr(t, "..");
    char first[32];
    size_t n = dots != NULL ? (size_t)(dots - t) : 0;
    if (dots == NULL || n == 0 || n >= sizeof first) {
        set_msg(msg, cap, "%s: expected LO..HI (e.g. 0..31), got '%.64s'", name, t);
        return -1;
    }
    memcpy(first, t, n);
    first[n] = '\0';
    uint64_t a = 0;
    uint64_t b = 0;
    if (idmx_parse_whole(name, first, &idmx_range_node, &a, msg, cap) != 0 ||
        idmx_parse_whole(name, dots + 2, &idmx_range_node, &b, msg, cap) != 0) {
        return -1;
    }
    if (a > b) {
        set_msg(msg, cap, "%s: %.64s is empty (LO above HI)", name, t);
        return -1;
    }
    *lo = a;
    *hi = b;
    return 0;
}

/* The multiple a size suffix stands for, 0 when it is not one. */
static uint64_t size_suffix(const char *s)
{
    static const char letters[] = "KMGT";
    if (s[0] == '\0')
        return 1;
    const char *l = strchr(letters, s[0] >= 'a' ? s[0] - 'a' + 'A' : s[0]);
    if (l == NULL)
        return 0;
    if (s[1] != '\0' && strcmp(s + 1, "iB") != 0)
        return 0;
    return UINT64_C(1) << (10 * (l - letters + 1));
}

int idmx_parse_size(const char *name, const char *text, const idmx_range *r, uint64_t *out,
                    char *msg, size_t cap)
{
    const char *t = text != NULL ? text : "";
    size_t digits = strspn(t, "0123456789");
    uint64_t mult = digits > 0 && digits < 24 ? size_suffix(t + digits) : 0;
    char num[24];
    uint64_t v = 0;
    if (mult != 0) {
        memcpy(num, t, digits);
        num[digits] = '\0';
        if (idmx_parse_u64(num, &v) != 0 || v > UINT64_MAX / mult)
            mult = 0;
    }
    if (mult == 0 || v * mult < r->min || v * mult > r->max) {
        set_msg(msg, cap,
                "invalid %s '%.64s': %s (expected %" PRIu64 " to %" PRIu64
                " bytes; K, M, G and T multiply by 1024)",
                name, t,
                mult == 0 && (digits == 0 || size_suffix(t + digits) == 0) ? "not a size"
                                                                           : "out of range",
                r->min, r->max);
        return -1;
    }
    *out = v * mult;
    return 0;
}

int idmx_parse_epoch(const char *text, int64_t *unix_ms, char *msg, size_t cap)
{
    int64_t ms;
    uint64_t ignored;
    if (text == NULL) {
        text = "";
    }
    if (idmx_parse_i64(text, &ms) == 0) {
        *unix_ms = ms;
        return 0;
    }
    /* Digits (after an optional minus sign) that idmx_parse_i64 refused do
     * not fit: say so rather than report where RFC 3339 parsing stumbled. */
    if (classify_whole(text, &ignored) != WHOLE_SYNTAX) {
        set_msg(msg, cap,
                "invalid epoch '%.64s': out of range (Unix milliseconds from %" PRId64
                " to %" PRId64 ")",
                text, INT64_MIN, INT64_MAX);
        return -1;
    }
    idm_error err = {0};
    int rc = idm_time_parse(text, strlen(text), &ms, &err);
    if (rc != IDM_OK) {
        set_msg(msg, cap,
                "invalid epoch '%.64s' (expected Unix milliseconds or an RFC 3339 time): %s", text,
                reason(&err, rc));
        return -1;
    }
    *unix_ms = ms;
    return 0;
}

int idmx_layout_resolve(const char *layout, const char *epoch, idm_sf_layout *out, char *msg,
                        size_t cap)
{
    idm_sf_layout l;
    idm_error err = {0};
    const char *text = layout != NULL ? layout : "twitter";
    int rc = idm_sf_layout_parse(&l, text, strlen(text), &err);
    if (rc != IDM_OK) {
        set_msg(msg, cap, "invalid layout '%.96s': %s", text, reason(&err, rc));
        return -1;
    }
    if (epoch != NULL) {
        int64_t epoch_ms;
        if (idmx_parse_epoch(epoch, &epoch_ms, msg, cap) != 0) {
            return -1;
        }
        rc = idm_sf_layout_set_epoch(&l, epoch_ms, &err);
        if (rc != IDM_OK) {
            set_msg(msg, cap, "invalid epoch '%.64s' for layout '%.96s': %s", epoch, text,
                    reason(&err, rc));
            return -1;
        }
    }
    *out = l;
    return 0;
}

int idmx_check_node(const char *name, uint64_t node, const idm_sf_layout *l, char *msg, size_t cap)
{
    uint64_t max = idm_sf_layout_max_node(l);
    if (node <= max) {
        return 0;
    }
    char lname[IDM_SF_SPEC_CAP];
    idmx_layout_name(l, lname, sizeof lname);
    set_msg(msg, cap, "%s %" PRIu64 " is out of range 0..%" PRIu64 " for layout %s", name, node,
            max, lname);
    return -1;
}

int idmx_parse_node(const char *name, const char *text, const idm_sf_layout *l, uint64_t *out,
                    char *msg, size_t cap)
{
    uint64_t v = 0;
    int kind = classify_whole(text, &v);
    if (kind == WHOLE_OK) {
        if (idmx_check_node(name, v, l, msg, cap) != 0) {
            return -1;
        }
        *out = v;
        return 0;
    }
    char lname[IDM_SF_SPEC_CAP];
    idmx_layout_name(l, lname, sizeof lname);
    if (text == NULL) {
        text = "";
    }
    if (kind == WHOLE_SYNTAX) {
        set_msg(msg, cap,
                "invalid %s '%.64s': not a whole number (expected 0..%" PRIu64 " for layout %s)",
                name, text, idm_sf_layout_max_node(l), lname);
    } else {
        set_msg(msg, cap, "%s '%.64s' is out of range 0..%" PRIu64 " for layout %s", name, text,
                idm_sf_layout_max_node(l), lname);
    }
    return -1;
}

void idmx_layout_name(const idm_sf_layout *l, char *dst, size_t cap)
{
    if (idm_sf_layout_format(l, dst, cap) != IDM_OK) {
        snprintf(dst, cap, "%s", "(unprintable layout)");
    }
}

/* The scheme's default port, which browsers leave out of Origin, or 0
 * when it has none known here. */
static unsigned long default_port(const char *scheme, size_t len)
{
    if (len == 4 && memcmp(scheme, "http", 4) == 0)
        return 80;
    if (len == 5 && memcmp(scheme, "https", 5) == 0)
        return 443;
    return 0;
}

/* The end of the host that starts at o[i] (a name, or an IPv6 literal in
 * brackets), or i when there is none. */
static size_t origin_host_end(const char *o, size_t len, size_t i)
{
    size_t start = i;
    if (i < len && o[i] == '[') {
        i++;
        while (i < len && (isxdigit((unsigned char)o[i]) || o[i] == ':' || o[i] == '.'))
            i++;
        return i < len && o[i] == ']' && i > start + 1 ? i + 1 : start;
    }
    while (i < len && (isalnum((unsigned char)o[i]) || strchr("-._", o[i]) != NULL))
        i++;
    return i;
}

int idmx_parse_listen(const char *name, const char *text, struct sockaddr_storage *sa, char *msg,
                      size_t cap)
{
    if (strcmp(text, "off") == 0 || text[0] == '\0')
        return IDMX_LISTEN_OFF;
    if (strncmp(text, "unix:", 5) == 0) {
        size_t n = strlen(text + 5);
        if (n == 0 || n > 107) {
            set_msg(msg, cap, "%s: invalid unix:PATH (a path of 1 to 107 bytes)", name);
            return -1;
        }
        return IDMX_LISTEN_UNIX;
    }
    if (strncmp(text, "systemd:", 8) == 0) {
        size_t n =
            strspn(text + 8, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-");
        if (n == 0 || n > 255 || text[8 + n] != '\0') {
            set_msg(msg, cap,
                    "%s: invalid systemd:NAME '%.64s' (the socket's FileDescriptorName=: 1 to 255 "
                    "of letters, digits, '_', '.' and '-')",
                    name, text);
            return -1;
        }
        return IDMX_LISTEN_SYSTEMD;
    }
    const char *colon = strrchr(text, ':');
    char host[INET6_ADDRSTRLEN + 1];
    size_t hlen = colon != NULL ? (size_t)(colon - text) : 0;
    const char *h = text;
    bool v6 = text[0] == '[' && hlen >= 2 && text[hlen - 1] == ']';
    if (v6) {
        h++;
        hlen -= 2;
    }
    uint64_t port = 0;
    struct sockaddr_storage addr;
    memset(&addr, 0, sizeof addr);
    bool ok = colon != NULL && hlen > 0 && hlen < sizeof host &&
              idmx_parse_u64(colon + 1, &port) == 0 && port <= 65535;
    if (ok) {
        memcpy(host, h, hlen);
        host[hlen] = '\0';
        if (v6) {
            struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&addr;
            a6->sin6_family = AF_INET6;
            a6->sin6_port = htons((uint16_t)port);
            ok = inet_pton(AF_INET6, host, &a6->sin6_addr) == 1;
        } else {
            struct sockaddr_in *a4 = (struct sockaddr_in *)&addr;
            a4->sin_family = AF_INET;
            a4->sin_port = htons((uint16_t)port);
            ok = inet_pton(AF_INET, host, &a4->sin_addr) == 1;
        }
    }
    if (!ok) {
        set_msg(msg, cap,
                "invalid %s '%.64s' (expected ADDR:PORT with an IPv4 address or an [IPv6] one "
                "and a port of 0 to 65535, unix:PATH, systemd:NAME or off)",
                name, text);
        return -1;
    }
    if (sa != NULL)
        *sa = addr;
    return IDMX_LISTEN_INET;
}

int idmx_parse_origin(const char *name, const char *text, size_t len, char *dst, size_t cap,
                      char *msg, size_t msg_cap)
{
    char o[256];
    int shown = len > 64 ? 64 : (int)len;
    if (len >= cap || len >= sizeof o) {
        set_msg(msg, msg_cap, "%s: an origin of at most %zu bytes, got %zu ('%.*s...')", name,
                (cap < sizeof o ? cap : sizeof o) - 1, len, shown, text);
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        o[i] = (char)tolower((unsigned char)text[i]);
    o[len] = '\0';
    if (strcmp(o, "*") == 0) {
        memcpy(dst, o, 2);
        return 0;
    }
    if (strcmp(o, "null") == 0) {
        set_msg(msg, msg_cap,
                "%s: 'null' is refused: sandboxed pages, file: URLs and redirects all send "
                "Origin: null, so it would let any of them in (list their real origins, or *)",
                name);
        return -1;
    }
    /* scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) (RFC 3986 3.1) */
    size_t i = 0;
    while (i < len && (isalpha((unsigned char)o[i]) ||
                       (i > 0 && (isdigit((unsigned char)o[i]) || strchr("+-.", o[i]) != NULL))))
        i++;
    size_t scheme_len = i;
    int ok = scheme_len > 0 && len - i > 3 && memcmp(o + i, "://", 3) == 0;
    if (ok) {
        size_t host = i + 3;
        i = origin_host_end(o, len, host);
        ok = i > host;
    }
    unsigned long port = 0;
    size_t digits = 0;
    if (ok && i < len && o[i] == ':') {
        size_t p = ++i;
        while (i < len && isdigit((unsigned char)o[i]) && i - p < 6)
            port = port * 10 + (unsigned long)(o[i++] - '0');
        digits = i - p;
        ok = digits > 0;
        if (ok && i == len && (port == 0 || port > 65535 || digits > 5 || o[p] == '0')) {
            set_msg(msg, msg_cap, "%s: '%.*s': the port must be 1 to 65535, without leading zeros",
                    name, shown, text);
            return -1;
        }
    }
    if (!ok || i != len) {
        set_msg(msg, msg_cap,
                "%s: '%.*s' is not an origin: scheme://host[:port] as a browser's Origin header "
                "has it (no path, no user, nothing after the port), or * for any",
                name, shown, text);
        return -1;
    }
    if (digits > 0 && port == default_port(o, scheme_len)) {
        set_msg(msg, msg_cap,
                "%s: '%.*s': browsers leave the default port out of Origin, so this would match "
                "nothing: leave the default port out (%.*s)",
                name, shown, text, (int)(strrchr(o, ':') - o), o);
        return -1;
    }
    memcpy(dst, o, len + 1);
    return 0;
}
