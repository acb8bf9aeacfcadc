/*
 * status.h - what the whole server reports of itself (status.c): the
 * latest time handed out by every service, and whether it can mint now,
 * gathered from the node claim, the mark's owner, the segment tags and
 * the mint service. Not installed.
 */
#ifndef IDMS_STATUS_H
#define IDMS_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "pause.h"

struct idms_hwm;
struct idms_node;
struct idms_minter;
struct idms_hlc;
struct idms_segments;

/* What readiness looks at, set by main.c. */
typedef struct idms_status {
    struct idms_hwm *hwm;
    struct idms_node *node;
    struct idms_minter *mint;
    struct idms_hlc *hlc;
    struct idms_segments *segments;
    idms_pauses pauses; /* status.c's: the pause accounting */
    int told_cause;     /* status.c's: what systemd was last told (-1: nothing) */
    bool ready_sent;    /* status.c's: READY=1 went out */
    bool notify_failed; /* status.c's: a failed notification was logged */
    uv_timer_t poll;    /* status.c's: idms_status_poll every IDMS_PAUSE_POLL_MS */
} idms_status;

/* The latest time handed out: the generators' high water (hwm.h) and the
 * hybrid logical clock's last stamp (hlc.h), or the mark resumed above
 * when later; what a graceful stop leaves as the mark, and what the mark
 * asked for by the mint service must cover. */
int64_t idms_used_ms(const idms_status *s);

/* Whether the server can mint right now; w says why not (the first part
 * that stops it, in the order node, mark, segments, clock), what ends it
 * and when (pause.h), or "ready". */
bool idms_status_check(const idms_status *s, idms_pause_why *w);
/* The same, as one line of text ("ready" when it can). */
bool idms_ready(const idms_status *s, char *why, size_t cap);

/* Checks and hands the answer to the pause accounting (pause.h), which
 * logs a pause's start and end, and tells systemd (notify.h) READY=1 the
 * first time minting can go on and a STATUS= line at each change of
 * cause; returns it, with *mono_now (when given)
 * the monotonic time it was taken at. Every reader of the pause polls
 * first, so what it reports is current. */
const idms_pauses *idms_status_poll(idms_status *s, int64_t *mono_now);
/* On loop: polls every IDMS_PAUSE_POLL_MS, so that a pause nobody asks
 * about is logged and counted too; stop ends that before the loop closes. */
void idms_status_start(idms_status *s, uv_loop_t *loop);
void idms_status_stop(idms_status *s);

#endif
