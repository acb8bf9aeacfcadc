/*
 * lease.h - a node leased from a coordinator (--coord: etcd or ZooKeeper,
 * coord/idmint_coord.h), kept alive by a thread of its own (lease.c).
 * Design: docs/leases.md.
 *
 * The loop never talks to the coordinator. The lease thread claims a node,
 * refreshes the lease every third of its TTL and records the time
 * high-water mark in the node's slot ahead of need; it hands its results
 * to the loop through an async handle. The loop turns them into the
 * snowflake generator's ceiling, the mechanism built for the durable mark:
 *
 *   ceiling = min(the mark recorded in the slot,
 *                 the wall clock's reading of the lease's deadline)
 *
 * where the deadline is the start of the last confirmed keep-alive plus the
 * TTL minus a margin, on the monotonic clock (the coordinator cannot have
 * expired the lease before then). The generator checks the ceiling on
 * every unit it reserves, so no request, however long, mints past it. A
 * timer at the deadline covers a wall clock stepped back meanwhile: when
 * it fires with no newer confirmation the ceiling drops below everything
 * (state "lost"). A lease the coordinator reports lost (expired, or the
 * slot taken over: another generation) is dropped for good; the thread
 * claims again (possibly another node) and the loop makes a new generator
 * for that claim, resuming above the slot's mark.
 *
 * Not installed.
 */
#ifndef IDMS_LEASE_H
#define IDMS_LEASE_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "pause.h"

struct idmc_coord;
struct idmc_lease;

/* What the thread hands to the loop, under mu. */
typedef struct idms_lease_shared {
    bool stop;              /* loop -> thread: end */
    int64_t want_mark;      /* loop -> thread: record a mark of at least this */
    uint64_t epoch;         /* claims made so far: a new value is a new claim */
    uint64_t node;          /* of the claim `epoch` */
    char generation[32];
    int64_t claim_mark;     /* the slot's mark when claimed */
    int64_t confirmed_ms;   /* monotonic ms when the last confirmed call began */
    int64_t ttl_ms;
    int64_t recorded;       /* the mark recorded in the slot (ours, or claim_mark) */
    bool lost;              /* the lease of `epoch` is gone for good */
    bool failing;           /* the last call failed */
    char msg[600];          /* why (the last failure) */
    bool claim_busy;        /* the last claim found every node held ... */
    idms_holders holders;   /* ... by these (pause.h), read after it */
    uint64_t claims, losses, keepalive_failures, mark_failures;
} idms_lease_shared;

typedef struct idms_lease {
    void *ctx; /* the owner's (node.c's server), handed to the callbacks */
    struct idmc_coord *coord;
    int64_t reserve_ms;       /* --reserve: how far ahead of need a mark is recorded */
    uint64_t lo, hi;          /* the range claimed from (lo == hi: exactly) */
    const char *holder;       /* this process, as the slot shows it (node.c's) */
    /* The thread's own. */
    struct idmc_lease *lease;
    uv_thread_t thread;
    bool thread_started;
    uv_mutex_t mu;
    uv_cond_t cv;
    idms_lease_shared sh;
    /* The loop's. */
    uv_async_t async;
    uv_timer_t deadline_timer;
    uint64_t epoch_seen;
    bool expired;             /* the deadline passed unconfirmed */
    int64_t deadline_ms;      /* monotonic */
    int64_t recorded;         /* the loop's copy of sh.recorded */
    int64_t ceiling;          /* the lease's part of the generator's ceiling */
    idms_lease_shared seen;   /* the loop's copy of sh */
    uint64_t expiries;        /* deadlines passed unconfirmed (idmint_node_lease_expiries_total) */
    /* Upward news, on the loop, set by the owner (node.c) before
     * idms_lease_open: a new claim (a generator for node, resuming above
     * mark_ms), the lease valid again or not (why says why not), and the
     * lease's part of the ceiling changed (idms_lease_ceiling). */
    void (*on_claim)(void *ctx, uint64_t node, const char *generation, int64_t mark_ms);
    void (*on_held)(void *ctx, bool held, const char *why);
    void (*on_ceiling)(void *ctx);
} idms_lease;

/* Before the loop runs: opens the coordinator at url (--coord, leases of
 * ttl_ms) and makes the first claim (synchronously; bounded by the
 * coordinator's request timeouts), marks reserve_ms ahead. Returns 0 when
 * a node is held, IDMC_BUSY / IDMC_ERROR (msg says why: the loop will
 * keep trying) or IDMC_USAGE (a bad URL: give up). */
int idms_lease_open(idms_lease *L, const char *url, int64_t ttl_ms, int64_t reserve_ms, char *msg,
                    size_t cap);
/* Starts the thread and the loop-side handles on loop. */
int idms_lease_start(idms_lease *L, uv_loop_t *loop);
/* Minting has reached now_ms: asks the thread for a mark ahead of it when
 * less than half of --reserve is left, or the ceiling was reached. */
void idms_lease_need(idms_lease *L, int64_t now_ms, bool at_ceiling);
/* The lease's part of the ceiling (INT64_MIN while none is valid). */
int64_t idms_lease_ceiling(const idms_lease *L);
/* Milliseconds left before the deadline (0 when past or none). */
int64_t idms_lease_ms_left(const idms_lease *L);
/* After the loop: stops the thread, lowers the slot's mark to used (the
 * latest time handed out; -1: left as it is) and gives the slot back. */
void idms_lease_close(idms_lease *L, int64_t used);

#endif
