/*
 * segments.c - the segment mint service (segments.h): tags and their
 * allocators on the loop, the store thread that leases ranges for them.
 */
#include "idmintd.h"
#include "idmint_segstore.h"

#include <idmint/segment.h>
#include <stdarg.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How long the store's "no such tag" is believed before asking again (a
 * tag created meanwhile with `idmint segment create` is then found). */
#define MISSING_TTL_MS 1000
#define RETRY_MS 1000
/* IDs taken from the allocator per call while a reply is assembled. */
#define TAKE_CHUNK 512

static uint64_t hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

/* ---- the store thread --------------------------------------------------- */

/* Under mu. */
static void push_job(idms_segments *g, idms_seg_tag *t)
{
    t->qnext = NULL;
    if (g->jobs_tail != NULL)
        g->jobs_tail->qnext = t;
    else
        g->jobs = t;
    g->jobs_tail = t;
}

/* One job, outside mu: look the tag up (want 0) and lease its first range,
 * or lease want IDs. */
static void run_job(idms_segments *g, idms_seg_tag *t, uint64_t want, idms_seg_tag *res)
{
    char msg[600] = "";
    if (g->store == NULL) {
        idms_server *s = g->server;
        if (idmc_store_open(s->opt.segments, &g->store, msg, sizeof msg) != 0) {
            res->rc = IDMC_ERROR;
            snprintf(res->msg, sizeof res->msg, "%s", msg);
            return;
        }
    }
    if (want == 0) {
        idmc_tag_info info;
        res->rc = idmc_store_show(g->store, t->name, &info, msg, sizeof msg);
        if (res->rc != 0) {
            snprintf(res->msg, sizeof res->msg, "%s", msg);
            return;
        }
        res->step = info.step;
        res->max_step = info.max_step;
        want = info.step;
    }
    res->count = want;
    res->rc = idmc_store_lease(g->store, t->name, want, &res->first, &res->got_stride, msg,
                               sizeof msg);
    if (res->rc != 0)
        snprintf(res->msg, sizeof res->msg, "%s", msg);
}

static void thread_main(void *arg)
{
    idms_segments *g = arg;
    uv_mutex_lock(&g->mu);
    while (!g->stop) {
        idms_seg_tag *t = g->jobs;
        if (t == NULL) {
            uv_cond_wait(&g->cv, &g->mu);
            continue;
        }
        g->jobs = t->qnext;
        if (g->jobs == NULL)
            g->jobs_tail = NULL;
        uint64_t want = t->want;
        uv_mutex_unlock(&g->mu);
        idms_seg_tag res;
        memset(&res, 0, sizeof res);
        run_job(g, t, want, &res);
        if (res.rc == IDMC_ERROR && g->store != NULL) {
            /* The next job reconnects (a fresh handle: whatever state the
             * old connection was left in goes with it). */
            idmc_store_close(g->store);
            g->store = NULL;
        }
        uv_mutex_lock(&g->mu);
        t->done = true;
        t->rc = res.rc;
        t->first = res.first;
        t->count = res.count;
        t->step = res.step;
        t->max_step = res.max_step;
        t->got_stride = res.got_stride;
        snprintf(t->msg, sizeof t->msg, "%s", res.msg);
        t->qnext = g->results;
        g->results = t;
        uv_async_send(&g->async);
    }
    uv_mutex_unlock(&g->mu);
}

/* ---- the loop side ------------------------------------------------------ */

static void queue(idms_segments *g, idms_seg_tag *t, uint64_t want)
{
    if (t->queued)
        return;
    t->queued = true;
    t->want = want;
    if (t->seg != NULL)
        idm_segment_fetch_started(t->seg);
    uv_mutex_lock(&g->mu);
    push_job(g, t);
    uv_cond_signal(&g->cv);
    uv_mutex_unlock(&g->mu);
}

/* A range is wanted (prefetch at 10% used, or a dry buffer): ask for it. */
static void maybe_fetch(idms_segments *g, idms_seg_tag *t)
{
    uint64_t want = 0;
    if (t->state == IDMS_TAG_READY && !t->queued && idm_segment_wants(t->seg, &want))
        queue(g, t, want);
}

static void failed(idms_segments *g, idms_seg_tag *t, const char *msg)
{
    idms_server *s = g->server;
    s->metrics.segment_store_errors++;
    if (!t->failing || strcmp(t->why, msg) != 0)
        idms_log(IDMS_LOG_ERROR, "segment tag %s: %s; serving what is left in memory, trying again "
                 "every second", t->name, msg);
    t->failing = true;
    snprintf(t->why, sizeof t->why, "%s", msg);
    g->store_failing = true;
    snprintf(g->store_why, sizeof g->store_why, "%s", msg);
    if (t->seg != NULL)
        idm_segment_fetch_failed(t->seg);
}

static void supplied(idms_segments *g, idms_seg_tag *t)
{
    idms_server *s = g->server;
    if (t->seg == NULL) {
        idm_segment_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.step = t->step;
        cfg.min_step = t->step;
        cfg.max_step = t->max_step > t->step ? t->max_step : t->step;
        idm_error err = {0};
        if (idm_segment_new(&t->seg, &cfg, &err) != IDM_OK) {
            failed(g, t, err.msg[0] ? err.msg : "cannot make the tag's allocator");
            return;
        }
        idm_segment_fetch_started(t->seg);
    }
    idm_seg_range range = {t->first, t->count, t->got_stride};
    idm_error err = {0};
    if (idm_segment_supply(t->seg, &range, &err) != IDM_OK) {
        /* A store that went back (restored from a backup?): its range is
         * not used, and nothing more is until it leases above. */
        failed(g, t, err.msg);
        return;
    }
    t->stride = t->got_stride;
    t->leases++;
    t->state = IDMS_TAG_READY;
    if (t->failing)
        idms_log(IDMS_LOG_INFO, "segment tag %s: the store answers again", t->name);
    t->failing = false;
    t->why[0] = '\0';
    g->store_failing = false;
    s->metrics.segment_leases++;
}

static void on_async(uv_async_t *a)
{
    idms_segments *g = a->data;
    uv_mutex_lock(&g->mu);
    idms_seg_tag *list = g->results;
    g->results = NULL;
    uv_mutex_unlock(&g->mu);
    for (idms_seg_tag *t = list, *next; t != NULL; t = next) {
        next = t->qnext;
        uv_mutex_lock(&g->mu);
        int rc = t->rc;
        t->done = false;
        uv_mutex_unlock(&g->mu);
        t->queued = false;
        if (rc == 0) {
            supplied(g, t);
        } else if (rc == IDMC_NOTAG) {
            t->state = IDMS_TAG_MISSING;
            t->missing_at_ms = (int64_t)uv_now(g->server->loop);
            t->failing = false;
            if (t->seg != NULL) {
                /* Deleted from the store while in use: what is in memory
                 * is still ours to hand out; no more comes. */
                idm_segment_fetch_failed(t->seg);
                t->state = IDMS_TAG_READY;
                failed(g, t, "the tag is gone from the store");
            }
        } else {
            failed(g, t, t->msg);
        }
        maybe_fetch(g, t);
    }
    idms_conn_wake_segment(g->server);
}

static void on_retry(uv_timer_t *timer)
{
    idms_segments *g = timer->data;
    if (g->server->draining)
        return;
    for (int b = 0; b < IDMS_SEG_BUCKETS; b++)
        for (idms_seg_tag *t = g->buckets[b]; t != NULL; t = t->next) {
            if (!t->failing || t->queued)
                continue;
            if (t->seg == NULL)
                queue(g, t, 0);
            else
                maybe_fetch(g, t);
        }
}

int idms_segments_open(idms_server *s)
{
    idms_segments *g = &s->segments;
    g->server = s;
    if (s->opt.segments[0] == '\0')
        return 0;
    g->enabled = true;
    char msg[600];
    int rc = idmc_store_open(s->opt.segments, &g->store, msg, sizeof msg);
    if (rc == IDMC_USAGE || rc == IDMC_READONLY) {
        fprintf(stderr, "idmintd: --segments %s: %s\n", s->opt.segments, msg);
        return 1;
    }
    if (rc != 0) {
        /* Unreachable now: served (503) once it answers, not refused. */
        idms_log(IDMS_LOG_WARN, "segment store %s: %s; trying again when a tag is asked for",
                 s->opt.segments, msg);
        g->store_failing = true;
        snprintf(g->store_why, sizeof g->store_why, "%s", msg);
        g->store = NULL;
        snprintf(g->kind, sizeof g->kind, "%s",
                 strncmp(s->opt.segments, "sqlite:", 7) == 0 ? "sqlite" : "postgresql");
        return 0;
    }
    snprintf(g->kind, sizeof g->kind, "%s", idmc_store_kind(g->store));
    idms_log(IDMS_LOG_INFO, "segments from the %s store %s", g->kind, s->opt.segments);
    return 0;
}

int idms_segments_start(idms_server *s)
{
    idms_segments *g = &s->segments;
    if (!g->enabled)
        return 0;
    uv_mutex_init(&g->mu);
    uv_cond_init(&g->cv);
    uv_async_init(s->loop, &g->async, on_async);
    g->async.data = g;
    uv_unref((uv_handle_t *)&g->async);
    uv_timer_init(s->loop, &g->retry);
    g->retry.data = g;
    uv_timer_start(&g->retry, on_retry, RETRY_MS, RETRY_MS);
    uv_unref((uv_handle_t *)&g->retry);
    if (uv_thread_create(&g->thread, thread_main, g) != 0) {
        idms_log(IDMS_LOG_ERROR, "cannot start the segment store thread");
        return -1;
    }
    g->thread_started = true;
    return 0;
}

void idms_segments_close(idms_server *s)
{
    idms_segments *g = &s->segments;
    if (g->thread_started) {
        uv_mutex_lock(&g->mu);
        g->stop = true;
        uv_cond_signal(&g->cv);
        uv_mutex_unlock(&g->mu);
        uv_thread_join(&g->thread);
        g->thread_started = false;
        uv_cond_destroy(&g->cv);
        uv_mutex_destroy(&g->mu);
    }
    idmc_store_close(g->store);
    g->store = NULL;
    for (int b = 0; b < IDMS_SEG_BUCKETS; b++) {
        for (idms_seg_tag *t = g->buckets[b], *next; t != NULL; t = next) {
            next = t->next;
            idm_segment_free(t->seg);
            free(t);
        }
        g->buckets[b] = NULL;
    }
}

static idms_seg_tag *lookup(idms_segments *g, const char *name, size_t len, bool add)
{
    uint64_t b = hash(name, len) % IDMS_SEG_BUCKETS;
    for (idms_seg_tag *t = g->buckets[b]; t != NULL; t = t->next)
        if (strlen(t->name) == len && memcmp(t->name, name, len) == 0)
            return t;
    if (!add || g->tags >= IDMS_SEG_TAGS_MAX)
        return NULL;
    idms_seg_tag *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    memcpy(t->name, name, len);
    t->name[len] = '\0';
    t->next = g->buckets[b];
    g->buckets[b] = t;
    g->tags++;
    return t;
}

/* ---- replies ------------------------------------------------------------ */

static void render(idms_buf *out, int style, const uint64_t *ids, size_t n, bool first_part,
                   bool last_part)
{
    for (size_t i = 0; i < n; i++) {
        bool first = first_part && i == 0;
        switch (style) {
        case IDMS_SEG_JSON:
            idms_buf_printf(out, "%s\"%" PRIu64 "\"", first ? "[" : ",", ids[i]);
            break;
        case IDMS_SEG_TINYID_JSON:
            idms_buf_printf(out, "%s%" PRIu64, first ? "{\"data\":[" : ",", ids[i]);
            break;
        case IDMS_SEG_COMMAS:
            idms_buf_printf(out, "%s%" PRIu64, first ? "" : ",", ids[i]);
            break;
        case IDMS_SEG_BARE:
            idms_buf_printf(out, "%" PRIu64, ids[i]);
            break;
        case IDMS_SEG_RESP_INT:
            idms_buf_printf(out, ":%" PRIu64 "\r\n", ids[i]);
            break;
        default:
            idms_buf_printf(out, "%" PRIu64 "\n", ids[i]);
            break;
        }
    }
    if (!last_part)
        return;
    if (style == IDMS_SEG_JSON)
        idms_buf_puts(out, "]\n");
    else if (style == IDMS_SEG_TINYID_JSON)
        idms_buf_puts(out, "],\"code\":200,\"message\":\"\"}\n");
    else if (style == IDMS_SEG_COMMAS)
        idms_buf_puts(out, "\n");
}

#if defined(__GNUC__)
static void refuse(idms_mint_result *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#endif

static void refuse(idms_mint_result *r, int status, const char *fmt, ...)
{
    r->status = status;
    if (status == 503)
        r->retry_after_s = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
}

static void park_for(idms_conn *c, idms_mint_result *r)
{
    c->park = IDMS_PARK_SEGMENT;
    r->status = IDMS_MINT_PARKED;
}

/* A segment request's job (mint.h's, with no format of its own). */
static void start_job(idms_mint_job *j, uint64_t count)
{
    memset(j, 0, sizeof *j);
    idms_buf_init(&j->text);
    j->active = true;
    j->format = -1;
    j->count = count;
}

bool idms_segment_check(const idms_server *s, const char *tag, size_t tag_len, uint64_t count,
                        idms_mint_result *r)
{
    memset(r, 0, sizeof *r);
    r->status = 200;
    if (!s->segments.enabled) {
        refuse(r, 404, "no segment store: start idmintd with --segments URL (sqlite:PATH or "
                       "postgresql://...)");
        return false;
    }
    char name[IDMC_TAG_MAX + 1], why[160];
    if (tag_len > IDMC_TAG_MAX) {
        refuse(r, 400, "invalid tag: at most 64 bytes of [a-z0-9_.-]");
        return false;
    }
    memcpy(name, tag, tag_len);
    name[tag_len] = '\0';
    if (!idmc_tag_valid(name, why, sizeof why)) {
        refuse(r, 400, "invalid tag: %s", why);
        return false;
    }
    if (count == 0 || count > s->opt.max_count) {
        refuse(r, 400, "count must be from 1 to %" PRIu64, s->opt.max_count);
        return false;
    }
    return true;
}

void idms_segment_mint(idms_conn *c, const char *tag, size_t tag_len, uint64_t count, int style,
                       idms_buf *out, idms_mint_result *r)
{
    idms_server *s = c->server;
    idms_segments *g = &s->segments;
    idms_mint_job *j = &c->job;
    if (!idms_segment_check(s, tag, tag_len, count, r))
        return;
    char name[IDMC_TAG_MAX + 1];
    memcpy(name, tag, tag_len);
    name[tag_len] = '\0';
    idms_seg_tag *t = lookup(g, tag, tag_len, true);
    if (t == NULL) {
        refuse(r, 503, "too many tags asked for (at most %d)", IDMS_SEG_TAGS_MAX);
        return;
    }
    int64_t now = (int64_t)uv_now(s->loop);
    if (t->state == IDMS_TAG_MISSING && now - t->missing_at_ms >= MISSING_TTL_MS)
        t->state = IDMS_TAG_LOADING;
    if (t->state == IDMS_TAG_MISSING) {
        refuse(r, 404, "no tag '%s' in the segment store (create it with idmint segment "
                       "create %s --store ...)", name, name);
        return;
    }
    if (t->state == IDMS_TAG_LOADING) {
        if (t->failing && !t->queued) {
            refuse(r, 503, "the segment store cannot be reached (%.400s): tag %s is not loaded",
                   t->why, name);
            queue(g, t, 0);
            return;
        }
        queue(g, t, 0);
        park_for(c, r);
        return;
    }
    if (style == IDMS_SEG_RESP_INCRBY) {
        uint64_t last = 0, stride = 1;
        idm_error err = {0};
        int rc = idm_segment_take_run(t->seg, count, &last, &stride, &err);
        maybe_fetch(g, t);
        if (rc == IDM_OK) {
            t->served += count;
            idms_buf_printf(out, ":%" PRIu64 "\r\n", last);
            return;
        }
        if (rc != IDM_EAGAIN) {
            refuse(r, 400, "%s", err.msg);
            return;
        }
        if (t->failing) {
            refuse(r, 503, "the segment store cannot be reached (%.400s): tag %s has no run of "
                           "that many IDs left in memory", t->why, name);
            return;
        }
        park_for(c, r);
        return;
    }
    /* The IDs of a request drained meanwhile wait in the connection's job
     * (as uint64 values) until the rest arrives: replies keep their order.
     * A request served at once from the buffers (the usual case) renders
     * straight from the IDs taken, without the job. */
    uint64_t ids[TAKE_CHUNK];
    if (!j->active && count <= TAKE_CHUNK) {
        size_t got = 0;
        idm_error err = {0};
        int rc = idm_segment_take(t->seg, ids, (size_t)count, &got, &err);
        t->served += got;
        maybe_fetch(g, t);
        if (rc == IDM_OK) {
            render(out, style, ids, got, true, true);
            return;
        }
        /* Dry midway: what was taken waits in the job. */
        start_job(j, count);
        idms_buf_append(&j->text, ids, got * sizeof ids[0]);
        j->done = got;
    } else if (!j->active) {
        start_job(j, count);
    }
    while (j->done < count) {
        size_t want = count - j->done < TAKE_CHUNK ? (size_t)(count - j->done) : TAKE_CHUNK;
        size_t got = 0;
        idm_error err = {0};
        int rc = idm_segment_take(t->seg, ids, want, &got, &err);
        idms_buf_append(&j->text, ids, got * sizeof ids[0]);
        j->done += got;
        t->served += got;
        if (rc != IDM_OK)
            break;
    }
    maybe_fetch(g, t);
    if (j->done < count) {
        if (t->failing) {
            refuse(r, 503, "the segment store cannot be reached (%.400s): tag %s has no IDs left "
                           "in memory", t->why, name);
            idms_mint_job_free(j);
            return;
        }
        park_for(c, r);
        return;
    }
    /* Render what the job holds, in the style asked for. */
    size_t n = j->text.len / sizeof ids[0];
    for (size_t i = 0; i < n; i += TAKE_CHUNK) {
        size_t k = n - i < TAKE_CHUNK ? n - i : TAKE_CHUNK;
        memcpy(ids, j->text.data + i * sizeof ids[0], k * sizeof ids[0]);
        render(out, style, ids, k, i == 0, i + k == n);
    }
    idms_mint_job_free(j);
}

bool idms_segments_ready(const idms_server *s, char *why, size_t cap)
{
    const idms_segments *g = &s->segments;
    if (!g->enabled)
        return true;
    for (int b = 0; b < IDMS_SEG_BUCKETS; b++)
        for (const idms_seg_tag *t = g->buckets[b]; t != NULL; t = t->next) {
            if (!t->failing)
                continue;
            if (t->seg == NULL || idm_segment_available(t->seg) == 0) {
                snprintf(why, cap, "segment tag %s has no IDs left and the store cannot be "
                                   "reached: %.400s", t->name, t->why);
                return false;
            }
        }
    return true;
}

void idms_segments_metrics(const idms_server *s, idms_buf *out)
{
    const idms_segments *g = &s->segments;
    if (!g->enabled)
        return;
    static const char *const heads[] = {
        "# HELP idmint_segment_leases_total Ranges leased from the segment store, by tag.\n"
        "# TYPE idmint_segment_leases_total counter\n",
        "# HELP idmint_segment_step The step the next lease of a tag asks for.\n"
        "# TYPE idmint_segment_step gauge\n",
        "# HELP idmint_segment_ids_total IDs of a tag handed out.\n"
        "# TYPE idmint_segment_ids_total counter\n",
        "# HELP idmint_segment_available IDs of a tag leased and not handed out yet.\n"
        "# TYPE idmint_segment_available gauge\n"};
    for (int k = 0; k < 4; k++) {
        idms_buf_puts(out, heads[k]);
        for (int b = 0; b < IDMS_SEG_BUCKETS; b++)
            for (const idms_seg_tag *t = g->buckets[b]; t != NULL; t = t->next) {
                if (t->seg == NULL)
                    continue;
                uint64_t v = k == 0   ? t->leases
                             : k == 1 ? (uint64_t)idm_segment_step(t->seg)
                             : k == 2 ? t->served
                                      : (uint64_t)idm_segment_available(t->seg);
                idms_buf_printf(out, "%s{tag=\"%s\"} %" PRIu64 "\n",
                                k == 0   ? "idmint_segment_leases_total"
                                : k == 1 ? "idmint_segment_step"
                                : k == 2 ? "idmint_segment_ids_total"
                                         : "idmint_segment_available",
                                t->name, v);
            }
    }
    idms_buf_printf(out,
                    "# HELP idmint_segment_store_errors_total Segment store calls that failed.\n"
                    "# TYPE idmint_segment_store_errors_total counter\n"
                    "idmint_segment_store_errors_total %" PRIu64 "\n",
                    s->metrics.segment_store_errors);
}
