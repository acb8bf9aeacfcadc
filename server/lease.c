/*
 * lease.c - a node leased from etcd or ZooKeeper (lease.h): the lease
 * thread, which does all the talking, and the loop side, which turns what
 * it hears into the snowflake generator's ceiling.
 */
#include "lease.h"
#include "hwm.h"
#include "idmint_coord.h"
#include "log.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* The thread's waits: between claims while every node is held, after a
 * failed call (doubling up to the most), and before a failed mark write
 * is tried again. */
#define BUSY_POLL_MS   500
#define BACKOFF_MIN_MS 250
#define BACKOFF_MAX_MS 5000
#define MARK_RETRY_MS  200

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the thread ---------------------------------------------------------- */

static void wait_ms(idms_lease *L, int64_t ms)
{
    if (ms <= 0 || L->sh.stop)
        return;
    (void)uv_cond_timedwait(&L->cv, &L->mu, (uint64_t)ms * 1000000);
}

/* Under mu: a claim was made at t0 (monotonic). */
static void publish_claim(idms_lease *L, struct idmc_lease *l, int64_t t0)
{
    idms_lease_shared *sh = &L->sh;
    sh->epoch++;
    sh->node = idmc_lease_node(l);
    snprintf(sh->generation, sizeof sh->generation, "%s", idmc_lease_generation(l));
    sh->claim_mark = idmc_lease_mark_ms(l);
    sh->recorded = sh->claim_mark;
    sh->want_mark = 0;
    sh->confirmed_ms = t0;
    sh->ttl_ms = idmc_lease_ttl_ms(l);
    sh->lost = false;
    sh->failing = false;
    sh->msg[0] = '\0';
    sh->claims++;
}

static void publish_failure(idms_lease *L, const char *what, const char *msg)
{
    L->sh.failing = true;
    snprintf(L->sh.msg, sizeof L->sh.msg, "%s: %.500s", what, msg);
}

struct holders_ctx {
    const idms_lease *L;
    idms_holders *out;
};

static void add_holder(void *ctx, const idmc_slot_info *slot)
{
    struct holders_ctx *h = ctx;
    if (slot->held && slot->node >= h->L->lo && slot->node <= h->L->hi)
        idms_holders_add(h->out, slot->node, slot->holder, slot->ttl_ms_left);
}

/* On the thread, after a claim found every node held: who holds them
 * (what a waiting server tells its operator). A list that fails leaves
 * them unnamed. */
static void list_holders(idms_lease *L, idms_holders *out)
{
    idms_holders_init(out);
    struct holders_ctx ctx = {L, out};
    idmc_error err;
    if (idmc_list(L->coord, add_holder, &ctx, &err) < 0)
        idms_holders_init(out);
}

static void thread_main(void *arg)
{
    idms_lease *L = arg;
    idms_lease_shared *sh = &L->sh;
    idmc_error err;
    const char *msg = err.msg;
    int64_t backoff = BACKOFF_MIN_MS, mark_retry_at = 0;
    int64_t next_keepalive = sh->confirmed_ms + sh->ttl_ms / 3;
    uv_mutex_lock(&L->mu);
    while (!sh->stop) {
        int64_t now = mono_ms();
        if (L->lease == NULL) {
            uv_mutex_unlock(&L->mu);
            struct idmc_lease *l = NULL;
            int64_t t0 = mono_ms();
            int rc = idmc_claim(L->coord, L->lo, L->hi, L->holder, &l, &err);
            idms_holders holders;
            if (rc == IDMC_BUSY)
                list_holders(L, &holders);
            uv_mutex_lock(&L->mu);
            sh->claim_busy = rc == IDMC_BUSY;
            if (rc == IDMC_BUSY)
                sh->holders = holders;
            if (rc == 0) {
                L->lease = l;
                publish_claim(L, l, t0);
                next_keepalive = t0 + sh->ttl_ms / 3;
                backoff = BACKOFF_MIN_MS;
                uv_async_send(&L->async);
                continue;
            }
            publish_failure(L, rc == IDMC_BUSY ? "no node free" : "cannot claim a node", msg);
            uv_async_send(&L->async);
            if (rc == IDMC_BUSY) {
                wait_ms(L, BUSY_POLL_MS);
            } else {
                wait_ms(L, backoff);
                backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
            }
            continue;
        }
        int rc = 0;
        bool lost = false;
        if (sh->want_mark > sh->recorded && now >= mark_retry_at) {
            int64_t want = sh->want_mark;
            uv_mutex_unlock(&L->mu);
            rc = idmc_record_mark(L->lease, want, &err);
            uv_mutex_lock(&L->mu);
            if (rc == 0) {
                sh->recorded = want;
                sh->failing = false;
            } else if (rc == IDMC_LOST) {
                lost = true;
            } else {
                sh->mark_failures++;
                mark_retry_at = mono_ms() + MARK_RETRY_MS;
                publish_failure(L, "cannot record the time high-water mark in the node's slot",
                                msg);
            }
            uv_async_send(&L->async);
        } else if (now >= next_keepalive) {
            int64_t ttl = 0, t0 = mono_ms();
            uv_mutex_unlock(&L->mu);
            rc = idmc_keepalive(L->lease, &ttl, &err);
            uv_mutex_lock(&L->mu);
            if (rc == 0) {
                sh->confirmed_ms = t0;
                sh->ttl_ms = ttl;
                sh->failing = false;
                next_keepalive = t0 + ttl / 3;
            } else if (rc == IDMC_LOST) {
                lost = true;
            } else {
                sh->keepalive_failures++;
                publish_failure(L, "keep-alive failed", msg);
                int64_t again = sh->ttl_ms / 10;
                next_keepalive = mono_ms() + (again < 200 ? 200 : again);
            }
            uv_async_send(&L->async);
        } else {
            int64_t until = next_keepalive;
            if (sh->want_mark > sh->recorded && mark_retry_at < until)
                until = mark_retry_at;
            wait_ms(L, until - now);
            continue;
        }
        if (lost) {
            /* Expired or taken over: never used again. The loop hears of it
             * first, then a new claim follows. */
            sh->lost = true;
            sh->losses++;
            publish_failure(L, "lease lost", msg);
            uv_async_send(&L->async);
            struct idmc_lease *gone = L->lease;
            L->lease = NULL;
            uv_mutex_unlock(&L->mu);
            idmc_release(gone);
            uv_mutex_lock(&L->mu);
        }
    }
    uv_mutex_unlock(&L->mu);
}

/* ---- the loop side ------------------------------------------------------- */

static void recompute(idms_lease *L)
{
    if (L->epoch_seen == 0 || L->seen.lost || L->expired) {
        L->ceiling = INT64_MIN;
    } else {
        /* The deadline as the wall clock reads it now; the timer takes
         * over should the wall clock step back before then. */
        int64_t left = L->deadline_ms - mono_ms();
        int64_t c = idms_clock_ms() + left;
        L->ceiling = c < L->recorded ? c : L->recorded;
    }
    /* The owner sets the ceiling and lets the parked requests go on. */
    L->on_ceiling(L->ctx);
}

static void on_deadline(uv_timer_t *t)
{
    idms_lease *L = t->data;
    int64_t now = mono_ms();
    if (now < L->deadline_ms) {
        uv_timer_start(&L->deadline_timer, on_deadline, (uint64_t)(L->deadline_ms - now), 0);
        return;
    }
    if (L->expired || L->seen.lost || L->epoch_seen == 0)
        return;
    L->expired = true;
    char why[800];
    snprintf(why, sizeof why,
             "the lease of node %" PRIu64 " ran out: no keep-alive confirmed by %s for %" PRId64
             " ms (TTL %" PRId64 " ms, less a margin)%s%.600s",
             L->seen.node, idmc_kind(L->coord), now - L->seen.confirmed_ms, L->seen.ttl_ms,
             L->seen.msg[0] ? "; " : "", L->seen.msg);
    idms_log(IDMS_LOG_ERROR, "%s; not minting snowflakes until it holds a lease again", why);
    L->expiries++;
    L->on_held(L->ctx, false, why);
    recompute(L);
}

static void on_async(uv_async_t *a)
{
    idms_lease *L = a->data;
    uv_mutex_lock(&L->mu);
    idms_lease_shared prev = L->seen;
    L->seen = L->sh;
    uv_mutex_unlock(&L->mu);
    const idms_lease_shared *v = &L->seen;
    bool fresh = v->epoch != L->epoch_seen;
    if (fresh && prev.epoch > 0 && v->losses > prev.losses && !prev.lost)
        idms_log(IDMS_LOG_ERROR, "the lease of node %" PRIu64 " (generation %s) was lost",
                 prev.node, prev.generation);
    if (fresh) {
        /* A new claim: a new generator, above the slot's mark, under a
         * ceiling at that mark until a mark of ours is recorded. */
        L->epoch_seen = v->epoch;
        L->recorded = v->claim_mark;
        L->expired = false;
        L->on_claim(L->ctx, v->node, v->generation, v->claim_mark);
    }
    if (!v->lost) {
        L->recorded = v->recorded;
        L->deadline_ms = idmc_lease_deadline(v->confirmed_ms, v->ttl_ms);
        int64_t left = L->deadline_ms - mono_ms();
        if (left > 0) {
            if (L->expired && !fresh) {
                /* The coordinator confirmed the same lease after our
                 * deadline had passed: nobody else can have taken it. */
                idms_log(IDMS_LOG_INFO, "the lease of node %" PRIu64 " is confirmed again",
                         v->node);
                L->on_held(L->ctx, true, NULL);
            }
            L->expired = false;
            uv_timer_start(&L->deadline_timer, on_deadline, (uint64_t)left, 0);
        }
    } else if (!prev.lost || fresh) {
        char why[800];
        snprintf(why, sizeof why,
                 "the lease of node %" PRIu64 " (generation %s) was lost: %.600s; "
                 "claiming a node again",
                 v->node, v->generation, v->msg);
        idms_log(IDMS_LOG_ERROR, "%s", why);
        uv_timer_stop(&L->deadline_timer);
        L->on_held(L->ctx, false, why);
    }
    if (v->epoch == 0 || v->lost) {
        /* No lease: say why (all held, the service unreachable). */
        if (v->failing && strcmp(v->msg, prev.msg) != 0) {
            char why[800];
            snprintf(why, sizeof why,
                     "no snowflake node from %s (nodes %" PRIu64 "..%" PRIu64
                     "): %.600s; trying again",
                     idmc_kind(L->coord), L->lo, L->hi, v->msg);
            if (v->epoch == 0 || !prev.lost)
                idms_log(IDMS_LOG_WARN, "%s", why);
            L->on_held(L->ctx, false, why);
        }
    } else if (v->failing && strcmp(v->msg, prev.msg) != 0) {
        idms_log(IDMS_LOG_WARN, "node %" PRIu64 ": %s", v->node, v->msg);
    }
    recompute(L);
}

/* ---- the interface ------------------------------------------------------- */

int idms_lease_open(idms_lease *L, const char *url, int64_t ttl_ms, int64_t reserve_ms, char *msg,
                    size_t cap)
{
    L->reserve_ms = reserve_ms;
    idmc_error err;
    int rc = idmc_open(url, ttl_ms, &L->coord, &err);
    int64_t t0 = mono_ms();
    if (rc == 0)
        rc = idmc_claim(L->coord, L->lo, L->hi, L->holder, &L->lease, &err);
    if (rc != 0) {
        snprintf(msg, cap, "%s", err.msg);
        /* Who holds the range, for the pause the loop starts with (the
         * thread claims next; idms_lease_start hands sh to the loop). */
        L->sh.claim_busy = rc == IDMC_BUSY;
        if (rc == IDMC_BUSY)
            list_holders(L, &L->sh.holders);
        return rc;
    }
    publish_claim(L, L->lease, t0);
    /* The first mark, recorded before anything is minted (as the state
     * directory's): the ceiling starts there. */
    int64_t now = idms_clock_ms(), mark = L->sh.claim_mark;
    int64_t want = (mark > now ? mark : now) + L->reserve_ms;
    if (idmc_record_mark(L->lease, want, &err) == 0)
        L->sh.recorded = want;
    else
        publish_failure(L, "cannot record the time high-water mark in the node's slot", err.msg);
    return 0;
}

int idms_lease_start(idms_lease *L, uv_loop_t *loop)
{
    uv_mutex_init(&L->mu);
    uv_cond_init(&L->cv);
    uv_async_init(loop, &L->async, on_async);
    L->async.data = L;
    uv_unref((uv_handle_t *)&L->async);
    uv_timer_init(loop, &L->deadline_timer);
    L->deadline_timer.data = L;
    uv_unref((uv_handle_t *)&L->deadline_timer);
    /* What the first claim (idms_lease_open) gave, as if just heard. */
    L->epoch_seen = L->sh.epoch;
    L->seen = L->sh;
    if (L->sh.epoch > 0) {
        L->recorded = L->sh.recorded;
        L->deadline_ms = idmc_lease_deadline(L->sh.confirmed_ms, L->sh.ttl_ms);
        int64_t left = L->deadline_ms - mono_ms();
        uv_timer_start(&L->deadline_timer, on_deadline, (uint64_t)(left > 0 ? left : 0), 0);
    }
    recompute(L);
    if (uv_thread_create(&L->thread, thread_main, L) != 0) {
        idms_log(IDMS_LOG_ERROR, "cannot start the lease thread");
        return -1;
    }
    L->thread_started = true;
    /* A first mark that could not be recorded at the start is asked for
     * again now that the thread runs. */
    idms_lease_need(L, idms_clock_ms(), false);
    return 0;
}

void idms_lease_need(idms_lease *L, int64_t now_ms, bool at_ceiling)
{
    if (L->epoch_seen == 0 || L->seen.lost)
        return;
    int64_t want = now_ms + L->reserve_ms;
    if (!at_ceiling && now_ms + L->reserve_ms / 2 < L->recorded)
        return;
    if (want <= L->seen.want_mark)
        return;
    L->seen.want_mark = want;
    uv_mutex_lock(&L->mu);
    if (want > L->sh.want_mark)
        L->sh.want_mark = want;
    uv_cond_signal(&L->cv);
    uv_mutex_unlock(&L->mu);
}

int64_t idms_lease_ceiling(const idms_lease *L)
{
    return L->ceiling;
}

int64_t idms_lease_ms_left(const idms_lease *L)
{
    if (L->epoch_seen == 0 || L->seen.lost || L->expired)
        return 0;
    int64_t left = L->deadline_ms - mono_ms();
    return left > 0 ? left : 0;
}

void idms_lease_close(idms_lease *L, int64_t used)
{
    if (L->thread_started) {
        uv_mutex_lock(&L->mu);
        L->sh.stop = true;
        uv_cond_signal(&L->cv);
        uv_mutex_unlock(&L->mu);
        uv_thread_join(&L->thread);
        L->thread_started = false;
        uv_cond_destroy(&L->cv);
        uv_mutex_destroy(&L->mu);
    }
    if (L->lease != NULL) {
        /* Everything handed out lies at or below used: the next holder
         * need not wait out our reserve. */
        idmc_error err;
        if (used >= 0 && used < L->sh.recorded && idmc_shrink_mark(L->lease, used, &err) != 0)
            idms_log(IDMS_LOG_WARN, "cannot lower the node's mark at the stop: %s", err.msg);
        idmc_release(L->lease);
        L->lease = NULL;
    }
    idmc_close(L->coord);
    L->coord = NULL;
}
