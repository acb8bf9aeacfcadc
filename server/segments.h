/*
 * segments.h - dense, increasing integers per tag from a segment store
 * (--segments URL: sqlite:PATH or postgresql://...), Leaf-style: each tag
 * has a double-buffered allocator (<idmint/segment.h>) on the loop, and a
 * store thread of its own leases the ranges (<idmint/segstore.h>), so
 * that a request never waits on the database while a buffer has IDs and the
 * database never runs on the loop. docs/segments.md has the design.
 *
 * A request for a tag not seen yet parks while the store thread looks the
 * tag up and leases its first range; a request that drains both buffers
 * parks with what it has until the next range arrives (in request order:
 * the connection reads nothing meanwhile). When the store cannot be
 * reached, requests are served from the buffers; once those are dry they
 * get 503 (RESP: an error) and /readyz is false, and the store is asked
 * again once a second (the retry timer: a tag whose store call failed is
 * not asked again before it), until the database answers again.
 *
 * Tags are bytes: every front end hands idms_segment_mint the tag as
 * (pointer, length) - RESP's bulk string, HTTP's path segment or bizType
 * percent-decoded with a %00 kept as a NUL byte (each escape once: the
 * router decodes only those of unreserved characters before routing, and
 * the rest are left for this decoding, http_parser.h's
 * idms_http_path_unreserved) - and idmseg_tag_valid checks
 * each byte, so a NUL or any byte outside the rule (<idmint/segstore.h>:
 * A-Z a-z 0-9 _ . - : @ { } | + ~, 1 to 128 bytes) is refused (400)
 * naming the byte and its position; the table compares length and bytes.
 *
 * The tag table (tagtable.h), bounded two ways:
 *
 *   live     tags with an allocator (at most --segment-tags, default
 *            IDMS_SEG_TAGS_DEFAULT in options.h), and tags with a job at the store
 *            thread: never evicted. A tag of the store asked for once the
 *            live tags fill the table gets 503 ("the segment tag table is
 *            full") and /readyz is false, saying so, until a restart with
 *            a larger --segment-tags: a real limit, reached only with tags
 *            that exist.
 *   cached   names the store said it has not (404 from the cache for
 *            IDMS_SEG_MISSING_TTL_MS, without asking the store again) and
 *            lookups that failed: at most IDMS_SEG_CACHE_MAX, the least
 *            recently used evicted.
 *
 * A flood of names costs the one who floods: a connection may cause at
 * most IDMS_SEG_LOOKUPS_PER_S store lookups (names not in the table, or
 * not believed any more) per second; its next such request waits (parked,
 * the connection read no further) until the second is over. Leases of
 * live tags go to the store thread ahead of lookups, and each connection
 * has at most one lookup there at a time (it parks on it), so tags in use
 * are refilled while a flood of unknown names arrives.
 *
 * Not installed.
 */
#ifndef IDMS_SEGMENTS_H
#define IDMS_SEGMENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "core/counters.h"
#include "core/job.h"
#include "core/waitlist.h"
#include "tagtable.h"

struct idms_pause_why;

struct idms_buf;
struct idms_mint_result;
struct idm_segment;
struct idmseg_store;

#define IDMS_SEG_CACHE_MAX 4096       /* names cached as missing (or failed) at most */
#define IDMS_SEG_MISSING_TTL_MS 1000  /* how long "no such tag" is believed */
#define IDMS_SEG_LOOKUPS_PER_S 1000   /* store lookups a connection may cause per second */
#define IDMS_SEG_RETRY_MS 1000        /* a failed store call is made again after this */

/* Reply styles of the segment routes. */
enum {
    IDMS_SEG_LINES,         /* one per line (GET /v1/segment/{tag}) */
    IDMS_SEG_JSON,          /* a JSON array of strings (the same, Accept: application/json) */
    IDMS_SEG_BARE,          /* one decimal, no newline (Leaf: /api/segment/get/{tag}) */
    IDMS_SEG_COMMAS,        /* comma-joined, no newline (tinyid: nextIdSimple) */
    IDMS_SEG_TINYID_JSON,   /* {"data":[...],"code":200,"message":""} (tinyid: nextId) */
    IDMS_SEG_RESP_INT,      /* RESP integer: the one ID (INCR) */
    IDMS_SEG_RESP_INCRBY    /* RESP integer: the last of count consecutive IDs (INCRBY) */
};

enum {
    IDMS_TAG_LOADING = 0, /* being looked up, or its lookup failed */
    IDMS_TAG_READY = 1,   /* has an allocator (seg) */
    IDMS_TAG_MISSING = 2, /* the store has no such tag (believed for the TTL) */
    IDMS_TAG_FULL = 3     /* the store has it, the live table had no room (as long) */
};

typedef struct idms_seg_tag {
    idms_tag_entry entry;      /* first: the name, the place in the table */
    int state;                 /* IDMS_TAG_* */
    int64_t state_ms;          /* MISSING, FULL: since when (loop ms) */
    int64_t retry_ms;          /* failing: not asked again before (loop ms) */
    struct idm_segment *seg;   /* READY */
    uint64_t stride;
    bool queued;               /* a job for it is with the store thread */
    bool lookup;               /* the job looks the tag up first (and leases its first range) */
    uint64_t want;             /* the job's lease size for the allocator (0: none) */
    bool probe;                /* the job only looks the tag up (the table was full) */
    /* Whole segments leased for clients that mint from them themselves
     * (tinyid's nextSegmentId: idms_segment_grant), never minted here. A
     * job leases the grants asked for since the last job was queued, one
     * range of job_grants * store_step IDs, cut into segments of
     * store_step; they wait in the tag (grant_left from grant_first) for
     * the requests woken by the result. Every result wakes every waiter of
     * the tag, and a grant request that finds none left asks again, so
     * grant_want is set back to 0 before the waiters are woken. */
    uint64_t store_step; /* the store's step: a grant's size (from the lookup) */
    uint32_t grant_want; /* grant requests parked since the last job was queued */
    uint32_t job_grants; /* the job's grants */
    uint64_t job_step;   /* the job's grant size (0: the lookup's step) */
    uint64_t grant_first, grant_stride, grant_size;
    uint32_t grant_left;     /* grants leased and not handed out */
    int64_t grant_failed_ms; /* loop ms of the last grant lease that failed (0: none) */
    char grant_why[300];
    bool failing;              /* the last job for it failed */
    char why[600];
    struct idms_seg_tag *fail_prev, *fail_next; /* READY and failing: the retry list */
    uint64_t leases, served;
    /* The store thread's result, under the segments' mutex. */
    bool done;
    int rc;
    uint64_t first, count, step, max_step, got_stride;
    char msg[600];
    int grant_rc; /* the job's grants: 0 and the range, or why not */
    uint64_t res_grant_first, res_grant_stride, res_grant_size;
    uint32_t res_grants;
    struct idms_seg_tag *qnext; /* in the job or result queue */
    idms_waitq waiters;         /* the requests parked until its next result */
} idms_seg_tag;

/* A FIFO of jobs, under mu. */
typedef struct idms_seg_queue {
    idms_seg_tag *head, *tail;
} idms_seg_queue;

typedef struct idms_segments {
    /* Set by main.c before idms_segments_open: --segments (the store's
     * URL, "" without), --segment-tags, --max-count, where it counts, the
     * server's draining flag. */
    const char *url;
    size_t tags;
    uint64_t max_count;
    idms_metrics *metrics;
    const bool *draining;
    uv_loop_t *loop;            /* idms_segments_start's */
    bool enabled;               /* --segments given */
    char kind[16];              /* "sqlite", "postgresql" */
    idms_tagtable table;        /* every tag asked for (tagtable.h) */
    size_t live, live_max;      /* tags with an allocator; --segment-tags */
    idms_seg_tag failing;       /* head of the retry list (READY tags whose fetch failed) */
    /* The store thread and its queues. */
    struct idmseg_store *store;   /* the thread's (opened at start, again after failures) */
    uv_thread_t thread;
    bool thread_started;
    uv_mutex_t mu;
    uv_cond_t cv;
    uv_async_t async;
    uv_timer_t retry;           /* failing tags are tried again every second */
    bool stop;
    idms_seg_queue leases;      /* loop -> thread: ranges for live tags (first) */
    idms_seg_queue lookups;     /* loop -> thread: tags not loaded yet */
    idms_seg_tag *results;      /* thread -> loop */
    bool store_failing;         /* the last store call failed */
    char store_why[600];
    char lookup_failed[IDMS_TAG_NAME_MAX + 1]; /* a tag whose lookup failed since (readyz) */
    uint64_t lookups_total, lookup_waits, refused_full;
    uint64_t grants; /* whole segments handed to clients (idms_segment_grant) */
} idms_segments;

/* Before the loop runs: opens the store (its table made when missing).
 * Returns 0, or 1 after reporting why on stderr (a bad URL, a store that
 * cannot be opened at all: better refused at start than served 503). */
int idms_segments_open(idms_segments *g);
/* Starts the store thread, its results and retries on loop. */
int idms_segments_start(idms_segments *g, uv_loop_t *loop);
/* After the loop: stops the store thread and closes the store. */
void idms_segments_close(idms_segments *g);

/* The segment mint service, as idms_mint is for the other formats
 * (mint.h): count IDs of tag for q into out in style (IDMS_SEG_*), or a
 * park (r->status IDMS_MINT_PARKED, r->park on the tag's waiters, or until
 * the end of the second for a connection past its lookups), or a
 * refusal (400 bad tag or count, 404 unknown tag, 503 store unreachable
 * and no IDs left, or the table of live tags full). tag is tag_len bytes
 * (not a C string: a NUL inside is refused). */
void idms_segment_mint(const idms_req *q, const char *tag, size_t tag_len, uint64_t count,
                       int style, struct idms_buf *out, struct idms_mint_result *r);

/* A whole segment of a tag, given to a client that mints from it itself
 * (tinyid's client): first, first + stride, ..., first + (count - 1) *
 * stride are the client's, leased from the store for it alone, so that
 * neither idmintd nor another client (of this or another server on the
 * store) ever hands one of them out, whatever crashes. */
typedef struct idms_seg_grant {
    uint64_t first, count, stride;
} idms_seg_grant;

/* Leases a whole segment of tag (the store's step of it) through the
 * store thread for q: *out and r->status 200; a park on the tag's list
 * until the lease is done (r->status IDMS_MINT_PARKED; offer the request
 * again when woken: the park is the request's whole state); or a refusal
 * as idms_segment_mint's (400, 404, 503, with the store's reason when the
 * lease itself failed: a tag used up, the store unreachable). */
void idms_segment_grant(const idms_req *q, const char *tag, size_t tag_len, idms_seg_grant *out,
                        struct idms_mint_result *r);

/* The checks idms_segment_mint makes before it mints (a store, the tag's
 * name, the count's range): true, or false with r's 404/400 (HEAD). */
bool idms_segment_check(const idms_segments *g, const char *tag, size_t tag_len, uint64_t count,
                        struct idms_mint_result *r);
/* Whether every tag that was asked for can be served (false: a tag ran
 * dry, or could not be looked up, while the store fails; or the table of
 * live tags is full and a tag was refused for it); why says why not. */
bool idms_segments_ready(const idms_segments *g, struct idms_pause_why *w);
/* Leaf's /cache, as far as it means something here: one JSON object,
 * each tag with an allocator by its name: {"key", "initOk" (true),
 * "step" (the next lease's, Leaf's dynamic step), "available" (IDs in
 * memory), "fetching" (a lease for it is under way),
 * "leases", "served"}; "{}" without a store. */
void idms_segments_cache_json(const idms_segments *g, struct idms_buf *out);
/* The /metrics lines. */
void idms_segments_metrics(const idms_segments *g, struct idms_buf *out);

#endif
