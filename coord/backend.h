/*
 * backend.h - what coord.c shares with the coordinator backends (etcd.c,
 * zk.c): the parsed URL, the common parts of a coordinator and of a lease,
 * and the table of operations each backend provides. The public meaning
 * of every operation is in idmint_coord.h. Not installed.
 */
#ifndef IDMC_BACKEND_H
#define IDMC_BACKEND_H

#include "idmint_coord.h"

#define IDMC_ENDPOINTS_MAX 16
#define IDMC_GEN_CAP 32

typedef struct idmc_endpoint {
    char host[256]; /* a name or an IPv4 address; IPv6 in brackets is not accepted */
    int port;
} idmc_endpoint;

/* A parsed coordinator URL: SCHEME://EP[,EP...]/PATH. path starts with '/'
 * and has no trailing '/' (the root is refused), and only [A-Za-z0-9._-/]. */
typedef struct idmc_target {
    size_t n;
    idmc_endpoint ep[IDMC_ENDPOINTS_MAX];
    char path[512];
} idmc_target;

struct idmc_ops;

struct idmc_coord {
    const struct idmc_ops *ops;
    char url[1024];
    idmc_target target;
    int64_t ttl_ms;
    void *impl; /* the backend's */
};

struct idmc_lease {
    idmc_coord *coord;
    uint64_t node;
    char generation[IDMC_GEN_CAP];
    int64_t mark_ms;
    int64_t ttl_ms;
    bool lost; /* a call returned IDMC_LOST: release only frees */
    void *impl; /* the backend's */
};

typedef struct idmc_ops {
    const char *kind; /* "etcd", "zookeeper" */
    /* Sets c->impl (may do no I/O). 0 or IDMC_USAGE. */
    int (*open)(idmc_coord *c, char *msg, size_t cap);
    void (*close)(idmc_coord *c);
    /* Fills a lease that coord.c allocated (l->coord set, the rest zero):
     * node, generation, mark_ms, ttl_ms, impl. */
    int (*claim)(idmc_coord *c, uint64_t lo, uint64_t hi, const char *holder, idmc_lease *l,
                 char *msg, size_t cap);
    int (*keepalive)(idmc_lease *l, int64_t *ttl_ms, char *msg, size_t cap);
    /* shrink: false never lowers the mark, true sets it to ms. */
    int (*write_mark)(idmc_lease *l, int64_t ms, bool shrink, char *msg, size_t cap);
    /* Best effort; frees l->impl (coord.c frees l). */
    void (*release)(idmc_lease *l);
    int (*list)(idmc_coord *c, void (*fn)(void *ctx, const idmc_slot_info *slot), void *ctx,
                char *msg, size_t cap);
} idmc_ops;

/* The backends this build has (NULL when built without it). */
extern const idmc_ops *const idmc_etcd_ops;
extern const idmc_ops *const idmc_zk_ops;

/* "PATH/workers/NNNN" or "PATH/marks/NNNN" into dst; returns 0 or -1. */
int idmc_slot_key(const idmc_target *t, const char *what, uint64_t node, char *dst, size_t cap);
/* Parses a slot key's last component (NNNN) after "PATH/workers/"; returns 0 or -1. */
int idmc_parse_node(const char *s, uint64_t *node);
/* The per-request timeout for a lease of ttl_ms: a quarter, 500..2000 ms. */
int64_t idmc_request_timeout_ms(int64_t ttl_ms);

#endif
