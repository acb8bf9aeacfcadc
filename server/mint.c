/*
 * mint.c - the mint service behind the front ends: count IDs of a format,
 * minted through the library's format table (idmint/format.h) and handed
 * to the adapter's sink (mint.h), which frames them.
 *
 * Nothing here waits. Snowflakes are minted with the library's
 * non-blocking calls: where it would sleep (the unit's sequence is used up,
 * the clock is behind within --max-rewind) it stops with what it has and a
 * time to try again, and the request is parked (mint.h) until then. Every
 * time-ordered format stops at the generators' ceiling, the durable mark
 * (hwm.h); such a request is parked until the next write of the mark
 * completes, or answered 503 when the mark cannot be written. Clock
 * refusals become 503 + Retry-After.
 *
 * Causal minting (idms_mint_after): the seen ID is observed when the job
 * starts. An observation ahead of the clock raises the generators' high
 * water past the clock, and the IDs in that lead are under the ceiling
 * like any others: the mark asked for (the below layer's need, mint.h)
 * is therefore measured from the later of the clock and the time used,
 * so that the request parked on the ceiling is woken by a mark that
 * covers the lead, and a restart resumes after it.
 *
 * The service knows the layer below only through idms_mint_below (the
 * node, the ceiling's owner), so that it links without libuv and the
 * unit tests (tests/unit/test_mint.c) drive it with a layer of their own.
 */
#include "mint.h"
#include "buf.h"
#include "core/job.h"
#include "formats.h"
#include "log.h"
#include "pause.h"
#include "services.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void fail(idms_mint_result *r, int status, const char *message)
{
    r->status = status;
    snprintf(r->message, sizeof r->message, "%s", message);
}

static int64_t clock_ns(const idms_minter *m)
{
    int64_t ns = 0;
    if (m->clock.now_ns(m->clock.ctx, &ns) != IDM_OK)
        ns = 0;
    return ns;
}

void idms_mint_set_snowflake(idms_minter *m, idm_snowflake *sf)
{
    m->sf = sf;
}

const idms_sink idms_sink_lines = {NULL, NULL, NULL};

/* Hands the IDs the job has minted and not rendered (j->text, one per
 * line) to the sink, into out: its beginning before the first IDs, its
 * end after the last. */
static void render_text(idms_mint_job *j, const char *text, size_t len, const idms_sink *sink,
                        idms_buf *out)
{
    const char *end = text + len;
    if (j->sent == 0 && sink->begin != NULL)
        sink->begin(out, j->count);
    if (sink->id == NULL) {
        idms_buf_append(out, text, len);
    } else {
        uint64_t index = j->sent;
        for (const char *p = text; p < end; index++) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            sink->id(out, p, (size_t)(nl - p), index);
            p = nl + 1;
        }
    }
    if (j->done == j->count && sink->end != NULL)
        sink->end(out, j->count);
    j->sent = j->done;
}

/* render_text of what the job holds (j->text), which it empties. */
static void render(idms_mint_job *j, const idms_sink *sink, idms_buf *out)
{
    render_text(j, j->text.data, j->text.len, sink, out);
    j->text.len = 0;
}

/* The most one ID of f takes in a reply: its text, a prefix and "_", and
 * the style's framing ("$NN\r\n" ... "\r\n", or quotes and a comma). */
static size_t reply_bytes_per_id(const idmx_format *f, const char *prefix)
{
    return f->text_max + (prefix != NULL ? strlen(prefix) + 1 : 0) + 8;
}

static uint64_t count_lines(const char *p, size_t len)
{
    uint64_t n = 0;
    for (const char *end = p + len; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
        n++;
    return n;
}

/* The IDs of a step that fit this many bytes are minted on the stack and
 * rendered from there: the common request (a few IDs, never stopped)
 * allocates nothing. */
#define STACK_TEXT 2048

/* Mints up to target IDs in all, counting them in j->done, up to the
 * first stop, and renders them into out through sink when there was none:
 * the library's table mints every format from the generator
 * (idm_format_next_text_n, prefix included), snowflakes from their own
 * handle. On a stop after some IDs, the lines written whole are kept in
 * j->text (and counted): they are minted, and go out with the next step. */
static int mint_more(idms_minter *m, idms_mint_job *j, const char *prefix, uint64_t target,
                     const idms_sink *sink, idms_buf *out, int64_t *retry_ns, idm_error *err)
{
    const idmx_format *f = &idmx_formats[j->format];
    size_t n = (size_t)(target - j->done);
    size_t prefix_len = prefix != NULL ? strlen(prefix) : 0;
    size_t cap = n * (f->text_max + 1) + 1;
    char stack[STACK_TEXT];
    bool on_stack = j->text.len == 0 && cap <= sizeof stack;
    char *p = on_stack ? stack : idms_buf_reserve(&j->text, cap);
    if (p == NULL)
        return IDM_ENOMEM;
    size_t len = 0;
    int rc;
    if (f->lib->minted_by == IDM_FORMAT_BY_SNOWFLAKE)
        rc = idm_snowflake_try_next_text_n(m->sf, p, cap, n, IDM_TEXT_NEWLINE, &len, retry_ns, err);
    else
        rc = idm_format_next_text_n(f->lib, m->gen, prefix, prefix_len, p, cap, n, IDM_TEXT_NEWLINE,
                                    &len, err);
    j->done += count_lines(p, len);
    if (!on_stack) {
        j->text.len += len;
        if (rc == IDM_OK)
            render(j, sink, out);
    } else if (rc == IDM_OK) {
        render_text(j, stack, len, sink, out);
    } else {
        idms_buf_append(&j->text, stack, len);
    }
    return j->text.failed ? IDM_ENOMEM : rc;
}

bool idms_mint_check(const idms_minter *m, int format, const char *prefix, uint64_t count,
                     idms_mint_result *r)
{
    const idmx_format *f = &idmx_formats[format];
    memset(r, 0, sizeof *r);
    r->status = 200;
    if (count == 0 || count > m->max_count) {
        char msg[64];
        snprintf(msg, sizeof msg, "count must be from 1 to %" PRIu64, m->max_count);
        fail(r, 400, msg);
        return false;
    }
    if (prefix != NULL && f->prefix == IDMX_PREFIX_NONE) {
        char names[IDMX_FORMAT_LIST_CAP], msg[IDMX_FORMAT_LIST_CAP + 64];
        if (idmx_format_list(names, sizeof names, IDMX_LIST_PREFIXED, "and") == (size_t)-1)
            names[0] = '\0';
        snprintf(msg, sizeof msg, "prefix applies only to %s, not %s", names, f->name);
        fail(r, 400, msg);
        return false;
    }
    if (prefix == NULL && f->prefix == IDMX_PREFIX_REQUIRED) {
        fail(r, 400, "typeid needs a prefix (e.g. prefix=user)");
        return false;
    }
    idm_error err = {0};
    if (prefix != NULL && idm_typeid_check_prefix(prefix, strlen(prefix), &err) != IDM_OK) {
        char msg[IDM_ERROR_MSG_CAP + 32];
        snprintf(msg, sizeof msg, "invalid prefix: %s", err.msg);
        fail(r, 400, msg);
        return false;
    }
    return true;
}

/* Starts a job after checking the request; false (and r filled) when the
 * request is refused. */
static bool start_job(const idms_minter *m, idms_mint_job *j, int format, const char *prefix,
                      uint64_t count, idms_mint_result *r)
{
    if (!idms_mint_check(m, format, prefix, count, r))
        return false;
    memset(j, 0, sizeof *j);
    idms_buf_init(&j->text);
    j->active = true;
    j->format = format;
    j->count = count;
    return true;
}

/* Whether the snowflake generator's refusal is the wait for the mark
 * resumed above at start-up (nothing minted since has moved past it), not
 * a clock that stepped back while serving; *whose says whose mark it is. */
static bool waiting_for_resume(const idms_minter *m, const char **whose)
{
    const char *name = NULL;
    int64_t resumed = m->below.resumed(m->below.ctx, &name);
    if (whose != NULL)
        *whose = name;
    return resumed > 0 && m->sf != NULL && idm_snowflake_high_water_ms(m->sf) <= resumed;
}

static void refuse_rewind(idms_minter *m, const idm_error *err, int format, idms_mint_result *r)
{
    r->status = 503;
    r->cause = IDMS_CAUSE_CLOCK;
    r->retry_after_s = err->rewind_ms / 1000 + 1;
    const char *whose;
    if (waiting_for_resume(m, &whose)) {
        snprintf(r->message, sizeof r->message,
                 "waiting for the clock to reach the time high-water mark of %s (%" PRId64
                 " ms ahead): IDs up to it may have been handed out",
                 whose, err->rewind_ms);
        return;
    }
    m->metrics->clock_refusals++;
    m->metrics->clock_rewinds++;
    snprintf(r->message, sizeof r->message, "%s", err->msg);
    /* One line per second at most: a refused clock under load would
     * otherwise write a line per request. */
    int64_t now_s = clock_ns(m) / 1000000000;
    if (now_s != m->refusal_logged_s) {
        m->refusal_logged_s = now_s;
        idms_log(IDMS_LOG_WARN, "refusing to mint %s: %s (%" PRIu64 " refusals so far)",
                 idmx_formats[format].name, err->msg, m->metrics->clock_refusals);
    }
}

/* A parsed ?after= / AFTER ID, ready to observe. */
typedef struct seen_id {
    int format; /* IDMX_FMT_* */
    idm_format_value value;
} seen_id;

/* Parses after as an ID of format with the library's parser of it: true,
 * or false with r filled (400). A snowflake must also decode in the
 * server's layout. */
static bool parse_after(const idms_minter *m, int format, const char *after, seen_id *seen,
                        idms_mint_result *r)
{
    const idmx_format *f = &idmx_formats[format];
    memset(r, 0, sizeof *r);
    r->status = 200;
    memset(seen, 0, sizeof *seen);
    seen->format = format;
    if (!f->time_ordered) {
        char names[IDMX_FORMAT_LIST_CAP], msg[IDMX_FORMAT_LIST_CAP + 64];
        if (idmx_format_list(names, sizeof names, IDMX_LIST_TIME_ORDERED, "and") == (size_t)-1)
            names[0] = '\0';
        snprintf(msg, sizeof msg, "after applies only to %s, not %s", names, f->name);
        fail(r, 400, msg);
        return false;
    }
    idm_error err = {0};
    size_t len = strlen(after);
    int rc = idm_format_parse(f->lib, after, len, &seen->value, &err);
    if (rc == IDM_OK && f->lib->minted_by == IDM_FORMAT_BY_SNOWFLAKE) {
        idm_sf_parts parts;
        rc = idm_sf_decode(m->layout, seen->value.number, &parts, &err);
    }
    if (rc != IDM_OK) {
        /* The ID as sent, up to 96 bytes (the longest ID is a TypeID's 90). */
        r->status = 400;
        snprintf(r->message, sizeof r->message,
                 "the ID to mint after is not a %s ('%.96s%s'): %.180s", f->name, after,
                 len > 96 ? "..." : "", err.msg);
        return false;
    }
    return true;
}

bool idms_mint_check_after(const idms_minter *m, int format, const char *after, idms_mint_result *r)
{
    seen_id seen;
    return parse_after(m, format, after, &seen, r);
}

/* Observes a parsed ID with --max-offset: true, or false with r filled. */
static bool observe(idms_minter *m, const seen_id *seen, idms_mint_result *r)
{
    idm_error err = {0};
    const int64_t max = m->max_offset_ms;
    int rc;
    const idm_format *f = idmx_formats[seen->format].lib;
    if (f->minted_by == IDM_FORMAT_BY_SNOWFLAKE) {
        rc = idm_snowflake_observe(m->sf, seen->value.number, max, &err);
        if (rc == IDM_OK) {
            int64_t high = idm_snowflake_high_water_ms(m->sf);
            if (high > m->sf_observed_ms)
                m->sf_observed_ms = high;
        }
    } else {
        rc = idm_format_observe(f, m->gen, &seen->value, max, &err);
    }
    if (rc == IDM_OK) {
        m->metrics->observations++;
        return true;
    }
    if (rc == IDM_EOFFSET || rc == IDM_EUNSUPPORTED || rc == IDM_ETIME_RANGE) {
        if (rc == IDM_EOFFSET)
            m->metrics->observations_refused++;
        /* 422: the request is well-formed, the ID cannot be followed. */
        fail(r, 422, err.msg);
    } else if (rc == IDM_EPARSE || rc == IDM_EINVAL) {
        fail(r, 400, err.msg);
    } else {
        r->status = 503;
        r->retry_after_s = 1;
        snprintf(r->message, sizeof r->message, "%s", err.msg);
    }
    return false;
}

void idms_mint(const idms_req *q, int format, const char *prefix, uint64_t count,
               const idms_sink *sink, size_t part, idms_buf *out, idms_mint_result *r)
{
    idms_mint_after(q, format, prefix, NULL, count, sink, part, out, r);
}

void idms_mint_after(const idms_req *q, int format, const char *prefix, const char *after,
                     uint64_t count, const idms_sink *sink, size_t part, idms_buf *out,
                     idms_mint_result *r)
{
    idms_minter *m = q->svc->mint;
    idms_mint_job *j = q->job;
    memset(r, 0, sizeof *r);
    r->status = 200;
    if (j->active && (j->format != format || j->count != count)) {
        /* Not the request that parked: cannot happen, as the adapter offers
         * the same bytes again; start afresh rather than mix two. */
        idms_mint_job_free(j);
    }
    const idmx_format *f = &idmx_formats[format];
    size_t per_id = reply_bytes_per_id(f, prefix);
    const char *no_node;
    if (format == IDMX_FMT_SNOWFLAKE && (no_node = m->below.no_node(m->below.ctx)) != NULL) {
        /* Every node of the host's registry is held (node.h), say. */
        idms_mint_job_free(j);
        r->status = 503;
        r->retry_after_s = 1;
        snprintf(r->message, sizeof r->message, "%.300s", no_node);
        return;
    }
    if (!j->active) {
        seen_id seen;
        if (after != NULL && !parse_after(m, format, after, &seen, r))
            return;
        if (!start_job(m, j, format, prefix, count, r))
            return;
        /* Once, at the start: a parked request resumes with its job. */
        if (after != NULL && !observe(m, &seen, r)) {
            idms_mint_job_free(j);
            return;
        }
        j->in_parts = part > 0 && count > part / per_id;
    }
    r->in_parts = j->in_parts;
    r->continued = j->handed > 0;
    /* A reply in parts is minted a part at a time: the IDs of a part are
     * rendered and go out before the next part is minted. A step renders
     * at most q->slice: what it renders of a reply, or of a part, that is
     * not complete then waits in the job (j->rendered) for the next step,
     * and the reply goes out as it would without the bound. A step that
     * can finish what it has to hand over renders straight into out. */
    uint64_t chunk = count;
    if (j->in_parts)
        chunk = part / per_id > 0 ? part / per_id : 1;
    uint64_t step_ids = UINT64_MAX;
    if (q->slice > 0)
        step_ids = q->slice / per_id > 0 ? q->slice / per_id : 1;
    if (chunk > step_ids)
        chunk = step_ids;
    uint64_t ahead = j->in_parts ? part / per_id : count - j->sent;
    idms_buf *dst = j->rendered.len == 0 && ahead <= step_ids ? out : &j->rendered;
    size_t start = out->len;
    size_t step_start = dst->len;
    uint64_t done0 = j->done;
    int64_t retry_ns = 0;
    idm_error err = {0};
    int rc;
    for (;;) {
        uint64_t target = count - j->sent < chunk ? count : j->sent + chunk;
        rc = mint_more(m, j, prefix, target, sink, dst, &retry_ns, &err);
        if (rc != IDM_OK)
            break;
        size_t part_len = dst == out ? out->len - start : j->rendered.len;
        if (j->sent == count || part_len >= part ||
            (q->slice > 0 && dst->len - step_start >= q->slice))
            break;
    }
    if (rc == IDM_OK && dst != out &&
        (j->sent == count || (j->in_parts && j->rendered.len >= part))) {
        idms_buf_append(out, j->rendered.data, j->rendered.len);
        j->rendered.len = 0;
    }
    if (rc == IDM_OK && out->len > start)
        j->handed = j->sent;
    const bool timed = f->time_ordered;
    if (timed && j->done > done0)
        m->below.need(m->below.ctx, false);
    if (rc == IDM_OK && j->sent < count) {
        r->status = IDMS_MINT_PART;
        return;
    }
    if (rc == IDM_OK) {
        m->metrics->minted[format] += count;
        idms_mint_job_free(j);
        return;
    }
    if (rc == IDM_EAGAIN) {
        /* Counted once per request and reason: a wait under a millisecond
         * parks again on every loop turn. */
        bool rewind =
            retry_ns / 1000000 <= idm_snowflake_high_water_ms(m->sf) && clock_ns(m) < retry_ns;
        unsigned why = rewind ? 1u << 3 : 1u << IDMS_PARK_TIME;
        if (!(j->parked_for & why)) {
            if (j->parked_for == 0)
                m->metrics->parks++;
            j->parked_for |= why;
            if (!rewind) {
                m->metrics->exhaustion_waits++;
            } else {
                m->metrics->rewind_waits++;
                if (!waiting_for_resume(m, NULL))
                    m->metrics->clock_rewinds++;
            }
        }
        r->park.why = IDMS_PARK_TIME;
        r->park.until_ns = retry_ns;
        r->status = IDMS_MINT_PARKED;
        return;
    }
    char stuck[900];
    stuck[0] = '\0';
    if (rc == IDM_ECEILING &&
        m->below.ceiling_rises(m->below.ctx, format == IDMX_FMT_SNOWFLAKE, stuck, sizeof stuck)) {
        m->below.need(m->below.ctx, true);
        if (!(j->parked_for & 1u << IDMS_PARK_CEILING)) {
            if (j->parked_for == 0)
                m->metrics->parks++;
            j->parked_for |= 1u << IDMS_PARK_CEILING;
            m->metrics->ceiling_waits++;
        }
        r->park.why = IDMS_PARK_CEILING;
        r->park.on = m->ceiling_waiters;
        r->status = IDMS_MINT_PARKED;
        return;
    }
    /* A refusal: the IDs minted since the last part were never handed out;
     * a reply begun in parts is cut short (mint.h). */
    bool cut = j->handed > 0;
    if (cut)
        m->metrics->minted[format] += j->handed;
    idms_mint_job_free(j);
    if (rc == IDM_ECEILING) {
        r->status = 503;
        r->retry_after_s = 1;
        snprintf(r->message, sizeof r->message, "%s", stuck);
    } else if (rc == IDM_ECLOCK_REWIND) {
        refuse_rewind(m, &err, format, r);
    } else if (rc == IDM_ETIME_RANGE) {
        r->status = 503;
        snprintf(r->message, sizeof r->message, "%s", err.msg);
    } else {
        r->status = 500;
        snprintf(r->message, sizeof r->message, "%s", rc == IDM_ENOMEM ? "out of memory" : err.msg);
        idms_log(IDMS_LOG_ERROR, "cannot mint %s: %s", idmx_formats[format].name, r->message);
    }
    if (cut) {
        idms_log(IDMS_LOG_WARN, "a %s reply sent in parts was cut short: %s", f->name, r->message);
        r->status = IDMS_MINT_CUT;
    }
}

bool idms_mint_clock_ready(const idms_minter *m, int64_t now, idms_pause_why *w)
{
    int64_t high = m->sf != NULL ? idm_snowflake_high_water_ms(m->sf) : 0;
    /* A lead an observation made (up to --max-offset) is not a clock
     * behind: the generator mints in it. */
    bool observed = high <= m->sf_observed_ms && high - now <= m->max_offset_ms;
    if (now >= high - m->max_rewind_ms || observed)
        return true;
    const char *whose;
    w->cause = IDMS_PAUSE_CLOCK;
    w->eta_ms = high - m->max_rewind_ms - now;
    if (waiting_for_resume(m, &whose))
        snprintf(w->why, sizeof w->why,
                 "waiting for the clock to reach the time high-water mark of %s (%" PRId64
                 " ms ahead)",
                 whose, high - now);
    else
        snprintf(w->why, sizeof w->why,
                 "the clock is %" PRId64 " ms behind the latest time used (tolerance %" PRId64
                 " ms)",
                 high - now, m->max_rewind_ms);
    snprintf(w->ends, sizeof w->ends,
             "the clock reaching %" PRId64 " ms before the latest time used (%" PRId64
             " ms from now, unless it is stepped)",
             m->max_rewind_ms, w->eta_ms);
    return false;
}
