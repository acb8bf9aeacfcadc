/*
 * test_pause.c - the pause accounting (server/pause.c): a pause's start,
 * change of cause and end, each logged once (read back from a log file),
 * the time per cause with the current pause included, the counts, and what
 * /readyz, /v1/node and /metrics render of it; the holders' list.
 */
#include "testlib.h"

#include "buf.h"
#include "log.h"
#include "pause.h"
#include "tmpfiles.h"

#include <stdio.h>
#include <string.h>

static idms_pause_why why(int cause, const char *text, const char *ends, int64_t eta)
{
    idms_pause_why w;
    idms_pause_why_clear(&w);
    w.cause = cause;
    snprintf(w.why, sizeof w.why, "%s", text);
    snprintf(w.ends, sizeof w.ends, "%s", ends);
    w.eta_ms = eta;
    return w;
}

/* The buffer's text, NUL-terminated (not counted in len). */
static const char *text(idms_buf *b)
{
    char *end = idms_buf_reserve(b, 1);
    if (end == NULL)
        return "";
    *end = '\0';
    return b->data;
}

/* The log so far, and how many lines contain needle. */
static int log_count(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL)
        n += strstr(line, needle) != NULL;
    fclose(f);
    return n;
}

static void test_start_change_end(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s", test_tmp_path("pause", "log"));
    ASSERT_EQ_INT(idms_log_open(path, IDMS_LOG_INFO), 0);

    idms_pauses p = {0};
    idms_pause_why ok;
    idms_pause_why_clear(&ok);
    idms_pauses_observe(&p, &ok, 1000, 1700000000000);
    ASSERT_EQ_INT(p.cause, IDMS_PAUSE_NONE);
    ASSERT_EQ_INT(idms_pauses_current_ms(&p, 1000), 0);

    idms_pause_why clock =
        why(IDMS_PAUSE_CLOCK, "the clock is behind", "the clock reaching it", 300);
    idms_pauses_observe(&p, &clock, 2000, 1700000001000);
    idms_pauses_observe(&p, &clock, 2100, 1700000001100); /* the same: nothing new */
    ASSERT_EQ_INT(p.cause, IDMS_PAUSE_CLOCK);
    ASSERT_EQ_INT(idms_pauses_current_ms(&p, 2150), 150);
    ASSERT_EQ_INT(idms_pauses_total_ms(&p, IDMS_PAUSE_CLOCK, 2150), 150);
    ASSERT_EQ_INT(log_count(path, "minting paused (clock): the clock is behind; ends with the "
                                  "clock reaching it (expected in about 300 ms)"),
                  1);

    /* The cause changes: one pause, its time split between the causes. */
    idms_pause_why node = why(IDMS_PAUSE_NODE, "no node", "", -1);
    idms_pauses_observe(&p, &node, 2400, 1700000001400);
    ASSERT_EQ_INT(idms_pauses_total_ms(&p, IDMS_PAUSE_CLOCK, 2500), 400);
    ASSERT_EQ_INT(idms_pauses_total_ms(&p, IDMS_PAUSE_NODE, 2500), 100);
    ASSERT_EQ_INT(idms_pauses_current_ms(&p, 2500), 500);
    ASSERT_EQ_INT(log_count(path, "minting still paused after 400 ms, now (node): no node"), 1);

    idms_pauses_observe(&p, &ok, 3000, 1700000002000);
    ASSERT_EQ_INT(p.cause, IDMS_PAUSE_NONE);
    ASSERT_EQ_INT(idms_pauses_total_ms(&p, IDMS_PAUSE_NODE, 9000), 600);
    ASSERT_EQ_INT(idms_pauses_total_ms(&p, IDMS_PAUSE_CLOCK, 9000), 400);
    ASSERT_EQ_INT(p.longest_ms, 1000);
    ASSERT_EQ_U64(p.count[IDMS_PAUSE_CLOCK], 1);
    ASSERT_EQ_U64(p.count[IDMS_PAUSE_NODE], 1);
    ASSERT_EQ_INT(log_count(path, "minting resumed after a pause of 1000 ms (node)"), 1);
    ASSERT_EQ_INT(log_count(path, "minting paused"), 1);
    ASSERT_EQ_INT(log_count(path, "resumed"), 1);
    idms_log_open(NULL, IDMS_LOG_INFO);
}

static void test_render(void)
{
    idms_pauses p = {0};
    idms_pause_why w = why(IDMS_PAUSE_COORD, "node 3: keep-alive failed: \"timeout\"",
                           "etcd confirming the lease", -1);
    idms_pauses_observe(&p, &w, 5000, 1767225600000); /* 2026-01-01T00:00:00Z */
    idms_buf b;
    idms_buf_init(&b);
    idms_pauses_json(&p, 5250, true, &b);
    ASSERT_EQ_STR(text(&b),
                  "{\"cause\": \"coordinator\", \"class\": \"the node's lease cannot be "
                  "confirmed\", \"since\": \"2026-01-01T00:00:00.000Z\", \"paused_ms\": 250, "
                  "\"eta_ms\": null, \"why\": \"node 3: keep-alive failed: \\\"timeout\\\"\", "
                  "\"ends\": \"etcd confirming the lease\"}");
    b.len = 0;
    /* Without the token: no why, no ends (they name hosts). */
    idms_pauses_json(&p, 5250, false, &b);
    ASSERT_TRUE(strstr(text(&b), "keep-alive") == NULL);
    ASSERT_TRUE(strstr(text(&b), "\"paused_ms\": 250") != NULL);
    b.len = 0;
    idms_pauses_text(&p, 5250, false, &b);
    ASSERT_EQ_STR(text(&b), "not ready: the node's lease cannot be confirmed\n"
                            "paused since 2026-01-01T00:00:00.000Z (250 ms, coordinator)\n");
    b.len = 0;
    idms_pauses_text(&p, 5250, true, &b);
    ASSERT_EQ_STR(text(&b), "node 3: keep-alive failed: \"timeout\"\n"
                            "paused since 2026-01-01T00:00:00.000Z (250 ms, coordinator)\n"
                            "ends with: etcd confirming the lease\n");
    b.len = 0;
    idms_pauses_metrics(&p, 6234, &b);
    const char *m = text(&b);
    ASSERT_TRUE(strstr(m, "idmint_paused{cause=\"coordinator\"} 1\n") != NULL);
    ASSERT_TRUE(strstr(m, "idmint_paused{cause=\"node\"} 0\n") != NULL);
    ASSERT_TRUE(strstr(m, "idmint_pause_seconds_total{cause=\"coordinator\"} 1.234\n") != NULL);
    ASSERT_TRUE(strstr(m, "idmint_pause_seconds_total{cause=\"clock\"} 0.000\n") != NULL);
    ASSERT_TRUE(strstr(m, "idmint_pauses_total{cause=\"coordinator\"} 1\n") != NULL);
    ASSERT_TRUE(strstr(m, "# TYPE idmint_pause_seconds_total counter\n") != NULL);
    b.len = 0;
    idms_pauses p2 = {0};
    idms_pauses_json(&p2, 1, true, &b);
    ASSERT_EQ_STR(text(&b), "null");
    b.len = 0;
    idms_pauses_text(&p2, 1, false, &b);
    ASSERT_EQ_STR(text(&b), "ready\n");
    idms_buf_free(&b);
}

static void test_holders(void)
{
    idms_holders h;
    idms_holders_init(&h);
    ASSERT_EQ_INT(h.soonest_ms, -1);
    idms_holders_add(&h, 5, "pid=10 host=a addrs=1.2.3.4 http=x", 900);
    idms_holders_add(&h, 6, "pid=11 host=b", 400);
    idms_holders_add(&h, 7, NULL, -1);
    ASSERT_EQ_STR(h.text, "node 5 (pid=10 host=a, lease ends in 900 ms); node 6 (pid=11 host=b, "
                          "lease ends in 400 ms); node 7 (?)");
    ASSERT_EQ_INT(h.soonest_ms, 400);
    for (int i = 0; i < 10; i++)
        idms_holders_add(&h, 100 + (uint64_t)i, "pid=1 host=c", 50);
    ASSERT_EQ_INT(h.shown, 4);
    ASSERT_EQ_INT(h.more, 9);
    ASSERT_EQ_INT(h.soonest_ms, 50); /* counted even when not named */
}

static const struct test_case tests[] = {
    TEST(test_start_change_end), TEST(test_render), TEST(test_holders), {0}};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
