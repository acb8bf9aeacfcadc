/*
 * segments.c - the segment mint service (segments.h): tags and their
 * allocators on the loop, in the tag table (tagtable.h), and the store
 * thread that looks them up and leases ranges for them.
 */
#include "segments.h"
#include "buf.h"
#include "core/job.h"
#include "core/waitlist.h"
#include "log.h"
#include "mint.h"
#include "pause.h"
#include "services.h"
#include "tagtable.h"
#include <idmint/segstore.h>

#include <assert.h>
#include <idmint/segment.h>
#include <stdarg.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

_Static_assert(IDMSEG_TAG_MAX <= IDMS_TAG_NAME_MAX, "the tag table holds every valid name");

/* IDs taken from the allocator per call while a reply is assembled. */
#define TAKE_CHUNK 512

static const char *name_of(const idms_seg_tag *t)
{
    return t->entry.name;
}

/* ---- the store thread --------------------------------------------------- */

/* Under mu. */
static void push_job(idms_seg_queue *q, idms_seg_tag *t)
{
    t->qnext = NULL;
    if (q->tail != NULL)
        q->tail->qnext = t;
    else
        q->head = t;
    q->tail = t;
}

/* Under mu: the first job, or NULL. */
static idms_seg_tag *pop_job(idms_seg_queue *q)
{
    idms_seg_tag *t = q->head;
    if (t == NULL)
        return NULL;
    q->head = t->qnext;
    if (q->head == NULL)
        q->tail = NULL;
    return t;
}

/* A job as it left the loop (under mu): what the thread does for it. */
typedef struct job_spec {
    bool lookup, probe;
    uint64_t want, grant_step;
    uint32_t grants;
} job_spec;

/* The job's grants, after the rest of it went well: one lease of grants
 * segments of step IDs (fewer segments when that many would not fit a
 * BIGINT: the requests left without one ask again). */
static void run_grants(idms_segments *g, idms_seg_tag *t, const job_spec *js, uint64_t step,
                       idms_seg_tag *res)
{
    uint32_t n = js->grants;
    while (n > 1 && step > (uint64_t)INT64_MAX / n)
        n--;
    idmseg_error e;
    res->res_grants = n;
    res->res_grant_size = step;
    res->grant_rc = idmseg_store_lease(g->store, name_of(t), step * n, &res->res_grant_first,
                                       &res->res_grant_stride, &e);
    if (res->grant_rc != 0)
        snprintf(res->msg, sizeof res->msg, "%s", e.msg);
}

/* One job, outside mu: look the tag up and lease its first range (unless
 * probe: the table has no room for it), or lease want IDs; then the
 * clients' grants (js->grants). */
static void run_job(idms_segments *g, idms_seg_tag *t, const job_spec *js, idms_seg_tag *res)
{
    uint64_t want = js->want;
    bool probe = js->probe;
    uint64_t grant_step = js->grant_step;
    idmseg_error e;
    if (g->store == NULL) {
        if (idmseg_store_open(g->url, &g->store, &e) != 0) {
            res->rc = IDMSEG_EDB;
            snprintf(res->msg, sizeof res->msg, "%s", e.msg);
            return;
        }
    }
    if (js->lookup) {
        idmseg_tag_info info;
        res->rc = idmseg_store_show(g->store, name_of(t), &info, &e);
        if (res->rc != 0) {
            snprintf(res->msg, sizeof res->msg, "%s", e.msg);
            return;
        }
        res->step = info.step;
        res->max_step = info.max_step;
        if (probe)
            return;
        want = info.step;
        grant_step = info.step;
    }
    if (want > 0) {
        res->count = want;
        res->rc = idmseg_store_lease(g->store, name_of(t), want, &res->first, &res->got_stride, &e);
        if (res->rc != 0) {
            snprintf(res->msg, sizeof res->msg, "%s", e.msg);
            return;
        }
    }
    if (js->grants > 0 && grant_step > 0)
        run_grants(g, t, js, grant_step, res);
}

static void thread_main(void *arg)
{
    idms_segments *g = arg;
    uv_mutex_lock(&g->mu);
    while (!g->stop) {
        /* The ranges of tags in use first: a flood of lookups does not
         * hold up their refills. */
        idms_seg_tag *t = pop_job(&g->leases);
        if (t == NULL)
            t = pop_job(&g->lookups);
        if (t == NULL) {
            uv_cond_wait(&g->cv, &g->mu);
            continue;
        }
        job_spec js = {t->lookup, t->probe, t->want, t->job_step, t->job_grants};
        uv_mutex_unlock(&g->mu);
        idms_seg_tag res;
        memset(&res, 0, sizeof res);
        run_job(g, t, &js, &res);
        if ((res.rc == IDMSEG_EDB || res.grant_rc == IDMSEG_EDB) && g->store != NULL) {
            /* The next job reconnects (a fresh handle: whatever state the
             * old connection was left in goes with it). */
            idmseg_store_close(g->store);
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
        t->grant_rc = res.grant_rc;
        t->res_grants = res.res_grants;
        t->res_grant_first = res.res_grant_first;
        t->res_grant_stride = res.res_grant_stride;
        t->res_grant_size = res.res_grant_size;
        snprintf(t->msg, sizeof t->msg, "%s", res.msg);
        t->qnext = g->results;
        g->results = t;
        uv_async_send(&g->async);
    }
    uv_mutex_unlock(&g->mu);
}

/* ---- the loop side ------------------------------------------------------ */

/* A tag is held (never evicted) while it has an allocator or a job. */
static void repin(idms_segments *g, idms_seg_tag *t)
{
    idms_tagtable_pin(&g->table, &t->entry, t->seg != NULL || t->queued);
}

/* A job for t: a lookup (lookup: the tag's row, and its first range), a
 * range of want IDs for its allocator (0: none), and the grants asked for
 * since the last job (grant_want). */
static void queue_job(idms_segments *g, idms_seg_tag *t, bool lookup, uint64_t want)
{
    if (t->queued)
        return;
    t->queued = true;
    t->lookup = lookup;
    t->want = want;
    t->probe = lookup && g->live >= g->live_max;
    t->job_grants = t->probe ? 0 : t->grant_want;
    t->job_step = t->store_step;
    t->grant_want = 0;
    if (lookup)
        g->lookups_total++;
    if (t->seg != NULL && want > 0)
        idm_segment_fetch_started(t->seg);
    repin(g, t);
    uv_mutex_lock(&g->mu);
    push_job(lookup ? &g->lookups : &g->leases, t);
    uv_cond_signal(&g->cv);
    uv_mutex_unlock(&g->mu);
}

/* A range is wanted (prefetch at 10% used, or a dry buffer): ask for it.
 * A tag whose last fetch failed is asked for by the retry timer only
 * (retry), once a second, not on every request. */
static void fetch(idms_segments *g, idms_seg_tag *t, bool retry)
{
    uint64_t want = 0;
    if (t->state == IDMS_TAG_READY && !t->queued && (!t->failing || retry) &&
        idm_segment_wants(t->seg, &want))
        queue_job(g, t, false, want);
}

/* The retry list: READY tags whose last fetch failed. */
static void list_failing(idms_segments *g, idms_seg_tag *t, bool on)
{
    bool listed = t->fail_next != NULL;
    if (on == listed)
        return;
    if (on) {
        t->fail_prev = &g->failing;
        t->fail_next = g->failing.fail_next;
        g->failing.fail_next->fail_prev = t;
        g->failing.fail_next = t;
    } else {
        t->fail_prev->fail_next = t->fail_next;
        t->fail_next->fail_prev = t->fail_prev;
        t->fail_prev = t->fail_next = NULL;
    }
}

static void failed(idms_segments *g, idms_seg_tag *t, const char *msg)
{
    g->metrics->segment_store_errors++;
    if (!t->failing || strcmp(t->why, msg) != 0)
        idms_log(IDMS_LOG_ERROR, "segment tag %s: %s; %s, trying again every second", name_of(t),
                 msg, t->seg != NULL ? "serving what is left in memory" : "not served");
    t->failing = true;
    t->retry_ms = (int64_t)uv_now(g->loop) + IDMS_SEG_RETRY_MS;
    snprintf(t->why, sizeof t->why, "%s", msg);
    g->store_failing = true;
    snprintf(g->store_why, sizeof g->store_why, "%s", msg);
    if (t->seg != NULL) {
        idm_segment_fetch_failed(t->seg);
        list_failing(g, t, true);
    } else {
        snprintf(g->lookup_failed, sizeof g->lookup_failed, "%s", name_of(t));
    }
}

/* The store has the tag, and the table of live tags has no room for it:
 * what was leased for it (if anything) is not used. */
static void no_room(idms_segments *g, idms_seg_tag *t)
{
    t->state = IDMS_TAG_FULL;
    t->state_ms = (int64_t)uv_now(g->loop);
    t->failing = false;
}

static void supplied(idms_segments *g, idms_seg_tag *t)
{
    if (t->seg == NULL) {
        if (t->probe || g->live >= g->live_max) {
            no_room(g, t);
            return;
        }
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
        g->live++;
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
        idms_log(IDMS_LOG_INFO, "segment tag %s: the store answers again", name_of(t));
    t->failing = false;
    t->why[0] = '\0';
    list_failing(g, t, false);
    g->metrics->segment_leases++;
}

/* The grants of a job whose lookup or refill (if any) went well: ready
 * for the requests about to be woken, or the failure they are told of
 * until IDMS_SEG_RETRY_MS has passed. Grants of an earlier job not handed
 * out (their requests went away) are dropped: never handed out. */
static void granted(idms_segments *g, idms_seg_tag *t)
{
    if (t->res_grants == 0)
        return;
    uint32_t n = t->res_grants;
    t->res_grants = 0;
    if (t->grant_rc != 0) {
        g->metrics->segment_store_errors++;
        idms_log(IDMS_LOG_ERROR, "segment tag %s: a whole segment for a client: %s", name_of(t),
                 t->msg);
        t->grant_failed_ms = (int64_t)uv_now(g->loop);
        if (t->grant_failed_ms == 0)
            t->grant_failed_ms = 1;
        snprintf(t->grant_why, sizeof t->grant_why, "%.290s", t->msg);
        return;
    }
    t->grant_failed_ms = 0;
    t->grant_first = t->res_grant_first;
    t->grant_stride = t->res_grant_stride;
    t->grant_size = t->res_grant_size;
    t->grant_left = n;
    t->leases++;
    g->metrics->segment_leases++;
}

static void on_async(uv_async_t *a)
{
    idms_segments *g = a->data;
    uv_mutex_lock(&g->mu);
    idms_seg_tag *list = g->results;
    g->results = NULL;
    uv_mutex_unlock(&g->mu);
    /* Every tag in the list has been queued, so is pinned until repin:
     * an eviction meanwhile cannot free one of them. The requests parked
     * for these tags (and no other) go on once every result is in: woken
     * meanwhile, they could evict a tag of the list. */
    idms_waitq woken;
    idms_waitq_init(&woken);
    for (idms_seg_tag *t = list, *next; t != NULL; t = next) {
        next = t->qnext;
        uv_mutex_lock(&g->mu);
        int rc = t->rc;
        t->done = false;
        uv_mutex_unlock(&g->mu);
        t->queued = false;
        bool supplies = t->lookup || t->want > 0;
        if (t->lookup && rc == 0)
            t->store_step = t->step;
        if (rc == 0 || rc == IDMSEG_ENOTAG) {
            /* The store answers. */
            g->store_failing = false;
            g->lookup_failed[0] = '\0';
        }
        if (rc == 0) {
            if (supplies)
                supplied(g, t);
            granted(g, t);
        } else if (rc == IDMSEG_ENOTAG && t->seg != NULL) {
            /* Deleted from the store while in use: what is in memory is
             * still ours to hand out; no more comes. */
            failed(g, t, "the tag is gone from the store");
        } else if (rc == IDMSEG_ENOTAG) {
            t->state = IDMS_TAG_MISSING;
            t->state_ms = (int64_t)uv_now(g->loop);
            t->failing = false;
        } else {
            failed(g, t, t->msg);
        }
        /* Every grant request of the tag is woken now: the ones left
         * without a grant ask again. */
        t->grant_want = 0;
        fetch(g, t, false);
        repin(g, t);
        idms_waitq_move(&woken, &t->waiters);
    }
    idms_waitq_wake(&woken);
}

static void on_retry(uv_timer_t *timer)
{
    idms_segments *g = timer->data;
    if (*g->draining)
        return;
    /* Only the tags whose fetch failed: no scan of the table. A tag whose
     * lookup failed is asked again by the next request for it (not before
     * its retry_ms), and the last one here, so that /readyz comes back by
     * itself when no request comes. */
    for (idms_seg_tag *t = g->failing.fail_next, *next; t != &g->failing; t = next) {
        next = t->fail_next;
        fetch(g, t, true);
    }
    if (g->lookup_failed[0] != '\0') {
        idms_seg_tag *t = (idms_seg_tag *)idms_tagtable_find(&g->table, g->lookup_failed,
                                                             strlen(g->lookup_failed));
        if (t == NULL || t->state != IDMS_TAG_LOADING)
            g->lookup_failed[0] = '\0';
        else
            queue_job(g, t, true, 0);
    }
}

static void evict(void *ctx, idms_tag_entry *e)
{
    (void)ctx;
    idms_seg_tag *t = (idms_seg_tag *)e;
    /* Requests park only on pinned tags (loading, or with an allocator),
     * and leave a tag's list when its result comes, before it unpins. */
    assert(idms_waitq_empty(&t->waiters));
    idm_segment_free(t->seg);
    free(t);
}

int idms_segments_open(idms_segments *g)
{
    if (g->url[0] == '\0')
        return 0;
    g->enabled = true;
    g->live_max = g->tags;
    g->failing.fail_prev = g->failing.fail_next = &g->failing;
    idmseg_error e;
    int rc = idmseg_store_open(g->url, &g->store, &e);
    if (rc == IDMSEG_EUSAGE || rc == IDMSEG_EREADONLY) {
        fprintf(stderr, "idmintd: --segments %s: %s\n", g->url, e.msg);
        return 1;
    }
    /* The hash's key, so that no client can choose names of one bucket. */
    uint64_t key[2];
    if (getrandom(key, sizeof key, 0) != (ssize_t)sizeof key) {
        key[0] = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
        key[1] = (uint64_t)(uintptr_t)&key ^ (uint64_t)clock();
    }
    if (idms_tagtable_init(&g->table, g->live_max + IDMS_SEG_CACHE_MAX, IDMS_SEG_CACHE_MAX, key,
                           evict, NULL) != 0) {
        fprintf(stderr, "idmintd: --segments: out of memory for the tag table\n");
        idmseg_store_close(g->store);
        g->store = NULL;
        return 1;
    }
    if (rc != 0) {
        /* Unreachable now: served (503) once it answers, not refused. */
        idms_log(IDMS_LOG_WARN, "segment store %s: %s; trying again when a tag is asked for",
                 g->url, e.msg);
        g->store_failing = true;
        snprintf(g->store_why, sizeof g->store_why, "%s", e.msg);
        g->store = NULL;
        snprintf(g->kind, sizeof g->kind, "%s",
                 strncmp(g->url, "sqlite:", 7) == 0 ? "sqlite" : "postgresql");
        return 0;
    }
    snprintf(g->kind, sizeof g->kind, "%s", idmseg_store_kind(g->store));
    idms_log(IDMS_LOG_INFO, "segments from the %s store %s", g->kind, g->url);
    return 0;
}

int idms_segments_start(idms_segments *g, uv_loop_t *loop)
{
    g->loop = loop;
    if (!g->enabled)
        return 0;
    uv_mutex_init(&g->mu);
    uv_cond_init(&g->cv);
    uv_async_init(loop, &g->async, on_async);
    g->async.data = g;
    uv_unref((uv_handle_t *)&g->async);
    uv_timer_init(loop, &g->retry);
    g->retry.data = g;
    uv_timer_start(&g->retry, on_retry, IDMS_SEG_RETRY_MS, IDMS_SEG_RETRY_MS);
    uv_unref((uv_handle_t *)&g->retry);
    if (uv_thread_create(&g->thread, thread_main, g) != 0) {
        idms_log(IDMS_LOG_ERROR, "cannot start the segment store thread");
        return -1;
    }
    g->thread_started = true;
    return 0;
}

void idms_segments_close(idms_segments *g)
{
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
    idmseg_store_close(g->store);
    g->store = NULL;
    idms_tagtable_destroy(&g->table);
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
        idms_buf_puts(out, "],\"code\":200,\"message\":\"\"}");
    /* IDMS_SEG_COMMAS ends without a line feed, as tinyid's body does: its
     * clients split on commas and parse the last part strictly (Java's
     * Long.parseLong("1576\n") throws). */
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

/* The request waits for t's next result from the store (a range, or a
 * failure). */
static void park_for(idms_seg_tag *t, idms_mint_result *r)
{
    r->park.why = IDMS_PARK_SEGMENT;
    r->park.on = &t->waiters;
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

bool idms_segment_check(const idms_segments *g, const char *tag, size_t tag_len, uint64_t count,
                        idms_mint_result *r)
{
    memset(r, 0, sizeof *r);
    r->status = 200;
    if (!g->enabled) {
        refuse(r, 404,
               "no segment store: start idmintd with --segments URL (sqlite:PATH or "
               "postgresql://...)");
        r->cause = IDMS_CAUSE_NOT_LOADED;
        return false;
    }
    idmseg_error why;
    if (!idmseg_tag_valid(tag, tag_len, &why)) {
        refuse(r, 400, "invalid tag: %s", why.msg);
        r->cause = IDMS_CAUSE_NO_TAG;
        return false;
    }
    if (count == 0 || count > g->max_count) {
        refuse(r, 400, "count must be from 1 to %" PRIu64, g->max_count);
        return false;
    }
    return true;
}

/* Whether q's connection may cause one more store lookup this second
 * (counted); if not, r parks it until the second is over (the connection
 * reads no further meanwhile: the flood's cost is the flooder's). */
static bool lookup_allowed(const idms_req *q, int64_t now, idms_mint_result *r)
{
    idms_segments *g = q->svc->segments;
    idms_seg_share *sh = q->seg;
    if (sh->lookups == 0 || now - sh->window_ms >= 1000) {
        sh->window_ms = now;
        sh->lookups = 0;
    }
    if (sh->lookups < IDMS_SEG_LOOKUPS_PER_S) {
        sh->lookups++;
        return true;
    }
    /* Counted once per second that it waits for (it may look again
     * before the second is quite over). */
    if (sh->lookups == IDMS_SEG_LOOKUPS_PER_S) {
        sh->lookups++;
        g->lookup_waits++;
    }
    idm_clock clock = idm_clock_system();
    int64_t wall_ns = 0;
    if (clock.now_ns(clock.ctx, &wall_ns) != IDM_OK)
        wall_ns = 0;
    /* A millisecond past the second's end: conn.c rounds the wait down. */
    r->park.why = IDMS_PARK_TIME;
    r->park.until_ns = wall_ns + (sh->window_ms + 1000 + 1 - now) * 1000000;
    r->status = IDMS_MINT_PARKED;
    return false;
}

/* Whether a request for t asks the store: a name not believed any more,
 * or a lookup that failed a retry period ago. */
static bool needs_lookup(const idms_seg_tag *t, int64_t now)
{
    switch (t->state) {
    case IDMS_TAG_MISSING:
    case IDMS_TAG_FULL:
        return now - t->state_ms >= IDMS_SEG_MISSING_TTL_MS;
    case IDMS_TAG_LOADING:
        return !t->queued && (!t->failing || now >= t->retry_ms);
    default:
        return false;
    }
}

static void refuse_full(idms_segments *g, idms_seg_tag *t, idms_mint_result *r)
{
    if (g->refused_full++ == 0)
        idms_log(IDMS_LOG_WARN,
                 "the segment tag table is full (%zu tags, --segment-tags): tag %s "
                 "and any other not asked for before get 503 until a restart with a larger "
                 "table",
                 g->live, name_of(t));
    refuse(r, 503,
           "the segment tag table is full: %zu tags in use (--segment-tags %zu); tag %s "
           "is not served",
           g->live, g->live_max, name_of(t));
}

/* The tag named for q, READY (with an allocator), or NULL with r a park
 * (its lookup queued or under way, a grant asked for with it when grant)
 * or a refusal (404 no such tag, 503 the table full or the store
 * unreachable). */
static idms_seg_tag *ready_tag(const idms_req *q, const char *tag, size_t tag_len, bool grant,
                               idms_mint_result *r)
{
    idms_segments *g = q->svc->segments;
    int64_t now = (int64_t)uv_now(g->loop);
    idms_seg_tag *t = (idms_seg_tag *)idms_tagtable_find(&g->table, tag, tag_len);
    if (t == NULL || needs_lookup(t, now)) {
        if (!lookup_allowed(q, now, r))
            return NULL;
        if (t == NULL) {
            t = calloc(1, sizeof *t);
            if (t == NULL) {
                refuse(r, 503, "out of memory for segment tag %.64s", tag);
                r->cause = IDMS_CAUSE_NOT_LOADED;
                return NULL;
            }
            idms_waitq_init(&t->waiters);
            idms_tagtable_add(&g->table, &t->entry, tag, tag_len);
        }
        t->state = IDMS_TAG_LOADING;
        if (grant)
            t->grant_want++;
        queue_job(g, t, true, 0);
        park_for(t, r);
        return NULL;
    }
    const char *name = name_of(t);
    if (t->state == IDMS_TAG_MISSING) {
        refuse(r, 404,
               "no tag '%s' in the segment store (create it with idmint segment "
               "create %s --store ...)",
               name, name);
        r->cause = IDMS_CAUSE_NO_TAG;
        return NULL;
    }
    if (t->state == IDMS_TAG_FULL) {
        refuse_full(g, t, r);
        r->cause = IDMS_CAUSE_NOT_LOADED;
        return NULL;
    }
    if (t->state == IDMS_TAG_LOADING) {
        if (t->queued) {
            if (grant)
                t->grant_want++;
            park_for(t, r);
            return NULL;
        }
        refuse(r, 503, "the segment store cannot be reached (%.400s): tag %s is not loaded", t->why,
               name);
        r->cause = IDMS_CAUSE_NOT_LOADED;
        return NULL;
    }
    return t;
}

void idms_segment_grant(const idms_req *q, const char *tag, size_t tag_len, idms_seg_grant *out,
                        idms_mint_result *r)
{
    idms_segments *g = q->svc->segments;
    if (!idms_segment_check(g, tag, tag_len, 1, r))
        return;
    idms_seg_tag *t = ready_tag(q, tag, tag_len, true, r);
    if (t == NULL)
        return;
    if (t->grant_left > 0) {
        out->first = t->grant_first;
        out->count = t->grant_size;
        out->stride = t->grant_stride;
        t->grant_first += t->grant_size * t->grant_stride;
        t->grant_left--;
        t->served += t->grant_size;
        g->grants++;
        return;
    }
    int64_t now = (int64_t)uv_now(g->loop);
    if (t->grant_failed_ms != 0 && now - t->grant_failed_ms < IDMS_SEG_RETRY_MS) {
        refuse(r, 503, "tag %s: no segment could be leased for the client: %s", name_of(t),
               t->grant_why);
        return;
    }
    if (t->failing) {
        refuse(r, 503,
               "the segment store cannot be reached (%.400s): no segment of tag %s "
               "for the client",
               t->why, name_of(t));
        r->cause = IDMS_CAUSE_DRY;
        return;
    }
    t->grant_want++;
    if (!t->queued) {
        /* With a range for the allocator, if it wants one now. */
        uint64_t want = 0;
        if (!idm_segment_wants(t->seg, &want))
            want = 0;
        queue_job(g, t, false, want);
    }
    park_for(t, r);
}

void idms_segment_mint(const idms_req *q, const char *tag, size_t tag_len, uint64_t count,
                       int style, idms_buf *out, idms_mint_result *r)
{
    idms_segments *g = q->svc->segments;
    idms_mint_job *j = q->job;
    if (!idms_segment_check(g, tag, tag_len, count, r))
        return;
    idms_seg_tag *t = ready_tag(q, tag, tag_len, false, r);
    if (t == NULL)
        return;
    const char *name = name_of(t);
    if (style == IDMS_SEG_RESP_INCRBY) {
        uint64_t last = 0, stride = 1;
        idm_error err = {0};
        int rc = idm_segment_take_run(t->seg, count, &last, &stride, &err);
        fetch(g, t, false);
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
            refuse(r, 503,
                   "the segment store cannot be reached (%.400s): tag %s has no run of "
                   "that many IDs left in memory",
                   t->why, name);
            r->cause = IDMS_CAUSE_DRY;
            return;
        }
        park_for(t, r);
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
        fetch(g, t, false);
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
    fetch(g, t, false);
    if (j->done < count) {
        if (t->failing) {
            refuse(r, 503,
                   "the segment store cannot be reached (%.400s): tag %s has no IDs left "
                   "in memory",
                   t->why, name);
            r->cause = IDMS_CAUSE_DRY;
            idms_mint_job_free(j);
            return;
        }
        park_for(t, r);
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

bool idms_segments_ready(const idms_segments *g, idms_pause_why *w)
{
    if (!g->enabled)
        return true;
    w->cause = IDMS_PAUSE_SEGMENT;
    w->eta_ms = -1;
    if (g->refused_full > 0 && g->live >= g->live_max) {
        snprintf(w->why, sizeof w->why,
                 "the segment tag table is full: %zu tags in use (--segment-tags %zu); "
                 "tags not asked for before get 503",
                 g->live, g->live_max);
        snprintf(w->ends, sizeof w->ends,
                 "a restart with a larger --segment-tags (the tags in use stay loaded)");
        return false;
    }
    const char *tag = NULL, *store_why = NULL;
    if (g->lookup_failed[0] != '\0') {
        tag = g->lookup_failed;
        store_why = g->store_why;
    } else {
        /* The retry list only: the tags whose fetch failed. */
        for (const idms_seg_tag *t = g->failing.fail_next; t != &g->failing; t = t->fail_next)
            if (idm_segment_available(t->seg) == 0) {
                tag = name_of(t);
                store_why = t->why;
                break;
            }
    }
    if (tag == NULL) {
        w->cause = IDMS_PAUSE_NONE;
        return true;
    }
    snprintf(w->why, sizeof w->why,
             "segment tag %s has no IDs left and the store cannot be reached: %.400s", tag,
             store_why);
    snprintf(w->ends, sizeof w->ends,
             "the segment store answering a fetch (tried again every %d ms)", IDMS_SEG_RETRY_MS);
    return false;
}

void idms_segments_cache_json(const idms_segments *g, idms_buf *out)
{
    idms_buf_puts(out, "{");
    bool first = true;
    if (g->enabled) {
        for (const idms_tag_entry *e = g->table.pinned.next; e != &g->table.pinned; e = e->next) {
            const idms_seg_tag *t = (const idms_seg_tag *)e;
            if (t->seg == NULL)
                continue;
            /* Tag names need no JSON escaping (<idmint/segstore.h>). */
            idms_buf_printf(out,
                            "%s\"%s\":{\"key\":\"%s\",\"initOk\":true,\"step\":%" PRIu64
                            ",\"available\":%" PRIu64 ",\"fetching\":%s,\"leases\":%" PRIu64
                            ",\"served\":%" PRIu64 "}",
                            first ? "" : ",", name_of(t), name_of(t),
                            (uint64_t)idm_segment_step(t->seg),
                            (uint64_t)idm_segment_available(t->seg),
                            idm_segment_fetching(t->seg) ? "true" : "false", t->leases, t->served);
            first = false;
        }
    }
    idms_buf_puts(out, "}");
}

void idms_segments_metrics(const idms_segments *g, idms_buf *out)
{
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
        for (const idms_tag_entry *e = g->table.pinned.next; e != &g->table.pinned; e = e->next) {
            const idms_seg_tag *t = (const idms_seg_tag *)e;
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
                            name_of(t), v);
        }
    }
    idms_buf_printf(out,
                    "# HELP idmint_segment_store_errors_total Segment store calls that failed.\n"
                    "# TYPE idmint_segment_store_errors_total counter\n"
                    "idmint_segment_store_errors_total %" PRIu64 "\n",
                    g->metrics->segment_store_errors);
    idms_buf_printf(
        out,
        "# HELP idmint_segment_tags Tags in the table: live (an allocator, at most "
        "--segment-tags), looking (a lookup at the store), cached (missing or failed names, "
        "evicted least recently used first).\n"
        "# TYPE idmint_segment_tags gauge\n"
        "idmint_segment_tags{state=\"live\"} %zu\n"
        "idmint_segment_tags{state=\"looking\"} %zu\n"
        "idmint_segment_tags{state=\"cached\"} %zu\n"
        "# HELP idmint_segment_tags_max The most live tags (--segment-tags).\n"
        "# TYPE idmint_segment_tags_max gauge\n"
        "idmint_segment_tags_max %zu\n"
        "# HELP idmint_segment_lookups_total Tags looked up in the segment store.\n"
        "# TYPE idmint_segment_lookups_total counter\n"
        "idmint_segment_lookups_total %" PRIu64 "\n"
        "# HELP idmint_segment_lookup_waits_total Requests that waited because their connection "
        "had caused its share of lookups for the second.\n"
        "# TYPE idmint_segment_lookup_waits_total counter\n"
        "idmint_segment_lookup_waits_total %" PRIu64 "\n"
        "# HELP idmint_segment_tags_evicted_total Cached names evicted from the tag table.\n"
        "# TYPE idmint_segment_tags_evicted_total counter\n"
        "idmint_segment_tags_evicted_total %" PRIu64 "\n"
        "# HELP idmint_segment_tags_refused_total Requests refused because the table of live "
        "tags was full.\n"
        "# TYPE idmint_segment_tags_refused_total counter\n"
        "idmint_segment_tags_refused_total %" PRIu64 "\n"
        "# HELP idmint_segment_grants_total Whole segments leased for clients that mint from "
        "them (tinyid's nextSegmentId).\n"
        "# TYPE idmint_segment_grants_total counter\n"
        "idmint_segment_grants_total %" PRIu64 "\n",
        g->live, g->table.n_pinned - g->live, g->table.n_cached, g->live_max, g->lookups_total,
        g->lookup_waits, g->table.evicted, g->refused_full, g->grants);
}
