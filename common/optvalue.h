/*
 * optvalue.h - the values of the options that idmint and idmintd share,
 * each parsed by one function and checked against one named range, so
 * that both front ends accept the same texts and say the same things
 * about the others. Not library API.
 *
 *   counts        idmint gen -n/--count; idmintd --max-count
 *   milliseconds  --max-rewind (both); idmintd --reserve, --idle-timeout
 *   epoch         --epoch (both): Unix milliseconds, negative allowed
 *                 ("-1000"), or an RFC 3339 time
 *   layout        --layout (both): a preset or a spec, then --epoch
 *   node          --node (both): 0 to the layout's largest node
 *   origin        idmintd --cors-origin: a browser's Origin, or *
 *
 * Every parser returns 0, or -1 with msg set to one sentence that names
 * the option, quotes the value and gives the reason, without a prefix:
 * "invalid --max-count 'abc': not a whole number (expected 1 to
 * 10000000)". The front end adds "idmint: " or "idmintd: " (and a pointer
 * to --help for a usage error). name is the option as the user wrote it:
 * "-n" or "--count" from optparse (p->name), or a config file's key.
 * Values are quoted up to 64 bytes, layouts up to 96. IDMX_OPT_MSG_CAP is
 * always enough for msg; a smaller cap truncates. Outputs are written only
 * on success.
 *
 * Thread-safe: yes (pure functions).
 */
#ifndef IDMX_OPTVALUE_H
#define IDMX_OPTVALUE_H

#include <idmint/idmint.h>

#include <stddef.h>
#include <stdint.h>

#define IDMX_OPT_MSG_CAP 512

/* The range of a whole-number option, and its unit for messages. */
typedef struct idmx_range {
    uint64_t min;
    uint64_t max;
    const char *unit; /* "ms", or NULL */
} idmx_range;

/* The options' ranges: the one place where each limit is written. */
extern const idmx_range idmx_range_count;           /* gen -n: 0 to 2^64-1 */
extern const idmx_range idmx_range_max_count;       /* --max-count: 1 to 10000000 */
extern const idmx_range idmx_range_max_rewind_ms;   /* --max-rewind: 0 to INT64_MAX/10^6 ms */
extern const idmx_range idmx_range_max_offset_ms;   /* --max-offset: 0 to 2^48 - 1 ms */
extern const idmx_range idmx_range_reserve_ms;      /* --reserve: 10 to 3600000 ms */
extern const idmx_range idmx_range_idle_timeout_ms; /* --idle-timeout: 0 to 86400000 ms */
extern const idmx_range idmx_range_max_connections; /* --max-connections: 1 to 1000000 */
extern const idmx_range idmx_range_segment_tags;    /* --segment-tags: 1 to 1000000 */
extern const idmx_range idmx_range_max_buffered;    /* --max-buffered: 1 MiB to 1 TiB, bytes */
/* --node before the layout is known: any layout's (0 to 2^62-1, as a
 * layout has at least one time and one sequence bit); idmx_check_node
 * then holds it to the layout's. */
extern const idmx_range idmx_range_node;
extern const idmx_range idmx_range_lease_ttl; /* --lease-ttl: 2 to 86400 s */

/* Parses all of text as a whole number (decimal digits only: no sign,
 * space or base prefix) within r. A negative number or one too large for
 * 64 bits is "out of range", not "not a whole number". */
int idmx_parse_whole(const char *name, const char *text, const idmx_range *r, uint64_t *out,
                     char *msg, size_t cap);

/* The same for a milliseconds option (r->max must be at most INT64_MAX). */
int idmx_parse_ms(const char *name, const char *text, const idmx_range *r, int64_t *out, char *msg,
                  size_t cap);

/* Parses a size in bytes: a whole number, optionally followed by one of
 * K, M, G, T (binary multiples, 1K = 1024; "KiB" and "k" too), within r
 * (r->min and r->max in bytes). "64M" is 67108864. */
int idmx_parse_size(const char *name, const char *text, const idmx_range *r, uint64_t *out,
                    char *msg, size_t cap);

/* Parses a duration in whole seconds: one or more NUMBER UNIT parts, the
 * units s, m, h, d (each at most once, largest first: "30s", "15m", "2h",
 * "7d", "1h30m"), adding up to 1 to max_s seconds. */
int idmx_parse_duration_s(const char *name, const char *text, int64_t max_s, int64_t *out,
                          char *msg, size_t cap);

/* Parses an epoch: Unix milliseconds ("1288834974657", "-1000"; within
 * int64_t), or an RFC 3339 time (idm_time_parse: "2025-01-01T00:00:00Z",
 * offsets, fractions). Whether the layout can take it is
 * idmx_layout_resolve's check. */
int idmx_parse_epoch(const char *text, int64_t *unix_ms, char *msg, size_t cap);

/* The snowflake layout from --layout (NULL: "twitter"; a preset or a
 * spec, idm_sf_layout_parse) with --epoch applied (NULL: the layout's
 * own; idmx_parse_epoch, then idm_sf_layout_set_epoch). An empty string
 * is refused, not taken for "unset". */
int idmx_layout_resolve(const char *layout, const char *epoch, idm_sf_layout *out, char *msg,
                        size_t cap);

/* Checks node against the layout: "--node 1024 is out of range 0..1023 for
 * layout twitter". */
int idmx_check_node(const char *name, uint64_t node, const idm_sf_layout *l, char *msg, size_t cap);

/* Parses a node number for the layout: a whole number from 0 to
 * idm_sf_layout_max_node(l). */
int idmx_parse_node(const char *name, const char *text, const idm_sf_layout *l, uint64_t *out,
                    char *msg, size_t cap);

/* Parses a node range "LO..HI" (each a whole number within
 * idmx_range_node, LO at most HI): "--node-range: expected LO..HI (e.g.
 * 0..31), got 'x'". Whether the layout has those nodes is the caller's
 * check. */
int idmx_parse_node_range(const char *name, const char *text, uint64_t *lo, uint64_t *hi, char *msg,
                          size_t cap);

/* Parses text[0..len) as a web origin, for idmintd's --cors-origin: "*"
 * (any origin), or an origin as a browser's Origin header serializes it
 * (RFC 6454 section 6.2): scheme "://" host [":" port], the host a name
 * (letters, digits, '-', '.', '_') or an IPv6 literal in brackets, the
 * port 1 to 65535 without leading zeros and not the scheme's default
 * (http 80, https 443: browsers leave it out, so the entry would match
 * nothing), and nothing else - no path (not even "/"), user or query. The
 * result, in lower case as browsers send it, goes into dst (cap bytes, a
 * NUL after it) on success. "null" is refused: sandboxed frames, file:
 * pages and some redirects all send it, so allowing it would allow any of
 * them. Each refusal says why, with the value quoted. */
int idmx_parse_origin(const char *name, const char *text, size_t len, char *dst, size_t cap,
                      char *msg, size_t msg_cap);

/* A listen address, for idmintd's --http, --resp and --memcache: "off"
 * (IDMX_LISTEN_OFF), ADDR:PORT with ADDR an IPv4 address or an IPv6 one
 * in brackets and PORT 0 to 65535 (IDMX_LISTEN_INET: *sa set, when sa is
 * given), unix:PATH with a path of 1 to 107 bytes (IDMX_LISTEN_UNIX), or
 * systemd:NAME, a socket systemd passed (socket activation: NAME is its
 * FileDescriptorName=, 1 to 255 of [A-Za-z0-9_.-]) (IDMX_LISTEN_SYSTEMD).
 * Returns the kind, or -1 with msg set. Host names are refused: a listen
 * address is an address. */
enum { IDMX_LISTEN_OFF = 0, IDMX_LISTEN_INET, IDMX_LISTEN_UNIX, IDMX_LISTEN_SYSTEMD };
struct sockaddr_storage;
int idmx_parse_listen(const char *name, const char *text, struct sockaddr_storage *sa, char *msg,
                      size_t cap);

/* Writes the layout's preset name or spec and a NUL, for messages and
 * logs (idm_sf_layout_format), or "(unprintable layout)" when that fails.
 * IDM_SF_SPEC_CAP is enough; cap must be at least 1. */
void idmx_layout_name(const idm_sf_layout *l, char *dst, size_t cap);

#endif
