/*
 * pause.c - pause accounting (pause.h).
 */
#include "pause.h"
#include "buf.h"
#include "json.h"
#include "log.h"

#include <idmint/idmint.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const names[IDMS_PAUSE_CAUSES] = {
    "none", "node", "coordinator", "mark", "segment", "clock", "clock_unreadable",
};

static const char *const classes[IDMS_PAUSE_CAUSES] = {
    "ready",
    "no snowflake node",
    "the node's lease cannot be confirmed",
    "the time high-water mark is not durable",
    "a segment tag cannot be served",
    "the clock is behind the time used",
    "the clock cannot be read",
};

static int valid(int cause)
{
    return cause >= 0 && cause < IDMS_PAUSE_CAUSES ? cause : IDMS_PAUSE_NONE;
}

const char *idms_pause_cause_name(int cause)
{
    return names[valid(cause)];
}

const char *idms_pause_cause_class(int cause)
{
    return classes[valid(cause)];
}

void idms_pause_why_clear(idms_pause_why *w)
{
    w->cause = IDMS_PAUSE_NONE;
    snprintf(w->why, sizeof w->why, "ready");
    w->ends[0] = '\0';
    w->eta_ms = -1;
}

void idms_holders_init(idms_holders *h)
{
    h->text[0] = '\0';
    h->len = 0;
    h->shown = h->more = 0;
    h->soonest_ms = -1;
}

/* The holder line up to its first field past the host ("pid=1 host=a"). */
static size_t holder_short(const char *holder)
{
    const char *host = strstr(holder, "host=");
    size_t n = strlen(holder);
    if (host != NULL) {
        const char *end = strchr(host, ' ');
        n = end != NULL ? (size_t)(end - holder) : n;
    }
    return n > 80 ? 80 : n;
}

void idms_holders_add(idms_holders *h, uint64_t node, const char *holder, int64_t ms_left)
{
    if (ms_left >= 0 && (h->soonest_ms < 0 || ms_left < h->soonest_ms))
        h->soonest_ms = ms_left;
    if (h->shown == 4 || h->len >= sizeof h->text - 1) {
        h->more++;
        return;
    }
    char left[48] = "";
    if (ms_left >= 0)
        snprintf(left, sizeof left, ", lease ends in %" PRId64 " ms", ms_left);
    holder = holder != NULL ? holder : "?";
    int n = snprintf(h->text + h->len, sizeof h->text - h->len, "%snode %" PRIu64 " (%.*s%s)",
                     h->shown > 0 ? "; " : "", node, (int)holder_short(holder), holder, left);
    if (n < 0 || (size_t)n >= sizeof h->text - h->len) {
        h->text[h->len] = '\0';
        h->more++;
        return;
    }
    h->len += (size_t)n;
    h->shown++;
}

/* " (expected in about N ms)" or "". */
static void eta_text(const idms_pause_why *w, char *out, size_t cap)
{
    if (w->eta_ms >= 0)
        snprintf(out, cap, " (expected in about %" PRId64 " ms)", w->eta_ms);
    else
        out[0] = '\0';
}

void idms_pauses_observe(idms_pauses *p, const idms_pause_why *w, int64_t mono_ms, int64_t wall_ms)
{
    int cause = valid(w->cause);
    int was = p->cause;
    if (cause != was) {
        if (was != IDMS_PAUSE_NONE)
            p->total_ms[was] += mono_ms - p->cause_mono_ms;
        char eta[64];
        eta_text(w, eta, sizeof eta);
        if (was == IDMS_PAUSE_NONE) {
            p->since_mono_ms = mono_ms;
            p->since_wall_ms = wall_ms;
            idms_log(IDMS_LOG_WARN, "minting paused (%s): %s%s%s%s", names[cause], w->why,
                     w->ends[0] ? "; ends with " : "", w->ends, eta);
        } else if (cause == IDMS_PAUSE_NONE) {
            int64_t len = mono_ms - p->since_mono_ms;
            if (len > p->longest_ms)
                p->longest_ms = len;
            idms_log(IDMS_LOG_INFO, "minting resumed after a pause of %" PRId64 " ms (%s)", len,
                     names[was]);
        } else {
            idms_log(IDMS_LOG_WARN, "minting still paused after %" PRId64 " ms, now (%s): %s%s%s%s",
                     mono_ms - p->since_mono_ms, names[cause], w->why,
                     w->ends[0] ? "; ends with " : "", w->ends, eta);
        }
        if (cause != IDMS_PAUSE_NONE)
            p->count[cause]++;
        p->cause = cause;
        p->cause_mono_ms = mono_ms;
    }
    p->last = *w;
    p->last.cause = cause;
}

int64_t idms_pauses_total_ms(const idms_pauses *p, int cause, int64_t mono_ms)
{
    cause = valid(cause);
    int64_t t = p->total_ms[cause];
    if (cause != IDMS_PAUSE_NONE && p->cause == cause)
        t += mono_ms - p->cause_mono_ms;
    return t;
}

int64_t idms_pauses_current_ms(const idms_pauses *p, int64_t mono_ms)
{
    return p->cause == IDMS_PAUSE_NONE ? 0 : mono_ms - p->since_mono_ms;
}

static void json_text(idms_buf *out, const char *text)
{
    char quoted[sizeof((idms_pause_why *)0)->why * 6 + 3];
    if (idmx_json_escape(text, strlen(text), quoted, sizeof quoted) == (size_t)-1)
        idms_buf_puts(out, "null");
    else
        idms_buf_puts(out, quoted);
}

void idms_pauses_json(const idms_pauses *p, int64_t mono_ms, bool detail, idms_buf *out)
{
    if (p->cause == IDMS_PAUSE_NONE) {
        idms_buf_puts(out, "null");
        return;
    }
    char since[IDM_RFC3339_CAP];
    if (idm_time_format(p->since_wall_ms, since, sizeof since) != IDM_OK)
        snprintf(since, sizeof since, "%" PRId64, p->since_wall_ms);
    idms_buf_printf(out,
                    "{\"cause\": \"%s\", \"class\": \"%s\", \"since\": \"%s\", "
                    "\"paused_ms\": %" PRId64 ", \"eta_ms\": ",
                    names[p->cause], classes[p->cause], since, mono_ms - p->since_mono_ms);
    if (p->last.eta_ms >= 0)
        idms_buf_printf(out, "%" PRId64, p->last.eta_ms);
    else
        idms_buf_puts(out, "null");
    if (detail) {
        idms_buf_puts(out, ", \"why\": ");
        json_text(out, p->last.why);
        idms_buf_puts(out, ", \"ends\": ");
        if (p->last.ends[0] != '\0')
            json_text(out, p->last.ends);
        else
            idms_buf_puts(out, "null");
    }
    idms_buf_puts(out, "}");
}

void idms_pauses_text(const idms_pauses *p, int64_t mono_ms, bool detail, idms_buf *out)
{
    if (p->cause == IDMS_PAUSE_NONE) {
        idms_buf_puts(out, "ready\n");
        return;
    }
    if (detail)
        idms_buf_printf(out, "%s\n", p->last.why);
    else
        idms_buf_printf(out, "not ready: %s\n", classes[p->cause]);
    char since[IDM_RFC3339_CAP];
    if (idm_time_format(p->since_wall_ms, since, sizeof since) != IDM_OK)
        snprintf(since, sizeof since, "%" PRId64, p->since_wall_ms);
    idms_buf_printf(out, "paused since %s (%" PRId64 " ms, %s)\n", since,
                    mono_ms - p->since_mono_ms, names[p->cause]);
    if (detail && p->last.ends[0] != '\0')
        idms_buf_printf(out, "ends with: %s\n", p->last.ends);
    if (p->last.eta_ms >= 0)
        idms_buf_printf(out, "expected in about %" PRId64 " ms\n", p->last.eta_ms);
}

void idms_pauses_metrics(const idms_pauses *p, int64_t mono_ms, idms_buf *out)
{
    idms_buf_printf(out, "# HELP idmint_paused Whether minting is paused now (1), by the cause "
                         "/readyz names.\n"
                         "# TYPE idmint_paused gauge\n");
    for (int c = 1; c < IDMS_PAUSE_CAUSES; c++)
        idms_buf_printf(out, "idmint_paused{cause=\"%s\"} %d\n", names[c], p->cause == c);
    idms_buf_puts(out, "# HELP idmint_pause_seconds_total Time minting was paused, by cause.\n"
                       "# TYPE idmint_pause_seconds_total counter\n");
    for (int c = 1; c < IDMS_PAUSE_CAUSES; c++) {
        int64_t ms = idms_pauses_total_ms(p, c, mono_ms);
        idms_buf_printf(out, "idmint_pause_seconds_total{cause=\"%s\"} %" PRId64 ".%03d\n",
                        names[c], ms / 1000, (int)(ms % 1000));
    }
    idms_buf_puts(out, "# HELP idmint_pauses_total Pauses of minting begun (or taken over) by "
                       "each cause.\n"
                       "# TYPE idmint_pauses_total counter\n");
    for (int c = 1; c < IDMS_PAUSE_CAUSES; c++)
        idms_buf_printf(out, "idmint_pauses_total{cause=\"%s\"} %" PRIu64 "\n", names[c],
                        p->count[c]);
}
