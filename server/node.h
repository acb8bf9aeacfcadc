/*
 * node.h - which snowflake node number idmintd mints as (node.c): leased
 * from the host-local registry (coord/idmint_coord.h) by default, or from
 * a coordinator with --coord (lease.h). docs/leases.md has the design.
 *
 * Without --node, idmintd leases the lowest free node of the layout's
 * range (or --node-range) from the registry under --node-registry; with
 * --node N (or --node ip: N from the host's private IPv4 address) it
 * registers exactly N there, and refuses to start when another process on
 * the host holds it. When every node is held it starts anyway, not ready,
 * refuses snowflakes (503), and tries again every second on libuv's thread
 * pool until one frees. The slot carries the time high-water mark (hwm.c
 * records each durable mark there before the ceiling passes it), so a new
 * holder resumes above its predecessors. With --coord the same holds with
 * etcd or ZooKeeper as the registry, and the lease's deadline joins the
 * generator's ceiling (lease.h). Not installed.
 */
#ifndef IDMS_NODE_H
#define IDMS_NODE_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "idmint_coord.h"
#include "lease.h"
#include "options.h"
#include "pause.h"

#include <idmint/idmint.h>

struct idms_hwm;
struct idms_buf;
struct idmc_slot;

/* Where the node comes from: --node N (or ip) on this host's registry, auto
 * on it, or a coordinator (exactly N or auto: lo == hi says which). */
enum { IDMS_NODE_STATIC = 0, IDMS_NODE_LOCAL = 1, IDMS_NODE_COORD = 2 };

typedef struct idms_node {
    /* Set by main.c before idms_node_claim: what the node is claimed by
     * and for (the options, the layout and its name), the mark's owner
     * (the slot held is handed to it), the server's draining flag, the
     * snowflake generator in use (*sf), and the owner's callbacks (ctx).
     * make_snowflake makes *sf, the generator of node, resuming above
     * idms_hwm_resume_ms, under the ceiling (0, or -1 after logging why);
     * node.c frees the one it replaces. on_ceiling: the snowflake
     * ceiling's parts moved (a lease, a node lost): it is to be set anew
     * (idms_node_apply_ceiling) and the requests parked on it to go on. */
    const idms_options *opt;
    const idm_sf_layout *layout;
    const char *layout_name;
    struct idms_hwm *hwm;
    const bool *draining;
    idm_snowflake **sf;
    int (*make_snowflake)(void *ctx, uint64_t node);
    void (*on_ceiling)(void *ctx);
    void *ctx;
    int coord;             /* IDMS_NODE_STATIC, IDMS_NODE_LOCAL or IDMS_NODE_COORD */
    bool ever_held;        /* a node was held once (state "lost" rather than "waiting") */
    char generation[32];   /* the claim's fencing token (coordinators only) */
    bool held;             /* a slot is held: snowflakes may be minted */
    uint64_t node;         /* the node held (valid when held) */
    uint64_t lo, hi;       /* the range leased from */
    char registry[1024];   /* --node-registry */
    char ns[256];          /* the namespace: the layout's name */
    char holder[440];      /* this process, as the slot records it (fits a local slot) */
    char why[800];         /* why no node is held */
    struct idmc_slot *slot;
    uint64_t claims;       /* slots taken */
    bool in_flight;        /* a claim on the thread pool */
    uv_work_t work;
    uv_timer_t retry;
    /* The claim's results, for the loop thread. */
    struct idmc_slot *work_slot;
    int work_rc;
    idmc_error work_err; /* on_claim's result's detail */
    idms_holders work_holders; /* on_claim's: who holds the range when busy */
    idms_holders holders;      /* the last busy claim's (pause.h) */
    int64_t max_mark_ms;   /* the layout's last time: a slot's mark past it is unusable */
    /* The held slot's file, looked at every second on the thread pool
     * (coord/idmint_coord.h: idmc_slot_check, idmc_slot_repair). */
    uv_timer_t check;
    uv_work_t check_work;
    bool check_in_flight;
    bool slot_broken;      /* its file is gone and could not be put back yet */
    struct idmc_slot *check_slot;
    int check_rc, repair_rc;
    idmc_error check_err; /* on_check_work's */
    idms_lease lease;      /* --coord (lease.h) */
    uv_loop_t *loop;       /* idms_node_start's: its timers and claims */
} idms_node;

/* Before the generators exist: claims the node (synchronously; the loop is
 * not running yet). Returns 0 (held, or waiting with every node held),
 * or 1 after reporting why on stderr (a static node held elsewhere, a
 * registry that cannot be used). */
int idms_node_claim(idms_node *n);
/* On loop: starts the lease thread, or the retry timer (when no node is
 * held yet) and the look at the slot's file every second. */
void idms_node_start(idms_node *n, uv_loop_t *loop);
/* Whether snowflakes can be minted; when not, w says why, what ends it
 * and when (pause.h: IDMS_PAUSE_NODE or IDMS_PAUSE_COORD). */
bool idms_node_ready(const idms_node *n, idms_pause_why *w);
/* GET /v1/node's object, with the current pause (p at mono_ms, pause.h)
 * in full. */
void idms_node_json(const idms_node *n, const idms_pauses *p, int64_t mono_ms,
                    struct idms_buf *out);
/* The mark found in the node's slot when it was claimed (0: none). */
int64_t idms_node_mark_ms(const idms_node *n);
/* Minting has reached now_ms: asks for the marks ahead of it when less
 * than half of --reserve is left, or the ceiling was reached: the state
 * directory's (idms_hwm_need) and, with --coord, the one the lease thread
 * records in the slot (idms_lease_need). */
void idms_node_need(idms_node *n, int64_t now_ms, bool at_ceiling);
/* Sets the snowflake generator's ceiling: the lowest of the durable mark's
 * (hwm.h) and the lease's (lease.h). */
void idms_node_apply_ceiling(idms_node *n);
/* After the generator's ceiling stopped a request: whether it will rise
 * (a mark being recorded, a lease being confirmed: park), or not (why
 * says why: refuse). The lease bounds snowflakes only. */
bool idms_node_ceiling_rises(idms_node *n, bool snowflake, char *why, size_t cap);
/* "static", "local", "etcd" or "zookeeper"; "held", "waiting", "lost" or
 * "static" (GET /v1/node, INFO). */
const char *idms_node_coord_name(const idms_node *n);
const char *idms_node_state_name(const idms_node *n);
/* After the loop: gives the slot back (its mark stays for the next holder,
 * lowered to used: the latest time handed out, 0 when nothing was and no
 * earlier holder left a mark; -1 leaves it as it is). */
void idms_node_close(idms_node *n, int64_t used);

#endif
