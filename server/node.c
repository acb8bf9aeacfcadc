/*
 * node.c - the node number idmintd mints snowflakes as (node.h): a slot of
 * the host-local registry, claimed at start-up or, while every slot is
 * held, every second on libuv's thread pool (open and flock on up to the
 * whole range is file I/O: not on the loop); or a lease from a coordinator
 * (lease.c), whose thread does the claiming.
 */
#include "node.h"
#include "buf.h"
#include "host.h"
#include "hwm.h"
#include "idmint_coord.h"
#include "json.h"
#include "lease.h"
#include "log.h"
#include "pause.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RETRY_MS 1000
#define CHECK_MS 1000 /* how often a held local slot's file is looked at */

/* This process, as its slot shows it (`lease list`, refusal messages). */
static void describe_holder(idms_node *n)
{
    char host[128];
    idmx_host_name(host, sizeof host);
    char since[IDM_RFC3339_CAP] = "?";
    if (idm_time_format((int64_t)time(NULL) * 1000, since, sizeof since) != IDM_OK)
        snprintf(since, sizeof since, "?");
    char addrs[96];
    idmx_host_addresses(addrs, sizeof addrs);
    snprintf(n->holder, sizeof n->holder,
             "pid=%d host=%.100s addrs=%s http=%.60s resp=%.60s since=%s program=idmintd",
             (int)getpid(), host, addrs[0] ? addrs : "-", n->opt->http[0] ? n->opt->http : "off",
             n->opt->resp[0] ? n->opt->resp : "off", since);
}

static bool private_ipv4(uint32_t a)
{
    return (a >> 24) == 10 || (a >> 20) == (172u << 4 | 1) || (a >> 16) == (192u << 8 | 168);
}

/* --node ip: the node is the low bits of the host's first private IPv4
 * address (10/8, 172.16/12, 192.168/16; Sonyflake's default), modulo the
 * layout's node count. Returns 0, or -1 with msg. */
static int node_from_ip(idms_node *n, uint64_t *node, char *msg, size_t cap)
{
    struct ifaddrs *list = NULL;
    if (getifaddrs(&list) != 0) {
        snprintf(msg, cap, "--node ip: cannot list the host's addresses: %s", strerror(errno));
        return -1;
    }
    int rc = -1;
    for (struct ifaddrs *i = list; i != NULL; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET)
            continue;
        uint32_t a = ntohl(((const struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr);
        if (!private_ipv4(a))
            continue;
        uint64_t count = idm_sf_layout_max_node(n->layout) + 1;
        *node = count == 0 ? a : a % count;
        char text[INET_ADDRSTRLEN] = "?";
        (void)inet_ntop(AF_INET, &((const struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, text,
                        sizeof text);
        idms_log(IDMS_LOG_INFO, "--node ip: node %" PRIu64 " from %s (%s)", *node, text,
                 i->ifa_name);
        rc = 0;
        break;
    }
    freeifaddrs(list);
    if (rc != 0)
        snprintf(msg, cap,
                 "--node ip: this host has no private IPv4 address (10/8, "
                 "172.16/12, 192.168/16) to take the node from; give --node N");
    return rc;
}

static void held(idms_node *n, struct idmc_slot *slot)
{
    n->slot = slot;
    idms_hwm_set_slot(n->hwm, slot);
    n->held = true;
    n->ever_held = true;
    n->node = idmc_slot_node(slot);
    n->claims++;
    n->why[0] = '\0';
}

static void take_claim(void *ctx, uint64_t node, const char *generation, int64_t mark_ms);
static void set_held(void *ctx, bool held_now, const char *why);

/* The lease's part of the ceiling changed (lease.h's on_ceiling). */
static void lease_moved(void *ctx)
{
    idms_node *n = ctx;
    n->on_ceiling(n->ctx);
}

/* --coord: the first claim, before the loop runs. */
static int claim_coord(idms_node *n)
{
    idms_lease *L = &n->lease;
    n->coord = IDMS_NODE_COORD;
    L->lo = n->lo;
    L->hi = n->hi;
    L->holder = n->holder;
    L->on_claim = take_claim;
    L->on_held = set_held;
    L->on_ceiling = lease_moved;
    L->ctx = n;
    char msg[700];
    int rc = idms_lease_open(L, n->opt->coord, n->opt->lease_ttl_ms, n->opt->reserve_ms, msg,
                             sizeof msg);
    if (rc == 0) {
        n->held = true;
        n->ever_held = true;
        n->node = L->sh.node;
        snprintf(n->generation, sizeof n->generation, "%s", L->sh.generation);
        n->claims++;
        idms_log(IDMS_LOG_INFO,
                 "leased node %" PRIu64 " (generation %s) from %s %s (nodes %" PRIu64 "..%" PRIu64
                 "), TTL %" PRId64 " ms",
                 n->node, n->generation, idmc_kind(L->coord), n->opt->coord, n->lo, n->hi,
                 L->sh.ttl_ms);
        return 0;
    }
    if (rc == IDMC_USAGE) {
        fprintf(stderr, "idmintd: --coord %s: %s\n", n->opt->coord, msg);
        return 1;
    }
    if (rc == IDMC_BUSY && n->lo == n->hi) {
        fprintf(stderr,
                "idmintd: --node %" PRIu64 ": %s (coordinator %s): two processes "
                "minting as one node would repeat IDs\n",
                n->lo, msg, n->opt->coord);
        return 1;
    }
    snprintf(n->why, sizeof n->why,
             "no snowflake node from %s (nodes %" PRIu64 "..%" PRIu64 "): %.600s; trying again",
             idmc_kind(L->coord), n->lo, n->hi, msg);
    idms_log(IDMS_LOG_WARN, "%s", n->why);
    return 0;
}

struct holders_ctx {
    const idms_node *n;
    idms_holders *out;
};

static void add_holder(void *ctx, uint64_t node, bool held, int64_t mark_ms, const char *holder)
{
    (void)mark_ms;
    struct holders_ctx *h = ctx;
    if (held && node >= h->n->lo && node <= h->n->hi)
        idms_holders_add(h->out, node, holder, -1);
}

/* Who holds the range, after a claim found every slot held (file I/O: at
 * start-up or on the thread pool). */
static void list_holders(const idms_node *n, idms_holders *out)
{
    idms_holders_init(out);
    struct holders_ctx ctx = {n, out};
    idmc_error err;
    if (idmc_local_list(n->registry, n->ns, add_holder, &ctx, &err) < 0)
        idms_holders_init(out);
}

int idms_node_claim(idms_node *n)
{
    n->coord = n->opt->node_set ? IDMS_NODE_STATIC : IDMS_NODE_LOCAL;
    uint64_t max = idm_sf_layout_max_node(n->layout);
    uint64_t fixed = n->opt->node; /* --node N, or the one --node ip names */
    if (n->opt->node_ip) {
        char msg[300];
        if (node_from_ip(n, &fixed, msg, sizeof msg) != 0) {
            fprintf(stderr, "idmintd: %s\n", msg);
            return 1;
        }
    }
    n->lo = n->opt->node_set ? fixed : 0;
    n->hi = n->opt->node_set ? fixed : max;
    if (!n->opt->node_set && n->opt->node_range_set) {
        if (n->opt->node_hi > max) {
            fprintf(stderr,
                    "idmintd: --node-range %" PRIu64 "..%" PRIu64
                    " is outside layout %s's nodes 0..%" PRIu64 "\n",
                    n->opt->node_lo, n->opt->node_hi, n->layout_name, max);
            return 1;
        }
        n->lo = n->opt->node_lo;
        n->hi = n->opt->node_hi;
    }
    snprintf(n->registry, sizeof n->registry, "%s", n->opt->node_registry);
    snprintf(n->ns, sizeof n->ns, "%s", n->layout_name);
    describe_holder(n);
    if (n->opt->coord[0] != '\0')
        return claim_coord(n);
    struct idmc_slot *slot = NULL;
    idmc_error err;
    const char *msg = err.msg;
    n->max_mark_ms = idm_sf_layout_max_unix_ms(n->layout);
    int rc =
        idmc_local_claim(n->registry, n->ns, n->lo, n->hi, n->max_mark_ms, n->holder, &slot, &err);
    if (rc == 0) {
        if (msg[0] != '\0')
            idms_log(IDMS_LOG_WARN, "%s", msg); /* a slot skipped as unusable */
        held(n, slot);
        if (n->coord == IDMS_NODE_STATIC)
            idms_log(IDMS_LOG_INFO, "node %" PRIu64 " registered on this host (%s)", n->node,
                     n->registry);
        else
            idms_log(IDMS_LOG_INFO,
                     "leased node %" PRIu64 " from this host's registry %s (nodes %" PRIu64
                     "..%" PRIu64 "); with several hosts, nodes need a coordinator (--coord)",
                     n->node, n->registry, n->lo, n->hi);
        return 0;
    }
    if (rc == IDMC_BUSY && n->coord == IDMS_NODE_LOCAL) {
        list_holders(n, &n->holders);
        snprintf(n->why, sizeof n->why, "no snowflake node: %.240s; waiting for one to free", msg);
        idms_log(IDMS_LOG_WARN, "%s", n->why);
        return 0;
    }
    if (rc == IDMC_BUSY)
        fprintf(stderr,
                "idmintd: --node %" PRIu64 ": %s on this host (registry %s): two "
                "processes minting as one node would repeat IDs\n",
                fixed, msg, n->registry);
    else
        fprintf(stderr, "idmintd: %s\n", msg);
    return 1;
}

/* ---- claims while waiting: on the thread pool ---------------------------- */

static void on_claim(uv_work_t *w)
{
    idms_node *n = w->data;
    n->work_slot = NULL;
    n->work_rc = idmc_local_claim(n->registry, n->ns, n->lo, n->hi, n->max_mark_ms, n->holder,
                                  &n->work_slot, &n->work_err);
    if (n->work_rc == IDMC_BUSY)
        list_holders(n, &n->work_holders);
}

/* The snowflake generator for a node just claimed: it resumes above both
 * the state directory's mark and the slot's (an earlier holder's), and
 * mints nothing past what the slot records: the slot's mark is the limit
 * (idms_node_apply_ceiling) until a write records one of ours there (a
 * coordinator's slot is the lease's part of the limit). Returns 0 or -1. */
static int install(idms_node *n, uint64_t node, int64_t mark)
{
    idm_snowflake *old = *n->sf;
    /* A node held before (this one again, after its slot was lost, or
     * another): nothing at or below what the old generator used either. */
    int64_t used = old != NULL ? idm_snowflake_high_water_ms(old) : 0;
    idms_hwm_resume_above(n->hwm, used, IDMS_RESUME_SELF);
    idms_hwm_resume_above(n->hwm, mark, IDMS_RESUME_SLOT);
    if (n->make_snowflake(n->ctx, node) != 0)
        return -1;
    idm_snowflake_free(old);
    return 0;
}

/* A node just installed is held: its limit, and a write of the mark
 * asked for at once (into the slot now held). */
static void installed(idms_node *n, int64_t mark)
{
    n->on_ceiling(n->ctx);
    int64_t now = idms_clock_ms();
    idms_node_need(n, mark > now ? mark : now, true);
}

static void install_slot(idms_node *n, struct idmc_slot *slot, const char *note)
{
    if (note[0] != '\0')
        idms_log(IDMS_LOG_WARN, "%s", note); /* a slot skipped as unusable */
    if (install(n, idmc_slot_node(slot), idmc_slot_mark_ms(slot)) != 0) {
        idmc_slot_release(slot);
        return;
    }
    held(n, slot);
    installed(n, idmc_slot_mark_ms(slot));
    idms_log(IDMS_LOG_INFO, "leased node %" PRIu64 " from this host's registry %s", n->node,
             n->registry);
}

/* The lease thread claimed node (lease.h's on_claim): a generator for it,
 * resuming above mark_ms. */
static void take_claim(void *ctx, uint64_t node, const char *generation, int64_t mark_ms)
{
    idms_node *n = ctx;
    n->held = false;
    if (install(n, node, mark_ms) != 0) {
        snprintf(n->why, sizeof n->why, "cannot make the snowflake generator for node %" PRIu64,
                 node);
        return;
    }
    n->held = true;
    n->ever_held = true;
    n->node = node;
    snprintf(n->generation, sizeof n->generation, "%s", generation);
    n->claims++;
    n->why[0] = '\0';
    installed(n, mark_ms);
    idms_log(IDMS_LOG_INFO, "leased node %" PRIu64 " (generation %s) from %s %s", node, generation,
             idmc_kind(n->lease.coord), n->opt->coord);
}

/* The node is held again, or not (why says why not); also lease.h's
 * on_held. */
static void set_held(void *ctx, bool held_now, const char *why)
{
    idms_node *n = ctx;
    n->held = held_now;
    if (held_now)
        n->why[0] = '\0';
    else if (why != NULL)
        snprintf(n->why, sizeof n->why, "%s", why);
}

int64_t idms_node_mark_ms(const idms_node *n)
{
    if (n->coord == IDMS_NODE_COORD)
        return n->held ? n->lease.sh.claim_mark : 0;
    return n->slot != NULL ? idmc_slot_mark_ms(n->slot) : 0;
}

void idms_node_need(idms_node *n, int64_t now_ms, bool at_ceiling)
{
    /* A coordinator's slot gets its mark from the lease thread (lease.h). */
    if (n->coord == IDMS_NODE_COORD)
        idms_lease_need(&n->lease, now_ms, at_ceiling);
    idms_hwm_need(n->hwm, now_ms, at_ceiling);
}

void idms_node_apply_ceiling(idms_node *n)
{
    /* The node's promise; the ceiling, min(durable mark, promise), is the
     * mark's (hwm.h). A local slot holds IDs up to the mark recorded in it
     * (recorded only with a state directory: without one nothing is
     * promised across runs); a coordinator's, the lease's ceiling. */
    int64_t limit = INT64_MAX;
    if (n->coord == IDMS_NODE_COORD)
        limit = idms_lease_ceiling(&n->lease);
    else if (idms_hwm_enabled(n->hwm) && n->slot != NULL)
        limit = idmc_slot_mark_ms(n->slot);
    idms_hwm_set_limit(n->hwm, limit);
}

bool idms_node_ceiling_rises(idms_node *n, bool snowflake, char *why, size_t cap)
{
    bool coord = snowflake && n->coord == IDMS_NODE_COORD;
    if (coord) {
        /* A mark is asked for in any case: the thread may be idle. */
        idms_lease_need(&n->lease, idms_clock_ms(), true);
        if (!n->held) {
            snprintf(why, cap, "%s", n->why);
            return false;
        }
        if (n->lease.seen.failing && n->lease.recorded <= idms_clock_ms()) {
            snprintf(why, cap, "%.600s; not minting past the mark recorded in the node's slot",
                     n->lease.seen.msg);
            return false;
        }
    }
    idms_pause_why mark;
    if (!idms_hwm_ready(n->hwm, &mark)) {
        snprintf(why, cap,
                 "cannot make the time high-water mark durable (%.600s); not minting "
                 "past it",
                 mark.why);
        return false;
    }
    if (!idms_hwm_enabled(n->hwm) && !coord) {
        snprintf(why, cap, "the generator's ceiling is reached");
        return false;
    }
    return true;
}

static void on_retry(uv_timer_t *t);

static void on_claimed(uv_work_t *w, int status)
{
    idms_node *n = w->data;
    n->in_flight = false;
    if (status != 0 || n->work_rc != 0) {
        if (status == 0 && n->work_rc == IDMC_BUSY)
            n->holders = n->work_holders;
        if (status == 0 && n->work_rc == IDMC_ERROR)
            idms_log(IDMS_LOG_ERROR, "cannot lease a node: %s", n->work_err.msg);
        if (!*n->draining)
            uv_timer_start(&n->retry, on_retry, RETRY_MS, 0);
        return;
    }
    if (*n->draining) {
        idmc_slot_release(n->work_slot);
        return;
    }
    install_slot(n, n->work_slot, n->work_err.msg);
}

static void on_retry(uv_timer_t *t)
{
    idms_node *n = t->data;
    if (n->held || n->in_flight || *n->draining)
        return;
    if (n->slot != NULL) {
        /* A slot given up (its file taken by another process): released
         * once no mark write or check uses it, then a claim as at start. */
        if (idms_hwm_busy(n->hwm) || n->check_in_flight) {
            uv_timer_start(&n->retry, on_retry, RETRY_MS, 0);
            return;
        }
        idmc_slot_release(n->slot);
        n->slot = NULL;
        idms_hwm_set_slot(n->hwm, NULL);
    }
    n->work.data = n;
    if (uv_queue_work(n->loop, &n->work, on_claim, on_claimed) == 0)
        n->in_flight = true;
}

/* ---- the slot file, looked at while held: on the thread pool ------------- */

static void on_check_work(uv_work_t *w)
{
    idms_node *n = w->data;
    n->check_rc = idmc_slot_check(n->check_slot, &n->check_err);
    if (n->check_rc == IDMC_LOST)
        n->repair_rc = idmc_slot_repair(n->check_slot, &n->check_err);
}

static void on_checked(uv_work_t *w, int status)
{
    idms_node *n = w->data;
    n->check_in_flight = false;
    if (status != 0 || n->check_slot != n->slot || n->check_rc == IDMC_ERROR)
        return;
    if (n->check_rc == 0) {
        if (n->slot_broken) {
            n->slot_broken = false;
            set_held(n, true, NULL);
            idms_log(IDMS_LOG_INFO,
                     "node %" PRIu64 ": its slot file is whole again; minting "
                     "snowflakes as it again",
                     n->node);
        }
        return;
    }
    /* The file was gone or replaced. Put back (the name kept the node
     * ours): go on. Held by another process now: give the node up. */
    if (n->repair_rc == 0) {
        idms_log(IDMS_LOG_WARN,
                 "%s; node %" PRIu64 " was not handed to anyone else meanwhile "
                 "(its name in the abstract socket namespace is held)",
                 n->check_err.msg, n->node);
        if (n->slot_broken) {
            n->slot_broken = false;
            set_held(n, true, NULL);
        }
        return;
    }
    char why[800];
    snprintf(why, sizeof why, "%.600s; not minting snowflakes as node %" PRIu64 "%s",
             n->check_err.msg, n->node,
             n->repair_rc == IDMC_BUSY ? ", claiming a node again" : " until it is back");
    if (!n->slot_broken || n->repair_rc == IDMC_BUSY)
        idms_log(IDMS_LOG_ERROR, "%s", why);
    n->slot_broken = n->repair_rc != IDMC_BUSY;
    set_held(n, false, why);
    if (n->repair_rc == IDMC_BUSY)
        uv_timer_start(&n->retry, on_retry, 0, 0);
    n->on_ceiling(n->ctx);
}

static void on_check(uv_timer_t *t)
{
    idms_node *n = t->data;
    /* A slot broken (its file could not be put back) is tried again. */
    if (n->slot == NULL || (!n->held && !n->slot_broken) || n->check_in_flight || *n->draining)
        return;
    n->check_slot = n->slot;
    n->check_work.data = n;
    if (uv_queue_work(n->loop, &n->check_work, on_check_work, on_checked) == 0)
        n->check_in_flight = true;
}

void idms_node_start(idms_node *n, uv_loop_t *loop)
{
    n->loop = loop;
    if (n->coord == IDMS_NODE_COORD) {
        /* The lease thread claims, keeps alive and records marks. */
        if (idms_lease_start(&n->lease, n->loop) != 0)
            set_held(n, false, "the lease thread could not start");
        return;
    }
    uv_timer_init(n->loop, &n->retry);
    n->retry.data = n;
    uv_unref((uv_handle_t *)&n->retry);
    if (!n->held)
        uv_timer_start(&n->retry, on_retry, RETRY_MS, 0);
    uv_timer_init(n->loop, &n->check);
    n->check.data = n;
    uv_unref((uv_handle_t *)&n->check);
    uv_timer_start(&n->check, on_check, CHECK_MS, CHECK_MS);
}

/* " and N more" when holders were counted but not named. */
static void holders_text(const idms_holders *h, char *out, size_t cap)
{
    if (h->shown == 0)
        snprintf(out, cap, "(not listed)");
    else if (h->more > 0)
        snprintf(out, cap, "%s; and %u more", h->text, h->more);
    else
        snprintf(out, cap, "%s", h->text);
}

/* Not held: a coordinator's lease waiting on its coordinator, a range
 * whose every node is held, or a local slot whose file is gone. */
static void not_held(const idms_node *n, idms_pause_why *w)
{
    char holders[sizeof n->holders.text + 32];
    w->cause = IDMS_PAUSE_NODE;
    if (n->coord != IDMS_NODE_COORD) {
        if (n->slot_broken) {
            snprintf(w->ends, sizeof w->ends,
                     "the slot's file put back in %.600s (tried every %d ms)", n->registry,
                     CHECK_MS);
            return;
        }
        holders_text(&n->holders, holders, sizeof holders);
        snprintf(w->ends, sizeof w->ends,
                 "a node of %" PRIu64 "..%" PRIu64 " freeing: a slot frees when its holder "
                 "exits (tried every %d ms); held by %s",
                 n->lo, n->hi, RETRY_MS, holders);
        return;
    }
    const idms_lease *L = &n->lease;
    const char *kind = idmc_kind(L->coord);
    if (L->expired && !L->seen.lost) {
        w->cause = IDMS_PAUSE_COORD;
        snprintf(w->ends, sizeof w->ends,
                 "%s confirming the lease of node %" PRIu64 " again, or reporting it lost "
                 "(then a node is claimed anew); it is asked every few hundred ms",
                 kind, L->seen.node);
    } else if (L->seen.claim_busy) {
        holders_text(&L->seen.holders, holders, sizeof holders);
        snprintf(w->ends, sizeof w->ends,
                 "a node of %" PRIu64 "..%" PRIu64 " freeing: a holder's lease ending or "
                 "released (asked every 500 ms); held by %s",
                 n->lo, n->hi, holders);
        w->eta_ms = L->seen.holders.soonest_ms;
    } else {
        w->cause = IDMS_PAUSE_COORD;
        snprintf(w->ends, sizeof w->ends,
                 "%s answering a claim (tried again with a back-off of up to 5 s)", kind);
    }
}

bool idms_node_ready(const idms_node *n, idms_pause_why *w)
{
    w->eta_ms = -1;
    w->ends[0] = '\0';
    if (!n->held) {
        snprintf(w->why, sizeof w->why, "%s", n->why);
        not_held(n, w);
        return false;
    }
    /* Held, but the slot's mark cannot be raised past the clock: nothing
     * can be minted until the coordinator answers again. */
    if (n->coord == IDMS_NODE_COORD && n->lease.seen.failing &&
        n->lease.recorded <= idms_clock_ms()) {
        w->cause = IDMS_PAUSE_COORD;
        snprintf(w->why, sizeof w->why, "node %" PRIu64 ": %.600s", n->node, n->lease.seen.msg);
        snprintf(w->ends, sizeof w->ends,
                 "%s confirming the lease or recording the mark (asked again every few "
                 "hundred ms); should the lease's deadline pass first (in %" PRId64
                 " ms), the node is claimed anew once %s answers",
                 idmc_kind(n->lease.coord), idms_lease_ms_left(&n->lease),
                 idmc_kind(n->lease.coord));
        return false;
    }
    return true;
}

const char *idms_node_coord_name(const idms_node *n)
{
    if (n->coord == IDMS_NODE_COORD)
        return idmc_kind(n->lease.coord);
    return n->coord == IDMS_NODE_STATIC ? "static" : "local";
}

const char *idms_node_state_name(const idms_node *n)
{
    if (!n->held)
        return n->ever_held ? "lost" : "waiting";
    return n->coord == IDMS_NODE_STATIC ? "static" : "held";
}

/* A JSON string, or null for NULL (the text is the operator's: escaped). */
static void json_string(idms_buf *out, const char *text)
{
    if (text == NULL) {
        idms_buf_puts(out, "null");
        return;
    }
    char quoted[1100 * 6 + 3];
    if (idmx_json_escape(text, strlen(text), quoted, sizeof quoted) == (size_t)-1)
        idms_buf_puts(out, "null");
    else
        idms_buf_puts(out, quoted);
}

void idms_node_json(const idms_node *n, const idms_pauses *p, int64_t mono_ms, idms_buf *out)
{
    bool coord = n->coord == IDMS_NODE_COORD;
    idms_buf_puts(out, "{\"node\": ");
    if (n->held)
        idms_buf_printf(out, "%" PRIu64, n->node);
    else
        idms_buf_puts(out, "null");
    /* The host-local registry has no generations and no expiry: a slot is
     * held for as long as the process lives. */
    idms_buf_puts(out, ", \"generation\": ");
    json_string(out, coord && n->held ? n->generation : NULL);
    idms_buf_printf(out, ", \"coord\": \"%s\", \"state\": \"%s\", \"lease_ms_left\": ",
                    idms_node_coord_name(n), idms_node_state_name(n));
    if (coord && n->held)
        idms_buf_printf(out, "%" PRId64, idms_lease_ms_left(&n->lease));
    else
        idms_buf_puts(out, "null");
    /* Why no node is held: the details /readyz gives only with the token. */
    idms_buf_puts(out, ", \"why\": ");
    json_string(out, n->held ? NULL : n->why);
    idms_buf_printf(out, ", \"range\": [%" PRIu64 ", %" PRIu64 "], ", n->lo, n->hi);
    if (coord) {
        idms_buf_puts(out, "\"coordinator\": ");
        json_string(out, n->opt->coord);
        idms_buf_printf(out, ", \"ttl_ms\": %" PRId64, n->lease.seen.ttl_ms);
    } else {
        idms_buf_puts(out, "\"registry\": ");
        json_string(out, n->registry);
    }
    idms_buf_puts(out, ", \"pause\": ");
    idms_pauses_json(p, mono_ms, true, out);
    idms_buf_puts(out, "}\n");
}

void idms_node_close(idms_node *n, int64_t used)
{
    if (n->coord == IDMS_NODE_COORD) {
        idms_lease_close(&n->lease, used);
    } else {
        /* The slot's mark is kept only with a state directory (hwm.c). */
        if (n->slot != NULL && used >= 0 && idms_hwm_enabled(n->hwm))
            (void)idmc_slot_shrink_mark(n->slot, used);
        idmc_slot_release(n->slot);
        n->slot = NULL;
        idms_hwm_set_slot(n->hwm, NULL);
    }
    n->held = false;
}
