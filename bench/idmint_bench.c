/*
 * idmint_bench - idmint's side of the benchmark (bench/README.md).
 *
 *   idmint_bench [--quick] [--run-ms MS] [--runs R] [--ceiling-ms MS] [--only FORMAT]
 *   idmint_bench --mem
 *   idmint_bench --callgrind FORMAT MODE N
 *
 * stdout carries only protocol lines, the same as bench/peers/run_peers.sh:
 *
 *   RESULT<TAB>idmint<TAB>format<TAB>mode<TAB>threads<TAB>ns_per_id
 *   MEM idmint WHAT BYTES
 *   CHECK snowflake max_per_ms N
 *
 * and stderr the progress. Each RESULT is the median of R runs (5) of about
 * MS milliseconds (200) each, after a calibration that doubles the count
 * until a run takes a quarter of MS (the warm-up). ns_per_id is wall time
 * over all IDs minted, whatever the number of threads or processes. The
 * real system clock and the default entropy (OpenSSL's DRBG) are used.
 *
 * Modes (threads in parentheses):
 *   binary (1)    *_next_n, BATCH IDs per call, into an array
 *   binary1 (1)   one ID per *_next_n call
 *   text (1)      idm_gen_next_text_n / idm_snowflake_next_text_n, BATCH per call
 *   text1 (1)     one ID per call, then *_format
 *   shared1/2     one generator, 1 or 2 threads, one ID per call
 *   local1/2      a generator per thread (IDM_GEN_UNSHARED; for snowflakes a
 *                 generator per thread with its own node), one ID per call
 *   process1      1 process, process-local generator, one ID per call
 *   hostwide1/2   1 or 2 processes on one state file (state_path), one ID
 *                 per call; the processes are forked and make their own
 *                 generators after the fork
 *   ceiling (1)   snowflake only: one twitter generator minting BATCH per
 *                 call for --ceiling-ms (1000); every ID is decoded
 *                 afterwards, and more than 4,096 in one millisecond (or
 *                 an ID not above the one before) fails the run: exit 1
 *
 * --mem prints the bytes each kind of generator allocates (through a
 * counting idm_allocator) and the size of the state files.
 *
 * --callgrind mints N IDs inside callgrind_hot() after a warm-up, for
 * bench/callgrind.sh (valgrind --tool=callgrind --toggle-collect=callgrind_hot).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <idmint/idmint.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { BATCH = 256 };

/* --- formats and modes ------------------------------------------------- */

enum { F_UUIDV4, F_UUIDV7, F_ULID, F_KSUID, F_SNOWFLAKE, F_TYPEID, F_TOKEN, F_COUNT };

static const char *const format_names[F_COUNT] = {"uuidv4",    "uuidv7", "ulid", "ksuid",
                                                  "snowflake", "typeid", "token"};

/* How one call mints: a batch or one ID, binary or text. */
enum { K_BIN, K_BIN1, K_TEXT, K_TEXT1 };

/* Who owns the generator(s) of a mode. */
enum {
    S_INLINE,    /* one generator, minted on the main thread */
    S_SHARED,    /* one generator shared by the worker threads */
    S_LOCAL,     /* one generator per worker thread */
    S_PROCLOCAL, /* one process-local generator per child process */
    S_HOSTWIDE   /* one generator per child process, all on one state file */
};

typedef struct mode_def {
    const char *name;
    int kind;
    int workers; /* threads, or processes for S_PROCLOCAL / S_HOSTWIDE */
    int share;
} mode_def;

static const mode_def modes[] = {
    {"binary", K_BIN, 1, S_INLINE},       {"binary1", K_BIN1, 1, S_INLINE},
    {"text", K_TEXT, 1, S_INLINE},        {"text1", K_TEXT1, 1, S_INLINE},
    {"shared1", K_BIN1, 1, S_SHARED},     {"shared2", K_BIN1, 2, S_SHARED},
    {"local1", K_BIN1, 1, S_LOCAL},       {"local2", K_BIN1, 2, S_LOCAL},
    {"process1", K_BIN1, 1, S_PROCLOCAL}, {"hostwide1", K_BIN1, 1, S_HOSTWIDE},
    {"hostwide2", K_BIN1, 2, S_HOSTWIDE},
};
enum { MODE_COUNT = sizeof modes / sizeof modes[0] };

/* Which modes apply to a format: TypeID is a UUIDv7 in another text form
 * (no binary of its own), a token is text minted one at a time. */
static bool mode_applies(int fmt, const mode_def *m)
{
    if (fmt == F_TYPEID) {
        return m->kind == K_TEXT || m->kind == K_TEXT1;
    }
    if (fmt == F_TOKEN) {
        return strcmp(m->name, "text1") == 0;
    }
    return true;
}

/* --- small helpers ----------------------------------------------------- */

static volatile uint64_t sink;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what, int rc, const idm_error *err)
{
    fprintf(stderr, "idmint_bench: %s: %s: %s\n", what, idm_strerror(rc),
            err != NULL ? err->msg : "");
    exit(1);
}

static void *xmalloc(size_t size)
{
    void *p = malloc(size);
    if (p == NULL) {
        fprintf(stderr, "idmint_bench: out of memory\n");
        exit(1);
    }
    return p;
}

static void report(int fmt, const char *mode, int threads, double ns)
{
    printf("RESULT\tidmint\t%s\t%s\t%d\t%.2f\n", format_names[fmt], mode, threads, ns);
    fflush(stdout);
}

/* Where host-wide state files go: /dev/shm when it is there, else $TMPDIR
 * or /tmp. One file per kind (idm_gen, snowflake), removed at exit. */
static char gen_state_path[512];
static char sf_state_path[512];

static pid_t parent_pid;

/* Only the parent removes them: a child that fails exits through exit(). */
static void remove_state_files(void)
{
    if (getpid() != parent_pid) {
        return;
    }
    if (gen_state_path[0] != '\0') {
        unlink(gen_state_path);
    }
    if (sf_state_path[0] != '\0') {
        unlink(sf_state_path);
    }
}

static void init_state_paths(void)
{
    const char *dir = "/dev/shm";
    if (access(dir, W_OK) != 0) {
        dir = getenv("TMPDIR");
        if (dir == NULL || dir[0] == '\0') {
            dir = "/tmp";
        }
    }
    snprintf(gen_state_path, sizeof gen_state_path, "%s/idmint-bench-%ld-gen.state", dir,
             (long)getpid());
    snprintf(sf_state_path, sizeof sf_state_path, "%s/idmint-bench-%ld-sf.state", dir,
             (long)getpid());
    remove_state_files();
    atexit(remove_state_files);
}

/* --- generators -------------------------------------------------------- */

static idm_gen *make_gen(uint32_t flags, const char *state_path, const idm_allocator *alloc)
{
    idm_gen_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.flags = flags;
    cfg.state_path = state_path;
    if (alloc != NULL) {
        cfg.allocator = *alloc;
    }
    idm_gen *g = NULL;
    idm_error err;
    int rc = idm_gen_new(&g, &cfg, &err);
    if (rc != IDM_OK) {
        die("idm_gen_new", rc, &err);
    }
    return g;
}

/* Twitter layout (1 ms, 12-bit sequence: 4,096 IDs per ms per node). */
static idm_snowflake *make_sf(uint64_t node, const char *state_path, const idm_allocator *alloc)
{
    idm_snowflake_config cfg;
    idm_snowflake_config_init(&cfg);
    cfg.node = node;
    cfg.gen.state_path = state_path;
    if (alloc != NULL) {
        cfg.gen.allocator = *alloc;
    }
    idm_snowflake *g = NULL;
    idm_error err;
    int rc = idm_snowflake_new(&g, &cfg, &err);
    if (rc != IDM_OK) {
        die("idm_snowflake_new", rc, &err);
    }
    return g;
}

/* --- minting ------------------------------------------------------------ */

#define TYPEID_PREFIX   "user"
#define TYPEID_STRIDE   (sizeof TYPEID_PREFIX - 1 + 28) /* prefix_len + 28: see typeid.h */
#define TOKEN_PREFIX    "tok"
#define TEXT_PER_ID_MAX (IDM_TYPEID_STRLEN_MAX + 2)

/* One minting context: a generator (owned or borrowed) and its buffers. */
typedef struct minter {
    int fmt;
    int kind;
    idm_gen *g;
    idm_snowflake *sf;
    bool owns;
    union {
        idm_uuid uuid[BATCH];
        idm_ulid ulid[BATCH];
        idm_ksuid ksuid[BATCH];
        uint64_t sf[BATCH];
    } bin;
    char text[BATCH * TEXT_PER_ID_MAX + 1];
} minter;

static minter *minter_new(int fmt, int kind, idm_gen *g, idm_snowflake *sf, bool owns)
{
    minter *m = xmalloc(sizeof *m);
    memset(m, 0, sizeof *m);
    m->fmt = fmt;
    m->kind = kind;
    m->g = g;
    m->sf = sf;
    m->owns = owns;
    return m;
}

/* A minter with a generator of its own: node is the snowflake node. */
static minter *minter_own(int fmt, int kind, uint32_t flags, const char *state_path, uint64_t node)
{
    if (fmt == F_SNOWFLAKE) {
        return minter_new(fmt, kind, NULL, make_sf(node, state_path, NULL), true);
    }
    return minter_new(fmt, kind, make_gen(flags, state_path, NULL), NULL, true);
}

static void minter_free(minter *m)
{
    if (m == NULL) {
        return;
    }
    if (m->owns) {
        idm_gen_free(m->g);
        idm_snowflake_free(m->sf);
    }
    free(m);
}

static int gen_format_of(int fmt)
{
    switch (fmt) {
    case F_UUIDV4:
        return IDM_FORMAT_UUIDV4;
    case F_UUIDV7:
        return IDM_FORMAT_UUIDV7;
    case F_ULID:
        return IDM_FORMAT_ULID;
    default:
        return IDM_FORMAT_KSUID;
    }
}

static uint64_t fold_bytes(const void *p, size_t len)
{
    uint64_t a = 0;
    uint64_t b = 0;
    memcpy(&a, p, 8);
    memcpy(&b, (const char *)p + len - 8, 8);
    return a ^ b;
}

static int bin_next(minter *m, size_t c, idm_error *err)
{
    switch (m->fmt) {
    case F_UUIDV4:
        return idm_uuidv4_next_n(m->g, m->bin.uuid, c, err);
    case F_UUIDV7:
        return idm_uuidv7_next_n(m->g, m->bin.uuid, c, err);
    case F_ULID:
        return idm_ulid_next_n(m->g, m->bin.ulid, c, err);
    default:
        return idm_ksuid_next_n(m->g, m->bin.ksuid, c, err);
    }
}

/* The text form of the first ID in m->bin (K_TEXT1). */
static int bin_format_first(minter *m, uint64_t *fold)
{
    int rc;
    switch (m->fmt) {
    case F_UUIDV4:
    case F_UUIDV7:
        rc = idm_uuid_format(&m->bin.uuid[0], m->text, sizeof m->text);
        break;
    case F_ULID:
        rc = idm_ulid_format(&m->bin.ulid[0], m->text, sizeof m->text);
        break;
    default:
        rc = idm_ksuid_format(&m->bin.ksuid[0], m->text, sizeof m->text);
        break;
    }
    *fold ^= fold_bytes(m->text, 16);
    return rc;
}

/* Mints c IDs (c <= BATCH; 1 unless the kind is a batch kind). */
static int mint_batch(minter *m, size_t c, uint64_t *fold, idm_error *err)
{
    int rc;
    size_t len = 0;
    switch (m->fmt) {
    case F_UUIDV4:
    case F_UUIDV7:
    case F_ULID:
    case F_KSUID:
        if (m->kind == K_TEXT) {
            rc = idm_gen_next_text_n(m->g, gen_format_of(m->fmt), m->text, sizeof m->text, c, 0,
                                     &len, err);
            *fold ^= fold_bytes(m->text + len - 16, 16);
            return rc;
        }
        rc = bin_next(m, c, err);
        if (rc != IDM_OK) {
            return rc;
        }
        if (m->kind == K_TEXT1) {
            return bin_format_first(m, fold);
        }
        *fold ^= fold_bytes(&m->bin.uuid[0], 16) ^ fold_bytes(&m->bin.uuid[c - 1], 16);
        return IDM_OK;
    case F_SNOWFLAKE:
        if (m->kind == K_TEXT) {
            rc = idm_snowflake_next_text_n(m->sf, m->text, sizeof m->text, c, 0, &len, err);
            *fold ^= fold_bytes(m->text + len - 8, 8);
            return rc;
        }
        rc = idm_snowflake_next_n(m->sf, m->bin.sf, c, NULL, err);
        if (rc != IDM_OK) {
            return rc;
        }
        if (m->kind == K_TEXT1) {
            len = idm_sf_format_decimal(m->bin.sf[0], m->text, sizeof m->text);
            *fold ^= fold_bytes(m->text, len < 8 ? 8 : len);
            return IDM_OK;
        }
        *fold ^= m->bin.sf[c - 1];
        return IDM_OK;
    case F_TYPEID:
        rc = idm_uuidv7_next_n(m->g, m->bin.uuid, c, err);
        for (size_t i = 0; rc == IDM_OK && i < c; i++) {
            rc = idm_typeid_format(TYPEID_PREFIX, sizeof TYPEID_PREFIX - 1, &m->bin.uuid[i],
                                   m->text + i * TYPEID_STRIDE, TYPEID_STRIDE, err);
        }
        *fold ^= fold_bytes(m->text + (c - 1) * TYPEID_STRIDE, 16);
        return rc;
    default: /* F_TOKEN: one per call */
        rc = idm_token_next(m->g, TOKEN_PREFIX, sizeof TOKEN_PREFIX - 1, m->text, sizeof m->text,
                            err);
        *fold ^= fold_bytes(m->text, 16);
        return rc;
    }
}

static uint64_t mint(minter *m, uint64_t n)
{
    bool batched = m->kind == K_BIN || m->kind == K_TEXT;
    uint64_t fold = 0;
    idm_error err;
    while (n > 0) {
        size_t c = batched ? (n < BATCH ? (size_t)n : BATCH) : 1;
        int rc = mint_batch(m, c, &fold, &err);
        if (rc != IDM_OK) {
            die(format_names[m->fmt], rc, &err);
        }
        n -= c;
    }
    return fold;
}

/* --- timing -------------------------------------------------------------- */

/* Snowflake nodes of the generators, so that no two live generators of a
 * run share a node unless they mean to (host-wide ones share theirs). */
enum { NODE_INLINE = 0, NODE_LOCAL = 1, NODE_SHARED = 3, NODE_PROCESS = 4, NODE_CEILING = 5 };

/* Shared (MAP_SHARED) between the parent and the forked children of the
 * process modes: a start line and each child's start and end times. */
typedef struct proc_area {
    atomic_int ready;
    atomic_int go;
    int64_t t0[2];
    int64_t t1[2];
} proc_area;

/* A measurement in progress: the format, the mode, and the minters. */
typedef struct job {
    int fmt;
    const mode_def *mode;
    idm_gen *shared_g;
    idm_snowflake *shared_sf;
    minter *m[2];
    proc_area *area;
} job;

typedef struct worker {
    pthread_t tid;
    minter *m;
    uint64_t n;
    uint64_t fold;
    pthread_barrier_t *start;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(w->start);
    w->fold = mint(w->m, w->n);
    return NULL;
}

/* Wall ns for n IDs split over the mode's threads, timed from their
 * release at a barrier to the last join. */
static double timed_threads(job *j, uint64_t n)
{
    int k = j->mode->workers;
    worker w[2];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)k + 1);
    for (int i = 0; i < k; i++) {
        w[i].m = j->m[i];
        w[i].n = n / (uint64_t)k;
        w[i].start = &start;
        if (pthread_create(&w[i].tid, NULL, worker_main, &w[i]) != 0) {
            fprintf(stderr, "idmint_bench: pthread_create failed\n");
            exit(1);
        }
    }
    int64_t t0 = now_ns();
    pthread_barrier_wait(&start);
    for (int i = 0; i < k; i++) {
        pthread_join(w[i].tid, NULL);
        sink ^= w[i].fold;
    }
    int64_t t1 = now_ns();
    pthread_barrier_destroy(&start);
    return (double)(t1 - t0);
}

/* A child of a process mode: its own generator made after the fork (a
 * snowflake generator refuses to mint in a child of the process that made
 * it), a warm-up, then n IDs between the start line and its end time. */
static void child_main(const job *j, int i, uint64_t n)
{
    const char *path = NULL;
    if (j->mode->share == S_HOSTWIDE) {
        path = j->fmt == F_SNOWFLAKE ? sf_state_path : gen_state_path;
    }
    minter *m = minter_own(j->fmt, j->mode->kind, 0, path, NODE_PROCESS);
    sink ^= mint(m, 1000);
    proc_area *a = j->area;
    atomic_fetch_add(&a->ready, 1);
    while (atomic_load(&a->go) == 0) {
        sched_yield();
    }
    a->t0[i] = now_ns();
    sink ^= mint(m, n);
    a->t1[i] = now_ns();
    minter_free(m);
    _exit(0);
}

/* Wall ns for n IDs split over the mode's processes: from the earliest
 * child's start to the latest child's end. */
static double timed_procs(job *j, uint64_t n)
{
    int k = j->mode->workers;
    proc_area *a = j->area;
    atomic_store(&a->ready, 0);
    atomic_store(&a->go, 0);
    pid_t pid[2];
    fflush(NULL);
    for (int i = 0; i < k; i++) {
        pid[i] = fork();
        if (pid[i] < 0) {
            perror("idmint_bench: fork");
            exit(1);
        }
        if (pid[i] == 0) {
            child_main(j, i, n / (uint64_t)k);
        }
    }
    bool failed = false;
    int alive = k;
    while (atomic_load(&a->ready) < k && !failed) {
        /* A child that died before the start line would never be ready. */
        for (int i = 0; i < k; i++) {
            int status;
            if (pid[i] > 0 && waitpid(pid[i], &status, WNOHANG) == pid[i]) {
                pid[i] = 0;
                alive--;
                failed = true;
            }
        }
        sched_yield();
    }
    atomic_store(&a->go, 1);
    for (int i = 0; i < k; i++) {
        if (pid[i] <= 0) {
            continue;
        }
        int status = 0;
        while (waitpid(pid[i], &status, 0) < 0) {
            if (errno != EINTR) {
                perror("idmint_bench: waitpid");
                exit(1);
            }
        }
        alive--;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            failed = true;
        }
    }
    if (failed || alive != 0) {
        fprintf(stderr, "idmint_bench: %s %s: a child process failed\n", format_names[j->fmt],
                j->mode->name);
        exit(1);
    }
    int64_t t0 = a->t0[0];
    int64_t t1 = a->t1[0];
    for (int i = 1; i < k; i++) {
        t0 = a->t0[i] < t0 ? a->t0[i] : t0;
        t1 = a->t1[i] > t1 ? a->t1[i] : t1;
    }
    return (double)(t1 - t0);
}

static double timed(job *j, uint64_t n)
{
    switch (j->mode->share) {
    case S_INLINE: {
        int64_t t0 = now_ns();
        sink ^= mint(j->m[0], n);
        return (double)(now_ns() - t0);
    }
    case S_SHARED:
    case S_LOCAL:
        return timed_threads(j, n);
    default:
        return timed_procs(j, n);
    }
}

static void job_open(job *j, int fmt, const mode_def *md)
{
    memset(j, 0, sizeof *j);
    j->fmt = fmt;
    j->mode = md;
    switch (md->share) {
    case S_INLINE:
        j->m[0] = minter_own(fmt, md->kind, 0, NULL, NODE_INLINE);
        break;
    case S_SHARED:
        if (fmt == F_SNOWFLAKE) {
            j->shared_sf = make_sf(NODE_SHARED, NULL, NULL);
        } else {
            j->shared_g = make_gen(0, NULL, NULL);
        }
        for (int i = 0; i < md->workers; i++) {
            j->m[i] = minter_new(fmt, md->kind, j->shared_g, j->shared_sf, false);
        }
        break;
    case S_LOCAL:
        /* Snowflake threads cannot share a node without shared state, so a
         * thread-local snowflake generator has a node of its own. */
        for (int i = 0; i < md->workers; i++) {
            j->m[i] = minter_own(fmt, md->kind, IDM_GEN_UNSHARED, NULL, NODE_LOCAL + (uint64_t)i);
        }
        break;
    default:
        j->area =
            mmap(NULL, sizeof *j->area, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (j->area == MAP_FAILED) {
            perror("idmint_bench: mmap");
            exit(1);
        }
        break;
    }
}

static void job_close(job *j)
{
    for (int i = 0; i < 2; i++) {
        minter_free(j->m[i]);
    }
    idm_gen_free(j->shared_g);
    idm_snowflake_free(j->shared_sf);
    if (j->area != NULL) {
        munmap(j->area, sizeof *j->area);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (x > y) - (x < y);
}

static struct {
    double run_ms;
    int runs;
    double ceiling_ms;
    const char *only_format;
    const char *only_mode;
} opt = {200, 5, 1000, NULL, NULL};

/* Median wall ns per ID over opt.runs runs of about opt.run_ms each; the
 * calibration (doubling the count until a run takes a quarter of that) is
 * the warm-up. */
static double measure(job *j)
{
    uint64_t k = (uint64_t)j->mode->workers;
    double target = opt.run_ms * 1e6;
    uint64_t n = 256 * k;
    for (;;) {
        double ns = timed(j, n);
        if (ns >= target / 4 || n >= (1ULL << 34)) {
            double scaled = (double)n * target / (ns < 1 ? 1 : ns);
            n = scaled < 16.0 * (double)k ? 16 * k : (uint64_t)scaled;
            break;
        }
        n *= 2;
    }
    n -= n % k;
    double v[64];
    int runs = opt.runs > 64 ? 64 : opt.runs;
    for (int i = 0; i < runs; i++) {
        v[i] = timed(j, n) / (double)n;
    }
    qsort(v, (size_t)runs, sizeof v[0], cmp_double);
    return v[runs / 2];
}

/* --- the snowflake ceiling ----------------------------------------------- */

#define SF_PER_MS 4096 /* twitter: 12 sequence bits per 1 ms unit */

/* Mints for opt.ceiling_ms on one twitter generator, then decodes every ID:
 * returns 0, or 1 when a millisecond got more than 4,096 IDs or an ID was
 * not above the one before it. */
static int run_ceiling(void)
{
    idm_snowflake *sf = make_sf(NODE_CEILING, NULL, NULL);
    idm_error err;
    uint64_t warm[BATCH];
    for (int i = 0; i < 40; i++) { /* about 2.5 ms at the ceiling */
        int rc = idm_snowflake_next_n(sf, warm, BATCH, NULL, &err);
        if (rc != IDM_OK) {
            die("snowflake ceiling", rc, &err);
        }
    }
    /* Room for 1.5 times the ceiling: a generator over it fills the array
     * early and the check below reports it. */
    size_t cap = (size_t)(opt.ceiling_ms * SF_PER_MS * 1.5) + 4 * BATCH;
    cap -= cap % BATCH;
    uint64_t *ids = xmalloc(cap * sizeof *ids);
    size_t count = 0;
    int64_t t0 = now_ns();
    int64_t deadline = t0 + (int64_t)(opt.ceiling_ms * 1e6);
    int64_t t1 = t0;
    while (count + BATCH <= cap) {
        int rc = idm_snowflake_next_n(sf, ids + count, BATCH, NULL, &err);
        if (rc != IDM_OK) {
            die("snowflake ceiling", rc, &err);
        }
        count += BATCH;
        t1 = now_ns();
        if (t1 >= deadline) {
            break;
        }
    }
    double ns = (double)(t1 - t0) / (double)count;
    report(F_SNOWFLAKE, "ceiling", 1, ns);

    const idm_sf_layout *layout = idm_snowflake_layout(sf);
    uint64_t max_per_unit = 0;
    uint64_t run = 0;
    uint64_t unit = 0;
    int bad_order = 0;
    for (size_t i = 0; i < count; i++) {
        idm_sf_parts p;
        int rc = idm_sf_decode(layout, ids[i], &p, &err);
        if (rc != IDM_OK) {
            die("snowflake decode", rc, &err);
        }
        if (i > 0 && ids[i] <= ids[i - 1]) {
            bad_order++;
        }
        if (i == 0 || p.time_units != unit) {
            unit = p.time_units;
            run = 0;
        }
        run++;
        max_per_unit = run > max_per_unit ? run : max_per_unit;
    }
    printf("CHECK snowflake max_per_ms %llu\n", (unsigned long long)max_per_unit);
    printf("CHECK snowflake out_of_order %d\n", bad_order);
    fflush(stdout);
    double per_s = 1e9 / ns;
    fprintf(stderr,
            "idmint_bench: snowflake ceiling: %zu IDs in %.1f ms, %.0f IDs/s = %.2f%% of "
            "4,096,000; at most %llu in one ms\n",
            count, (double)(t1 - t0) / 1e6, per_s, per_s / (SF_PER_MS * 1000.0) * 100,
            (unsigned long long)max_per_unit);
    free(ids);
    idm_snowflake_free(sf);
    if (max_per_unit > SF_PER_MS || bad_order != 0) {
        fprintf(stderr, "idmint_bench: snowflake CHECK FAILED\n");
        return 1;
    }
    return 0;
}

/* --- memory ---------------------------------------------------------------- */

/* A counting allocator: live and peak bytes requested, headers excluded.
 * The block starts hdr = max(align, HDR) bytes before the pointer handed
 * out, so that pointer keeps the requested alignment; the size and hdr sit
 * in the HDR bytes just below it. */
typedef struct counter {
    size_t live;
    size_t peak;
} counter;

enum { HDR = 2 * sizeof(size_t) };

static void *count_alloc(void *ctx, size_t size, size_t align)
{
    counter *c = ctx;
    size_t hdr = align > HDR ? align : HDR;
    if (size > SIZE_MAX - hdr) {
        return NULL;
    }
    void *base = NULL;
    if (posix_memalign(&base, hdr, hdr + size) != 0) {
        return NULL;
    }
    unsigned char *p = (unsigned char *)base + hdr;
    memcpy(p - HDR, &size, sizeof size);
    memcpy(p - HDR + sizeof size, &hdr, sizeof hdr);
    c->live += size;
    c->peak = c->live > c->peak ? c->live : c->peak;
    return p;
}

static void count_free(void *ctx, void *ptr)
{
    counter *c = ctx;
    if (ptr == NULL) {
        return;
    }
    unsigned char *p = ptr;
    size_t size;
    size_t hdr;
    memcpy(&size, p - HDR, sizeof size);
    memcpy(&hdr, p - HDR + sizeof size, sizeof hdr);
    c->live -= size;
    free(p - hdr);
}

static void mem_line(const char *what, size_t bytes)
{
    printf("MEM idmint %s %zu\n", what, bytes);
}

static size_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

/* Bytes a generator holds after minting every format once (so lazily
 * allocated state, if any, is counted). */
static size_t gen_bytes(uint32_t flags, const char *state_path)
{
    counter c = {0, 0};
    idm_allocator a = {count_alloc, count_free, &c};
    idm_gen *g = make_gen(flags, state_path, &a);
    for (int f = F_UUIDV4; f <= F_TOKEN; f++) {
        if (f == F_SNOWFLAKE) {
            continue;
        }
        minter *m = minter_new(f, K_TEXT1, g, NULL, false);
        sink ^= mint(m, 1);
        minter_free(m);
    }
    size_t live = c.live;
    idm_gen_free(g);
    if (c.live != 0) {
        fprintf(stderr, "idmint_bench: idm_gen_free left %zu bytes allocated\n", c.live);
    }
    return live;
}

static size_t sf_bytes(const char *state_path)
{
    counter c = {0, 0};
    idm_allocator a = {count_alloc, count_free, &c};
    idm_snowflake *sf = make_sf(NODE_PROCESS, state_path, &a);
    minter *m = minter_new(F_SNOWFLAKE, K_TEXT1, NULL, sf, false);
    sink ^= mint(m, 1);
    minter_free(m);
    size_t live = c.live;
    idm_snowflake_free(sf);
    if (c.live != 0) {
        fprintf(stderr, "idmint_bench: idm_snowflake_free left %zu bytes allocated\n", c.live);
    }
    return live;
}

static void run_mem(void)
{
    mem_line("gen", gen_bytes(0, NULL));
    mem_line("gen_unshared", gen_bytes(IDM_GEN_UNSHARED, NULL));
    mem_line("gen_hostwide", gen_bytes(0, gen_state_path));
    mem_line("gen_state_file", file_size(gen_state_path));
    mem_line("snowflake", sf_bytes(NULL));
    mem_line("snowflake_hostwide", sf_bytes(sf_state_path));
    mem_line("snowflake_state_file", file_size(sf_state_path));
    fflush(stdout);
}

/* --- callgrind ------------------------------------------------------------- */

/* The function bench/callgrind.sh collects (--toggle-collect): everything
 * it and its callees execute is charged to minting. noipa keeps GCC from
 * cloning or inlining it under another name. */
#if defined(__GNUC__) && !defined(__clang__)
#define HOT_ATTR __attribute__((noipa))
#else
#define HOT_ATTR __attribute__((noinline))
#endif
HOT_ATTR uint64_t callgrind_hot(minter *m, uint64_t n);
HOT_ATTR uint64_t callgrind_hot(minter *m, uint64_t n)
{
    return m == NULL || n == 0 ? 0 : mint(m, n);
}

static int find_format(const char *name)
{
    for (int f = 0; f < F_COUNT; f++) {
        if (strcmp(format_names[f], name) == 0) {
            return f;
        }
    }
    return -1;
}

static const mode_def *find_mode(const char *name)
{
    for (int i = 0; i < MODE_COUNT; i++) {
        if (strcmp(modes[i].name, name) == 0) {
            return &modes[i];
        }
    }
    return NULL;
}

static uint64_t parse_u64(const char *s, const char *what)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || s[0] == '-') {
        fprintf(stderr, "idmint_bench: bad %s '%s'\n", what, s);
        exit(2);
    }
    return (uint64_t)v;
}

static double parse_pos(const char *s, const char *what)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v > 0)) {
        fprintf(stderr, "idmint_bench: bad %s '%s'\n", what, s);
        exit(2);
    }
    return v;
}

/* --callgrind FORMAT MODE N: MODE is binary, binary1, text or text1. */
static int run_callgrind(const char *fname, const char *mname, const char *count)
{
    int fmt = find_format(fname);
    const mode_def *md = find_mode(mname);
    if (fmt < 0 || md == NULL || md->share != S_INLINE || !mode_applies(fmt, md)) {
        fprintf(stderr, "idmint_bench: --callgrind FORMAT binary|binary1|text|text1 N\n");
        return 2;
    }
    uint64_t n = parse_u64(count, "count");
    minter *m = minter_own(fmt, md->kind, 0, NULL, NODE_INLINE);
    sink ^= mint(m, 10000); /* pools filled, OpenSSL initialised */
    sink ^= callgrind_hot(m, n);
    minter_free(m);
    return 0;
}

/* --- main ------------------------------------------------------------------ */

static void usage(void)
{
    fprintf(stderr, "usage: idmint_bench [--quick] [--run-ms MS] [--runs R] [--ceiling-ms MS]\n"
                    "                    [--only FORMAT] [--mode MODE]\n"
                    "       idmint_bench --mem\n"
                    "       idmint_bench --callgrind FORMAT MODE N\n");
    exit(2);
}

static const int format_order[] = {F_UUIDV7,    F_UUIDV4, F_ULID, F_KSUID,
                                   F_SNOWFLAKE, F_TYPEID, F_TOKEN};

int main(int argc, char **argv)
{
    parent_pid = getpid();
    bool mem_only = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (strcmp(a, "--quick") == 0) {
            opt.run_ms = 2;
            opt.runs = 1;
            opt.ceiling_ms = 50;
        } else if (strcmp(a, "--mem") == 0) {
            mem_only = true;
        } else if (strcmp(a, "--callgrind") == 0 && i + 3 < argc) {
            return run_callgrind(argv[i + 1], argv[i + 2], argv[i + 3]);
        } else if (strcmp(a, "--run-ms") == 0 && has_val) {
            opt.run_ms = parse_pos(argv[++i], "--run-ms");
        } else if (strcmp(a, "--runs") == 0 && has_val) {
            opt.runs = (int)parse_pos(argv[++i], "--runs");
        } else if (strcmp(a, "--ceiling-ms") == 0 && has_val) {
            opt.ceiling_ms = parse_pos(argv[++i], "--ceiling-ms");
        } else if (strcmp(a, "--only") == 0 && has_val) {
            opt.only_format = argv[++i];
            if (find_format(opt.only_format) < 0) {
                usage();
            }
        } else if (strcmp(a, "--mode") == 0 && has_val) {
            opt.only_mode = argv[++i];
            if (find_mode(opt.only_mode) == NULL && strcmp(opt.only_mode, "ceiling") != 0) {
                usage();
            }
        } else {
            usage();
        }
    }
    init_state_paths();
    if (mem_only) {
        run_mem();
        return 0;
    }
    int status = 0;
    int64_t start = now_ns();
    for (size_t fi = 0; fi < sizeof format_order / sizeof format_order[0]; fi++) {
        int fmt = format_order[fi];
        if (opt.only_format != NULL && strcmp(opt.only_format, format_names[fmt]) != 0) {
            continue;
        }
        for (int mi = 0; mi < MODE_COUNT; mi++) {
            const mode_def *md = &modes[mi];
            if (!mode_applies(fmt, md) ||
                (opt.only_mode != NULL && strcmp(opt.only_mode, md->name) != 0)) {
                continue;
            }
            job j;
            job_open(&j, fmt, md);
            double ns = measure(&j);
            job_close(&j);
            int threads = md->share == S_INLINE ? 1 : md->workers;
            report(fmt, md->name, threads, ns);
            fprintf(stderr, "idmint_bench: %-9s %-9s %d: %9.2f ns/ID %14.0f IDs/s\n",
                    format_names[fmt], md->name, threads, ns, 1e9 / ns);
        }
        if (fmt == F_SNOWFLAKE &&
            (opt.only_mode == NULL || strcmp(opt.only_mode, "ceiling") == 0)) {
            status |= run_ceiling();
        }
    }
    if (opt.only_format == NULL && opt.only_mode == NULL) {
        run_mem();
    }
    fprintf(stderr, "idmint_bench: done in %.1f s (sink %llx)\n", (double)(now_ns() - start) / 1e9,
            (unsigned long long)sink);
    return status;
}
