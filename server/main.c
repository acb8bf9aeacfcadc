/*
 * main.c - idmintd: settings, generators, listeners, signals.
 *
 * SIGTERM and SIGINT drain: the listeners close, idle connections close,
 * requests already received are answered (with Connection: close), and the
 * process exits when the last connection is gone (or after 10 s). The time
 * high-water mark then shrinks to the time actually used. SIGHUP reopens
 * the log file.
 */
#include "idmintd.h"

#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DRAIN_TIMEOUT_MS 10000

static idms_server server;

/* The clock the snowflake generator runs on: the system's, with its sleeps
 * counted (a sleep while the clock reads before the high-water mark waits
 * out a rewind; otherwise an exhausted sequence). */
static void counting_sleep(void *ctx, int64_t ns)
{
    idms_server *s = ctx;
    idm_clock sys = idm_clock_system();
    int64_t now_ns = 0;
    if (sys.now_ns(sys.ctx, &now_ns) == IDM_OK && s->sf != NULL &&
        now_ns / 1000000 < idm_snowflake_high_water_ms(s->sf)) {
        s->metrics.clock_rewinds++;
        s->metrics.rewind_waits++;
    } else {
        s->metrics.exhaustion_waits++;
    }
    sys.sleep_ns(sys.ctx, ns);
}

static int system_now(void *ctx, int64_t *ns)
{
    (void)ctx;
    idm_clock sys = idm_clock_system();
    return sys.now_ns(sys.ctx, ns);
}

static int mkdirs(const char *path)
{
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    }
    if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

static int setup_generators(idms_server *s)
{
    idm_error err = {0};
    idm_snowflake_config cfg;
    idm_snowflake_config_init(&cfg);
    if (idm_sf_layout_parse(&cfg.layout, s->opt.layout, strlen(s->opt.layout), &err) != IDM_OK) {
        fprintf(stderr, "idmintd: invalid --layout '%s': %s\n", s->opt.layout, err.msg);
        return 2;
    }
    if (s->opt.epoch[0] != '\0') {
        int64_t epoch;
        uint64_t u;
        if (idmx_parse_u64(s->opt.epoch, &u) == 0 && u <= INT64_MAX) {
            epoch = (int64_t)u;
        } else if (idm_time_parse(s->opt.epoch, strlen(s->opt.epoch), &epoch, &err) != IDM_OK) {
            fprintf(stderr, "idmintd: invalid --epoch '%s': %s\n", s->opt.epoch, err.msg);
            return 2;
        }
        if (idm_sf_layout_set_epoch(&cfg.layout, epoch, &err) != IDM_OK) {
            fprintf(stderr, "idmintd: invalid --epoch '%s': %s\n", s->opt.epoch, err.msg);
            return 2;
        }
    }
    s->layout = cfg.layout;
    if (idm_sf_layout_format(&s->layout, s->layout_name, sizeof s->layout_name) != IDM_OK)
        snprintf(s->layout_name, sizeof s->layout_name, "?");
    if (s->opt.node > idm_sf_layout_max_node(&s->layout)) {
        fprintf(stderr, "idmintd: --node %" PRIu64 " is out of range 0..%" PRIu64 " for layout %s\n", s->opt.node,
                idm_sf_layout_max_node(&s->layout), s->layout_name);
        return 2;
    }
    cfg.node = s->opt.node;
    cfg.max_rewind_ms = s->opt.max_rewind_ms;
    cfg.gen.clock.now_ns = system_now;
    cfg.gen.clock.sleep_ns = counting_sleep;
    cfg.gen.clock.ctx = s;

    char sf_path[1100], gen_path[1100];
    idm_gen_config gcfg = {0};
    if (s->opt.state_dir[0] != '\0') {
        if (mkdirs(s->opt.state_dir) != 0) {
            idms_log(IDMS_LOG_ERROR, "cannot create state directory %s: %s", s->opt.state_dir, strerror(errno));
            return 1;
        }
        snprintf(sf_path, sizeof sf_path, "%s/snowflake.state", s->opt.state_dir);
        snprintf(gen_path, sizeof gen_path, "%s/gen.state", s->opt.state_dir);
        cfg.gen.state_path = sf_path;
        gcfg.state_path = gen_path;
    } else {
        gcfg.flags = IDM_GEN_UNSHARED;
        idms_log(IDMS_LOG_WARN, "no --state-dir: a restart after the clock was stepped back could "
                                "repeat snowflakes");
    }
    int64_t resume = 0;
    if (idms_hwm_open(s, &resume) != 0)
        return 1;
    cfg.resume_unix_ms = resume;
    int rc = idm_snowflake_new(&s->sf, &cfg, &err);
    if (rc == IDM_OK)
        rc = idm_gen_new(&s->gen, &gcfg, &err);
    if (rc != IDM_OK) {
        idms_log(IDMS_LOG_ERROR, "cannot create the generators: %s", err.msg);
        return rc == IDM_EINVAL ? 2 : 1;
    }
    int64_t high = idm_snowflake_high_water_ms(s->sf);
    char when[IDM_RFC3339_CAP] = "none";
    if (high > 0 && idm_time_format(high, when, sizeof when) != IDM_OK)
        snprintf(when, sizeof when, "%" PRId64, high);
    idms_log(IDMS_LOG_INFO, "snowflake layout %s, node %" PRIu64 ", max rewind %" PRId64 " ms, state %s, "
                            "high-water mark %s",
             s->layout_name, s->opt.node, s->opt.max_rewind_ms,
             s->opt.state_dir[0] ? s->opt.state_dir : "none", when);
    char why[256];
    if (!idms_ready(s, why, sizeof why))
        idms_log(IDMS_LOG_WARN, "not ready yet: %s; snowflake requests get 503 until the clock catches up",
                 why);
    return 0;
}

static void on_walk_close(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void on_drain_timeout(uv_timer_t *t)
{
    idms_server *s = t->data;
    idms_log(IDMS_LOG_WARN, "drain timed out; closing the remaining connections");
    uv_walk(s->loop, on_walk_close, NULL);
}

static void on_signal(uv_signal_t *h, int signum)
{
    idms_server *s = h->data;
    if (signum == SIGHUP) {
        if (idms_log_reopen() != 0)
            idms_log(IDMS_LOG_ERROR, "cannot reopen the log file: %s", strerror(errno));
        else
            idms_log(IDMS_LOG_INFO, "log file reopened");
        return;
    }
    if (s->draining)
        return;
    s->draining = true;
    idms_log(IDMS_LOG_INFO, "received %s: draining %" PRIu64 " connection(s)", signum == SIGTERM ? "SIGTERM" : "SIGINT",
             s->metrics.connections_open);
    idms_conn_close_listeners(s);
    idms_conn_close_idle(s);
    uv_close((uv_handle_t *)&s->sigterm, NULL);
    uv_close((uv_handle_t *)&s->sigint, NULL);
    uv_close((uv_handle_t *)&s->sighup, NULL);
    uv_timer_init(s->loop, &s->drain_timer);
    s->drain_timer.data = s;
    uv_timer_start(&s->drain_timer, on_drain_timeout, DRAIN_TIMEOUT_MS, 0);
    uv_unref((uv_handle_t *)&s->drain_timer);
}

int main(int argc, char **argv)
{
    idms_server *s = &server;
    int rc = idms_options_load(&s->opt, argc, argv);
    if (rc != 0)
        return rc == 1 ? 0 : 2;
    if (idms_log_open(s->opt.log_file, s->opt.log_level) != 0) {
        fprintf(stderr, "idmintd: cannot open log file %s: %s\n", s->opt.log_file, strerror(errno));
        return 1;
    }
    if (s->opt.http[0] == '\0' && s->opt.resp[0] == '\0') {
        fprintf(stderr, "idmintd: both --http and --resp are off: nothing to serve\n");
        return 2;
    }
    rc = setup_generators(s);
    if (rc != 0)
        return rc;
    s->loop = uv_default_loop();
    signal(SIGPIPE, SIG_IGN);
    if ((s->opt.http[0] && idms_conn_listen(s, &s->http, &idms_http_proto, s->opt.http) != 0) ||
        (s->opt.resp[0] && idms_conn_listen(s, &s->resp, &idms_resp_proto, s->opt.resp) != 0))
        return 1;
    uv_signal_t *sigs[3] = {&s->sigterm, &s->sigint, &s->sighup};
    int nums[3] = {SIGTERM, SIGINT, SIGHUP};
    for (int i = 0; i < 3; i++) {
        uv_signal_init(s->loop, sigs[i]);
        sigs[i]->data = s;
        uv_signal_start(sigs[i], on_signal, nums[i]);
    }
    idms_log(IDMS_LOG_INFO, "idmintd %s ready (pid %d)", idm_version(), (int)getpid());
    uv_run(s->loop, UV_RUN_DEFAULT);
    idms_hwm_close(s);
    idm_snowflake_free(s->sf);
    idm_gen_free(s->gen);
    idms_log(IDMS_LOG_INFO, "stopped");
    uv_loop_close(s->loop);
    return 0;
}
