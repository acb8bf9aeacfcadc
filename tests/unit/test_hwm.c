/*
 * test_hwm.c - idmintd's owner of the durable ceiling (server/hwm.c) on
 * its own: a real state directory under /tmp, generators on a frozen
 * clock, and an executor of the test's own that runs a queued write only
 * when the test says (as libuv's thread pool would, later). It checks the
 * first mark and the ceilings it raises, writes ahead of need and at the
 * ceiling (one at a time), a write that fails (the directory replaced by
 * a file: not ready, a retry armed, none while draining) and the retry
 * that mends it, a directory held by another, the mark of idmintd before
 * 0.3 carried over, the node's limit on snowflakes, and the stop that
 * lowers the mark to the time used, where the next open resumes. Links
 * without libuv.
 */
#include "testlib.h"

#include "fakeclock.h"
#include "hwm.h"
#include "pause.h"

#include <idmint/idmint.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RESERVE_MS 1000

/* The executor: a write waits in `pending` until run_pending. */
struct exec {
    int queued;
    bool pending;
    int retries_armed;
    uint64_t retry_ms;
    bool refuse; /* queue fails (nothing runs) */
};

static int exec_queue(void *ctx)
{
    struct exec *e = ctx;
    if (e->refuse)
        return -1;
    e->queued++;
    e->pending = true;
    return 0;
}

static void exec_retry_in(void *ctx, uint64_t ms)
{
    struct exec *e = ctx;
    e->retries_armed++;
    e->retry_ms = ms;
}

struct fixture {
    char root[64];   /* the test's directory */
    char dir[96];    /* the state directory in it */
    struct fake_clock clock;
    idm_gen *gen;
    idm_sf_layout layout;
    struct exec exec;
    bool draining;
    int ceilings; /* on_ceiling calls */
    idms_hwm h;
    idms_hwm_config cfg;
};

static void on_ceiling(void *ctx)
{
    ((struct fixture *)ctx)->ceilings++;
}

static int64_t real_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A fixture whose generators' clock is frozen at the real time now. */
static bool fixture_init(struct fixture *f)
{
    memset(f, 0, sizeof *f);
    snprintf(f->root, sizeof f->root, "/tmp/idmint-test-hwm.XXXXXX");
    if (mkdtemp(f->root) == NULL)
        return false;
    snprintf(f->dir, sizeof f->dir, "%s/state", f->root);
    fake_clock_set_ms(&f->clock, real_ms());
    idm_error err = {0};
    if (idm_sf_layout_preset(&f->layout, "twitter", 7, &err) != IDM_OK)
        return false;
    idm_gen_config gc = {0};
    gc.clock = fake_clock_as_clock(&f->clock);
    gc.flags = IDM_GEN_UNSHARED;
    if (idm_gen_new(&f->gen, &gc, &err) != IDM_OK)
        return false;
    f->cfg = (idms_hwm_config){
        .state_dir = f->dir,
        .reserve_ms = RESERVE_MS,
        .layout = &f->layout,
        .layout_name = "twitter",
        .gen = f->gen,
        .draining = &f->draining,
        .exec = {&f->exec, exec_queue, exec_retry_in},
        .on_ceiling = on_ceiling,
        .ctx = f,
    };
    return true;
}

static void fixture_free(struct fixture *f)
{
    idms_hwm_close(&f->h);
    idm_gen_free(f->gen);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->root);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", f->root);
}

/* A fixture whose state directory is open and its first mark durable. */
static bool fixture_committed(struct fixture *f)
{
    return fixture_init(f) && idms_hwm_open(&f->h, &f->cfg) == 0 && idms_hwm_commit(&f->h) == 0;
}

/* Runs the queued write (or look), as the pool and then the loop would. */
static void run_pending(struct fixture *f)
{
    ASSERT_TRUE(f->exec.pending);
    f->exec.pending = false;
    idms_hwm_work(&f->h);
    idms_hwm_work_done(&f->h, false);
}

/* The state directory moved away and a file put at its path: the next
 * write cannot make it again. */
static bool replace_dir_by_file(struct fixture *f)
{
    char moved[128];
    snprintf(moved, sizeof moved, "%s/moved", f->root);
    if (rename(f->dir, moved) != 0)
        return false;
    FILE *fp = fopen(f->dir, "w");
    return fp != NULL && fclose(fp) == 0;
}

static int64_t now_ms(struct fixture *f)
{
    return atomic_load(&f->clock.now_ns) / 1000000;
}

static void test_first_mark(void)
{
    struct fixture f;
    ASSERT_TRUE(fixture_init(&f));
    ASSERT_EQ_INT(idms_hwm_open(&f.h, &f.cfg), 0);
    ASSERT_TRUE(idms_hwm_enabled(&f.h));
    ASSERT_EQ_INT(idms_hwm_resume_ms(&f.h, NULL), 0);
    /* Nothing durable yet: the generators mint nothing time-ordered. */
    ASSERT_EQ_INT(f.h.writes, 0);
    ASSERT_EQ_INT(idms_hwm_commit(&f.h), 0);
    int64_t durable = idms_hwm_durable_ms(&f.h);
    ASSERT_TRUE(durable >= now_ms(&f) + RESERVE_MS - 50);
    ASSERT_EQ_INT(idm_gen_ceiling(f.gen), durable);
    ASSERT_EQ_INT(f.h.writes, 1);
    ASSERT_EQ_INT(f.ceilings, 1);
    ASSERT_EQ_INT(f.exec.queued, 0); /* the first write is synchronous */
    char path[128];
    snprintf(path, sizeof path, "%s/mark", f.dir);
    struct stat st;
    ASSERT_TRUE(stat(path, &st) == 0 && st.st_size > 0);
    ASSERT_TRUE(stat(f.dir, &st) == 0 && (st.st_mode & 0777) == 0700);
    idms_pause_why w;
    ASSERT_TRUE(idms_hwm_ready(&f.h, &w));
    fixture_free(&f);
}

static void test_writes_ahead_one_at_a_time(void)
{
    struct fixture f;
    ASSERT_TRUE(fixture_committed(&f));
    int64_t durable = idms_hwm_durable_ms(&f.h);
    /* More than half of the reserve left: no write. */
    idms_hwm_need(&f.h, durable - RESERVE_MS + 100, false);
    ASSERT_EQ_INT(f.exec.queued, 0);
    /* Less than half: a write, ahead of need. */
    idms_hwm_need(&f.h, durable - 100, false);
    ASSERT_EQ_INT(f.exec.queued, 1);
    ASSERT_TRUE(idms_hwm_busy(&f.h));
    /* One at a time, even at the ceiling. */
    idms_hwm_need(&f.h, durable, true);
    ASSERT_EQ_INT(f.exec.queued, 1);
    ASSERT_EQ_INT(idm_gen_ceiling(f.gen), durable); /* not raised before it is durable */
    run_pending(&f);
    ASSERT_TRUE(!idms_hwm_busy(&f.h));
    ASSERT_TRUE(idms_hwm_durable_ms(&f.h) > durable);
    ASSERT_EQ_INT(idm_gen_ceiling(f.gen), idms_hwm_durable_ms(&f.h));
    ASSERT_EQ_INT(f.h.writes, 2);
    ASSERT_EQ_INT(f.ceilings, 2);
    /* At the ceiling: a write whatever is left. */
    durable = idms_hwm_durable_ms(&f.h);
    idms_hwm_need(&f.h, durable, true);
    ASSERT_EQ_INT(f.exec.queued, 2);
    run_pending(&f);
    ASSERT_TRUE(idms_hwm_durable_ms(&f.h) > durable);
    /* An executor that cannot queue: nothing in flight, the next need
     * tries again. */
    f.exec.refuse = true;
    idms_hwm_need(&f.h, idms_hwm_durable_ms(&f.h), true);
    ASSERT_TRUE(!idms_hwm_busy(&f.h));
    f.exec.refuse = false;
    idms_hwm_need(&f.h, idms_hwm_durable_ms(&f.h), true);
    ASSERT_TRUE(idms_hwm_busy(&f.h));
    run_pending(&f);
    fixture_free(&f);
}

/* The state directory replaced by a file: the write fails, the server is
 * not ready (the reason names the directory), a retry is armed; the file
 * gone, the retry makes the directory again and the mark is durable. */
static void test_failure_and_retry(void)
{
    struct fixture f;
    ASSERT_TRUE(fixture_committed(&f));
    int64_t durable = idms_hwm_durable_ms(&f.h);
    ASSERT_TRUE(replace_dir_by_file(&f));
    idms_hwm_need(&f.h, durable, true);
    run_pending(&f);
    idms_pause_why w;
    ASSERT_TRUE(idms_hwm_failing(&f.h));
    ASSERT_TRUE(!idms_hwm_ready(&f.h, &w));
    ASSERT_TRUE(strstr(w.why, f.dir) != NULL);
    ASSERT_EQ_INT(w.cause, IDMS_PAUSE_MARK);
    ASSERT_TRUE(strstr(w.ends, "tried again every 1000 ms") != NULL);
    ASSERT_EQ_INT(f.h.write_errors, 1);
    ASSERT_EQ_INT(idms_hwm_durable_ms(&f.h), durable);
    ASSERT_EQ_INT(idm_gen_ceiling(f.gen), durable);
    ASSERT_EQ_INT(f.exec.retries_armed, 1);
    ASSERT_EQ_INT(f.exec.retry_ms, 1000);
    ASSERT_EQ_INT(f.ceilings, 2); /* parked requests hear of it: refused */
    /* While failing, only a request at the ceiling asks again. */
    idms_hwm_need(&f.h, durable - 100, false);
    ASSERT_TRUE(!f.exec.pending);
    ASSERT_TRUE(unlink(f.dir) == 0);
    idms_hwm_retry(&f.h);
    run_pending(&f);
    ASSERT_TRUE(!idms_hwm_failing(&f.h));
    ASSERT_TRUE(idms_hwm_ready(&f.h, &w));
    /* Written again (from the clock's time: within the millisecond of the
     * first, not necessarily higher). */
    ASSERT_EQ_INT(f.h.writes, 2);
    ASSERT_TRUE(idms_hwm_durable_ms(&f.h) >= durable);
    char path[128];
    snprintf(path, sizeof path, "%s/mark", f.dir);
    struct stat st;
    ASSERT_TRUE(stat(path, &st) == 0 && st.st_size > 0);
    fixture_free(&f);
}

static void test_no_retry_while_draining(void)
{
    struct fixture f;
    ASSERT_TRUE(fixture_committed(&f));
    ASSERT_TRUE(replace_dir_by_file(&f));
    f.draining = true;
    idms_hwm_need(&f.h, idms_hwm_durable_ms(&f.h), true);
    run_pending(&f);
    ASSERT_TRUE(idms_hwm_failing(&f.h));
    ASSERT_EQ_INT(f.exec.retries_armed, 0);
    ASSERT_TRUE(unlink(f.dir) == 0);
    fixture_free(&f);
}

static void test_held_by_another(void)
{
    struct fixture f, g;
    ASSERT_TRUE(fixture_init(&f));
    ASSERT_TRUE(fixture_init(&g));
    ASSERT_EQ_INT(idms_hwm_open(&f.h, &f.cfg), 0);
    g.cfg.state_dir = f.dir;
    ASSERT_EQ_INT(idms_hwm_open(&g.h, &g.cfg), 1);
    ASSERT_EQ_INT(g.h.writes, 0);
    fixture_free(&g);
    fixture_free(&f);
}

/* STATE_DIR/hwm of idmintd before 0.3, 5 s ahead: resumed above, and
 * removed once the first mark is durable in STATE_DIR/mark. */
static void test_old_mark_carried_over(void)
{
    struct fixture f;
    ASSERT_TRUE(fixture_init(&f));
    ASSERT_TRUE(mkdir(f.dir, 0700) == 0);
    char path[128];
    snprintf(path, sizeof path, "%s/hwm", f.dir);
    int64_t old = now_ms(&f) + 5000;
    unsigned char rec[16] = "IDMHWM01";
    for (int i = 0; i < 8; i++)
        rec[8 + i] = (unsigned char)((uint64_t)old >> (8 * i));
    FILE *fp = fopen(path, "wb");
    ASSERT_TRUE(fp != NULL && fwrite(rec, 1, sizeof rec, fp) == sizeof rec);
    fclose(fp);
    ASSERT_EQ_INT(idms_hwm_open(&f.h, &f.cfg), 0);
    int from = 0;
    ASSERT_EQ_INT(idms_hwm_resume_ms(&f.h, &from), old);
    ASSERT_EQ_INT(from, IDMS_RESUME_STATE_DIR);
    struct stat st;
    ASSERT_TRUE(stat(path, &st) == 0); /* kept until the new mark is durable */
    ASSERT_EQ_INT(idms_hwm_commit(&f.h), 0);
    ASSERT_TRUE(stat(path, &st) != 0);
    ASSERT_TRUE(idms_hwm_durable_ms(&f.h) > old);
    fixture_free(&f);
}

/* The node's limit holds snowflakes below the durable mark; the other
 * formats are not bound by it. */
static void test_limit(void)
{
    struct fixture f;
    ASSERT_TRUE(fixture_init(&f));
    ASSERT_EQ_INT(idms_hwm_open(&f.h, &f.cfg), 0);
    idm_snowflake_config sc;
    idm_snowflake_config_init(&sc);
    sc.gen.clock = fake_clock_as_clock(&f.clock);
    sc.layout = f.layout;
    idm_snowflake *sf = NULL;
    idm_error err = {0};
    ASSERT_EQ_INT(idm_snowflake_new(&sf, &sc, &err), IDM_OK);
    ASSERT_EQ_INT(idms_hwm_adopt_snowflake(&f.h, NULL, sf), 0);
    ASSERT_EQ_INT(idms_hwm_commit(&f.h), 0);
    int64_t durable = idms_hwm_durable_ms(&f.h);
    ASSERT_EQ_INT(idm_snowflake_ceiling(sf), durable);
    idms_hwm_set_limit(&f.h, durable - 300);
    ASSERT_EQ_INT(idm_snowflake_ceiling(sf), durable - 300);
    ASSERT_EQ_INT(idm_gen_ceiling(f.gen), durable);
    idms_hwm_set_limit(&f.h, INT64_MAX);
    ASSERT_EQ_INT(idm_snowflake_ceiling(sf), durable);
    /* What the generators used: the snowflake's high water. */
    uint64_t id = 0;
    size_t done = 0;
    ASSERT_EQ_INT(idm_snowflake_next_n(sf, &id, 1, &done, &err), IDM_OK);
    ASSERT_EQ_INT(idms_hwm_used_ms(&f.h), now_ms(&f));
    idms_hwm_close(&f.h);
    idm_snowflake_free(sf);
    fixture_free(&f);
}

/* A stop lowers the mark to the time used, and the next open resumes
 * there: no wait for a reserve that was never used, nothing below what
 * was handed out. */
static void test_close_lowers_to_used(void)
{
    struct fixture f;
    ASSERT_TRUE(fixture_committed(&f));
    idm_uuid u;
    idm_error err = {0};
    ASSERT_EQ_INT(idm_uuidv7_next_n(f.gen, &u, 1, &err), IDM_OK);
    int64_t used = idms_hwm_used_ms(&f.h);
    ASSERT_EQ_INT(used, now_ms(&f));
    ASSERT_TRUE(idms_hwm_durable_ms(&f.h) > used);
    idms_hwm_close(&f.h);
    memset(&f.h, 0, sizeof f.h);
    ASSERT_EQ_INT(idms_hwm_open(&f.h, &f.cfg), 0);
    ASSERT_EQ_INT(idms_hwm_resume_ms(&f.h, NULL), used);
    fixture_free(&f);
}

/* Without a state directory: nothing is written, the ceiling is none,
 * the limit is the snowflakes' ceiling itself. */
static void test_no_state_dir(void)
{
    struct fixture f;
    ASSERT_TRUE(fixture_init(&f));
    f.cfg.state_dir = "";
    ASSERT_EQ_INT(idms_hwm_open(&f.h, &f.cfg), 0);
    ASSERT_TRUE(!idms_hwm_enabled(&f.h));
    ASSERT_EQ_INT(idms_hwm_commit(&f.h), 0);
    ASSERT_EQ_INT(idms_hwm_durable_ms(&f.h), INT64_MAX);
    idms_hwm_need(&f.h, now_ms(&f), true);
    ASSERT_EQ_INT(f.exec.queued, 0);
    struct stat st;
    ASSERT_TRUE(stat(f.dir, &st) != 0);
    fixture_free(&f);
}

static const struct test_case tests[] = {
    TEST(test_first_mark),         TEST(test_writes_ahead_one_at_a_time),
    TEST(test_failure_and_retry),  TEST(test_no_retry_while_draining),
    TEST(test_held_by_another),    TEST(test_old_mark_carried_over),
    TEST(test_limit),              TEST(test_close_lowers_to_used),
    TEST(test_no_state_dir),       {0}};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
