/*
 * options.c - idmintd's settings: defaults, then the config file
 * (--config FILE, lines of `key = value` with the long flag names as keys),
 * then the command-line flags, which win. Documented in idmintd(8).
 *
 * The values that idmint takes too (--layout, --epoch, --node,
 * --max-rewind) and the counts and milliseconds are parsed by
 * common/optvalue.c, so both front ends accept the same texts.
 */
#include "options.h"
#include "log.h"

#include "config/config_parser.h"
#include "idmint_coord.h"
#include "optparse.h"
#include "optvalue.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    OPT_HELP = 1,
    OPT_VERSION,
    OPT_CONFIG,
    OPT_HTTP,
    OPT_RESP,
    OPT_MEMCACHE,
    OPT_MAX_OFFSET,
    OPT_KEY_FILE,
    OPT_NODE,
    OPT_LAYOUT,
    OPT_EPOCH,
    OPT_MAX_REWIND,
    OPT_STATE_DIR,
    OPT_LOG_FILE,
    OPT_LOG_LEVEL,
    OPT_MAX_CONNECTIONS,
    OPT_MAX_COUNT,
    OPT_IDLE_TIMEOUT,
    OPT_RESP_IDLE_TIMEOUT,
    OPT_MEMCACHE_IDLE_TIMEOUT,
    OPT_RESERVE,
    OPT_HEADER_TIMEOUT,
    OPT_MAX_BUFFERED,
    OPT_AUTH_TOKEN_FILE,
    OPT_ALLOW_UNAUTHENTICATED,
    OPT_NODE_RANGE,
    OPT_NODE_REGISTRY,
    OPT_TLS_CERT,
    OPT_TLS_KEY,
    OPT_COORD,
    OPT_LEASE_TTL,
    OPT_SEGMENTS,
    OPT_SEGMENT_TAGS,
    OPT_CORS_ORIGIN,
    OPT_TINYID_OPEN,
    OPT_SEQ_START,
    OPT_CHECK_CONFIG
};

/* clang-format off */
static const idmx_option options[] = {
    {"help", 'h', IDMX_NO_ARG, OPT_HELP},
    {"version", 0, IDMX_NO_ARG, OPT_VERSION},
    {"config", 'c', IDMX_REQUIRED_ARG, OPT_CONFIG},
    {"check-config", 0, IDMX_NO_ARG, OPT_CHECK_CONFIG},
    {"http", 0, IDMX_REQUIRED_ARG, OPT_HTTP},
    {"resp", 0, IDMX_REQUIRED_ARG, OPT_RESP},
    {"memcache", 0, IDMX_REQUIRED_ARG, OPT_MEMCACHE},
    {"node", 0, IDMX_REQUIRED_ARG, OPT_NODE},
    {"layout", 0, IDMX_REQUIRED_ARG, OPT_LAYOUT},
    {"epoch", 0, IDMX_REQUIRED_ARG, OPT_EPOCH},
    {"max-rewind", 0, IDMX_REQUIRED_ARG, OPT_MAX_REWIND},
    {"max-offset", 0, IDMX_REQUIRED_ARG, OPT_MAX_OFFSET},
    {"key-file", 0, IDMX_REQUIRED_ARG, OPT_KEY_FILE},
    {"state-dir", 0, IDMX_REQUIRED_ARG, OPT_STATE_DIR},
    {"log-file", 0, IDMX_REQUIRED_ARG, OPT_LOG_FILE},
    {"log-level", 0, IDMX_REQUIRED_ARG, OPT_LOG_LEVEL},
    {"max-connections", 0, IDMX_REQUIRED_ARG, OPT_MAX_CONNECTIONS},
    {"max-count", 0, IDMX_REQUIRED_ARG, OPT_MAX_COUNT},
    {"idle-timeout", 0, IDMX_REQUIRED_ARG, OPT_IDLE_TIMEOUT},
    {"resp-idle-timeout", 0, IDMX_REQUIRED_ARG, OPT_RESP_IDLE_TIMEOUT},
    {"memcache-idle-timeout", 0, IDMX_REQUIRED_ARG, OPT_MEMCACHE_IDLE_TIMEOUT},
    {"reserve", 0, IDMX_REQUIRED_ARG, OPT_RESERVE},
    {"header-timeout", 0, IDMX_REQUIRED_ARG, OPT_HEADER_TIMEOUT},
    {"max-buffered", 0, IDMX_REQUIRED_ARG, OPT_MAX_BUFFERED},
    {"auth-token-file", 0, IDMX_REQUIRED_ARG, OPT_AUTH_TOKEN_FILE},
    {"allow-unauthenticated", 0, IDMX_NO_ARG, OPT_ALLOW_UNAUTHENTICATED},
    {"node-range", 0, IDMX_REQUIRED_ARG, OPT_NODE_RANGE},
    {"node-registry", 0, IDMX_REQUIRED_ARG, OPT_NODE_REGISTRY},
    {"coord", 0, IDMX_REQUIRED_ARG, OPT_COORD},
    {"lease-ttl", 0, IDMX_REQUIRED_ARG, OPT_LEASE_TTL},
    {"segments", 0, IDMX_REQUIRED_ARG, OPT_SEGMENTS},
    {"segment-tags", 0, IDMX_REQUIRED_ARG, OPT_SEGMENT_TAGS},
    {"tinyid-open", 0, IDMX_NO_ARG, OPT_TINYID_OPEN},
    {"seq-start", 0, IDMX_REQUIRED_ARG, OPT_SEQ_START},
    {"tls-cert", 0, IDMX_REQUIRED_ARG, OPT_TLS_CERT},
    {"tls-key", 0, IDMX_REQUIRED_ARG, OPT_TLS_KEY},
    {"cors-origin", 0, IDMX_REQUIRED_ARG, OPT_CORS_ORIGIN},
    {NULL, 0, 0, 0},
};
/* clang-format on */

static const char help_text[] =
    "Usage: idmintd [OPTIONS]\n"
    "\n"
    "Serve IDs over HTTP/1.1, the Redis protocol (RESP2, and RESP3 after HELLO 3) and,\n"
    "when asked, memcached's.\n"
    "Runs in the foreground and logs to stderr. See idmintd(8).\n"
    "\n"
    "  -c, --config FILE         read settings from FILE (key = value; flags win)\n"
    "      --check-config        check the settings (the file's and the flags'), print\n"
    "                            every problem with its line, exit 0 or 1; serve nothing\n"
    "      --http ADDR:PORT      HTTP listen address (default 127.0.0.1:8080; 'off';\n"
    "                            unix:PATH for a Unix socket, mode 0660)\n"
    "      --resp ADDR:PORT      Redis-protocol listen address (default 127.0.0.1:6380;\n"
    "                            'off'; unix:PATH)\n"
    "      --memcache ADDR:PORT  memcached-protocol listen address, as katsubushi's:\n"
    "                            get KEY mints a snowflake (default off; unix:PATH;\n"
    "                            with --auth-token-file loopback or unix: only)\n"
    "      --node N|auto|ip      snowflake node number (default auto: the lowest free\n"
    "                            node of this host's registry, or of --coord); N is\n"
    "                            registered there and refused if another process\n"
    "                            holds it; ip: the low bits of the host's first\n"
    "                            private IPv4 address, registered as N would be\n"
    "      --node-range LO..HI   the nodes auto may lease (default: the layout's)\n"
    "      --node-registry DIR   the host-local node registry (default /run/idmint/nodes,\n"
    "                            the same for every user and environment)\n"
    "      --coord URL           lease the node from a coordinator instead, for several\n"
    "                            hosts: etcd://HOST:PORT[,...]/PREFIX or\n"
    "                            zk://HOST:PORT[,...]/PATH\n"
    "      --lease-ttl SECONDS   the lease's time to live on it (default 10, at least 2)\n"
    "      --segments URL        serve dense per-tag sequences (INCR, /v1/segment/TAG)\n"
    "                            from a segment store: sqlite:PATH or postgresql://...\n"
    "      --segment-tags N      segment tags served at most (default 4096)\n"
    "      --tinyid-open         serve tinyid's routes (/tinyid/id/...) without a\n"
    "                            token (tinyid requires one: without this they take\n"
    "                            the token of --auth-token-file, and refuse all\n"
    "                            requests when there is none)\n"
    "      --layout L            snowflake layout: preset or spec (default twitter)\n"
    "      --epoch E             override the layout's epoch (Unix ms or RFC 3339)\n"
    "      --seq-start S         random (default) or zero: where each time unit's\n"
    "                            snowflake sequence starts (random: in its lower half,\n"
    "                            so that id % N spreads at low traffic, as Leaf's)\n"
    "      --max-rewind MS       wait out clock steps back of up to MS ms; refuse\n"
    "                            beyond (default 10)\n"
    "      --max-offset MS       refuse HLC stamps and ?after= IDs more than MS ms\n"
    "                            ahead of this clock (default 500)\n"
    "      --key-file FILE       serve /v1/obfuscate and /v1/reveal under the key in\n"
    "                            FILE (idmint keygen; mode 0600, owned by this user)\n";
/* The rest (one literal stays under C99's 4095 bytes). */
static const char help_text_more[] =
    "      --state-dir DIR       where generator state and the time high-water mark\n"
    "                            live (default /var/lib/idmintd as root, else\n"
    "                            ~/.local/state/idmintd; 'none' keeps no state)\n"
    "      --reserve MS          time reserved (and fsynced) ahead of use (default 1000)\n"
    "      --max-count N         most IDs per request (default 10000)\n"
    "      --max-connections N   open connections per port at most (default 10000)\n"
    "      --idle-timeout MS     close HTTP connections idle this long (default 60000;\n"
    "                            0 never)\n"
    "      --resp-idle-timeout MS\n"
    "                            the same for the Redis protocol (default 0: never)\n"
    "      --memcache-idle-timeout MS\n"
    "                            the same for memcached's (default 0: never)\n"
    "      --header-timeout MS   a request must be complete within MS of its first\n"
    "                            byte, else 408 and close (default 10000; 0 never)\n"
    "      --max-buffered SIZE   input and replies buffered across all connections\n"
    "                            (default 64M; K, M, G suffixes)\n"
    "      --auth-token-file FILE\n"
    "                            require the token in FILE (mode 0600 or stricter,\n"
    "                            owned by this user): HTTP Authorization: Bearer,\n"
    "                            RESP AUTH; /healthz and /readyz stay open\n"
    "      --allow-unauthenticated\n"
    "                            listen beyond loopback without a token anyway (a\n"
    "                            unix: socket needs neither: its mode 0660 is its\n"
    "                            access control)\n"
    "      --cors-origin ORIGIN  let pages from ORIGIN (scheme://host[:port], or *\n"
    "                            for any) call the HTTP API from a browser: CORS\n"
    "                            headers and preflights; repeat it or give a comma\n"
    "                            list (default: none)\n"
    "      --tls-cert FILE       serve every port over TLS 1.2+ with this PEM\n"
    "                            certificate chain (default: none; SIGHUP reloads)\n"
    "      --tls-key FILE        its PEM private key (given with --tls-cert)\n"
    "      --log-file FILE       log there instead of stderr (SIGHUP reopens it)\n"
    "      --log-level L         error, warn, info (default) or debug\n"
    "  -h, --help                show this help and exit\n"
    "      --version             show the version and exit\n";

static void defaults(idms_options *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->http, sizeof o->http, "127.0.0.1:8080");
    snprintf(o->resp, sizeof o->resp, "127.0.0.1:6380");
    snprintf(o->layout, sizeof o->layout, "twitter");
    o->max_rewind_ms = IDM_SF_DEFAULT_MAX_REWIND_MS;
    o->max_offset_ms = IDM_HLC_DEFAULT_MAX_OFFSET_MS;
    o->log_level = IDMS_LOG_INFO;
    o->max_connections = 10000;
    o->seq_start_random = true; /* as Leaf's: docs/idmintd.md, "Leaf" */
    o->max_count = 10000;
    o->idle_timeout_ms = 60000;
    o->resp_idle_timeout_ms = 0;
    o->reserve_ms = 1000;
    o->header_timeout_ms = 10000;
    o->lease_ttl_ms = 10000;
    o->segment_tags = IDMS_SEG_TAGS_DEFAULT;
    if (idmc_local_default_dir(o->node_registry, sizeof o->node_registry) != 0)
        o->node_registry[0] = '\0';
    o->max_buffered = UINT64_C(64) << 20;
    const char *home = getenv("HOME");
    if (geteuid() == 0 || home == NULL)
        snprintf(o->state_dir, sizeof o->state_dir, "/var/lib/idmintd");
    else
        snprintf(o->state_dir, sizeof o->state_dir, "%s/.local/state/idmintd", home);
}

static int copy_text(char *dst, size_t cap, const char *name, const char *v, char *err,
                     size_t err_cap)
{
    if (strlen(v) >= cap) {
        snprintf(err, err_cap, "%s: value too long (at most %zu characters)", name, cap - 1);
        return -1;
    }
    snprintf(dst, cap, "%s", v);
    return 0;
}

/* A listen address: ADDR:PORT (conn.c parses it), "off", or unix:PATH
 * with a path that fits a Unix socket's address (sun_path: 107 bytes and
 * its NUL). */
static int set_listen(char *dst, size_t cap, const char *name, const char *v, char *err,
                      size_t err_cap)
{
    int kind = idmx_parse_listen(name, v, NULL, err, err_cap);
    if (kind < 0)
        return -1;
    return copy_text(dst, cap, name, kind == IDMX_LISTEN_OFF ? "" : v, err, err_cap);
}

/* --layout and --epoch are checked as they come, so that a config file's
 * mistake is reported with its line; idms_options_load checks the pair
 * (and --node) once all are in. */
static int check_layout(const char *v, char *err, size_t err_cap)
{
    idm_sf_layout l;
    return idmx_layout_resolve(v, NULL, &l, err, err_cap);
}

static int check_epoch(const char *v, char *err, size_t err_cap)
{
    int64_t ms;
    return idmx_parse_epoch(v, &ms, err, err_cap);
}

/* A flag's value: none on the command line (the flag alone means yes),
 * yes or no in the config file, where every key needs a value. */
static int parse_flag(const char *name, const char *v, bool *out, char *err, size_t err_cap)
{
    static const char *const yes[] = {"yes", "true", "on", "1"};
    static const char *const no[] = {"no", "false", "off", "0"};
    if (v == NULL) {
        *out = true;
        return 0;
    }
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcmp(v, yes[i]) == 0 || strcmp(v, no[i]) == 0) {
            *out = strcmp(v, yes[i]) == 0;
            return 0;
        }
    }
    snprintf(err, err_cap, "%s: '%s' is not yes or no (or true, false, on, off, 1, 0)", name, v);
    return -1;
}

/* --cors-origin: "none" empties the list; otherwise each origin of a
 * comma list (spaces around the commas allowed) is checked and added
 * once. */
static int add_cors_origins(idms_options *o, const char *name, const char *v, char *err,
                            size_t err_cap)
{
    if (strcmp(v, "none") == 0) {
        o->n_cors_origins = 0;
        return 0;
    }
    const char *p = v;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        while (len > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            len--;
        }
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        if (len == 0) {
            snprintf(err, err_cap, "%s: an empty origin in '%.200s'", name, v);
            return -1;
        }
        char origin[IDMS_CORS_ORIGIN_CAP];
        if (idmx_parse_origin(name, p, len, origin, sizeof origin, err, err_cap) != 0)
            return -1;
        size_t k = 0;
        while (k < o->n_cors_origins && strcmp(o->cors_origins[k], origin) != 0)
            k++;
        if (k == o->n_cors_origins) {
            if (k == IDMS_CORS_ORIGINS_MAX) {
                snprintf(err, err_cap, "%s: at most %d origins (* allows any)", name,
                         IDMS_CORS_ORIGINS_MAX);
                return -1;
            }
            memcpy(o->cors_origins[k], origin, sizeof origin);
            o->n_cors_origins++;
        }
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}

/* Applies one setting by option id. Returns 0 or -1 with err set. */
static int apply(idms_options *o, int id, const char *name, const char *v, char *err,
                 size_t err_cap)
{
    uint64_t x = 0;
    switch (id) {
    case OPT_HTTP:
        return set_listen(o->http, sizeof o->http, name, v, err, err_cap);
    case OPT_RESP:
        return set_listen(o->resp, sizeof o->resp, name, v, err, err_cap);
    case OPT_MEMCACHE:
        return set_listen(o->memcache, sizeof o->memcache, name, v, err, err_cap);
    case OPT_NODE:
        o->node_ip = false;
        if (strcmp(v, "auto") == 0) {
            o->node_set = false;
            o->node = 0;
            return 0;
        }
        if (strcmp(v, "ip") == 0) {
            /* The node comes from an address at start-up (node.c). */
            o->node_set = true;
            o->node_ip = true;
            o->node = 0;
            return 0;
        }
        if (idmx_parse_whole(name, v, &idmx_range_node, &o->node, err, err_cap) != 0)
            return -1;
        o->node_set = true;
        return 0;
    case OPT_LAYOUT:
        if (check_layout(v, err, err_cap) != 0)
            return -1;
        return copy_text(o->layout, sizeof o->layout, name, v, err, err_cap);
    case OPT_EPOCH:
        if (check_epoch(v, err, err_cap) != 0)
            return -1;
        return copy_text(o->epoch, sizeof o->epoch, name, v, err, err_cap);
    case OPT_MAX_REWIND:
        return idmx_parse_ms(name, v, &idmx_range_max_rewind_ms, &o->max_rewind_ms, err, err_cap);
    case OPT_MAX_OFFSET:
        return idmx_parse_ms(name, v, &idmx_range_max_offset_ms, &o->max_offset_ms, err, err_cap);
    case OPT_KEY_FILE:
        if (v[0] == '\0') {
            snprintf(err, err_cap, "%s: needs a file name", name);
            return -1;
        }
        return copy_text(o->key_file, sizeof o->key_file, name, v, err, err_cap);
    case OPT_STATE_DIR:
        return copy_text(o->state_dir, sizeof o->state_dir, name, strcmp(v, "none") == 0 ? "" : v,
                         err, err_cap);
    case OPT_LOG_FILE:
        return copy_text(o->log_file, sizeof o->log_file, name, v, err, err_cap);
    case OPT_LOG_LEVEL:
        o->log_level = idms_log_level_from_name(v);
        if (o->log_level < 0) {
            snprintf(err, err_cap, "%s: '%s' is not error, warn, info or debug", name, v);
            return -1;
        }
        return 0;
    case OPT_MAX_CONNECTIONS:
        if (idmx_parse_whole(name, v, &idmx_range_max_connections, &x, err, err_cap) != 0)
            return -1;
        o->max_connections = (uint32_t)x;
        return 0;
    case OPT_MAX_COUNT:
        return idmx_parse_whole(name, v, &idmx_range_max_count, &o->max_count, err, err_cap);
    case OPT_IDLE_TIMEOUT:
        if (idmx_parse_whole(name, v, &idmx_range_idle_timeout_ms, &x, err, err_cap) != 0)
            return -1;
        o->idle_timeout_ms = (uint32_t)x;
        return 0;
    case OPT_RESP_IDLE_TIMEOUT:
        if (idmx_parse_whole(name, v, &idmx_range_idle_timeout_ms, &x, err, err_cap) != 0)
            return -1;
        o->resp_idle_timeout_ms = (uint32_t)x;
        return 0;
    case OPT_MEMCACHE_IDLE_TIMEOUT:
        if (idmx_parse_whole(name, v, &idmx_range_idle_timeout_ms, &x, err, err_cap) != 0)
            return -1;
        o->memcache_idle_timeout_ms = (uint32_t)x;
        return 0;
    case OPT_RESERVE:
        return idmx_parse_ms(name, v, &idmx_range_reserve_ms, &o->reserve_ms, err, err_cap);
    case OPT_HEADER_TIMEOUT:
        if (idmx_parse_whole(name, v, &idmx_range_idle_timeout_ms, &x, err, err_cap) != 0)
            return -1;
        o->header_timeout_ms = (uint32_t)x;
        return 0;
    case OPT_MAX_BUFFERED:
        return idmx_parse_size(name, v, &idmx_range_max_buffered, &o->max_buffered, err, err_cap);
    case OPT_AUTH_TOKEN_FILE:
        /* An empty value would quietly turn access control off. */
        if (v[0] == '\0') {
            snprintf(err, err_cap, "%s: needs a file name", name);
            return -1;
        }
        return copy_text(o->auth_token_file, sizeof o->auth_token_file, name, v, err, err_cap);
    case OPT_ALLOW_UNAUTHENTICATED:
        return parse_flag(name, v, &o->allow_unauthenticated, err, err_cap);
    case OPT_TINYID_OPEN:
        return parse_flag(name, v, &o->tinyid_open, err, err_cap);
    case OPT_SEQ_START:
        if (strcmp(v, "zero") == 0 || strcmp(v, "random") == 0) {
            o->seq_start_random = v[0] == 'r';
            return 0;
        }
        snprintf(err, err_cap, "%s: '%.64s' is not zero or random", name, v);
        return -1;
    case OPT_NODE_RANGE:
        if (idmx_parse_node_range(name, v, &o->node_lo, &o->node_hi, err, err_cap) != 0)
            return -1;
        o->node_range_set = true;
        return 0;
    case OPT_NODE_REGISTRY:
        if (v[0] != '/') {
            snprintf(err, err_cap, "%s: needs an absolute path, got '%.64s'", name, v);
            return -1;
        }
        return copy_text(o->node_registry, sizeof o->node_registry, name, v, err, err_cap);
    case OPT_COORD:
        if (strcmp(v, "none") == 0) {
            o->coord[0] = '\0';
            return 0;
        }
        if (strncmp(v, "etcd://", 7) != 0 && strncmp(v, "zk://", 5) != 0) {
            snprintf(err, err_cap,
                     "%s: expected etcd://HOST:PORT[,HOST:PORT...]/PREFIX or "
                     "zk://HOST:PORT[,...]/PATH, got '%.64s'",
                     name, v);
            return -1;
        }
        return copy_text(o->coord, sizeof o->coord, name, v, err, err_cap);
    case OPT_SEGMENTS:
        if (strcmp(v, "none") == 0) {
            o->segments[0] = '\0';
            return 0;
        }
        if (strncmp(v, "sqlite:", 7) != 0 && strncmp(v, "postgresql://", 13) != 0 &&
            strncmp(v, "postgres://", 11) != 0) {
            snprintf(err, err_cap, "%s: expected sqlite:PATH or postgresql://..., got '%.64s'",
                     name, v);
            return -1;
        }
        return copy_text(o->segments, sizeof o->segments, name, v, err, err_cap);
    case OPT_SEGMENT_TAGS:
        if (idmx_parse_whole(name, v, &idmx_range_segment_tags, &x, err, err_cap) != 0)
            return -1;
        o->segment_tags = (size_t)x;
        return 0;
    case OPT_LEASE_TTL:
        if (idmx_parse_whole(name, v, &idmx_range_lease_ttl, &x, err, err_cap) != 0)
            return -1;
        o->lease_ttl_ms = (int64_t)x * 1000;
        return 0;
    case OPT_TLS_CERT:
        return copy_text(o->tls_cert, sizeof o->tls_cert, name, v, err, err_cap);
    case OPT_TLS_KEY:
        return copy_text(o->tls_key, sizeof o->tls_key, name, v, err, err_cap);
    case OPT_CORS_ORIGIN:
        return add_cors_origins(o, name, v, err, err_cap);
    default:
        snprintf(err, err_cap, "%s cannot be set here", name);
        return -1;
    }
}

struct config_ctx {
    idms_options *o;
    const char *path;
    char err[1100 + IDMX_OPT_MSG_CAP];
    bool check;        /* --check-config: report each problem and go on */
    unsigned base;     /* the line number of the text's first line, less 1 */
    unsigned problems; /* reported so far (check) */
    struct origins *from;
};

/* Where the settings checked together were last set: a line of the file,
 * or 0 (the default, or the command line). */
struct origins {
    const char *path;
    unsigned node, layout, tls;
};

/* The origin of a setting id, if check_together looks at it. */
static unsigned *origin_of(struct origins *from, int id)
{
    switch (id) {
    case OPT_NODE:
        return &from->node;
    case OPT_LAYOUT:
    case OPT_EPOCH:
        return &from->layout;
    case OPT_TLS_CERT:
    case OPT_TLS_KEY:
        return &from->tls;
    default:
        return NULL;
    }
}

/* A problem found: the parse stops at it, or (check) it is reported and
 * the parse goes on. */
static int config_problem(struct config_ctx *c)
{
    if (!c->check)
        return 1;
    fprintf(stderr, "idmintd: %s\n", c->err);
    c->problems++;
    return 0;
}

static int config_entry(void *ctx, const char *key, size_t key_len, const char *value,
                        size_t value_len, unsigned line)
{
    struct config_ctx *c = ctx;
    char k[64], v[1100];
    line += c->base;
    if (key_len >= sizeof k || value_len >= sizeof v) {
        snprintf(c->err, sizeof c->err, "%s:%u: entry too long", c->path, line);
        return config_problem(c);
    }
    memcpy(k, key, key_len);
    k[key_len] = '\0';
    memcpy(v, value, value_len);
    v[value_len] = '\0';
    for (const idmx_option *opt = options; opt->long_name != NULL; opt++) {
        if (strcmp(opt->long_name, k) != 0)
            continue;
        if (opt->id == OPT_HELP || opt->id == OPT_VERSION || opt->id == OPT_CONFIG ||
            opt->id == OPT_CHECK_CONFIG)
            break;
        char err[IDMX_OPT_MSG_CAP];
        if (apply(c->o, opt->id, k, v, err, sizeof err) != 0) {
            snprintf(c->err, sizeof c->err, "%s:%u: %s", c->path, line, err);
            return config_problem(c);
        }
        unsigned *at = origin_of(c->from, opt->id);
        if (at != NULL)
            *at = line;
        return 0;
    }
    snprintf(c->err, sizeof c->err, "%s:%u: unknown setting '%s'", c->path, line, k);
    return config_problem(c);
}

/* --check-config: every line parsed alone (an entry never spans lines), so
 * that a syntax error is reported and the lines after it are checked too. */
static void check_lines(struct config_ctx *c, const char *text, size_t len)
{
    size_t i = 0;
    for (unsigned no = 1; i < len || (i == 0 && len == 0); no++) {
        const char *end = memchr(text + i, '\n', len - i);
        size_t n = end != NULL ? (size_t)(end - (text + i)) : len - i;
        c->base = no - 1;
        unsigned line = 0;
        char err[256];
        if (idms_config_parse(text + i, n, config_entry, c, &line, err, sizeof err) < 0) {
            snprintf(c->err, sizeof c->err, "%s:%u: %s", c->path, no, err);
            (void)config_problem(c);
        }
        i += n + 1;
        if (end == NULL)
            break;
    }
}

static int load_config(idms_options *o, const char *path, bool check, unsigned *problems,
                       struct origins *from)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "idmintd: cannot open config file %s: %s\n", path, strerror(errno));
        *problems += check;
        return check ? 0 : 2;
    }
    enum { MAX = 1 << 20 };
    char *text = malloc(MAX + 1);
    size_t len = 0;
    ssize_t r = 0;
    while (text != NULL && len <= MAX && (r = read(fd, text + len, MAX + 1 - len)) > 0)
        len += (size_t)r;
    close(fd);
    if (text == NULL || r < 0 || len > MAX) {
        fprintf(stderr, "idmintd: cannot read config file %s: %s\n", path,
                text == NULL ? "out of memory"
                : r < 0      ? strerror(errno)
                             : "larger than 1 MiB");
        free(text);
        *problems += check;
        return check ? 0 : 2;
    }
    struct config_ctx c = {o, path, {0}, check, 0, 0, from};
    if (check) {
        check_lines(&c, text, len);
        free(text);
        *problems += c.problems;
        return 0;
    }
    unsigned line = 0;
    char err[256];
    int rc = idms_config_parse(text, len, config_entry, &c, &line, err, sizeof err);
    free(text);
    if (rc < 0) {
        fprintf(stderr, "idmintd: %s:%u: %s\n", path, line, err);
        return 2;
    }
    if (rc > 0) {
        fprintf(stderr, "idmintd: %s\n", c.err);
        return 2;
    }
    return 0;
}

static unsigned check_together(const idms_options *o, const struct origins *from, bool check);

int idms_options_load(idms_options *o, int argc, char **argv)
{
    defaults(o);
    idmx_optparse p;
    /* First pass: --help, --version and --config. */
    idmx_opt_init(&p, argc, argv, 1);
    const char *config = NULL;
    bool check = false;
    for (;;) {
        int id = idmx_opt_next(&p, options);
        if (id == IDMX_OPT_END)
            break;
        if (id == IDMX_OPT_ERROR) {
            fprintf(stderr, "idmintd: %s\nTry 'idmintd --help' for more information.\n", p.errmsg);
            return 2;
        }
        if (id == IDMX_OPT_OPERAND) {
            fprintf(
                stderr,
                "idmintd: unexpected argument '%s'\nTry 'idmintd --help' for more information.\n",
                p.arg);
            return 2;
        }
        if (id == OPT_HELP) {
            fputs(help_text, stdout);
            fputs(help_text_more, stdout);
            return 1;
        }
        if (id == OPT_VERSION) {
            printf("idmintd %s\n", idm_version());
            return 1;
        }
        if (id == OPT_CONFIG)
            config = p.arg;
        if (id == OPT_CHECK_CONFIG)
            check = true;
    }
    unsigned problems = 0;
    struct origins from = {config, 0, 0, 0};
    if (config != NULL) {
        int rc = load_config(o, config, check, &problems, &from);
        if (rc != 0)
            return rc;
    }
    /* Second pass: the flags, over the file's settings. --cors-origin adds
     * to a list: the first on the command line replaces the file's. */
    bool cors_flag = false;
    idmx_opt_init(&p, argc, argv, 1);
    for (;;) {
        int id = idmx_opt_next(&p, options);
        if (id == IDMX_OPT_END)
            break;
        if (id == OPT_CONFIG || id == OPT_CHECK_CONFIG)
            continue;
        if (id == OPT_CORS_ORIGIN && !cors_flag) {
            o->n_cors_origins = 0;
            cors_flag = true;
        }
        unsigned *at = origin_of(&from, id);
        if (at != NULL)
            *at = 0; /* the flag's: reported without a line */
        char err[IDMX_OPT_MSG_CAP];
        if (apply(o, id, p.name, p.arg, err, sizeof err) != 0) {
            if (check) {
                fprintf(stderr, "idmintd: the command line: %s\n", err);
                problems++;
                continue;
            }
            fprintf(stderr, "idmintd: %s\nTry 'idmintd --help' for more information.\n", err);
            return 2;
        }
    }
    problems += check_together(o, &from, check);
    if (check) {
        const char *what = config != NULL ? config : "the command line";
        if (problems > 0) {
            fprintf(stderr, "idmintd: %s: %u problem%s found\n", what, problems,
                    problems == 1 ? "" : "s");
            return IDMS_OPTIONS_INVALID;
        }
        printf("idmintd: %s: the settings are valid\n", what);
        return IDMS_OPTIONS_DONE;
    }
    return problems > 0 ? IDMS_OPTIONS_USAGE : IDMS_OPTIONS_RUN;
}

/* The settings that only make sense together: the epoch for the layout,
 * the node within it (the same checks as setup_generators'), the TLS
 * certificate and its key. Each problem is reported; returns how many. */
/* "FILE:LINE: " for a setting of the file, "" for the command line's. */
static void where(char *out, size_t cap, const char *path, unsigned line)
{
    if (line > 0 && path != NULL)
        snprintf(out, cap, "%.1000s:%u: ", path, line);
    else
        out[0] = '\0';
}

static unsigned check_together(const idms_options *o, const struct origins *from, bool check)
{
    const char *more = check ? "" : "\nTry 'idmintd --help' for more information.";
    unsigned problems = 0;
    char at[1100];
    idm_sf_layout layout;
    char err[IDMX_OPT_MSG_CAP];
    if (idmx_layout_resolve(o->layout, o->epoch[0] != '\0' ? o->epoch : NULL, &layout, err,
                            sizeof err) != 0 ||
        (!o->node_ip && idmx_check_node("--node", o->node, &layout, err, sizeof err) != 0)) {
        unsigned line = from->node > from->layout ? from->node : from->layout;
        where(at, sizeof at, from->path, line);
        fprintf(stderr, "idmintd: %s%s%s\n", at, err, more);
        problems++;
    }
    /* A certificate without its key (or the reverse) cannot serve TLS, and
     * serving plain text instead would be a surprise. */
    if ((o->tls_cert[0] == '\0') != (o->tls_key[0] == '\0')) {
        where(at, sizeof at, from->path, from->tls);
        fprintf(stderr, "idmintd: %s--tls-cert and --tls-key go together: %s is missing%s\n", at,
                o->tls_cert[0] == '\0' ? "--tls-cert" : "--tls-key", more);
        problems++;
    }
    return problems;
}
