/*
 * node.h - which snowflake node number idmintd mints as (node.c), leased
 * from the host-local registry (coord/idmint_coord.h, docs/leases.md).
 *
 * Without --node, idmintd leases the lowest free node of the layout's
 * range (or --node-range) from the registry under --node-registry; with
 * --node N it registers exactly N there, and refuses to start when another
 * process on the host holds it. When every node is held it starts anyway,
 * not ready, refuses snowflakes (503), and tries again every second on
 * libuv's thread pool until one frees. The slot carries the time
 * high-water mark (hwm.c records each durable mark there before the
 * ceiling passes it), so a new holder resumes above its predecessors.
 * Not installed.
 */
#ifndef IDMS_NODE_H
#define IDMS_NODE_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

struct idms_server;
struct idms_buf;
struct idmc_slot;

enum { IDMS_NODE_STATIC = 0, IDMS_NODE_LOCAL = 1 };

typedef struct idms_node {
    struct idms_server *server;
    int coord;             /* IDMS_NODE_STATIC (--node N) or IDMS_NODE_LOCAL (leased) */
    bool held;             /* a slot is held: snowflakes may be minted */
    uint64_t node;         /* the node held (valid when held) */
    uint64_t lo, hi;       /* the range leased from */
    char registry[1024];   /* --node-registry */
    char ns[256];          /* the namespace: the layout's name */
    char holder[256];      /* this process, as the slot records it */
    char why[300];         /* why no node is held */
    struct idmc_slot *slot;
    uint64_t claims;       /* slots taken */
    bool in_flight;        /* a claim on the thread pool */
    uv_work_t work;
    uv_timer_t retry;
    /* The claim's results, for the loop thread. */
    struct idmc_slot *work_slot;
    int work_rc;
    char work_msg[600];
} idms_node;

/* Before the generators exist: claims the node (synchronously; the loop is
 * not running yet). Returns 0 (held, or waiting with every node held),
 * or 1 after reporting why on stderr (a static node held elsewhere, a
 * registry that cannot be used). */
int idms_node_claim(struct idms_server *s);
/* Starts the retry timer when no node is held yet. */
void idms_node_start(struct idms_server *s);
/* Whether snowflakes can be minted; why says why not. */
bool idms_node_ready(const struct idms_server *s, char *why, size_t cap);
/* GET /v1/node's object. */
void idms_node_json(const struct idms_server *s, struct idms_buf *out);
/* (main.c) Makes s->sf, the snowflake generator of node: resuming above
 * s->hwm.resume_ms, under the durable mark's ceiling. Returns 0, or -1
 * after logging why. */
int idms_make_snowflake(struct idms_server *s, uint64_t node);
/* After the loop: gives the slot back (its mark stays for the next holder). */
void idms_node_close(struct idms_server *s);

#endif
