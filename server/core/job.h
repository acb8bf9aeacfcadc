/*
 * job.h - what a service keeps of a request and gives back for it
 * (core/job.c): the job, kept across parks and across the parts of a
 * reply sent in parts, and the park a service returns for a request that
 * must wait. The mint, segment and HLC services fill them (mint.h,
 * segments.h, hlc.h) through an idms_req; the connection carrying the
 * request holds the state (conn.h), and only conn.c and the adapters
 * touch the connection. Not installed.
 */
#ifndef IDMS_JOB_H
#define IDMS_JOB_H

#include "buf.h"
#include "core/waitlist.h"

#include <stdbool.h>
#include <stdint.h>

struct idms_minter;

/* Why a request waits. */
enum { IDMS_PARK_NONE = 0, IDMS_PARK_TIME = 1, IDMS_PARK_CEILING = 2, IDMS_PARK_SEGMENT = 4 };

/* A service's answer "parked": on what, until when. */
typedef struct idms_park {
    int why;             /* IDMS_PARK_* */
    int64_t until_ns;    /* IDMS_PARK_TIME: the clock time (Unix ns) to try again */
    idms_waitq *on;      /* IDMS_PARK_CEILING, _SEGMENT: the list of the key waited for */
} idms_park;

/* Segment store lookups the request's connection caused in the second
 * that began at window_ms (loop ms): its share (segments.c). */
typedef struct idms_seg_share {
    int64_t window_ms;
    uint32_t lookups;
} idms_seg_share;

typedef struct idms_mint_job {
    bool active;
    bool in_parts; /* the reply is larger than a part: sent as it is minted */
    int format;
    uint64_t count, done;
    uint64_t sent; /* IDs already rendered (into the reply, or into rendered) */
    uint64_t handed; /* IDs handed to the adapter in replies' parts */
    unsigned parked_for; /* 1 << IDMS_PARK_*: why it has parked, counted once each */
    idms_buf text; /* the IDs minted and not rendered yet, one per line */
    /* The reply (or its part) rendered and not handed over yet: a step
     * that used its slice before the reply, or the part, was complete. */
    idms_buf rendered;
} idms_mint_job;

/* Frees what j holds and leaves it inactive. */
void idms_mint_job_free(idms_mint_job *j);

/* A request as the services see it: the services (services.h: each
 * takes its own state from it), and the state kept for it across parks
 * (the connection's; idms_conn_req makes one). */
typedef struct idms_req {
    const struct idms_services *svc;
    idms_mint_job *job;
    idms_seg_share *seg;
    /* The most bytes of replies the step may render (the transport's
     * turn slice; 0: no bound). A reply, or a part, that is not complete
     * then is kept in the job, and the step ends (mint.h: IDMS_MINT_PART
     * with nothing appended): what goes out, and when, stays as without
     * the bound. */
    size_t slice;
} idms_req;

#endif
