/*
 * node.c - the node number idmintd mints snowflakes as (node.h): a slot of
 * the host-local registry, claimed at start-up or, while every slot is
 * held, every second on libuv's thread pool (open and flock on up to the
 * whole range is file I/O: not on the loop).
 */
#include "idmintd.h"
#include "idmint_coord.h"
#include "json.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RETRY_MS 1000

/* This process, as its slot shows it (`lease list`, refusal messages). */
static void describe_holder(idms_server *s)
{
    char host[128] = "?";
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = '\0';
    char since[IDM_RFC3339_CAP] = "?";
    if (idm_time_format((int64_t)time(NULL) * 1000, since, sizeof since) != IDM_OK)
        snprintf(since, sizeof since, "?");
    snprintf(s->node.holder, sizeof s->node.holder, "pid=%d host=%s since=%s program=idmintd",
             (int)getpid(), host, since);
}

static void held(idms_server *s, struct idmc_slot *slot)
{
    idms_node *n = &s->node;
    n->slot = slot;
    n->held = true;
    n->node = idmc_slot_node(slot);
    n->claims++;
    n->why[0] = '\0';
}

int idms_node_claim(idms_server *s)
{
    idms_node *n = &s->node;
    n->server = s;
    n->coord = s->opt.node_set ? IDMS_NODE_STATIC : IDMS_NODE_LOCAL;
    uint64_t max = idm_sf_layout_max_node(&s->layout);
    n->lo = s->opt.node_set ? s->opt.node : 0;
    n->hi = s->opt.node_set ? s->opt.node : max;
    if (!s->opt.node_set && s->opt.node_range_set) {
        if (s->opt.node_hi > max) {
            fprintf(stderr, "idmintd: --node-range %" PRIu64 "..%" PRIu64
                            " is outside layout %s's nodes 0..%" PRIu64 "\n",
                    s->opt.node_lo, s->opt.node_hi, s->layout_name, max);
            return 1;
        }
        n->lo = s->opt.node_lo;
        n->hi = s->opt.node_hi;
    }
    snprintf(n->registry, sizeof n->registry, "%s", s->opt.node_registry);
    snprintf(n->ns, sizeof n->ns, "%s", s->layout_name);
    describe_holder(s);
    struct idmc_slot *slot = NULL;
    char msg[600];
    int rc = idmc_local_claim(n->registry, n->ns, n->lo, n->hi, n->holder, &slot, msg, sizeof msg);
    if (rc == 0) {
        held(s, slot);
        if (n->coord == IDMS_NODE_STATIC)
            idms_log(IDMS_LOG_INFO, "node %" PRIu64 " registered on this host (%s)", n->node,
                     n->registry);
        else
            idms_log(IDMS_LOG_INFO,
                     "leased node %" PRIu64 " from this host's registry %s (nodes %" PRIu64
                     "..%" PRIu64 "); with several hosts, nodes need a coordinator",
                     n->node, n->registry, n->lo, n->hi);
        return 0;
    }
    if (rc == IDMC_BUSY && n->coord == IDMS_NODE_LOCAL) {
        snprintf(n->why, sizeof n->why, "no snowflake node: %.240s; waiting for one to free", msg);
        idms_log(IDMS_LOG_WARN, "%s", n->why);
        return 0;
    }
    if (rc == IDMC_BUSY)
        fprintf(stderr, "idmintd: --node %" PRIu64 ": %s on this host (registry %s): two "
                        "processes minting as one node would repeat IDs\n",
                s->opt.node, msg, n->registry);
    else
        fprintf(stderr, "idmintd: %s\n", msg);
    return 1;
}

/* ---- claims while waiting: on the thread pool ---------------------------- */

static void on_claim(uv_work_t *w)
{
    idms_node *n = w->data;
    n->work_slot = NULL;
    n->work_rc = idmc_local_claim(n->registry, n->ns, n->lo, n->hi, n->holder, &n->work_slot,
                                  n->work_msg, sizeof n->work_msg);
}

/* The snowflake generator for the node now held: it resumes above both
 * the state directory's mark and the slot's (an earlier holder's), and
 * mints nothing until the slot records a mark of ours (its ceiling starts
 * at the slot's; the write requested here raises both). */
static void install(idms_server *s, struct idmc_slot *slot)
{
    int64_t mark = idmc_slot_mark_ms(slot);
    if (mark > s->hwm.resume_ms)
        s->hwm.resume_ms = mark;
    idm_snowflake *old = s->sf;
    if (idms_make_snowflake(s, idmc_slot_node(slot)) != 0) {
        idmc_slot_release(slot);
        s->sf = old;
        return;
    }
    idm_snowflake_free(old);
    held(s, slot);
    if (s->hwm.enabled) {
        idm_snowflake_set_ceiling(s->sf, mark);
        idms_hwm_need(s, mark, true);
    }
    idms_log(IDMS_LOG_INFO, "leased node %" PRIu64 " from this host's registry %s", s->node.node,
             s->node.registry);
}

static void on_retry(uv_timer_t *t);

static void on_claimed(uv_work_t *w, int status)
{
    idms_node *n = w->data;
    idms_server *s = n->server;
    n->in_flight = false;
    if (status != 0 || n->work_rc != 0) {
        if (status == 0 && n->work_rc == IDMC_ERROR)
            idms_log(IDMS_LOG_ERROR, "cannot lease a node: %s", n->work_msg);
        if (!s->draining)
            uv_timer_start(&n->retry, on_retry, RETRY_MS, 0);
        return;
    }
    if (s->draining) {
        idmc_slot_release(n->work_slot);
        return;
    }
    install(s, n->work_slot);
}

static void on_retry(uv_timer_t *t)
{
    idms_server *s = t->data;
    idms_node *n = &s->node;
    if (n->held || n->in_flight || s->draining)
        return;
    n->work.data = n;
    if (uv_queue_work(s->loop, &n->work, on_claim, on_claimed) == 0)
        n->in_flight = true;
}

void idms_node_start(idms_server *s)
{
    idms_node *n = &s->node;
    uv_timer_init(s->loop, &n->retry);
    n->retry.data = s;
    uv_unref((uv_handle_t *)&n->retry);
    if (!n->held)
        uv_timer_start(&n->retry, on_retry, RETRY_MS, 0);
}

bool idms_node_ready(const idms_server *s, char *why, size_t cap)
{
    if (s->node.held)
        return true;
    snprintf(why, cap, "%s", s->node.why);
    return false;
}

void idms_node_json(const idms_server *s, idms_buf *out)
{
    const idms_node *n = &s->node;
    const char *state = !n->held ? "waiting" : n->coord == IDMS_NODE_STATIC ? "static" : "held";
    idms_buf_puts(out, "{\"node\": ");
    if (n->held)
        idms_buf_printf(out, "%" PRIu64, n->node);
    else
        idms_buf_puts(out, "null");
    /* The host-local registry has no generations and no expiry: a slot is
     * held for as long as the process lives. */
    idms_buf_printf(out,
                    ", \"generation\": null, \"coord\": \"%s\", \"state\": \"%s\", "
                    "\"lease_ms_left\": null, \"range\": [%" PRIu64 ", %" PRIu64
                    "], \"registry\": ",
                    n->coord == IDMS_NODE_STATIC ? "static" : "local", state, n->lo, n->hi);
    /* The path is the operator's, any bytes: escaped as JSON (json.h). */
    char quoted[sizeof n->registry * 6 + 3];
    if (idmx_json_escape(n->registry, strlen(n->registry), quoted, sizeof quoted) == (size_t)-1)
        snprintf(quoted, sizeof quoted, "null");
    idms_buf_printf(out, "%s}\n", quoted);
}

void idms_node_close(idms_server *s)
{
    idmc_slot_release(s->node.slot);
    s->node.slot = NULL;
    s->node.held = false;
}
