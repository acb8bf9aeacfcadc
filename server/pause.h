/*
 * pause.h - why minting is paused, since when and what ends it (pause.c).
 * Not installed.
 *
 * Each part that can stop minting says so through its *_ready call (node,
 * lease, mark, segments, clock), filling an idms_pause_why: the cause, the
 * details an operator needs, what ends the pause and, where a part knows
 * it, how long that should take. status.c asks them in readiness order and
 * hands the first answer to an idms_pauses, the one owner of pause
 * accounting: it notices when a pause starts, changes cause and ends (on a
 * timer every IDMS_PAUSE_POLL_MS and on every /readyz, /v1/node, /metrics
 * and INFO), logs each once, and keeps the time paused per cause for
 * /metrics. A pause shorter than a poll can go unnoticed; the parks of a
 * request (a unit's sequence used up, a mark being written) are not pauses
 * and have their own counters (docs/idmintd.md).
 */
#ifndef IDMS_PAUSE_H
#define IDMS_PAUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct idms_buf;

#define IDMS_PAUSE_POLL_MS 100

/* The causes, in readiness order. */
enum {
    IDMS_PAUSE_NONE = 0,
    IDMS_PAUSE_NODE,    /* no snowflake node: every node of the range is held */
    IDMS_PAUSE_COORD,   /* the coordinator cannot confirm the lease or answer a claim */
    IDMS_PAUSE_MARK,    /* the time high-water mark cannot be made durable */
    IDMS_PAUSE_SEGMENT, /* a segment tag has no IDs and its store cannot be reached */
    IDMS_PAUSE_CLOCK,   /* the clock is behind the time used, or a mark to resume above */
    IDMS_PAUSE_NOCLOCK, /* the clock cannot be read */
    IDMS_PAUSE_CAUSES
};

/* One part's answer. why may name hosts, pids, paths and addresses (for
 * whoever holds the token); the cause's class never does. */
typedef struct idms_pause_why {
    int cause;      /* IDMS_PAUSE_* (NONE: minting) */
    char why[900];  /* what is wrong */
    char ends[700]; /* what ends it ("" when nothing more is known) */
    int64_t eta_ms; /* when it should end, ms from now; -1: unknown */
} idms_pause_why;

/* Clears w to "minting". */
void idms_pause_why_clear(idms_pause_why *w);

/* Who holds the nodes a claim found busy, as "node N (pid=... host=...,
 * lease ends in M ms); ..." for the ends text: the first few in full, the
 * rest counted; soonest_ms is the earliest lease end reported (-1: none). */
typedef struct idms_holders {
    char text[400];
    size_t len;
    unsigned shown, more;
    int64_t soonest_ms;
} idms_holders;

void idms_holders_init(idms_holders *h);
/* One held node: holder is the slot's holder line (only its pid and host
 * are kept); ms_left < 0 when the registry keeps no expiry. */
void idms_holders_add(idms_holders *h, uint64_t node, const char *holder, int64_t ms_left);

/* The accounting. Zero-initialised means "minting, nothing counted". */
typedef struct idms_pauses {
    int cause;                           /* the current pause's, or NONE */
    int64_t since_mono_ms;               /* when the current pause began (monotonic) */
    int64_t since_wall_ms;               /* the same on the wall clock (Unix ms) */
    int64_t cause_mono_ms;               /* when its current cause began (monotonic) */
    int64_t total_ms[IDMS_PAUSE_CAUSES]; /* time paused per cause, up to cause_mono_ms */
    uint64_t count[IDMS_PAUSE_CAUSES];   /* pauses (or changes of cause) per cause */
    int64_t longest_ms;                  /* the longest pause that ended */
    idms_pause_why last;                 /* the latest answer seen */
} idms_pauses;

/* A new answer, at mono_ms (monotonic) and wall_ms (Unix ms): starts,
 * moves or ends the pause, logging each once (a start and a change of
 * cause at warn with why and what ends it; an end at info with its length
 * and causes). */
void idms_pauses_observe(idms_pauses *p, const idms_pause_why *w, int64_t mono_ms, int64_t wall_ms);

/* Milliseconds paused for cause, the current pause included. */
int64_t idms_pauses_total_ms(const idms_pauses *p, int cause, int64_t mono_ms);

/* The current pause's length in ms (0 while minting). */
int64_t idms_pauses_current_ms(const idms_pauses *p, int64_t mono_ms);

/* The cause's name in /metrics and JSON ("node", "coordinator", "mark",
 * "segment", "clock", "clock_unreadable"; "none"). */
const char *idms_pause_cause_name(int cause);

/* The cause's class for whoever has no token: names no process, host,
 * address or path ("no snowflake node", ...; "ready"). */
const char *idms_pause_cause_class(int cause);

/* The current pause as a JSON object, or null while minting: cause, class,
 * since (RFC 3339), paused_ms, eta_ms (or null), and with detail the why
 * and ends texts. */
void idms_pauses_json(const idms_pauses *p, int64_t mono_ms, bool detail, struct idms_buf *out);

/* /readyz's text: "ready", or the why (with detail; else "not ready: "
 * and the class), then "paused since T (N ms, cause)" and, with detail,
 * "ends with: ...", and the expected end when known; one line each. */
void idms_pauses_text(const idms_pauses *p, int64_t mono_ms, bool detail, struct idms_buf *out);

/* /metrics: idmint_paused, idmint_pause_seconds_total{cause} and
 * idmint_pauses_total{cause}. */
void idms_pauses_metrics(const idms_pauses *p, int64_t mono_ms, struct idms_buf *out);

#endif
