/*
 * hlc.h - the hybrid logical clock service both protocol adapters call
 * (hlc.c): GET/POST /v1/hlc over HTTP, HLC [stamp] over RESP. The adapters
 * own their protocols (parsing the stamp, the status codes, the reply
 * text); this owns the clock. Not installed.
 *
 * One idm_hlc per server (idms_hlc.clock), made at start with
 * --max-offset and owned by the loop thread. Its clock is the system
 * clock read once per request by this service and handed to the library
 * through a fixed idm_clock (idms_hlc.clock_ns), so that the check below and the stamp the
 * library then makes see the same time.
 *
 * Durability (hwm.h's invariant, extended to stamps): no stamp in a reply
 * has a wall_ms above the mark that was durable when the reply was sent,
 * and a restart resumes above the mark of the previous run:
 *
 *  - at start, with a state directory, the clock is seeded with
 *    idm_hlc_resume_after(idms_hwm_resume_ms): every stamp of this run has
 *    a wall_ms after everything the previous run handed out, also when the
 *    clock was stepped back across the restart; the mark written when
 *    idmintd stops (idms_hwm_used_ms) counts the clock's last wall_ms;
 *  - before each stamp, the greatest wall_ms it can have is known: the
 *    latest of the clock's last wall_ms, the remote stamp's (when it is
 *    within --max-offset; otherwise the library refuses it and nothing
 *    moves) and the time read, plus 1 for the logical overflow rule. When
 *    that is above the durable mark (a remote's lead, a run resumed above
 *    a clock stepped back, more than --reserve of overflow), a write of a
 *    mark covering it is requested (idms_node_need) and the request parks
 *    on IDMS_PARK_CEILING before the clock is touched, exactly as a mint
 *    request does at its generator's ceiling (mint.h): conn.c resumes it
 *    once the write completes, the adapter offers the same request again,
 *    and the check is made anew. The loop never waits, and replies on a
 *    connection stay in request order. A mark that cannot be written gives
 *    503 (as minting does) instead of a stamp.
 *
 * Without a state directory the mark is unbounded (hwm.c) and a restart
 * with the clock stepped back can give stamps below the previous run's,
 * as it can repeat snowflakes (idmintd warns at start).
 */
#ifndef IDMS_HLC_H
#define IDMS_HLC_H

#include "core/counters.h"
#include "core/job.h"
#include "core/waitlist.h"

#include <idmint/idmint.h>
#include <stdbool.h>
#include <stdint.h>

struct idms_hwm;
struct idms_node;

/* The service's state. main.c sets the fields up to clock before
 * idms_hlc_open: --max-offset, the mark's owner (its readiness, the mark
 * resumed above), the node that asks for marks (idms_node_need), the
 * list a stamp stopped at the ceiling waits on, where it counts. */
typedef struct idms_hlc {
    int64_t max_offset_ms;
    struct idms_hwm *hwm;
    struct idms_node *node;
    idms_waitq *ceiling_waiters;
    idms_metrics *metrics;
    idm_hlc *clock;   /* the hybrid logical clock (idms_hlc_open's) */
    int64_t clock_ns; /* the time its clock reads: set per request */
} idms_hlc;

/* Makes h->clock (with --max-offset) and seeds it above the previous run's
 * mark. Must run after idms_hwm_open. Returns 0, or 1 after logging why. */
int idms_hlc_open(idms_hlc *h);
void idms_hlc_close(idms_hlc *h);

/* The wall_ms of the last stamp handed out (or of the seeded mark), 0
 * before any: part of what idms_used_ms reports. */
int64_t idms_hlc_used_ms(const idms_hlc *h);

/* Statuses besides the HTTP-like ones. */
#define IDMS_HLC_PARKED 0

typedef struct idms_hlc_result {
    int status; /* 200, 422 (remote too far ahead), 500, 503, or IDMS_HLC_PARKED */
    uint64_t stamp;
    int64_t retry_after_s;
    idms_park park; /* IDMS_HLC_PARKED: what it waits for (the ceiling) */
    char message[IDM_ERROR_MSG_CAP + 64];
} idms_hlc_result;

/* A new stamp for request q: a local event (remote NULL) or the merge of
 * *remote (a receive event). PARKED: r->park says on what (the adapter
 * hands it to idms_conn_park), and the request must be offered again on
 * resume (nothing changed). 422: *remote is more
 * than --max-offset ahead of the clock; the clock did not move and the
 * message says how far ahead and the limit. */
void idms_hlc_stamp(const idms_req *q, const uint64_t *remote, idms_hlc_result *r);

/* Parses a stamp as the adapters take it: the 16 hex digits, optionally
 * followed by "\n" or "\r\n" (a body written by echo). false with msg set
 * ("invalid stamp: ...") when it is not one. */
bool idms_hlc_parse(const char *text, size_t len, uint64_t *stamp, char *msg, size_t cap);

#endif
