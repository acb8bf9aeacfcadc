/*
 * status.c - the server's used time and readiness (status.h).
 */
#include "status.h"
#include "hlc.h"
#include "hwm.h"
#include "log.h"
#include "mint.h"
#include "node.h"
#include "notify.h"
#include "segments.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t idms_used_ms(const idms_status *s)
{
    int64_t used = idms_hwm_used_ms(s->hwm);
    int64_t hlc_used = idms_hlc_used_ms(s->hlc); /* stamps count too (hlc.h) */
    return hlc_used > used ? hlc_used : used;
}

bool idms_status_check(const idms_status *s, idms_pause_why *w)
{
    idms_pause_why_clear(w);
    /* Readiness order: the first part that stops minting names the pause. */
    if (!idms_node_ready(s->node, w) || !idms_hwm_ready(s->hwm, w) ||
        !idms_segments_ready(s->segments, w))
        return false;
    int64_t now = idms_clock_ms(); /* 0: unreadable */
    if (now == 0) {
        w->cause = IDMS_PAUSE_NOCLOCK;
        snprintf(w->why, sizeof w->why, "the clock cannot be read");
        snprintf(w->ends, sizeof w->ends, "clock_gettime(CLOCK_REALTIME) working again");
        return false;
    }
    if (!idms_mint_clock_ready(s->mint, now, w))
        return false;
    idms_pause_why_clear(w);
    return true;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* systemd hears of each change of cause (notify.h): READY=1 the first
 * time minting can go on, a STATUS= line naming what a pause waits for. */
static void tell_systemd(idms_status *s, const idms_pause_why *w)
{
    if (w->cause == s->told_cause)
        return;
    s->told_cause = w->cause;
    char msg[sizeof w->why + sizeof w->ends + 64];
    if (w->cause == IDMS_PAUSE_NONE) {
        snprintf(msg, sizeof msg, "%sSTATUS=ready", s->ready_sent ? "" : "READY=1\n");
        s->ready_sent = true;
    } else {
        char text[sizeof msg - 16];
        snprintf(text, sizeof text, "not ready (%s): %s%s%s", idms_pause_cause_name(w->cause),
                 w->why, w->ends[0] ? "; ends with " : "", w->ends);
        idms_notify_status(msg, sizeof msg, text);
    }
    if (idms_notify(msg) < 0 && !s->notify_failed) {
        s->notify_failed = true;
        idms_log(IDMS_LOG_WARN, "cannot notify systemd at $NOTIFY_SOCKET: %s", strerror(errno));
    }
}

const idms_pauses *idms_status_poll(idms_status *s, int64_t *mono_now)
{
    idms_pause_why w;
    (void)idms_status_check(s, &w);
    int64_t now = mono_ms();
    idms_pauses_observe(&s->pauses, &w, now, idms_clock_ms());
    tell_systemd(s, &w);
    if (mono_now != NULL)
        *mono_now = now;
    return &s->pauses;
}

static void on_poll(uv_timer_t *t)
{
    (void)idms_status_poll(t->data, NULL);
}

void idms_status_start(idms_status *s, uv_loop_t *loop)
{
    uv_timer_init(loop, &s->poll);
    s->poll.data = s;
    uv_unref((uv_handle_t *)&s->poll);
    uv_timer_start(&s->poll, on_poll, 0, IDMS_PAUSE_POLL_MS);
}

void idms_status_stop(idms_status *s)
{
    if (s->poll.loop != NULL)
        uv_timer_stop(&s->poll);
}

bool idms_ready(const idms_status *s, char *why, size_t cap)
{
    idms_pause_why w;
    bool ready = idms_status_check(s, &w);
    snprintf(why, cap, "%s", w.why);
    return ready;
}
