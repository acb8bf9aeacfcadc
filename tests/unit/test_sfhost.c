/*
 * test_sfhost.c - the host-wide snowflake held to a shared durable mark
 * (include/idmint/sfhost.h): refusals, the files' names, two openers
 * sharing one sequence, the mark written ahead of every ID, a state lost
 * (a reboot) resumed from the mark, a state kept (a crash) continued, an
 * owner's floor, a truncated state noticed, and processes killed with
 * SIGKILL while others mint: no ID twice.
 */
#include "fakeclock.h"
#include "testlib.h"
#include "tmpfiles.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define T0_MS INT64_C(1767225600000) /* 2026-01-01T00:00Z */

static const char *tmp_dir(const char *name)
{
    return test_tmp_path("sfhost", name);
}

static idm_sfhost_config cfg_for(const char *dir, struct fake_clock *c)
{
    idm_sfhost_config cfg;
    idm_sfhost_config_init(&cfg);
    cfg.dir = dir;
    cfg.node = 7;
    if (c != NULL)
        cfg.clock = fake_clock_as_clock(c);
    return cfg;
}

static int64_t id_ms(idm_sfhost *h, uint64_t id)
{
    idm_sf_parts p;
    if (idm_sf_decode(idm_snowflake_layout(idm_sfhost_generator(h)), id, &p, NULL) != IDM_OK)
        return -1;
    return p.unix_ms;
}

static void test_refusals(void)
{
    idm_error err = {0};
    idm_sfhost *h = NULL;
    idm_sfhost_config cfg = cfg_for(NULL, NULL);
    ASSERT_EQ_INT(idm_sfhost_open(&h, &cfg, &err), IDM_EINVAL);
    ASSERT_TRUE(strstr(err.msg, "no directory") != NULL);
    ASSERT_TRUE(h == NULL);
    cfg = cfg_for(tmp_dir("refusals"), NULL);
    cfg.node = 1024; /* twitter: 10 node bits */
    ASSERT_EQ_INT(idm_sfhost_open(&h, &cfg, &err), IDM_EINVAL);
    ASSERT_TRUE(strstr(err.msg, "node 1024 is out of range") != NULL);
    cfg.node = 1;
    cfg.reserve_ms = 0;
    ASSERT_EQ_INT(idm_sfhost_open(&h, &cfg, &err), IDM_EINVAL);
    ASSERT_TRUE(strstr(err.msg, "reserve_ms") != NULL);
    /* A file where the directory should be. */
    const char *file = tmp_dir("a-file");
    int fd = open(file, O_CREAT | O_WRONLY, 0600);
    ASSERT_TRUE(fd >= 0);
    close(fd);
    cfg = cfg_for(file, NULL);
    ASSERT_EQ_INT(idm_sfhost_open(&h, &cfg, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "is not a directory") != NULL);
}

static void test_paths_name_the_layout(void)
{
    idm_error err = {0};
    idm_sfhost_config a = cfg_for("/x/dir/", NULL);
    idm_sfhost_config b = a;
    const char *spec = "time=41,node=10,seq=12,unit=1ms,epoch=1288834974657";
    ASSERT_OK(idm_sf_layout_parse(&b.layout, spec, strlen(spec), &err), &err);
    char pa[256], pb[256];
    ASSERT_OK(idm_sfhost_path(&a, "state", pa, sizeof pa, &err), &err);
    ASSERT_OK(idm_sfhost_path(&b, "state", pb, sizeof pb, &err), &err);
    ASSERT_EQ_STR(pa, pb); /* the preset and its spec share one file */
    ASSERT_TRUE(strncmp(pa, "/x/dir/snowflake-7-", 19) == 0);
    ASSERT_TRUE(strcmp(pa + strlen(pa) - 6, ".state") == 0);
    b.node = 8;
    ASSERT_OK(idm_sfhost_path(&b, "state", pb, sizeof pb, &err), &err);
    ASSERT_TRUE(strcmp(pa, pb) != 0);
    ASSERT_EQ_INT(idm_sfhost_path(&a, "state", pa, 10, &err), IDM_EINVAL);
}

static void test_two_openers_share_one_sequence(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0_MS);
    idm_sfhost_config cfg = cfg_for(tmp_dir("share"), &c);
    idm_error err = {0};
    idm_sfhost *a = NULL, *b = NULL;
    ASSERT_OK(idm_sfhost_open(&a, &cfg, &err), &err);
    ASSERT_OK(idm_sfhost_open(&b, &cfg, &err), &err);
    uint64_t last = 0;
    for (int i = 0; i < 3000; i++) {
        uint64_t id = 0;
        ASSERT_OK(idm_sfhost_next(i % 3 == 0 ? a : b, &id, &err), &err);
        ASSERT_TRUE(id > last); /* one sequence: strictly increasing across both */
        last = id;
        if (i % 500 == 499)
            fake_clock_set_ms(&c, T0_MS + (i + 1) / 500);
    }
    /* Every ID lies at or below the mark on disk. */
    ASSERT_TRUE(test_file_mark(idm_sfhost_mark_path(a)) >= id_ms(a, last));
    idm_sfhost_close(a);
    idm_sfhost_close(b);
}

static void test_mark_written_ahead(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0_MS);
    idm_sfhost_config cfg = cfg_for(tmp_dir("ahead"), &c);
    cfg.reserve_ms = 100;
    idm_error err = {0};
    idm_sfhost *h = NULL;
    ASSERT_OK(idm_sfhost_open(&h, &cfg, &err), &err);
    for (int step = 0; step < 1000; step += 7) {
        fake_clock_set_ms(&c, T0_MS + step);
        uint64_t id = 0;
        int64_t retry = 0;
        ASSERT_OK(idm_sfhost_try_next(h, &id, &retry, &err), &err);
        int64_t on_disk = test_file_mark(idm_sfhost_mark_path(h));
        ASSERT_TRUE(on_disk >= id_ms(h, id));
        ASSERT_TRUE(on_disk <= T0_MS + step + 2 * cfg.reserve_ms); /* a reserve, not more */
    }
    idm_sfhost_close(h);
}

/* A reboot may lose the state's last writes, never the synced mark: a new
 * opener that finds no state (or one it cannot trust) resumes above the
 * mark, waiting for a clock that reads behind it. */
static void test_state_lost_resumes_from_mark(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0_MS);
    idm_sfhost_config cfg = cfg_for(tmp_dir("lost"), &c);
    idm_error err = {0};
    idm_sfhost *h = NULL;
    ASSERT_OK(idm_sfhost_open(&h, &cfg, &err), &err);
    uint64_t id = 0;
    ASSERT_OK(idm_sfhost_next(h, &id, &err), &err);
    int64_t mark = test_file_mark(idm_sfhost_mark_path(h));
    ASSERT_TRUE(mark > T0_MS);
    char state[256];
    snprintf(state, sizeof state, "%s", idm_sfhost_state_path(h));
    idm_sfhost_close(h);
    ASSERT_EQ_INT(unlink(state), 0);

    /* The clock 5 s behind: beyond max_rewind_ms, a clear refusal. */
    fake_clock_set_ms(&c, T0_MS - 5000);
    ASSERT_OK(idm_sfhost_open(&h, &cfg, &err), &err);
    int64_t retry = 0;
    ASSERT_EQ_INT(idm_sfhost_try_next(h, &id, &retry, &err), IDM_ECLOCK_REWIND);
    ASSERT_TRUE(err.rewind_ms > 5000);
    idm_sfhost_close(h);
    /* Within it: the call waits, then mints above the mark. */
    cfg.max_rewind_ms = 10000;
    ASSERT_OK(idm_sfhost_open(&h, &cfg, &err), &err);
    ASSERT_EQ_INT(idm_sfhost_try_next(h, &id, &retry, &err), IDM_EAGAIN);
    ASSERT_TRUE(retry / 1000000 >= mark);
    long sleeps = atomic_load(&c.sleeps);
    ASSERT_OK(idm_sfhost_next(h, &id, &err), &err);
    ASSERT_TRUE(atomic_load(&c.sleeps) > sleeps);
    ASSERT_TRUE(id_ms(h, id) > mark);
    idm_sfhost_close(h);
}

/* A crash leaves the state in the page cache: the next opener in the same
 * boot continues from it (the next sequence number of the same unit), not
 * from the later mark. */
static void test_state_kept_continues(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0_MS);
    idm_sfhost_config cfg = cfg_for(tmp_dir("kept"), &c);
    idm_error err = {0};
    idm_sfhost *h = NULL;
    ASSERT_OK(idm_sfhost_open(&h, &cfg, &err), &err);
    uint64_t first = 0, next = 0;
    ASSERT_OK(idm_sfhost_next(h, &first, &err), &err);
    idm_sfhost_close(h);
    ASSERT_OK(idm_sfhost_open(&h, &cfg, &err), &err);
    ASSERT_OK(idm_sfhost_next(h, &next, &err), &err);
    char boot[64] = {0};
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY);
    bool boot_known = fd >= 0 && read(fd, boot, sizeof boot - 1) > 0;
    if (fd >= 0)
        close(fd);
    if (boot_known)
        ASSERT_EQ_U64(next, first + 1);
    else
        ASSERT_TRUE(next > first); /* no boot id: never trusted, resumed above the mark */
    idm_sfhost_close(h);
}

static void test_floor_is_kept(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0_MS);
    idm_sfhost_config cfg = cfg_for(tmp_dir("floor"), &c);
    cfg.floor_unix_ms = T0_MS + 3000; /* an older format's mark the owner read */
    cfg.max_rewind_ms = 10000;
    idm_error err = {0};
    idm_sfhost *h = NULL;
    ASSERT_OK(idm_sfhost_open(&h, &cfg, &err), &err);
    uint64_t id = 0;
    ASSERT_OK(idm_sfhost_next(h, &id, &err), &err);
    ASSERT_TRUE(id_ms(h, id) > T0_MS + 3000);
    ASSERT_TRUE(test_file_mark(idm_sfhost_mark_path(h)) >= id_ms(h, id));
    idm_sfhost_close(h);
}

/* A state file truncated under the process is noticed by the first call
 * of a later clock millisecond (statefile.h: one fstat per millisecond),
 * as an error, not a SIGBUS. */
static void test_truncated_state_noticed(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0_MS);
    idm_sfhost_config cfg = cfg_for(tmp_dir("truncated"), &c);
    idm_error err = {0};
    idm_sfhost *h = NULL;
    ASSERT_OK(idm_sfhost_open(&h, &cfg, &err), &err);
    uint64_t id = 0;
    ASSERT_OK(idm_sfhost_next(h, &id, &err), &err);
    ASSERT_EQ_INT(truncate(idm_sfhost_state_path(h), 0), 0);
    fake_clock_set_ms(&c, T0_MS + 1);
    int64_t retry = 0;
    ASSERT_EQ_INT(idm_sfhost_try_next(h, &id, &retry, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "truncated") != NULL);
    idm_sfhost_close(h);
}

/* A writer process: mints with the real clock and writes every ID to fd
 * until told to stop by a signal, or killed. */
static void writer(const char *dir, int fd)
{
    idm_sfhost_config cfg = cfg_for(dir, NULL);
    idm_sfhost *h = NULL;
    if (idm_sfhost_open(&h, &cfg, NULL) != IDM_OK)
        _exit(3);
    uint64_t batch[64];
    for (;;) {
        for (size_t i = 0; i < 64; i++)
            if (idm_sfhost_next(h, &batch[i], NULL) != IDM_OK)
                _exit(4);
        if (write(fd, batch, sizeof batch) != (ssize_t)sizeof batch)
            _exit(0); /* the reader is gone */
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static size_t drain(int fd, uint64_t *ids, size_t have, size_t cap, size_t want)
{
    while (have < want && have + 64 <= cap) {
        ssize_t n = read(fd, ids + have, 64 * sizeof *ids);
        if (n <= 0)
            break;
        have += (size_t)n / sizeof *ids; /* whole batches: 512-byte writes are atomic */
    }
    return have;
}

static pid_t spawn(const char *dir, int *fd)
{
    int pipefd[2];
    if (pipe(pipefd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(pipefd[0]);
        writer(dir, pipefd[1]);
    }
    close(pipefd[1]);
    *fd = pipefd[0];
    return pid;
}

/* Three processes mint for one node; one is killed with SIGKILL while it
 * mints (its reader keeps its pipe moving) and another is started: no ID
 * is handed out twice. */
static void test_processes_killed_mid_run(void)
{
    const char *dir = tmp_dir("procs");
    enum { PROCS = 4, PER = 64 * 320, CAP = PROCS * PER * 2 };
    uint64_t *ids = calloc(CAP, sizeof *ids);
    ASSERT_TRUE(ids != NULL);
    int fds[PROCS];
    pid_t pids[PROCS];
    for (int p = 0; p < PROCS - 1; p++)
        ASSERT_TRUE((pids[p] = spawn(dir, &fds[p])) > 0);
    size_t have = drain(fds[0], ids, 0, CAP, 64 * 80);
    kill(pids[0], SIGKILL);
    ASSERT_TRUE((pids[PROCS - 1] = spawn(dir, &fds[PROCS - 1])) > 0);
    for (int p = 1; p < PROCS; p++) {
        size_t before = have;
        have = drain(fds[p], ids, have, CAP, have + PER);
        ASSERT_TRUE(have - before == PER);
    }
    have = drain(fds[0], ids, have, CAP, CAP); /* what the killed one wrote, to its end */
    for (int p = 0; p < PROCS; p++) {
        kill(pids[p], SIGKILL);
        close(fds[p]);
        int status = 0;
        waitpid(pids[p], &status, 0);
        ASSERT_TRUE(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0));
    }
    ASSERT_TRUE(have >= (size_t)(PROCS - 1) * PER + 64 * 80);
    qsort(ids, have, sizeof *ids, cmp_u64);
    for (size_t i = 1; i < have; i++)
        ASSERT_TRUE(ids[i] != ids[i - 1]);
    free(ids);
}

/* An opener that ran whole while another was opening. The second one's
 * allocator hook (its second allocation: the mark's, made before the mark
 * is read) opens a first opener on the fresh directory and mints, which
 * creates the state and writes a reserve ahead. The second must then trust
 * that state (it exists, and the mark carries this boot): judged from a
 * look at the state taken before the first existed, it resumed at the
 * first's reserve and left every opener's clock behind the latest time by
 * more than the tolerance (pg_idmint's 8 sessions starting at once failed
 * with "the clock reads 1001 ms behind the latest time used"). */
struct racing_alloc {
    int calls;
    idm_sfhost_config cfg; /* the first opener's */
    idm_sfhost *first;
    int first_rc;
};

static void *racing_alloc(void *ctx, size_t size, size_t align)
{
    struct racing_alloc *r = ctx;
    if (++r->calls == 2) {
        idm_error err = {0};
        uint64_t id = 0;
        r->first_rc = idm_sfhost_open(&r->first, &r->cfg, &err);
        if (r->first_rc == IDM_OK)
            r->first_rc = idm_sfhost_next(r->first, &id, &err);
    }
    void *p = NULL;
    return posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size) == 0 ? p : NULL;
}

static void racing_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

static void test_opener_racing_a_first_one_trusts_it(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0_MS);
    const char *dir = tmp_dir("race");
    struct racing_alloc r = {.cfg = cfg_for(dir, &c)};
    r.cfg.reserve_ms = 2000;
    idm_sfhost_config cfg = r.cfg;
    cfg.allocator = (idm_allocator){.alloc = racing_alloc, .free = racing_free, .ctx = &r};
    idm_error err = {0};
    idm_sfhost *second = NULL;
    ASSERT_OK(idm_sfhost_open(&second, &cfg, &err), &err);
    ASSERT_TRUE(r.calls >= 2);
    ASSERT_EQ_INT(r.first_rc, IDM_OK);
    /* The clock has not moved: both go on minting at T0. */
    uint64_t a = 0, b = 0;
    int64_t retry = 0;
    ASSERT_OK(idm_sfhost_try_next(r.first, &a, &retry, &err), &err);
    ASSERT_OK(idm_sfhost_try_next(second, &b, &retry, &err), &err);
    ASSERT_EQ_INT(id_ms(second, a), T0_MS);
    ASSERT_EQ_INT(id_ms(second, b), T0_MS);
    ASSERT_TRUE(b > a);
    idm_sfhost_close(second);
    idm_sfhost_close(r.first);
}

static const struct test_case tests[] = {
    TEST(test_refusals),
    TEST(test_paths_name_the_layout),
    TEST(test_two_openers_share_one_sequence),
    TEST(test_mark_written_ahead),
    TEST(test_state_lost_resumes_from_mark),
    TEST(test_state_kept_continues),
    TEST(test_floor_is_kept),
    TEST(test_truncated_state_noticed),
    TEST(test_processes_killed_mid_run),
    TEST(test_opener_racing_a_first_one_trusts_it),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
