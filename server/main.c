/*
 * main.c - idmintd: settings, generators, listeners, signals.
 *
 * SIGTERM and SIGINT drain: the listeners close, idle connections close,
 * requests already received are answered (with Connection: close), and the
 * process exits when the last connection is gone (or after 10 s, when the
 * rest are closed, whatever their clients do). The time high-water mark
 * then shrinks to the time actually used. SIGHUP reopens the log file,
 * reloads the TLS certificate and key (--tls-cert, --tls-key): new
 * connections get the new pair, open ones keep theirs, and a pair that
 * cannot be loaded leaves the previous one in service; and reloads
 * --key-file (keyed.c) the same way: a file that fails to load leaves the
 * previous keys in service.
 */
#include "auth.h"
#include "conn.h"
#include "core/waitlist.h"
#include "hlc.h"
#include "http/http_server.h"
#include "hwm.h"
#include "keyed.h"
#include "log.h"
#include "memcache/memcache_server.h"
#include "metrics.h"
#include "mint.h"
#include "node.h"
#include "notify.h"
#include "options.h"
#include "optvalue.h"
#include "resp/resp_server.h"
#include "segments.h"
#include "server.h"
#include "status.h"
#include "tls.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DRAIN_TIMEOUT_MS 10000
/* File descriptors beyond the connections': the standard three, the
 * listeners, the state directory's lock and mark, the log, libuv's epoll,
 * signal pipes, thread-pool wake-up and accept reserve, and room for the
 * connections refused at the limit (each gets its reply, then closes). */
#define FD_SPARE 32

static idms_server server;

/* The snowflake generator of node (the node module's make_snowflake):
 * resuming above the mark found at start-up (idms_hwm_resume_ms), under
 * the mark (hwm.h) in place of the old one, which the caller frees. Returns 0, or -1 after logging
 * why (s->sf is then unchanged). */
static int make_snowflake(void *ctx, uint64_t node)
{
    idms_server *s = ctx;
    idm_snowflake_config cfg;
    idm_snowflake_config_init(&cfg);
    cfg.layout = s->layout;
    cfg.node = node;
    cfg.max_rewind_ms = s->opt.max_rewind_ms;
    cfg.seq_start = s->opt.seq_start_random ? IDM_SF_SEQ_START_RANDOM : IDM_SF_SEQ_START_ZERO;
    cfg.resume_unix_ms = idms_hwm_resume_ms(&s->hwm, NULL);
    idm_error err = {0};
    idm_snowflake *sf = NULL;
    if (idm_snowflake_new(&sf, &cfg, &err) != IDM_OK) {
        idms_log(IDMS_LOG_ERROR, "cannot create the snowflake generator: %s", err.msg);
        return -1;
    }
    if (idms_hwm_adopt_snowflake(&s->hwm, s->sf, sf) != 0) {
        idm_snowflake_free(sf);
        return -1;
    }
    s->sf = sf;
    idms_mint_set_snowflake(&s->mint, sf);
    idms_node_apply_ceiling(&s->node);
    return 0;
}

/* ---- the mint service's layer below (mint.h: idms_mint_below) ---------- */

static const char *mint_no_node(void *ctx)
{
    idms_server *s = ctx;
    return s->node.held ? NULL : s->node.why;
}

/* The time the durable mark must cover: the clock's, or the time used
 * when an observation has put it ahead of the clock. */
static void mint_need(void *ctx, bool at_ceiling)
{
    idms_server *s = ctx;
    int64_t now = idms_clock_ms(), used = idms_used_ms(&s->status);
    idms_node_need(&s->node, used > now ? used : now, at_ceiling);
}

static bool mint_ceiling_rises(void *ctx, bool snowflake, char *why, size_t cap)
{
    idms_server *s = ctx;
    return idms_node_ceiling_rises(&s->node, snowflake, why, cap);
}

static int64_t mint_resumed(void *ctx, const char **whose)
{
    const idms_server *s = ctx;
    int from;
    int64_t ms = idms_hwm_resume_ms(&s->hwm, &from);
    switch (from) {
    case IDMS_RESUME_SELF:
        *whose = "this process's own IDs before it claimed its node again";
        break;
    case IDMS_RESUME_SLOT:
        *whose = "the node's previous holder, recorded in its slot";
        break;
    default:
        *whose = "the previous run, recorded in the state directory";
    }
    return ms;
}

/* The mint service over the generators (before the first snowflake
 * generator is made). */
static void setup_mint(idms_server *s)
{
    idms_minter *m = &s->mint;
    m->clock = idm_clock_system();
    m->gen = s->gen;
    m->layout = &s->layout;
    m->max_count = s->opt.max_count;
    m->max_rewind_ms = s->opt.max_rewind_ms;
    m->max_offset_ms = s->opt.max_offset_ms;
    m->ceiling_waiters = &s->net.ceiling_waiters;
    m->metrics = &s->metrics;
    m->below = (idms_mint_below){s, mint_no_node, mint_need, mint_ceiling_rises, mint_resumed};
}

/* The ceiling's parts moved (the durable mark, a lease; or a write of the
 * mark failed): the node's limit is handed to the mark anew (which sets
 * every generator's ceiling: hwm.h), and the requests parked on the
 * ceiling go on, minted or refused. hwm.c, node.c and lease.c report it
 * here, through the callbacks set in setup_generators. */
static void ceiling_moved(void *ctx)
{
    idms_server *s = ctx;
    idms_node_apply_ceiling(&s->node);
    idms_conn_wake_ceiling(&s->net);
}

/* The generators: made IDM_GEN_UNSHARED (one loop thread mints), on the
 * system clock, which they never sleep on here (the server mints with the
 * non-blocking calls). Their state is not kept in files: after a restart
 * they resume above the durable mark (hwm.c), which is what makes a
 * restart after a crash or a power loss safe. The snowflake node comes
 * from the host-local registry (node.c) before anything else is taken. */
static int setup_generators(idms_server *s)
{
    idm_error err = {0};
    char msg[IDMX_OPT_MSG_CAP];
    if (idmx_layout_resolve(s->opt.layout, s->opt.epoch[0] ? s->opt.epoch : NULL, &s->layout, msg,
                            sizeof msg) != 0) {
        fprintf(stderr, "idmintd: %s\n", msg);
        return 2;
    }
    idmx_layout_name(&s->layout, s->layout_name, sizeof s->layout_name);
    if (idmx_check_node("--node", s->opt.node, &s->layout, msg, sizeof msg) != 0) {
        fprintf(stderr, "idmintd: %s\n", msg);
        return 2;
    }
    idms_node *n = &s->node;
    n->opt = &s->opt;
    n->layout = &s->layout;
    n->layout_name = s->layout_name;
    n->hwm = &s->hwm;
    n->draining = &s->net.draining;
    n->sf = &s->sf;
    n->make_snowflake = make_snowflake;
    n->on_ceiling = ceiling_moved;
    n->ctx = s;
    if (idms_node_claim(n) != 0)
        return 1;
    idm_gen_config gcfg = {0};
    gcfg.flags = IDM_GEN_UNSHARED;
    if (s->opt.state_dir[0] == '\0')
        idms_log(IDMS_LOG_WARN, "no --state-dir: a restart after the clock was stepped back could "
                                "repeat snowflakes");
    int rc = idm_gen_new(&s->gen, &gcfg, &err);
    if (rc != IDM_OK) {
        idms_log(IDMS_LOG_ERROR, "cannot create the generators: %s", err.msg);
        return rc == IDM_EINVAL ? 2 : 1;
    }
    setup_mint(s);
    /* The mark found on disk (and in the node's slot) is where snowflakes
     * resume; read it first. While no node is held yet, the generator is
     * made for the range's first node and never used: mint.c refuses
     * snowflakes until node.c holds a node and makes it anew for it. The
     * first mark is written only once every generator has taken the one
     * found: a start refused leaves the state directory as it was. */
    idms_hwm_config hc = {
        .state_dir = s->opt.state_dir,
        .reserve_ms = s->opt.reserve_ms,
        .layout = &s->layout,
        .layout_name = s->layout_name,
        .gen = s->gen,
        .slot_node = s->node.node,
        .slot_mark_ms = idms_node_mark_ms(&s->node),
        .draining = &s->net.draining,
        .exec = idms_hwm_loop_exec(&s->hwm_loop, &s->hwm),
        .on_ceiling = ceiling_moved,
        .ctx = s,
    };
    if (idms_hwm_open(&s->hwm, &hc) != 0)
        return 1;
    if (make_snowflake(s, s->node.held ? s->node.node : s->node.lo) != 0)
        return 1;
    if (idms_hlc_open(&s->hlc) != 0)
        return 1;
    if (idms_hwm_commit(&s->hwm) != 0)
        return 1;
    char when[IDM_RFC3339_CAP] = "none", durable[IDM_RFC3339_CAP] = "none";
    int64_t resume_ms = idms_hwm_resume_ms(&s->hwm, NULL);
    if (resume_ms > 0 && idm_time_format(resume_ms, when, sizeof when) != IDM_OK)
        snprintf(when, sizeof when, "%" PRId64, resume_ms);
    if (idms_hwm_enabled(&s->hwm) &&
        idm_time_format(idms_hwm_durable_ms(&s->hwm), durable, sizeof durable) != IDM_OK)
        snprintf(durable, sizeof durable, "%" PRId64, idms_hwm_durable_ms(&s->hwm));
    idms_log(IDMS_LOG_INFO,
             "snowflake layout %s, node %" PRIu64 ", max rewind %" PRId64 " ms, state %s, "
             "previous high-water mark %s, durable mark %s",
             s->layout_name, s->node.held ? s->node.node : s->node.lo, s->opt.max_rewind_ms,
             s->opt.state_dir[0] ? s->opt.state_dir : "none", when, durable);
    char why[320];
    if (!idms_ready(&s->status, why, sizeof why))
        idms_log(IDMS_LOG_WARN, "not ready yet: %s; snowflake requests get 503 until then", why);
    return 0;
}

/* The front ends: each protocol's adapter (an idms_proto in its folder),
 * its listen address and its connections' idle timeout, in the order of
 * their metrics. A front end is added as its folder, one row here and its
 * options; nothing else names it. Every row's metrics are rendered, on or
 * "off". */
static void register_fronts(idms_server *s)
{
    const struct {
        const idms_proto *proto;
        const char *addr;
        uint32_t idle_timeout_ms;
    } rows[] = {
        {&idms_http_proto, s->opt.http, s->opt.idle_timeout_ms},
        {&idms_resp_proto, s->opt.resp, s->opt.resp_idle_timeout_ms},
        {&idms_memcache_proto, s->opt.memcache, s->opt.memcache_idle_timeout_ms},
    };
    _Static_assert(sizeof rows / sizeof rows[0] <= IDMS_PROTO_MAX, "raise IDMS_PROTO_MAX");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        idms_listener *l = &s->net.listeners[i];
        l->slot = (int)i;
        l->proto = rows[i].proto;
        l->addr = rows[i].addr;
        l->sd_fd = -1;
        l->idle_timeout_ms = rows[i].idle_timeout_ms;
        l->net = &s->net;
    }
}

/* Socket activation: a listener given as systemd:NAME takes the socket
 * systemd passed under that name, and from then on goes by the socket's
 * own address (the exposure check, the log). Returns 0, or 1 after saying
 * why on stderr. */
static int adopt_passed_sockets(idms_server *s)
{
    for (int i = 0; i < IDMS_PROTO_MAX; i++) {
        idms_listener *l = &s->net.listeners[i];
        if (l->proto == NULL || strncmp(l->addr, "systemd:", 8) != 0)
            continue;
        char msg[400];
        int fd = idms_sd_listen_fd(l->addr + 8, msg, sizeof msg);
        if (fd < 0) {
            fprintf(stderr, "idmintd: --%s %s\n", l->proto->name, msg);
            return 1;
        }
        if (idms_sd_describe(fd, l->bound, sizeof l->bound) != 0)
            snprintf(l->bound, sizeof l->bound, "%s", l->addr);
        l->sd_fd = fd;
        l->addr = l->bound;
    }
    return 0;
}

/* How many front ends listen (their address is not "off"). */
static uint64_t fronts_on(const idms_server *s)
{
    uint64_t n = 0;
    for (int i = 0; i < IDMS_PROTO_MAX; i++)
        n += s->net.listeners[i].proto != NULL && s->net.listeners[i].addr[0] != '\0';
    return n;
}

/* --auth-token-file and protected mode, checked before anything is opened
 * or bound, so that a refusal leaves no trace (no lock, no mark, no port).
 * Returns 0, or 2 (reported on stderr). */
static int setup_auth(idms_server *s)
{
    const idms_options *o = &s->opt;
    char err[2 * sizeof o->auth_token_file + 512];
    s->auth.logged_s = -1;
    if (o->auth_token_file[0] != '\0' &&
        idms_auth_load(&s->auth, o->auth_token_file, err, sizeof err) != 0) {
        fprintf(stderr, "idmintd: %s\n", err);
        return 2;
    }
    if (idms_auth_check_exposure(s->net.listeners, IDMS_PROTO_MAX, s->auth.required,
                                 o->allow_unauthenticated, err, sizeof err) != 0) {
        fprintf(stderr, "idmintd: %s\n", err);
        return 2;
    }
    s->auth.tinyid_open = o->tinyid_open;
    if (o->http[0] != '\0' && o->segments[0] != '\0') {
        /* tinyid always requires a token (docs/idmintd.md, "tinyid"); its
         * routes serve segments, so this is said only with a store. */
        if (o->tinyid_open)
            idms_log(IDMS_LOG_WARN, "tinyid's routes (/tinyid/id/...) are served without a "
                                    "token (--tinyid-open)");
        else if (s->auth.required)
            idms_log(IDMS_LOG_INFO,
                     "tinyid's routes (/tinyid/id/...) take the token of %s as "
                     "their token parameter",
                     o->auth_token_file);
        else
            idms_log(IDMS_LOG_INFO, "tinyid's routes (/tinyid/id/...) refuse every request "
                                    "(code 5, token is error): tinyid requires a token; give "
                                    "--auth-token-file, or --tinyid-open to serve them without "
                                    "one");
    }
    if (s->auth.required) {
        idms_log(IDMS_LOG_INFO,
                 "access control: every request but /healthz and /readyz needs the "
                 "token of %s (HTTP Authorization: Bearer, RESP AUTH)",
                 o->auth_token_file);
        return 0;
    }
    for (int i = 0; i < IDMS_PROTO_MAX; i++) {
        const char *addr = s->net.listeners[i].addr;
        if (addr != NULL && addr[0] != '\0' && !idms_auth_addr_local(addr))
            idms_log(IDMS_LOG_WARN,
                     "listening on %s without a token (--allow-unauthenticated): "
                     "anyone who can connect may mint IDs",
                     addr);
    }
    return 0;
}

/* --max-connections per port needs that many descriptors on each port
 * that is on, plus FD_SPARE: the soft RLIMIT_NOFILE is raised to that (up
 * to the hard limit); if it cannot hold it, fewer connections are taken,
 * and the log says so. Beyond the descriptors, accept fails with EMFILE and
 * libuv closes the waiting clients unanswered; at the limit they get an
 * error reply. */
static void plan_fds(idms_server *s)
{
    uint64_t ports = fronts_on(s);
    uint64_t want = (uint64_t)s->opt.max_connections * ports + FD_SPARE;
    s->net.max_conns = s->opt.max_connections;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        idms_log(IDMS_LOG_WARN, "cannot read the open-file limit (RLIMIT_NOFILE): %s",
                 strerror(errno));
        return;
    }
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
        return;
    uint64_t have = (uint64_t)rl.rlim_cur;
    uint64_t target = want;
    if (rl.rlim_max != RLIM_INFINITY && target > (uint64_t)rl.rlim_max)
        target = (uint64_t)rl.rlim_max;
    const char *why = "the hard limit";
    if (target > have) {
        struct rlimit raised = rl;
        raised.rlim_cur = (rlim_t)target;
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
            idms_log(IDMS_LOG_INFO,
                     "raised the open-file limit (RLIMIT_NOFILE) from %" PRIu64 " to %" PRIu64
                     " for --max-connections %" PRIu32 " on %" PRIu64 " port(s)",
                     have, target, s->opt.max_connections, ports);
            have = target;
        } else {
            why = strerror(errno);
        }
    }
    if (have >= want)
        return;
    uint64_t per_port = have > FD_SPARE ? (have - FD_SPARE) / ports : 0;
    if (per_port < 1)
        per_port = 1;
    s->net.max_conns = per_port;
    char hard[32] = "unlimited";
    if (rl.rlim_max != RLIM_INFINITY)
        snprintf(hard, sizeof hard, "%" PRIu64, (uint64_t)rl.rlim_max);
    idms_log(IDMS_LOG_WARN,
             "--max-connections %" PRIu32 " on %" PRIu64 " port(s) needs %" PRIu64
             " open files, but the limit (RLIMIT_NOFILE) is %" PRIu64
             " (hard limit %s; %s): taking at most %" PRIu64 " connections per port",
             s->opt.max_connections, ports, want, have, hard, why, per_port);
}

/* Loads --tls-cert and --tls-key into a new context and puts it in
 * service, logging the certificate. Returns 0, or -1 (logged) keeping the
 * context in service, if any. */
static int load_tls(idms_server *s, const char *verb)
{
    char err[IDMS_TLS_MSG_CAP];
    SSL_CTX *ctx = idms_tls_ctx_new(s->opt.tls_cert, s->opt.tls_key, err, sizeof err);
    if (ctx == NULL) {
        if (s->net.tls_ctx != NULL)
            idms_log(IDMS_LOG_ERROR, "%s; keeping the certificate in service", err);
        else
            idms_log(IDMS_LOG_ERROR, "%s", err);
        return -1;
    }
    /* Sessions of the old context hold references to it: it goes when the
     * last of them closes. */
    SSL_CTX_free(s->net.tls_ctx);
    s->net.tls_ctx = ctx;
    char what[512];
    bool expired;
    idms_tls_ctx_describe(ctx, what, sizeof what, &expired);
    idms_log(IDMS_LOG_INFO, "TLS certificate %s from %s: %s", verb, s->opt.tls_cert, what);
    if (expired)
        idms_log(IDMS_LOG_WARN, "the TLS certificate in %s has expired: clients will refuse it",
                 s->opt.tls_cert);
    return 0;
}

static void on_drain_timeout(uv_timer_t *t)
{
    idms_server *s = t->data;
    idms_log(IDMS_LOG_WARN, "drain timed out; closing the remaining %" PRIu64 " connection(s)",
             s->metrics.connections_open);
    /* The connections close through conn.c (each handle once); what else
     * is left in the loop no longer keeps it alive. */
    idms_conn_close_all(&s->net);
}

/* Closes every handle but the signal handles. Closing one of those would
 * set its signal's action back to the default (libuv's stop sets SIG_DFL,
 * whatever was ignored before), and a SIGTERM sent again while the process
 * exits (a supervisor insisting) would then kill it with 143 instead of the
 * exit status that says the drain ended well. They stay open until exit,
 * with libuv's handler, which only writes to the loop's signal pipe. */
static void on_walk_close(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (h->type != UV_SIGNAL && !uv_is_closing(h))
        uv_close(h, NULL);
}

static void on_signal(uv_signal_t *h, int signum)
{
    idms_server *s = h->data;
    if (signum == SIGHUP) {
        if (idms_log_reopen() != 0)
            idms_log(IDMS_LOG_ERROR, "cannot reopen the log file: %s", strerror(errno));
        else
            idms_log(IDMS_LOG_INFO, "log file reopened");
        if (s->net.tls_ctx != NULL) {
            int failed = load_tls(s, "reloaded") != 0;
            s->metrics.tls_reloads[failed]++;
        }
        (void)idms_keyed_reload(&s->keyed);
        return;
    }
    if (s->net.draining) {
        idms_log(IDMS_LOG_INFO, "received %s again: already draining",
                 signum == SIGTERM ? "SIGTERM" : "SIGINT");
        return;
    }
    s->net.draining = true;
    (void)idms_notify("STOPPING=1\nSTATUS=draining");
    idms_log(IDMS_LOG_INFO, "received %s: draining %" PRIu64 " connection(s)",
             signum == SIGTERM ? "SIGTERM" : "SIGINT", s->metrics.connections_open);
    idms_conn_close_listeners(&s->net);
    idms_conn_close_idle(&s->net);
    /* The handlers stay (a second SIGTERM must not kill the drain by the
     * default action) but no longer keep the loop alive. */
    uv_unref((uv_handle_t *)&s->sigterm);
    uv_unref((uv_handle_t *)&s->sigint);
    uv_unref((uv_handle_t *)&s->sighup);
    uv_timer_init(s->loop, &s->drain_timer);
    s->drain_timer.data = s;
    uv_timer_start(&s->drain_timer, on_drain_timeout, DRAIN_TIMEOUT_MS, 0);
    uv_unref((uv_handle_t *)&s->drain_timer);
}

/* Hands each room what it works on and with: its options, where it
 * counts, the rooms below it, the callbacks into this one. Before any
 * of them is opened. */
static void render_metrics(void *ctx, idms_buf *out)
{
    idms_metrics_render(ctx, out);
}

static void wire(idms_server *s)
{
    idms_net *net = &s->net;
    idms_waitq_init(&net->ceiling_waiters);
    net->opt = &s->opt;
    net->metrics = &s->metrics;
    net->svc = &s->svc;
    net->auth = &s->auth;
    s->auth.metrics = &s->metrics;
    s->keyed.file = s->opt.key_file;
    idms_segments *g = &s->segments;
    g->url = s->opt.segments;
    g->tags = s->opt.segment_tags;
    g->max_count = s->opt.max_count;
    g->metrics = &s->metrics;
    g->draining = &net->draining;
    idms_hlc *h = &s->hlc;
    h->max_offset_ms = s->opt.max_offset_ms;
    h->hwm = &s->hwm;
    h->node = &s->node;
    h->ceiling_waiters = &net->ceiling_waiters;
    h->metrics = &s->metrics;
    s->status = (idms_status){.hwm = &s->hwm,
                              .node = &s->node,
                              .mint = &s->mint,
                              .hlc = &s->hlc,
                              .segments = &s->segments,
                              .told_cause = -1};
    s->svc = (idms_services){
        .opt = &s->opt,
        .layout_name = s->layout_name,
        .mint = &s->mint,
        .segments = &s->segments,
        .hlc = &s->hlc,
        .keyed = &s->keyed,
        .status = &s->status,
        .node = &s->node,
        .metrics = &s->metrics,
        .start_ms = (int64_t)time(NULL) * 1000,
        .render_metrics = render_metrics,
        .ctx = s,
    };
}

int main(int argc, char **argv)
{
    idms_server *s = &server;
    int rc = idms_options_load(&s->opt, argc, argv);
    if (rc != IDMS_OPTIONS_RUN)
        return rc == IDMS_OPTIONS_DONE ? 0 : rc == IDMS_OPTIONS_INVALID ? 1 : 2;
    wire(s);
    if (idms_log_open(s->opt.log_file, s->opt.log_level) != 0) {
        fprintf(stderr, "idmintd: cannot open log file %s: %s\n", s->opt.log_file, strerror(errno));
        return 1;
    }
    register_fronts(s);
    if (adopt_passed_sockets(s) != 0)
        return 1;
    if (fronts_on(s) == 0) {
        fprintf(stderr, "idmintd: every listener is off (--http, --resp, --memcache): nothing "
                        "to serve\n");
        return 2;
    }
    rc = setup_auth(s);
    if (rc != 0)
        return rc;
    rc = idms_keyed_setup(&s->keyed);
    if (rc != 0)
        return rc;
    /* Before the state directory is taken: nothing to undo on failure. */
    if (s->opt.tls_cert[0] != '\0' && load_tls(s, "loaded") != 0)
        return 1;
    if (idms_segments_open(&s->segments) != 0)
        return 1;
    rc = setup_generators(s);
    if (rc != 0)
        return rc;
    s->loop = uv_default_loop();
    s->net.loop = s->loop;
    plan_fds(s);
    idms_conn_init(&s->net);
    idms_hwm_loop_start(&s->hwm_loop, s->loop);
    idms_node_start(&s->node, s->loop);
    idms_status_start(&s->status, s->loop);
    if (idms_segments_start(&s->segments, s->loop) != 0)
        return 1;
    signal(SIGPIPE, SIG_IGN);
    bool listening = true;
    for (int i = 0; i < IDMS_PROTO_MAX && listening; i++) {
        idms_listener *l = &s->net.listeners[i];
        if (l->proto != NULL && l->addr[0] != '\0')
            listening = idms_conn_listen(&s->net, l) == 0;
    }
    if (!listening) {
        /* Nothing was minted: the mark goes back to where it was, so that
         * the next start (say, on a free port) does not wait out a reserve
         * this one never used. A Unix socket made goes too. */
        idms_conn_close_listeners(&s->net);
        int64_t used = idms_hwm_failing(&s->hwm) ? -1 : idms_used_ms(&s->status);
        idms_hwm_close(&s->hwm);
        idms_node_close(&s->node, used);
        idms_segments_close(&s->segments);
        return 1;
    }
    uv_signal_t *sigs[3] = {&s->sigterm, &s->sigint, &s->sighup};
    int nums[3] = {SIGTERM, SIGINT, SIGHUP};
    for (int i = 0; i < 3; i++) {
        uv_signal_init(s->loop, sigs[i]);
        sigs[i]->data = s;
        uv_signal_start(sigs[i], on_signal, nums[i]);
    }
    idms_log(IDMS_LOG_INFO, "idmintd %s ready (pid %d)", idm_version(), (int)getpid());
    uv_run(s->loop, UV_RUN_DEFAULT);
    /* A mark that could not be written is left as it is (higher). */
    int64_t used = idms_hwm_failing(&s->hwm) ? -1 : idms_used_ms(&s->status);
    idms_hwm_close(&s->hwm);
    idms_node_close(&s->node, used);
    idms_segments_close(&s->segments);
    idm_snowflake_free(s->sf);
    idm_gen_free(s->gen);
    idms_hlc_close(&s->hlc);
    /* The handles that no longer kept the loop alive (the timers, the turn
     * queue's) close now, each once; the signal handles stay open
     * (on_walk_close), so the loop cannot be closed: the process ends. */
    idms_conn_shutdown(&s->net);
    uv_walk(s->loop, on_walk_close, NULL);
    uv_run(s->loop, UV_RUN_NOWAIT);
    idms_log(IDMS_LOG_INFO, "stopped");
    SSL_CTX_free(s->net.tls_ctx); /* every connection, and so every session, is gone */
    idms_keyed_free(&s->keyed);
    return 0;
}
