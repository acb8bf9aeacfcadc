/*
 * test_faults.c - fault injection, as curl's torture mode and SQLite's
 * test_malloc.c do it.
 *
 * Every public call that can fail runs as a scenario on a generator whose
 * allocator, entropy source and clock count their calls. For each of the
 * three resources in turn, the scenario is run again and again with the
 * Nth use of that resource failing (N = 1, 2, ...), until a run completes
 * without reaching N. Each run that hit the fault must fail with the
 * resource's own code (IDM_ENOMEM, IDM_ENOENTROPY, IDM_ECLOCK) and a
 * message, never crash, and leave nothing allocated (the allocator counts
 * allocations minus frees; LeakSanitizer checks the rest in the sanitizer
 * build) and no file descriptor open. Two modes: only the Nth use fails
 * ("once"), or the Nth and every later one ("sticky"), which catches a
 * caller that retries and succeeds on a failure it should have reported.
 *
 * The segment allocator (segment.h) allocates only in idm_segment_new and
 * reads no entropy; its clock only times ranges (a failed read keeps the
 * step, by design), so its scenario counts allocations alone.
 *
 * TypeIDs have no minting call of their own (idm_typeid_format formats a
 * UUID the caller minted), so they are covered by UUIDv7's scenario.
 */
#include "testlib.h"

#include <fcntl.h>
#include <idmint/idmint.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

enum { R_ALLOC, R_ENTROPY, R_CLOCK, R_COUNT };
static const char *const resource_name[R_COUNT] = {"allocation", "entropy read", "clock read"};
static const int resource_code[R_COUNT] = {IDM_ENOMEM, IDM_ENOENTROPY, IDM_ECLOCK};

/* Runs that may pass before a scenario is declared to never finish. */
enum { MAX_N = 2000 };

struct faults {
    long calls[R_COUNT];
    long fail_at[R_COUNT]; /* 1-based use to fail, 0 = never */
    int sticky;            /* fail from fail_at on, not only at it */
    long hits;             /* injected failures returned */
    long live;             /* allocations minus frees */
    int misaligned;        /* an alloc asked for an alignment it could not have had */
    int64_t now_ns;
    uint64_t rng;
};

/* Counts a use of resource r; 1 when it must fail. */
static int fault_hit(struct faults *f, int r)
{
    long n = ++f->calls[r];
    long at = f->fail_at[r];
    if (at != 0 && (n == at || (f->sticky && n > at))) {
        f->hits++;
        return 1;
    }
    return 0;
}

static void *fault_alloc(void *ctx, size_t size, size_t align)
{
    struct faults *f = ctx;
    if (align == 0 || (align & (align - 1)) != 0)
        f->misaligned = 1;
    if (fault_hit(f, R_ALLOC))
        return NULL;
    if (align < sizeof(void *))
        align = sizeof(void *);
    void *p = NULL;
    if (posix_memalign(&p, align, size ? size : 1) != 0)
        return NULL;
    f->live++;
    return p;
}

static void fault_free(void *ctx, void *p)
{
    struct faults *f = ctx;
    if (p == NULL)
        return;
    f->live--;
    free(p);
}

static int fault_fill(void *ctx, void *buf, size_t len)
{
    struct faults *f = ctx;
    if (fault_hit(f, R_ENTROPY))
        return IDM_ENOENTROPY;
    uint8_t *p = buf;
    for (size_t i = 0; i < len; i += 8) {
        uint64_t v = test_rng_next(&f->rng);
        size_t k = len - i < 8 ? len - i : 8;
        memcpy(p + i, &v, k);
    }
    return IDM_OK;
}

/* A clock at 2026 that moves 1 ms per read, so no call has to wait long. */
static int fault_now(void *ctx, int64_t *unix_ns)
{
    struct faults *f = ctx;
    if (fault_hit(f, R_CLOCK))
        return IDM_ECLOCK;
    f->now_ns += 1000000;
    *unix_ns = f->now_ns;
    return IDM_OK;
}

static void fault_sleep(void *ctx, int64_t ns)
{
    struct faults *f = ctx;
    f->now_ns += ns > 0 ? ns : 1;
}

static void faults_reset(struct faults *f, int r, long at, int sticky)
{
    memset(f, 0, sizeof *f);
    f->fail_at[r] = at;
    f->sticky = sticky;
    f->now_ns = INT64_C(1795000000000) * 1000000;
    f->rng = 42;
}

static idm_gen_config gen_config(struct faults *f, uint32_t flags, const char *state_path)
{
    idm_gen_config cfg = {0};
    cfg.clock = (idm_clock){fault_now, fault_sleep, f};
    cfg.entropy = (idm_entropy){fault_fill, f};
    cfg.allocator = (idm_allocator){fault_alloc, fault_free, f};
    cfg.flags = flags;
    cfg.state_path = state_path;
    return cfg;
}

static char state_dir[200];
static char state_file[300];

/* A fresh state file path per run (the file is removed first), so that
 * creating it is part of every run. */
static const char *fresh_state_path(void)
{
    if (state_dir[0] == '\0') {
        const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(state_dir, sizeof state_dir, "%s/idm-faults-XXXXXX", tmp);
        if (mkdtemp(state_dir) == NULL) {
            perror("mkdtemp");
            exit(2);
        }
        snprintf(state_file, sizeof state_file, "%s/state", state_dir);
    }
    unlink(state_file);
    return state_file;
}

/* ---- scenarios ------------------------------------------------------------ */

/* A scenario creates its generator from the faults, makes the calls under
 * test, frees the generator and returns the first non-OK code (or IDM_OK).
 * The calls mint enough to need more than one pool refill and more than
 * one clock read. */
struct scenario {
    const char *name;
    uint32_t flags;  /* idm_gen_config flags */
    int state;       /* use a state file */
    int (*run)(struct faults *f, const struct scenario *s, idm_error *err);
    int arg;         /* a format, where the scenario takes one */
};

static int with_gen(struct faults *f, const struct scenario *s, idm_gen **g, idm_error *err)
{
    idm_gen_config cfg = gen_config(f, s->flags, s->state ? fresh_state_path() : NULL);
    *g = (idm_gen *)f; /* must be replaced, by NULL on failure */
    int rc = idm_gen_new(g, &cfg, err);
    if (rc != IDM_OK && *g != NULL) {
        TEST_REPORT_("%s: idm_gen_new failed (%d) but left *out set", s->name, rc);
        *g = NULL;
    }
    return rc;
}

static int run_gen_new(struct faults *f, const struct scenario *s, idm_error *err)
{
    idm_gen *g;
    int rc = with_gen(f, s, &g, err);
    idm_gen_free(g);
    return rc;
}

enum { BIG_N = 1200, SMALL_N = 3 };

static int run_uuidv7(struct faults *f, const struct scenario *s, idm_error *err)
{
    static idm_uuid u[BIG_N];
    idm_gen *g;
    int rc = with_gen(f, s, &g, err);
    if (rc == IDM_OK)
        rc = idm_uuidv7_next_n(g, u, SMALL_N, err);
    if (rc == IDM_OK)
        rc = idm_uuidv7_next_n(g, u, BIG_N, err);
    if (rc == IDM_OK)
        rc = idm_uuidv7_next_n(g, u, BIG_N, err);
    if (rc == IDM_OK) {
        /* TypeID is UUIDv7 in base32: formatting it cannot fail on a good
         * prefix, faults or not. */
        char t[IDM_TYPEID_STRLEN_MAX + 1];
        if (idm_typeid_format("user", 4, &u[0], t, sizeof t, err) != IDM_OK)
            TEST_REPORT_("%s: idm_typeid_format failed: %s", s->name, err->msg);
    }
    idm_gen_free(g);
    return rc;
}

static int run_uuidv4(struct faults *f, const struct scenario *s, idm_error *err)
{
    static idm_uuid u[BIG_N];
    idm_gen *g;
    int rc = with_gen(f, s, &g, err);
    if (rc == IDM_OK)
        rc = idm_uuidv4_next_n(g, u, SMALL_N, err);
    if (rc == IDM_OK)
        rc = idm_uuidv4_next_n(g, u, BIG_N, err);
    idm_gen_free(g);
    return rc;
}

static int run_ulid(struct faults *f, const struct scenario *s, idm_error *err)
{
    static idm_ulid l[BIG_N];
    idm_gen *g;
    int rc = with_gen(f, s, &g, err);
    if (rc == IDM_OK)
        rc = idm_ulid_next_n(g, l, SMALL_N, err);
    if (rc == IDM_OK)
        rc = idm_ulid_next_n(g, l, BIG_N, err);
    if (rc == IDM_OK)
        rc = idm_ulid_next_n(g, l, BIG_N, err);
    idm_gen_free(g);
    return rc;
}

static int run_ksuid(struct faults *f, const struct scenario *s, idm_error *err)
{
    static idm_ksuid k[BIG_N];
    idm_gen *g;
    int rc = with_gen(f, s, &g, err);
    if (rc == IDM_OK)
        rc = idm_ksuid_next_n(g, k, SMALL_N, err);
    if (rc == IDM_OK)
        rc = idm_ksuid_next_n(g, k, BIG_N, err);
    if (rc == IDM_OK)
        rc = idm_ksuid_next_n(g, k, BIG_N, err);
    idm_gen_free(g);
    return rc;
}

static int run_text(struct faults *f, const struct scenario *s, idm_error *err)
{
    static char text[BIG_N * 40];
    idm_gen *g;
    size_t len = 0;
    int rc = with_gen(f, s, &g, err);
    if (rc == IDM_OK)
        rc = idm_gen_next_text_n(g, s->arg, text, sizeof text, SMALL_N, IDM_TEXT_NEWLINE, &len, err);
    if (rc == IDM_OK)
        rc = idm_gen_next_text_n(g, s->arg, text, sizeof text, BIG_N, 0, &len, err);
    if (rc == IDM_OK)
        rc = idm_gen_next_text_n(g, s->arg, text, sizeof text, BIG_N, IDM_TEXT_NEWLINE, &len, err);
    idm_gen_free(g);
    return rc;
}

static int run_token(struct faults *f, const struct scenario *s, idm_error *err)
{
    char t[IDM_TOKEN_STRLEN_MAX + 1];
    idm_gen *g;
    int rc = with_gen(f, s, &g, err);
    /* 16 bytes per token: 300 tokens need more than one pool. */
    for (int i = 0; i < 300 && rc == IDM_OK; i++)
        rc = idm_token_next(g, i % 2 ? "sk" : NULL, i % 2 ? 2 : 0, t, sizeof t, err);
    idm_gen_free(g);
    return rc;
}

static int run_traceparent(struct faults *f, const struct scenario *s, idm_error *err)
{
    char t[IDM_TRACEPARENT_STRLEN + 1];
    idm_gen *g;
    int rc = with_gen(f, s, &g, err);
    for (int i = 0; i < 200 && rc == IDM_OK; i++)
        rc = idm_traceparent_next(g, t, sizeof t, err);
    idm_gen_free(g);
    return rc;
}

static int run_random(struct faults *f, const struct scenario *s, idm_error *err)
{
    static uint8_t buf[3 * IDM_ENTROPY_POOL_BYTES];
    idm_gen *g;
    int rc = with_gen(f, s, &g, err);
    if (rc == IDM_OK)
        rc = idm_gen_random(g, buf, 7, err);
    if (rc == IDM_OK)
        rc = idm_gen_random(g, buf, sizeof buf, err);
    idm_gen_free(g);
    return rc;
}

/* Snowflakes: arg bit 0 = text, bit 1 = the non-blocking call. A random
 * sequence start per unit, so entropy is drawn too. */
static int with_sf(struct faults *f, const struct scenario *s, idm_snowflake **g, idm_error *err)
{
    idm_snowflake_config cfg;
    idm_snowflake_config_init(&cfg);
    cfg.gen = gen_config(f, 0, s->state ? fresh_state_path() : NULL);
    cfg.seq_start = IDM_SF_SEQ_START_RANDOM;
    cfg.node = 5;
    *g = (idm_snowflake *)f;
    int rc = idm_snowflake_new(g, &cfg, err);
    if (rc != IDM_OK && *g != NULL) {
        TEST_REPORT_("%s: idm_snowflake_new failed (%d) but left *out set", s->name, rc);
        *g = NULL;
    }
    return rc;
}

static int run_sf_new(struct faults *f, const struct scenario *s, idm_error *err)
{
    idm_snowflake *g;
    int rc = with_sf(f, s, &g, err);
    idm_snowflake_free(g);
    return rc;
}

enum { SF_TEXT = 1, SF_TRY = 2 };

/* One call of the kind s->arg selects. A non-blocking call that would
 * wait (IDM_EAGAIN) is called again at once for the rest, as the fake
 * clock moves on by itself. */
static int sf_call(idm_snowflake *g, int kind, size_t n, idm_error *err)
{
    static uint64_t ids[BIG_N * 4];
    static char text[BIG_N * 4 * 21 + 1];
    size_t done = 0;
    if (kind == 0)
        return idm_snowflake_next_n(g, ids, n, &done, err);
    if (kind == SF_TEXT)
        return idm_snowflake_next_text_n(g, text, sizeof text, n, IDM_TEXT_NEWLINE, &done, err);
    size_t left = n;
    for (int tries = 0; tries < 1000; tries++) {
        int64_t retry = 0;
        int rc;
        if (kind == SF_TRY) {
            rc = idm_snowflake_try_next_n(g, ids, left, &done, &retry, err);
        } else {
            rc = idm_snowflake_try_next_text_n(g, text, sizeof text, left, IDM_TEXT_NEWLINE, &done,
                                               &retry, err);
            size_t lines = 0;
            for (size_t i = 0; i < done; i++)
                lines += text[i] == '\n';
            done = lines;
        }
        if (rc != IDM_EAGAIN)
            return rc;
        left -= done;
        if (left == 0)
            return IDM_OK;
    }
    TEST_REPORT_("a non-blocking snowflake call kept asking to wait");
    return IDM_EAGAIN;
}

static int run_sf_next(struct faults *f, const struct scenario *s, idm_error *err)
{
    idm_snowflake *g;
    int rc = with_sf(f, s, &g, err);
    if (rc == IDM_OK)
        rc = sf_call(g, s->arg, SMALL_N, err);
    /* More than one unit's 4096 sequence numbers: a wait, a new unit and
     * another random start. */
    if (rc == IDM_OK)
        rc = sf_call(g, s->arg, BIG_N * 4, err);
    idm_snowflake_free(g);
    return rc;
}

/* A clock for the segment allocator that is not counted as a resource: a
 * failed read there is not an error (see the file comment). */
static int seg_now(void *ctx, int64_t *ns)
{
    struct faults *f = ctx;
    f->now_ns += 1000000;
    *ns = f->now_ns;
    return IDM_OK;
}

/* Creates a segment allocator, supplies two ranges and takes from both. */
static int run_segment(struct faults *f, const struct scenario *s, idm_error *err)
{
    (void)s;
    idm_segment_config cfg = {0};
    cfg.step = 100;
    cfg.alloc = (idm_allocator){fault_alloc, fault_free, f};
    cfg.clock = (idm_clock){seg_now, NULL, f};
    idm_segment *seg = (idm_segment *)f; /* must be replaced, by NULL on failure */
    int rc = idm_segment_new(&seg, &cfg, err);
    if (rc != IDM_OK) {
        if (seg != NULL) {
            TEST_REPORT_("idm_segment_new failed (%d) but left *out set", rc);
            seg = NULL;
        }
        return rc;
    }
    uint64_t ids[150], last = 0;
    size_t got = 0;
    idm_seg_range r1 = {1, 100, 1}, r2 = {101, 100, 1};
    rc = idm_segment_supply(seg, &r1, err);
    if (rc == IDM_OK)
        rc = idm_segment_supply(seg, &r2, err);
    if (rc == IDM_OK)
        rc = idm_segment_take(seg, ids, 150, &got, err);
    if (rc == IDM_OK)
        rc = idm_segment_take_run(seg, 20, &last, NULL, err);
    idm_segment_free(seg);
    return rc;
}

/* A durable mark (mark.h) with a generator attached, blocking mode: open,
 * mint across several reserves (the clock moves 1 ms per read, the reserve
 * is 5 ms), close (which lowers the file). */
static int run_mark(struct faults *f, const struct scenario *s, idm_error *err)
{
    static idm_uuid u[BIG_N];
    const char *path = fresh_state_path();
    idm_mark_config mc;
    idm_mark_config_init(&mc);
    mc.reserve_ms = 5;
    mc.clock = (idm_clock){fault_now, fault_sleep, f};
    mc.allocator = (idm_allocator){fault_alloc, fault_free, f};
    idm_mark *m = (idm_mark *)f; /* must be replaced, by NULL on failure */
    int rc = idm_mark_open(&m, path, &mc, err);
    if (rc != IDM_OK) {
        if (m != NULL)
            TEST_REPORT_("idm_mark_open failed (%d) but left *out set", rc);
        return rc;
    }
    idm_gen *g;
    rc = with_gen(f, s, &g, err);
    if (rc == IDM_OK)
        rc = idm_mark_attach_gen(m, g, err);
    for (int i = 0; i < 20 && rc == IDM_OK; i++)
        rc = idm_uuidv7_next_n(g, u, SMALL_N, err);
    idm_error close_err = {0};
    int crc = idm_mark_close(m, &close_err);
    if (rc == IDM_OK && crc != IDM_OK) {
        rc = crc;
        *err = close_err;
    }
    idm_gen_free(g);
    return rc;
}

#define GEN_SCENARIOS(suffix, fl)                                                                  \
    {"idm_gen_new" suffix, fl, 0, run_gen_new, 0},                                                 \
        {"idm_uuidv7_next_n" suffix, fl, 0, run_uuidv7, 0},                                        \
        {"idm_uuidv4_next_n" suffix, fl, 0, run_uuidv4, 0},                                        \
        {"idm_ulid_next_n" suffix, fl, 0, run_ulid, 0},                                            \
        {"idm_ksuid_next_n" suffix, fl, 0, run_ksuid, 0},                                          \
        {"idm_gen_next_text_n(uuidv4)" suffix, fl, 0, run_text, IDM_FORMAT_UUIDV4},                \
        {"idm_gen_next_text_n(uuidv7)" suffix, fl, 0, run_text, IDM_FORMAT_UUIDV7},                \
        {"idm_gen_next_text_n(ulid)" suffix, fl, 0, run_text, IDM_FORMAT_ULID},                    \
        {"idm_gen_next_text_n(ksuid)" suffix, fl, 0, run_text, IDM_FORMAT_KSUID},                  \
        {"idm_token_next" suffix, fl, 0, run_token, 0},                                            \
        {"idm_traceparent_next" suffix, fl, 0, run_traceparent, 0},                                \
        {"idm_gen_random" suffix, fl, 0, run_random, 0}

static const struct scenario scenarios[] = {
    GEN_SCENARIOS("", 0),
    GEN_SCENARIOS(" unshared", IDM_GEN_UNSHARED),
    {"idm_gen_new state_path", 0, 1, run_gen_new, 0},
    {"idm_uuidv7_next_n state_path", 0, 1, run_uuidv7, 0},
    {"idm_ulid_next_n state_path", 0, 1, run_ulid, 0},
    {"idm_ksuid_next_n state_path", 0, 1, run_ksuid, 0},
    {"idm_gen_next_text_n(ulid) state_path", 0, 1, run_text, IDM_FORMAT_ULID},
    {"idm_snowflake_new", 0, 0, run_sf_new, 0},
    {"idm_snowflake_new state_path", 0, 1, run_sf_new, 0},
    {"idm_snowflake_next_n", 0, 0, run_sf_next, 0},
    {"idm_snowflake_next_text_n", 0, 0, run_sf_next, SF_TEXT},
    {"idm_snowflake_try_next_n", 0, 0, run_sf_next, SF_TRY},
    {"idm_snowflake_try_next_text_n", 0, 0, run_sf_next, SF_TRY | SF_TEXT},
    {"idm_snowflake_next_n state_path", 0, 1, run_sf_next, 0},
    {"idm_segment_new", 0, 0, run_segment, 0},
    {"idm_mark_open, attach, mint, close", 0, 0, run_mark, 0},
    {NULL, 0, 0, NULL, 0},
};

/* The lowest free file descriptor: a leaked one moves it. */
static int lowest_free_fd(void)
{
    int fd = open("/dev/null", O_RDONLY);
    if (fd >= 0)
        close(fd);
    return fd;
}

/* Runs s with the Nth use of resource r failing, for N = 1, 2, ... until a
 * run does not reach N. Returns the number of runs that hit the fault, or
 * -1 after reporting a failure. */
static long torture(const struct scenario *s, int r, int sticky)
{
    const char *mode = sticky ? "sticky" : "once";
    struct faults f;
    long hit_runs = 0;
    for (long n = 1; n <= MAX_N; n++) {
        faults_reset(&f, r, n, sticky);
        idm_error err;
        memset(&err, 0, sizeof err);
        int fd_before = lowest_free_fd();
        int rc = s->run(&f, s, &err);
        int fd_after = lowest_free_fd();
        if (f.live != 0) {
            TEST_REPORT_("%s, %s %ld failing (%s): %ld allocation(s) not freed", s->name,
                         resource_name[r], n, mode, f.live);
            return -1;
        }
        if (f.misaligned) {
            TEST_REPORT_("%s: an allocation asked for an alignment that is not a power of two",
                         s->name);
            return -1;
        }
        if (fd_before != fd_after) {
            TEST_REPORT_("%s, %s %ld failing (%s): a file descriptor leaked", s->name,
                         resource_name[r], n, mode);
            return -1;
        }
        if (f.hits == 0) {
            /* The fault was past the last use: the scenario must pass. */
            if (rc != IDM_OK) {
                TEST_REPORT_("%s without a fault: %d (%s)", s->name, rc, err.msg);
                return -1;
            }
            return hit_runs;
        }
        hit_runs++;
        if (rc != resource_code[r] || err.code != rc || err.msg[0] == '\0') {
            TEST_REPORT_("%s, %s %ld failing (%s): rc %d, err.code %d, msg \"%s\"; want %d (%s)",
                         s->name, resource_name[r], n, mode, rc, err.code, err.msg,
                         resource_code[r], idm_strerror(resource_code[r]));
            return -1;
        }
    }
    TEST_REPORT_("%s: still hitting %s faults after %d runs", s->name, resource_name[r], MAX_N);
    return -1;
}

/* Every scenario under every resource; a scenario that never reaches a
 * resource is fine (UUIDv4 reads no clock), but each resource must be
 * reached by some scenario. With IDM_FAULTS_VERBOSE set, prints the runs. */
static void torture_all(int sticky)
{
    long total[R_COUNT] = {0};
    int verbose = getenv("IDM_FAULTS_VERBOSE") != NULL;
    for (const struct scenario *s = scenarios; s->name != NULL; s++) {
        for (int r = 0; r < R_COUNT; r++) {
            long hits = torture(s, r, sticky);
            if (hits < 0)
                return;
            total[r] += hits;
            if (verbose)
                printf("  %-40s %-12s %ld failing runs\n", s->name, resource_name[r], hits);
        }
    }
    printf("  %s: %ld allocation, %ld entropy and %ld clock failures injected, all handled\n",
           sticky ? "sticky" : "once", total[R_ALLOC], total[R_ENTROPY], total[R_CLOCK]);
    for (int r = 0; r < R_COUNT; r++) {
        if (total[r] == 0)
            TEST_FAIL_("no scenario reached a %s", resource_name[r]);
    }
}

/* The library's own uses are what the faults reach: check that each
 * resource is used at all by the scenarios that must use it, so the
 * torture above is not vacuous. */
static void test_faults_scenarios_use_each_resource(void)
{
    struct faults f;
    faults_reset(&f, R_ALLOC, 0, 0);
    idm_error err = {0};
    const struct scenario *s = &scenarios[1]; /* idm_uuidv7_next_n */
    ASSERT_OK(s->run(&f, s, &err), &err);
    ASSERT_TRUE(f.calls[R_ALLOC] >= 2);   /* the generator and its pool */
    ASSERT_TRUE(f.calls[R_ENTROPY] >= 2); /* more than one pool's worth */
    ASSERT_TRUE(f.calls[R_CLOCK] >= 3);   /* one read per call */
    ASSERT_EQ_INT(f.live, 0);
}

static void test_faults_nth_failure_once(void)
{
    torture_all(0);
}

static void test_faults_nth_failure_sticky(void)
{
    torture_all(1);
}

/* The generator's alignment reaches the allocator, and a pointer that
 * breaks it is refused rather than used. */
static void *misaligning_alloc(void *ctx, size_t size, size_t align)
{
    size_t *max_align = ctx;
    if (align > *max_align)
        *max_align = align;
    uint8_t *p = NULL;
    if (posix_memalign((void **)&p, 128, size + 128) != 0)
        return NULL;
    return p + 8; /* aligned to 8, never to 64 */
}

static void misaligning_free(void *ctx, void *p)
{
    (void)ctx;
    free((uint8_t *)p - 8);
}

static void test_faults_allocator_gets_alignment(void)
{
    struct faults f;
    faults_reset(&f, R_ALLOC, 0, 0);
    size_t max_align = 0;
    idm_gen_config cfg = gen_config(&f, 0, NULL);
    cfg.allocator = (idm_allocator){misaligning_alloc, misaligning_free, &max_align};
    idm_gen *g = NULL;
    idm_error err = {0};
    ASSERT_EQ_INT(idm_gen_new(&g, &cfg, &err), IDM_ENOMEM);
    ASSERT_TRUE(g == NULL);
    ASSERT_TRUE(max_align >= 64);

    /* The counting allocator honours it: every generator kind works. */
    faults_reset(&f, R_ALLOC, 0, 0);
    cfg = gen_config(&f, 0, NULL);
    ASSERT_OK(idm_gen_new(&g, &cfg, &err), &err);
    ASSERT_TRUE(((uintptr_t)g & 63) == 0);
    idm_gen_free(g);
    idm_snowflake_config sc;
    idm_snowflake_config_init(&sc);
    sc.gen = cfg;
    idm_snowflake *sf = NULL;
    ASSERT_OK(idm_snowflake_new(&sf, &sc, &err), &err);
    idm_snowflake_free(sf);
    ASSERT_EQ_INT(f.live, 0);
}

/* After fork() a process-local generator moves its ULID and KSUID states
 * one tick ahead with fresh random bits (gen.c), drawing entropy in the
 * child. Fail the child's Nth entropy read: the call fails with
 * IDM_ENOENTROPY, and the next one (no fault) still jumps ahead and mints
 * above everything the parent minted. Each N runs in its own child.
 * Child exit status: 0 pass, 100 the fault was not reached, else a step. */
static int child_after_fork(idm_gen *g, struct faults *f, long n, const idm_ulid *parent_ulid,
                            const idm_ksuid *parent_ksuid)
{
    f->fail_at[R_ENTROPY] = f->calls[R_ENTROPY] + n;
    idm_error err = {0};
    idm_ulid l;
    idm_ksuid k;
    int rc = idm_ulid_next_n(g, &l, 1, &err);
    if (rc == IDM_OK)
        rc = idm_ksuid_next_n(g, &k, 1, &err);
    if (f->hits == 0)
        return rc == IDM_OK ? 100 : 2;
    if (rc != IDM_ENOENTROPY || err.code != rc)
        return 3;
    if (idm_ulid_next_n(g, &l, 1, &err) != IDM_OK)
        return 4;
    if (idm_ksuid_next_n(g, &k, 1, &err) != IDM_OK)
        return 5;
    if (memcmp(&l, parent_ulid, sizeof l) <= 0)
        return 6;
    if (memcmp(&k, parent_ksuid, sizeof k) <= 0)
        return 7;
    return 0;
}

static void test_faults_entropy_after_fork(void)
{
    struct faults f;
    faults_reset(&f, R_ENTROPY, 0, 0);
    idm_gen_config cfg = gen_config(&f, 0, NULL);
    idm_gen *g = NULL;
    idm_error err = {0};
    ASSERT_OK(idm_gen_new(&g, &cfg, &err), &err);
    idm_ulid pl;
    idm_ksuid pk;
    int ok = idm_ulid_next_n(g, &pl, 1, &err) == IDM_OK && idm_ksuid_next_n(g, &pk, 1, &err) == IDM_OK;
    long n = 1;
    for (; ok && n <= 20; n++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) {
            TEST_REPORT_("fork failed");
            ok = 0;
            break;
        }
        if (pid == 0)
            _exit(child_after_fork(g, &f, n, &pl, &pk));
        int status = 0;
        waitpid(pid, &status, 0);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 100)
            break;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            TEST_REPORT_("entropy read %ld failing in the child: status 0x%x", n, status);
            ok = 0;
        }
    }
    idm_gen_free(g);
    ASSERT_TRUE(ok);
    ASSERT_TRUE(n > 1 && n <= 20); /* the child drew entropy, and not for ever */
    ASSERT_EQ_INT(f.live, 0);
}

static const struct test_case tests[] = {
    TEST(test_faults_scenarios_use_each_resource),
    TEST(test_faults_allocator_gets_alignment),
    TEST(test_faults_nth_failure_once),
    TEST(test_faults_nth_failure_sticky),
    TEST(test_faults_entropy_after_fork),
    {0},
};

int main(int argc, char **argv)
{
    int rc = test_main(argc, argv, tests);
    if (state_dir[0] != '\0') {
        unlink(state_file);
        rmdir(state_dir);
    }
    return rc;
}
