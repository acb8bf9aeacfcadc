/*
 * segments.h - dense, increasing integers per tag from a segment store
 * (--segments URL: sqlite:PATH or postgresql://...), Leaf-style: each tag
 * has a double-buffered allocator (<idmint/segment.h>) on the loop, and a
 * store thread of its own leases the ranges (coord/idmint_segstore.h), so
 * that a request never waits on the database while a buffer has IDs and the
 * database never runs on the loop. docs/segments.md has the design.
 *
 * A request for a tag not seen yet parks while the store thread looks the
 * tag up and leases its first range; a request that drains both buffers
 * parks with what it has until the next range arrives (in request order:
 * the connection reads nothing meanwhile). When the store cannot be
 * reached, requests are served from the buffers; once those are dry they
 * get 503 (RESP: an error) and /readyz is false, and the store thread keeps
 * trying (every second) until the database answers again.
 *
 * Not installed.
 */
#ifndef IDMS_SEGMENTS_H
#define IDMS_SEGMENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

struct idms_server;
struct idms_conn;
struct idms_buf;
struct idms_mint_result;
struct idm_segment;
struct idmc_store;

#define IDMS_SEG_BUCKETS 64
#define IDMS_SEG_TAGS_MAX 4096 /* tags looked up at most (also unknown ones, cached) */

/* Reply styles of the segment routes. */
enum {
    IDMS_SEG_LINES,         /* one per line (GET /v1/segment/{tag}) */
    IDMS_SEG_JSON,          /* a JSON array of strings (the same, Accept: application/json) */
    IDMS_SEG_BARE,          /* one decimal, no newline (Leaf: /api/segment/get/{tag}) */
    IDMS_SEG_COMMAS,        /* comma-joined (tinyid: nextIdSimple) */
    IDMS_SEG_TINYID_JSON,   /* {"data":[...],"code":200,"message":""} (tinyid: nextId) */
    IDMS_SEG_RESP_INT,      /* RESP integer: the one ID (INCR) */
    IDMS_SEG_RESP_INCRBY    /* RESP integer: the last of count consecutive IDs (INCRBY) */
};

enum { IDMS_TAG_LOADING = 0, IDMS_TAG_READY = 1, IDMS_TAG_MISSING = 2 };

typedef struct idms_seg_tag {
    struct idms_seg_tag *next; /* in its bucket */
    char name[65];
    int state;                 /* IDMS_TAG_* */
    int64_t missing_at_ms;     /* when the store said it has no such tag (looked up again later) */
    struct idm_segment *seg;   /* READY */
    uint64_t stride;
    bool queued;               /* a job for it is with the store thread */
    uint64_t want;             /* the job's lease size (0: look the tag up first) */
    bool failing;              /* the last job for it failed */
    char why[600];
    uint64_t leases, served;
    /* The store thread's result, under the segments' mutex. */
    bool done;
    int rc;
    uint64_t first, count, step, max_step, got_stride;
    char msg[600];
    struct idms_seg_tag *qnext; /* in the job or result queue */
} idms_seg_tag;

typedef struct idms_segments {
    struct idms_server *server;
    bool enabled;               /* --segments given */
    char kind[16];              /* "sqlite", "postgresql" */
    idms_seg_tag *buckets[IDMS_SEG_BUCKETS];
    uint64_t tags;
    /* The store thread and its queue. */
    struct idmc_store *store;   /* the thread's (opened at start, again after failures) */
    uv_thread_t thread;
    bool thread_started;
    uv_mutex_t mu;
    uv_cond_t cv;
    uv_async_t async;
    uv_timer_t retry;           /* failing tags are tried again every second */
    bool stop;
    idms_seg_tag *jobs, *jobs_tail; /* loop -> thread */
    idms_seg_tag *results;      /* thread -> loop */
    uint64_t store_errors;
    bool store_failing;         /* the last store call failed */
    char store_why[600];
} idms_segments;

/* Before the loop runs: opens the store (its table made when missing).
 * Returns 0, or 1 after reporting why on stderr (a bad URL, a store that
 * cannot be opened at all: better refused at start than served 503). */
int idms_segments_open(struct idms_server *s);
/* Starts the store thread. */
int idms_segments_start(struct idms_server *s);
/* After the loop: stops the store thread and closes the store. */
void idms_segments_close(struct idms_server *s);

/* The segment mint service, as idms_mint is for the other formats
 * (mint.h): count IDs of tag for c into out in style (IDMS_SEG_*), or a
 * park (r->status IDMS_MINT_PARKED, c->park IDMS_PARK_SEGMENT), or a
 * refusal (400 bad count, 404 unknown tag, 503 store unreachable and no
 * IDs left). */
void idms_segment_mint(struct idms_conn *c, const char *tag, size_t tag_len, uint64_t count,
                       int style, struct idms_buf *out, struct idms_mint_result *r);

/* The checks idms_segment_mint makes before it mints (a store, the tag's
 * name, the count's range): true, or false with r's 404/400 (HEAD). */
bool idms_segment_check(const struct idms_server *s, const char *tag, size_t tag_len,
                        uint64_t count, struct idms_mint_result *r);
/* Whether every tag that was asked for can be served (false: a tag ran
 * dry while the store fails); why says why not. */
bool idms_segments_ready(const struct idms_server *s, char *why, size_t cap);
/* The /metrics lines. */
void idms_segments_metrics(const struct idms_server *s, struct idms_buf *out);

#endif
