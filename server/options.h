/*
 * options.h - idmintd's settings: defaults < config file < flags
 * (options.c). Not installed.
 */
#ifndef IDMS_OPTIONS_H
#define IDMS_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IDMS_SEG_TAGS_DEFAULT 4096 /* --segment-tags: live tags at most (segments.h) */
#define IDMS_CORS_ORIGINS_MAX 16   /* --cors-origin: origins listed at most */
#define IDMS_CORS_ORIGIN_CAP  256  /* an origin's bytes and its NUL */

typedef struct idms_options {
    char http[128];          /* ADDR:PORT or unix:PATH, "" = off */
    char resp[128];
    char memcache[128];      /* memcached's protocol; "" (the default) = off */
    uint64_t node;
    bool node_set;           /* --node N: static (registered); else leased ("auto") */
    bool node_range_set;     /* --node-range LO..HI */
    uint64_t node_lo, node_hi;
    bool node_ip;            /* --node ip: node_set, the node from an address (node.c) */
    char node_registry[1024]; /* --node-registry: the host-local registry */
    char coord[1024];        /* --coord URL: etcd or ZooKeeper; "" = the host's registry */
    int64_t lease_ttl_ms;    /* --lease-ttl, in ms */
    char segments[1024];     /* --segments URL: the segment store; "" = none */
    size_t segment_tags;     /* --segment-tags: live tags at most (segments.h) */
    char layout[256];
    char epoch[64];
    int64_t max_rewind_ms;
    int64_t max_offset_ms;   /* --max-offset: HLC stamps and ?after= IDs ahead of the clock */
    char key_file[1024];     /* --key-file: the key of /v1/obfuscate, /v1/reveal; "" = none */
    char state_dir[1024];    /* "" = no persistence */
    char log_file[1024];     /* "" = stderr */
    int log_level;
    uint32_t max_connections; /* per port */
    uint64_t max_count;      /* per request */
    uint32_t idle_timeout_ms;      /* HTTP; 0 = never */
    uint32_t resp_idle_timeout_ms; /* RESP; 0 = never (the default, as Redis's) */
    uint32_t memcache_idle_timeout_ms; /* memcached's; 0 = never (as memcached's) */
    int64_t reserve_ms;      /* time window reserved ahead of use */
    uint32_t header_timeout_ms;    /* a request head (or a skipped body) complete within; 0 = never */
    uint64_t max_buffered;   /* bytes buffered across connections (conn.c's shares) */
    char auth_token_file[1024]; /* "" = none: no token is asked for */
    bool allow_unauthenticated; /* listen beyond loopback without a token */
    /* --cors-origin: the origins whose pages may call the HTTP API, each
     * scheme://host[:port] in lower case as browsers send Origin, or "*"
     * for any; n_cors_origins 0 (the default): no CORS at all. */
    char cors_origins[IDMS_CORS_ORIGINS_MAX][IDMS_CORS_ORIGIN_CAP];
    size_t n_cors_origins;
    bool tinyid_open;           /* --tinyid-open: tinyid's routes without a token */
    bool seq_start_random;      /* --seq-start random (the default) or zero */
    char tls_cert[1024];     /* PEM certificate chain; "" = no TLS */
    char tls_key[1024];      /* PEM private key, given with tls_cert */
} idms_options;

/* What idms_options_load found: the settings to run with; --help,
 * --version or a --check-config that passed, printed (exit 0); a usage
 * error, reported on stderr (exit 2); a --check-config that found
 * problems, each reported with its line (exit 1). */
enum {
    IDMS_OPTIONS_RUN = 0,
    IDMS_OPTIONS_DONE = 1,
    IDMS_OPTIONS_USAGE = 2,
    IDMS_OPTIONS_INVALID = 3
};

/* Fills defaults, then applies --config FILE and the flags (flags win).
 * With --check-config it reports every problem of the file's settings and
 * the flags' (the file's with their line numbers) and goes on past each,
 * as nginx -t does; it starts nothing. Returns an IDMS_OPTIONS_* value. */
int idms_options_load(idms_options *o, int argc, char **argv);

#endif
