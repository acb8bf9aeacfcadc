/*
 * mint.h - the mint service the protocol adapters call (mint.c).
 *
 * Minting never waits on the loop: where the generators would (a
 * snowflake unit's sequence used up, a small clock rewind, the ceiling of
 * the durable mark), the service answers "parked" (r->park: until a time,
 * or on the ceiling's wait list) with what it has minted so far in the
 * request's job (idms_req), and the adapter leaves the request in the
 * input buffer and hands the park to the connection (idms_conn_park).
 * conn.c resumes it when the time comes (a timer) or the ceiling rises
 * (the list is woken); the adapter calls idms_mint again with what it
 * kept of the request (not parsing it again), and idms_mint continues
 * the job. Replies on a connection
 * therefore stay in request order. Not installed.
 */
#ifndef IDMS_MINT_H
#define IDMS_MINT_H

#include "buf.h"
#include "core/counters.h"
#include "core/job.h"
#include "core/waitlist.h"

#include <idmint/idmint.h>
#include <stdbool.h>
#include <stdint.h>

struct idms_pause_why;

/* What the service asks of the layer below it, the ceiling's owner and
 * the node claim (hwm.c, node.c): functions main.c registers over them
 * (the unit tests register their own). Each gets ctx. */
typedef struct idms_mint_below {
    void *ctx;
    /* NULL while a snowflake node is held; else why none is (the 503's
     * text). */
    const char *(*no_node)(void *ctx);
    /* IDs of a time-ordered format went out (at_ceiling false), or a
     * request stopped at the ceiling (true): a mark is wanted that covers
     * the time used (idms_node_need). */
    void (*need)(void *ctx, bool at_ceiling);
    /* After a stop at the ceiling: whether it will rise (a write of the
     * mark under way or to come, a lease to renew): the request parks;
     * else false and why, for the 503 (idms_node_ceiling_rises). */
    bool (*ceiling_rises)(void *ctx, bool snowflake, char *why, size_t cap);
    /* The mark the generators resumed above at start-up (0 for none) and
     * whose it is, in words ("the previous run, recorded in the state
     * directory"). */
    int64_t (*resumed)(void *ctx, const char **whose);
} idms_mint_below;

/* The mint service: what it mints from and what it keeps between
 * requests. The generators are the server's (main.c makes them, the
 * ceiling's owner sets their ceilings); main.c hands them over, and a
 * snowflake generator made anew for another node with
 * idms_mint_set_snowflake. One thread (the loop) uses it. */
typedef struct idms_minter {
    idm_clock clock; /* the generators' (idm_clock_system) */
    idm_gen *gen;
    idm_snowflake *sf; /* NULL until the first is made */
    const idm_sf_layout *layout;
    uint64_t max_count;    /* --max-count */
    int64_t max_rewind_ms; /* --max-rewind */
    int64_t max_offset_ms; /* --max-offset */
    idms_waitq *ceiling_waiters; /* the list a request stopped at the ceiling waits on */
    idms_metrics *metrics;       /* counted into: minted, parks, waits, refusals */
    idms_mint_below below;
    /* The snowflake generator's high water after the latest ?after= /
     * AFTER observation: a lead up to it is not a clock behind. */
    int64_t sf_observed_ms;
    int64_t refusal_logged_s; /* the last second a clock refusal was logged */
} idms_minter;

/* The snowflake generator minted from from now on (the caller frees the
 * old one). */
void idms_mint_set_snowflake(idms_minter *m, idm_snowflake *sf);


/* Statuses without a complete reply. PARKED: the request waits on
 * r->park (the adapter hands it to idms_conn_park; conn.c resumes it).
 * PART: a part of the reply was appended and the rest follows once it is
 * written (the adapter sets c->more), or, with nothing appended, the
 * step's slice (idms_req) was used first. In both cases the
 * request must be offered again when c is resumed. CUT: the request was
 * refused after a part of its reply had gone out (the clock stepped back
 * past --max-rewind, the mark cannot be written): the connection must be
 * closed after what out holds, so that the client sees a reply cut short,
 * not a wrong one. */
#define IDMS_MINT_PARKED 0
#define IDMS_MINT_PART 1
#define IDMS_MINT_CUT 2

/* What a refusal comes from, beside its status, for a front end whose
 * protocol numbers its errors so (Leaf's -1, -2, -3: http_server.c). */
enum {
    IDMS_CAUSE_OTHER = 0,  /* anything else */
    IDMS_CAUSE_NO_TAG,     /* segments: no such tag (or a name no tag can have) */
    IDMS_CAUSE_NOT_LOADED, /* segments: no store, or the tag could not be loaded */
    IDMS_CAUSE_DRY,        /* segments: the tag's IDs in memory are used up, the store fails */
    IDMS_CAUSE_CLOCK       /* snowflakes: the clock stepped back past --max-rewind */
};

typedef struct idms_mint_result {
    int status;     /* 200, 400, 422, 500, 503, or IDMS_MINT_PARKED, _PART, _CUT */
    int cause;      /* a refusal's IDMS_CAUSE_* */
    bool in_parts;  /* the reply is sent in parts: its length must be announced whole */
    bool continued; /* what was appended continues a reply begun by an earlier call */
    int64_t retry_after_s;
    idms_park park; /* IDMS_MINT_PARKED: what it waits for */
    char message[IDM_ERROR_MSG_CAP + 64];
} idms_mint_result;

/* How an adapter frames the IDs of one reply: the service hands them
 * over as they are minted (a reply in parts, a part at a time), and the
 * adapter's sink writes its protocol's framing around them, so that no
 * protocol's framing lives here. begin comes before the first ID of the
 * reply (count: all of its IDs), end after the last; either may be NULL.
 * id gets one ID's text (no line end), index counted from 0 across the
 * parts; NULL takes the service's own text as it is, one ID per line
 * ending in '\n' (idms_sink_lines). */
typedef struct idms_sink {
    void (*begin)(idms_buf *out, uint64_t count);
    void (*id)(idms_buf *out, const char *text, size_t len, uint64_t index);
    void (*end)(idms_buf *out, uint64_t count);
} idms_sink;

/* One ID per line, each ending in '\n': the text as minted. */
extern const idms_sink idms_sink_lines;

/* Mints count IDs of format (IDMX_FMT_*) for request q into out, framed
 * by sink (the job is q's). prefix may be NULL. part > 0 lets a reply larger than part
 * bytes go out in parts of about that size, each minted when the one
 * before has been written (bounded memory for large replies to clients
 * that read slowly); 0 keeps the reply whole (its length is not known in
 * advance: HTTP snowflakes). Whatever is appended to out must be sent,
 * whatever the status. On failure nothing is appended for this request and
 * r->status/message say why. */
void idms_mint(const idms_req *q, int format, const char *prefix, uint64_t count,
               const idms_sink *sink, size_t part, idms_buf *out, idms_mint_result *r);

/* idms_mint with causal minting: after, when not NULL, is the text of an
 * ID of format seen elsewhere (GET ?after=, RESP NEXT ... AFTER id), and
 * every ID of the reply sorts after it. It is parsed with the library's
 * parser of format (typeid: any prefix; the order is the UUIDv7 suffix's,
 * and string order where the prefixes are equal) and observed
 * (idm_*_observe, limit --max-offset) once, when the request starts, not
 * again when a parked request resumes. Refusals: 400 for a format without
 * time or an ID that does not parse (r->message gives the parser's
 * reason), 422 for an ID further ahead of the clock than --max-offset
 * (the library's message), or one this node cannot follow (a snowflake
 * layout with the node above the time), 503 as idms_mint. */
void idms_mint_after(const idms_req *q, int format, const char *prefix, const char *after,
                     uint64_t count, const idms_sink *sink, size_t part, idms_buf *out,
                     idms_mint_result *r);

/* The checks of idms_mint_after's after without observing it (HEAD): true,
 * or false with r->status 400 and the message. */
bool idms_mint_check_after(const idms_minter *m, int format, const char *after,
                           idms_mint_result *r);

/* The checks idms_mint makes before minting (count, prefix), without
 * minting: true, or false with r->status 400 and the message idms_mint
 * would give (HEAD answers a GET's status without minting). */
bool idms_mint_check(const idms_minter *m, int format, const char *prefix, uint64_t count,
                     idms_mint_result *r);

/* Whether the clock lets the service mint snowflakes: not behind the
 * latest time used by more than --max-rewind (a lead an observation made
 * does not count); true, or false with why (the wait for the mark resumed
 * above, or the clock behind). now_ms: the clock's time (status.c reads
 * it). */
bool idms_mint_clock_ready(const idms_minter *m, int64_t now_ms, struct idms_pause_why *w);

#endif
