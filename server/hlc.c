/*
 * hlc.c - the hybrid logical clock service (see hlc.h for what it
 * guarantees and how it parks).
 */
#include "hlc.h"
#include "hwm.h"
#include "log.h"
#include "node.h"
#include "pause.h"
#include "services.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The library reads the time this service read (hlc.h). */
static int fixed_now_ns(void *ctx, int64_t *unix_ns)
{
    const idms_hlc *h = ctx;
    *unix_ns = h->clock_ns;
    return IDM_OK;
}

static void no_sleep(void *ctx, int64_t ns)
{
    (void)ctx;
    (void)ns;
}

int idms_hlc_open(idms_hlc *h)
{
    idm_hlc_config cfg;
    idm_hlc_config_init(&cfg);
    cfg.max_offset_ms = h->max_offset_ms;
    cfg.clock.now_ns = fixed_now_ns;
    cfg.clock.sleep_ns = no_sleep;
    cfg.clock.ctx = h;
    idm_error err = {0};
    if (idm_hlc_new(&h->clock, &cfg, &err) != IDM_OK) {
        idms_log(IDMS_LOG_ERROR, "cannot create the hybrid logical clock: %s", err.msg);
        return 1;
    }
    int64_t resume_ms = idms_hwm_resume_ms(h->hwm, NULL);
    if (resume_ms > 0 && idm_hlc_resume_after(h->clock, resume_ms, &err) != IDM_OK) {
        idms_log(IDMS_LOG_ERROR, "cannot resume the hybrid logical clock after %" PRId64 ": %s",
                 resume_ms, err.msg);
        return 1;
    }
    /* Its ceiling is the durable mark's, set by the mark (hwm.h). */
    return idms_hwm_attach_hlc(h->hwm, h->clock) != 0 ? 1 : 0;
}

void idms_hlc_close(idms_hlc *h)
{
    idm_hlc_free(h->clock);
    h->clock = NULL;
}

int64_t idms_hlc_used_ms(const idms_hlc *h)
{
    if (h->clock == NULL)
        return 0;
    int64_t wall = 0;
    idm_hlc_decode(idm_hlc_last(h->clock), &wall, NULL);
    return wall;
}

bool idms_hlc_parse(const char *text, size_t len, uint64_t *stamp, char *msg, size_t cap)
{
    if (len > 0 && text[len - 1] == '\n') {
        len--;
        if (len > 0 && text[len - 1] == '\r')
            len--;
    }
    idm_error err = {0};
    if (idm_hlc_parse(text, len, stamp, &err) != IDM_OK) {
        snprintf(msg, cap, "invalid stamp: %s", err.msg);
        return false;
    }
    return true;
}

void idms_hlc_stamp(const idms_req *q, const uint64_t *remote, idms_hlc_result *r)
{
    idms_hlc *h = q->svc->hlc;
    memset(r, 0, sizeof *r);
    idm_clock clock = idm_clock_system();
    int64_t ns = 0;
    if (clock.now_ns(clock.ctx, &ns) != IDM_OK || ns <= 0) {
        r->status = 503;
        r->retry_after_s = 1;
        snprintf(r->message, sizeof r->message, "the clock cannot be read");
        return;
    }
    int64_t now_ms = ns / 1000000;
    h->clock_ns = ns;
    idm_error err = {0};
    int rc = remote != NULL ? idm_hlc_update(h->clock, *remote, &r->stamp, &err)
                            : idm_hlc_now(h->clock, &r->stamp, &err);
    if (rc == IDM_ECEILING) {
        /* The stamp would pass the durable mark (the clock's ceiling, set
         * by the mark): park until the next write, or refuse when the mark
         * cannot be written. The write is asked to reach past the stamp:
         * the clock's next millisecond, or the remote's (within
         * --max-offset, or it was refused above without moving). */
        idms_pause_why mark;
        if (!idms_hwm_ready(h->hwm, &mark)) {
            r->status = 503;
            r->retry_after_s = 1;
            snprintf(r->message, sizeof r->message, "%.300s", mark.why);
            return;
        }
        int64_t need = idm_hlc_ceiling(h->clock) + 1;
        if (now_ms + 1 > need)
            need = now_ms + 1;
        if (remote != NULL && (int64_t)(*remote >> 16) + 1 > need)
            need = (int64_t)(*remote >> 16) + 1;
        idms_node_need(h->node, need, true);
        h->metrics->parks++;
        h->metrics->ceiling_waits++;
        r->park.why = IDMS_PARK_CEILING;
        r->park.on = h->ceiling_waiters;
        r->status = IDMS_HLC_PARKED;
        return;
    }
    if (rc == IDM_EOFFSET) {
        h->metrics->hlc_offset_refusals++;
        r->status = 422;
        snprintf(r->message, sizeof r->message, "%s (--max-offset)", err.msg);
        return;
    }
    if (rc != IDM_OK) {
        r->status = rc == IDM_ETIME_RANGE ? 503 : 500;
        snprintf(r->message, sizeof r->message, "%s", err.msg);
        return;
    }
    h->metrics->hlc_stamps++;
    r->status = 200;
    /* The next mark is written ahead of need, as for minting. */
    idms_node_need(h->node, (int64_t)(r->stamp >> 16), false);
}
