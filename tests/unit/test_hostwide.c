/*
 * test_hostwide.c - host-wide generators (a state file shared by every
 * process that opens it) and the lock-free paths: 4 processes x 4 threads
 * minting through one state file while processes are killed with SIGKILL
 * at random moments and replaced; the union must be duplicate-free and
 * every thread's sequence strictly increasing. Also: foreign or damaged
 * state files are refused or repaired, unshared (thread-local) generators,
 * and bulk calls equal to single calls.
 */
#include "fakeclock.h"
#include "internal.h"
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define T2026_MS INT64_C(1795000000000)

static char tmpdir[200];

static const char *tmp_path(const char *name)
{
    static char path[300];
    if (tmpdir[0] == '\0') {
        snprintf(tmpdir, sizeof tmpdir, "%s/idm-hostwide-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (mkdtemp(tmpdir) == NULL) {
            perror("mkdtemp");
            exit(2);
        }
    }
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

static int cmp16(const void *a, const void *b)
{
    return memcmp(a, b, 16);
}

/* ---- foreign and damaged state files -------------------------------------- */

static int new_sf(idm_snowflake **g, const char *path, const char *layout, uint64_t node, idm_error *err)
{
    idm_snowflake_config cfg;
    idm_snowflake_config_init(&cfg);
    int rc = idm_sf_layout_parse(&cfg.layout, layout, strlen(layout), err);
    if (rc != IDM_OK)
        return rc;
    cfg.node = node;
    cfg.gen.state_path = path;
    return idm_snowflake_new(g, &cfg, err);
}

static void test_statefile_refuses_another_layout_node_or_kind(void)
{
    const char *path = tmp_path("sf-refuse");
    unlink(path);
    idm_snowflake *a = NULL, *b = NULL;
    idm_error err = {0};
    ASSERT_OK(new_sf(&a, path, "twitter", 1, &err), &err);
    /* The same layout given as its spec shares the file. */
    ASSERT_OK(new_sf(&b, path, "time=41,node=10,seq=12,unit=1ms,epoch=1288834974657", 1, &err), &err);
    idm_snowflake_free(b);
    ASSERT_EQ_INT(new_sf(&b, path, "discord", 1, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "holds snowflake state for layout time=41,node=10,seq=12") != NULL);
    ASSERT_TRUE(strstr(err.msg, "needs snowflake state for layout time=42") != NULL);
    ASSERT_EQ_INT(new_sf(&b, path, "twitter", 2, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "for node 1, not node 2") != NULL);
    idm_gen *g = NULL;
    idm_gen_config cfg = {0};
    cfg.state_path = path;
    ASSERT_EQ_INT(idm_gen_new(&g, &cfg, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "UUIDv7/ULID/KSUID") != NULL);
    ASSERT_TRUE(g == NULL);
    idm_snowflake_free(a);
    unlink(path);
}

/* Creates a generator state file at path, then overwrites len bytes of it
 * at offset. Returns 0, or -1 when any step fails. */
static int make_state_and_patch(const char *path, const void *bytes, size_t len, off_t offset)
{
    unlink(path);
    idm_gen *g = NULL;
    idm_gen_config cfg = {0};
    cfg.state_path = path;
    if (idm_gen_new(&g, &cfg, NULL) != IDM_OK)
        return -1;
    idm_gen_free(g);
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return -1;
    ssize_t w = pwrite(fd, bytes, len, offset);
    close(fd);
    return w == (ssize_t)len ? 0 : -1;
}

static void test_statefile_refuses_other_versions_and_garbage(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s", tmp_path("gen-version"));
    idm_gen *g = NULL;
    idm_gen_config cfg = {0};
    cfg.state_path = path;
    idm_error err = {0};
    uint32_t v = 99; /* the version field: bytes 8-11 */
    ASSERT_EQ_INT(make_state_and_patch(path, &v, sizeof v, 8), 0);
    ASSERT_EQ_INT(idm_gen_new(&g, &cfg, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "version 99") != NULL);
    /* Not a state file at all. */
    const char *junk = tmp_path("junk");
    int fd = open(junk, O_RDWR | O_CREAT | O_TRUNC, 0600);
    ASSERT_TRUE(fd >= 0);
    ASSERT_EQ_INT(write(fd, "hello, world\n", 13), 13);
    close(fd);
    cfg.state_path = junk;
    ASSERT_EQ_INT(idm_gen_new(&g, &cfg, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "not an idmint state file") != NULL);
    /* A directory, and a path that cannot be created. */
    cfg.state_path = tmpdir;
    ASSERT_EQ_INT(idm_gen_new(&g, &cfg, &err), IDM_ESTATE);
    cfg.state_path = "/nonexistent-dir/state";
    ASSERT_EQ_INT(idm_gen_new(&g, &cfg, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "/nonexistent-dir/state") != NULL);
    /* Unshared generators cannot be host-wide. */
    cfg.state_path = path;
    cfg.flags = IDM_GEN_UNSHARED;
    ASSERT_EQ_INT(idm_gen_new(&g, &cfg, &err), IDM_EINVAL);
    unlink(path);
    unlink(junk);
}

static void test_statefile_half_made_is_repaired(void)
{
    /* A creator killed before writing the magic leaves zeros: the next
     * opener initialises the file. */
    const char *path = tmp_path("half");
    idm_gen *g = NULL;
    idm_gen_config cfg = {0};
    cfg.state_path = path;
    idm_error err = {0};
    ASSERT_EQ_INT(make_state_and_patch(path, "\0\0\0\0\0\0\0\0", 8, 0), 0);
    ASSERT_OK(idm_gen_new(&g, &cfg, &err), &err);
    idm_uuid u;
    ASSERT_OK(idm_uuidv7_next_n(g, &u, 1, &err), &err);
    idm_gen_free(g);
    unlink(path);
}

static void test_hostwide_two_generators_one_sequence(void)
{
    /* Two generators on one file in one process behave like one. */
    const char *path = tmp_path("two");
    unlink(path);
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T2026_MS);
    idm_gen_config cfg = {0};
    cfg.clock = fake_clock_as_clock(&c);
    cfg.state_path = path;
    idm_gen *a = NULL, *b = NULL;
    idm_error err = {0};
    ASSERT_OK(idm_gen_new(&a, &cfg, &err), &err);
    ASSERT_OK(idm_gen_new(&b, &cfg, &err), &err);
    idm_ulid la, lb;
    idm_uuid ua, ub;
    ASSERT_OK(idm_ulid_next_n(a, &la, 1, &err), &err);
    ASSERT_OK(idm_ulid_next_n(b, &lb, 1, &err), &err);
    ASSERT_OK(idm_uuidv7_next_n(a, &ua, 1, &err), &err);
    ASSERT_OK(idm_uuidv7_next_n(b, &ub, 1, &err), &err);
    ASSERT_TRUE(memcmp(&la, &lb, 16) < 0);
    uint8_t want[16];
    memcpy(want, la.bytes, 16);
    idm__increment_be(want, 16);
    ASSERT_EQ_MEM(lb.bytes, want, 16); /* b continued a's ULID sequence */
    ASSERT_TRUE(memcmp(&ua, &ub, 16) < 0);
    idm_gen_free(a);
    idm_gen_free(b);
    unlink(path);
}

/* ---- the kill -9 soak ------------------------------------------------------ */

enum { PROCS = 4, THREADS = 4, PER_THREAD = 20000, BATCH = 7, KINDS = 4 };

/* One record per ID: kind, process slot, thread, 20 bytes of ID. Written
 * with one write() per batch; a killed writer may leave a torn last record,
 * which the reader drops. */
struct rec {
    uint8_t kind, slot, thread, pad;
    uint8_t id[20];
};

struct worker {
    idm_gen *g;
    idm_snowflake *sf;
    int fd;
    int slot, thread;
};

static void *worker_main(void *p)
{
    struct worker *w = p;
    struct rec recs[BATCH];
    for (int i = 0; i < PER_THREAD; i += BATCH) {
        for (int kind = 0; kind < KINDS; kind++) {
            union {
                idm_uuid u[BATCH];
                idm_ulid l[BATCH];
                idm_ksuid k[BATCH];
                uint64_t s[BATCH];
            } ids;
            int rc;
            size_t done = 0;
            idm_error err = {0};
            if (kind == 0)
                rc = idm_uuidv7_next_n(w->g, ids.u, BATCH, &err);
            else if (kind == 1)
                rc = idm_ulid_next_n(w->g, ids.l, BATCH, &err);
            else if (kind == 2)
                rc = idm_ksuid_next_n(w->g, ids.k, BATCH, &err);
            else
                rc = idm_snowflake_next_n(w->sf, ids.s, BATCH, &done, &err);
            if (rc != IDM_OK) {
                fprintf(stderr, "child %d thread %d kind %d: %s\n", w->slot, w->thread, kind, err.msg);
                _exit(3);
            }
            for (int j = 0; j < BATCH; j++) {
                memset(&recs[j], 0, sizeof recs[j]);
                recs[j].kind = (uint8_t)kind;
                recs[j].slot = (uint8_t)w->slot;
                recs[j].thread = (uint8_t)w->thread;
                if (kind == 0)
                    memcpy(recs[j].id, ids.u[j].bytes, 16);
                else if (kind == 1)
                    memcpy(recs[j].id, ids.l[j].bytes, 16);
                else if (kind == 2)
                    memcpy(recs[j].id, ids.k[j].bytes, 20);
                else
                    for (int b = 0; b < 8; b++)
                        recs[j].id[b] = (uint8_t)(ids.s[j] >> (56 - 8 * b));
            }
            if (write(w->fd, recs, sizeof recs) != (ssize_t)sizeof recs)
                _exit(4);
        }
    }
    return NULL;
}

static void child_main(const char *gen_path, const char *sf_path, const char *out_path, int slot)
{
    idm_gen_config cfg = {0};
    cfg.state_path = gen_path;
    idm_gen *g = NULL;
    idm_snowflake *sf = NULL;
    if (idm_gen_new(&g, &cfg, NULL) != IDM_OK || new_sf(&sf, sf_path, "twitter", 5, NULL) != IDM_OK)
        _exit(2);
    pthread_t t[THREADS];
    struct worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        char path[700];
        snprintf(path, sizeof path, "%s.%d", out_path, i);
        w[i] = (struct worker){g, sf, open(path, O_WRONLY | O_CREAT | O_APPEND, 0600), slot, i};
        if (w[i].fd < 0)
            _exit(2);
        pthread_create(&t[i], NULL, worker_main, &w[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    _exit(0);
}

static int cmp_rec(const void *a, const void *b)
{
    const struct rec *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind - y->kind;
    return memcmp(x->id, y->id, 20);
}

static void test_hostwide_processes_threads_and_kill9(void)
{
    const char *p = tmp_path("soak-gen");
    char gen_path[300], sf_path[310];
    snprintf(gen_path, sizeof gen_path, "%s", p);
    snprintf(sf_path, sizeof sf_path, "%s-sf", gen_path);
    unlink(gen_path);
    unlink(sf_path);
    srand((unsigned)time(NULL));

    /* Generation 0: PROCS children, some killed at random moments; then
     * generation 1: PROCS replacements run to completion on the same file. */
    int runs = 0, killed = 0;
    for (int gen = 0; gen < 2; gen++) {
        pid_t pids[PROCS];
        for (int s = 0; s < PROCS; s++) {
            char out[600];
            snprintf(out, sizeof out, "%s/out-%d-%d", tmpdir, gen, s);
            pids[s] = fork();
            ASSERT_TRUE(pids[s] >= 0);
            if (pids[s] == 0)
                child_main(gen_path, sf_path, out, gen * PROCS + s);
            runs++;
        }
        if (gen == 0) {
            for (int s = 0; s < PROCS; s += 2) {
                struct timespec ts = {0, (long)(rand() % 40 + 5) * 1000000L};
                nanosleep(&ts, NULL);
                if (kill(pids[s], SIGKILL) == 0)
                    killed++;
            }
        }
        for (int s = 0; s < PROCS; s++) {
            int status = 0;
            waitpid(pids[s], &status, 0);
            if (WIFEXITED(status))
                ASSERT_EQ_INT(WEXITSTATUS(status), 0);
            else
                ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        }
    }
    ASSERT_EQ_INT(runs, 2 * PROCS);
    ASSERT_TRUE(killed > 0);

    /* Read everything back; check per-thread order, then global uniqueness. */
    size_t cap = (size_t)2 * PROCS * THREADS * (PER_THREAD + BATCH) * KINDS, n = 0;
    struct rec *all = malloc(cap * sizeof *all);
    ASSERT_TRUE(all != NULL);
    size_t disorder = 0;
    for (int gen = 0; gen < 2; gen++) {
        for (int s = 0; s < PROCS; s++) {
            for (int t = 0; t < THREADS; t++) {
                char path[600];
                snprintf(path, sizeof path, "%s/out-%d-%d.%d", tmpdir, gen, s, t);
                int fd = open(path, O_RDONLY);
                if (fd < 0)
                    continue; /* killed before the thread opened it */
                struct rec last[KINDS];
                bool have[KINDS] = {false};
                struct rec r;
                while (n < cap && read(fd, &r, sizeof r) == (ssize_t)sizeof r) {
                    if (r.kind >= KINDS)
                        break;
                    if (have[r.kind] && memcmp(last[r.kind].id, r.id, 20) >= 0) {
                        if (disorder++ < 5)
                            fprintf(stderr, "  disorder in kind %d (%s)\n", r.kind, path);
                    }
                    last[r.kind] = r;
                    have[r.kind] = true;
                    all[n++] = r;
                }
                close(fd);
                unlink(path);
            }
        }
    }
    qsort(all, n, sizeof *all, cmp_rec);
    size_t dup = 0;
    for (size_t i = 1; i < n; i++)
        dup += cmp_rec(&all[i - 1], &all[i]) == 0;
    free(all);
    unlink(gen_path);
    unlink(sf_path);
    printf("  %zu IDs from %d processes (%d killed), %d threads each\n", n, runs, killed, THREADS);
    ASSERT_EQ_INT(disorder, 0);
    ASSERT_EQ_INT(dup, 0);
    /* The survivors alone minted PROCS * THREADS * PER_THREAD per kind. */
    ASSERT_TRUE(n >= (size_t)PROCS * THREADS * PER_THREAD * KINDS);
}

/* Threads of one process, each with its own generator (its own mapping) on
 * one state file: the TSan build runs this (TSan's 128-bit atomics are
 * only atomic within a process, so it cannot judge the multi-process soak). */
struct mapped_arg {
    const char *path;
    idm_ulid out[20000];
    int rc;
};

static void *mapped_main(void *p)
{
    struct mapped_arg *a = p;
    idm_gen_config cfg = {0};
    cfg.state_path = a->path;
    idm_gen *g = NULL;
    a->rc = idm_gen_new(&g, &cfg, NULL);
    for (size_t i = 0; i < 20000 && a->rc == IDM_OK; i += 10)
        a->rc = idm_ulid_next_n(g, a->out + i, 10, NULL);
    idm_gen_free(g);
    return NULL;
}

static void test_hostwide_threads_own_mappings(void)
{
    enum { T = 4, N = 20000 };
    const char *path = tmp_path("mapped");
    unlink(path);
    static struct mapped_arg a[T];
    pthread_t t[T];
    for (int i = 0; i < T; i++) {
        a[i].path = path;
        pthread_create(&t[i], NULL, mapped_main, &a[i]);
    }
    for (int i = 0; i < T; i++)
        pthread_join(t[i], NULL);
    static idm_ulid all[T * N];
    size_t disorder = 0, dup = 0;
    for (int i = 0; i < T; i++) {
        ASSERT_EQ_INT(a[i].rc, IDM_OK);
        for (size_t j = 1; j < N; j++)
            disorder += memcmp(&a[i].out[j - 1], &a[i].out[j], 16) >= 0;
        memcpy(all + (size_t)i * N, a[i].out, sizeof a[i].out);
    }
    qsort(all, (size_t)T * N, 16, cmp16);
    for (size_t j = 1; j < (size_t)T * N; j++)
        dup += memcmp(&all[j - 1], &all[j], 16) == 0;
    unlink(path);
    ASSERT_EQ_INT(disorder, 0);
    ASSERT_EQ_INT(dup, 0);
}

/* ---- unshared (thread-local) generators ----------------------------------- */

struct local_arg {
    idm_uuid *out;
    size_t n;
    int rc;
};

static void *local_main(void *p)
{
    struct local_arg *a = p;
    idm_gen_config cfg = {0};
    cfg.flags = IDM_GEN_UNSHARED;
    idm_gen *g = NULL;
    a->rc = idm_gen_new(&g, &cfg, NULL);
    for (size_t i = 0; i < a->n && a->rc == IDM_OK; i += 100)
        a->rc = idm_uuidv7_next_n(g, a->out + i, 100, NULL);
    idm_gen_free(g);
    return NULL;
}

static void test_unshared_generators_per_thread_unique(void)
{
    enum { T = 4, N = 200000 };
    idm_uuid *all = malloc((size_t)T * N * sizeof *all);
    pthread_t t[T];
    struct local_arg a[T];
    for (int i = 0; i < T; i++) {
        a[i] = (struct local_arg){all + (size_t)i * N, N, IDM_OK};
        pthread_create(&t[i], NULL, local_main, &a[i]);
    }
    for (int i = 0; i < T; i++)
        pthread_join(t[i], NULL);
    size_t disorder = 0, dup = 0;
    for (int i = 0; i < T; i++) {
        ASSERT_EQ_INT(a[i].rc, IDM_OK);
        for (size_t j = 1; j < N; j++)
            disorder += memcmp(&a[i].out[j - 1], &a[i].out[j], 16) >= 0;
    }
    qsort(all, (size_t)T * N, 16, cmp16);
    for (size_t j = 1; j < (size_t)T * N; j++)
        dup += memcmp(&all[j - 1], &all[j], 16) == 0;
    free(all);
    ASSERT_EQ_INT(disorder, 0);
    ASSERT_EQ_INT(dup, 0);
}

/* ---- bulk calls equal single calls ----------------------------------------- */

static idm_gen *det_gen(struct fake_clock *c, struct fake_entropy *e)
{
    idm_gen_config cfg = {0};
    cfg.clock = fake_clock_as_clock(c);
    cfg.entropy = fake_entropy_as_entropy(e);
    idm_gen *g = NULL;
    if (idm_gen_new(&g, &cfg, NULL) != IDM_OK)
        exit(2);
    return g;
}

static void test_bulk_equals_singles(void)
{
    enum { N = 300 };
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T2026_MS);
    struct fake_entropy e1 = {0}, e2 = {0};
    idm_gen *bulk = det_gen(&c, &e1), *single = det_gen(&c, &e2);
    idm_error err = {0};
    static idm_uuid ub[N], us[N];
    static idm_ulid lb[N], ls[N];
    static idm_ksuid kb[N], ks[N];
    /* UUIDv4 and ULID use the same random bytes either way: identical. */
    ASSERT_OK(idm_uuidv4_next_n(bulk, ub, N, &err), &err);
    for (int i = 0; i < N; i++)
        ASSERT_OK(idm_uuidv4_next_n(single, &us[i], 1, &err), &err);
    ASSERT_EQ_MEM(ub, us, sizeof ub);
    ASSERT_OK(idm_ulid_next_n(bulk, lb, N, &err), &err);
    for (int i = 0; i < N; i++)
        ASSERT_OK(idm_ulid_next_n(single, &ls[i], 1, &err), &err);
    ASSERT_EQ_MEM(lb, ls, sizeof lb);
    for (int i = 1; i < N; i++)
        ASSERT_TRUE(memcmp(&lb[i - 1], &lb[i], 16) < 0);
    /* UUIDv7 and KSUID draw per-ID random bits in another order; all the
     * rest (time, counter, the counting part) is identical. */
    struct fake_entropy e3 = {0}, e4 = {0};
    idm_gen *b2 = det_gen(&c, &e3), *s2 = det_gen(&c, &e4);
    ASSERT_OK(idm_uuidv7_next_n(b2, ub, N, &err), &err);
    for (int i = 0; i < N; i++)
        ASSERT_OK(idm_uuidv7_next_n(s2, &us[i], 1, &err), &err);
    for (int i = 0; i < N; i++) {
        ASSERT_EQ_MEM(ub[i].bytes, us[i].bytes, 8);        /* ms, version, counter */
        ASSERT_EQ_INT(ub[i].bytes[8] & 0xFC, us[i].bytes[8] & 0xFC); /* variant, counter */
    }
    struct fake_entropy e5 = {0}, e6 = {0};
    idm_gen *b3 = det_gen(&c, &e5), *s3 = det_gen(&c, &e6);
    ASSERT_OK(idm_ksuid_next_n(b3, kb, N, &err), &err);
    for (int i = 0; i < N; i++)
        ASSERT_OK(idm_ksuid_next_n(s3, &ks[i], 1, &err), &err);
    for (int i = 0; i < N; i++)
        ASSERT_EQ_MEM(kb[i].bytes, ks[i].bytes, 16); /* seconds and counting part */
    for (int i = 1; i < N; i++)
        ASSERT_TRUE(memcmp(&kb[i - 1], &kb[i], 20) < 0);
    idm_gen_free(bulk);
    idm_gen_free(single);
    idm_gen_free(b2);
    idm_gen_free(s2);
    idm_gen_free(b3);
    idm_gen_free(s3);
}

static void test_text_bulk_equals_formatted_binary(void)
{
    enum { N = 700 }; /* more than one internal chunk */
    const int formats[] = {IDM_FORMAT_UUIDV4, IDM_FORMAT_UUIDV7, IDM_FORMAT_ULID, IDM_FORMAT_KSUID};
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        struct fake_clock c = {0};
        fake_clock_set_ms(&c, T2026_MS);
        struct fake_entropy e1 = {0}, e2 = {0};
        idm_gen *a = det_gen(&c, &e1), *b = det_gen(&c, &e2);
        static char text[N * 38], want[N * 38];
        size_t len = 0, wlen = 0;
        idm_error err = {0};
        ASSERT_OK(idm_gen_next_text_n(a, formats[f], text, sizeof text, N, IDM_TEXT_NEWLINE, &len, &err), &err);
        for (size_t done = 0; done < N;) {
            size_t k = N - done < 512 ? N - done : 512; /* the text path's chunking */
            static idm_uuid u[512];
            static idm_ulid l[512];
            static idm_ksuid ks[512];
            for (size_t i = 0; i < k; i++) {
                int rc;
                char one[64];
                if (i == 0) {
                    if (formats[f] == IDM_FORMAT_UUIDV4)
                        rc = idm_uuidv4_next_n(b, u, k, &err);
                    else if (formats[f] == IDM_FORMAT_UUIDV7)
                        rc = idm_uuidv7_next_n(b, u, k, &err);
                    else if (formats[f] == IDM_FORMAT_ULID)
                        rc = idm_ulid_next_n(b, l, k, &err);
                    else
                        rc = idm_ksuid_next_n(b, ks, k, &err);
                    ASSERT_OK(rc, &err);
                }
                if (formats[f] <= IDM_FORMAT_UUIDV7)
                    rc = idm_uuid_format(&u[i], one, sizeof one);
                else if (formats[f] == IDM_FORMAT_ULID)
                    rc = idm_ulid_format(&l[i], one, sizeof one);
                else
                    rc = idm_ksuid_format(&ks[i], one, sizeof one);
                ASSERT_OK(rc, NULL);
                size_t ol = strlen(one);
                memcpy(want + wlen, one, ol);
                want[wlen + ol] = '\n';
                wlen += ol + 1;
            }
            done += k;
        }
        ASSERT_EQ_INT(len, wlen);
        ASSERT_EQ_MEM(text, want, len);
        /* Too small a buffer: refused before anything is minted. */
        ASSERT_EQ_INT(idm_gen_next_text_n(a, formats[f], text, 10, 1, 0, &len, &err), IDM_ENOSPC);
        ASSERT_EQ_INT(len, 0);
        idm_gen_free(a);
        idm_gen_free(b);
    }
}

static void test_snowflake_bulk_and_text_equal_singles(void)
{
    enum { N = 5000 }; /* crosses a unit: exhausted sequences wait */
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T2026_MS);
    idm_snowflake_config cfg;
    idm_snowflake_config_init(&cfg);
    cfg.gen.clock = fake_clock_as_clock(&c);
    cfg.node = 3;
    idm_snowflake *a = NULL, *b = NULL, *t = NULL;
    idm_error err = {0};
    ASSERT_OK(idm_snowflake_new(&a, &cfg, &err), &err);
    ASSERT_OK(idm_snowflake_new(&b, &cfg, &err), &err);
    ASSERT_OK(idm_snowflake_new(&t, &cfg, &err), &err);
    static uint64_t bulk[N], single[N];
    static char text[N * 21 + 1];
    int64_t start = atomic_load(&c.now_ns);
    size_t done = 0, len = 0;
    ASSERT_OK(idm_snowflake_next_n(a, bulk, N, &done, &err), &err);
    ASSERT_EQ_INT(done, N);
    atomic_store(&c.now_ns, start);
    for (int i = 0; i < N; i++)
        ASSERT_OK(idm_snowflake_next_n(b, &single[i], 1, NULL, &err), &err);
    ASSERT_EQ_MEM(bulk, single, sizeof bulk);
    atomic_store(&c.now_ns, start);
    ASSERT_OK(idm_snowflake_next_text_n(t, text, sizeof text, N, IDM_TEXT_NEWLINE, &len, &err), &err);
    char *p = text;
    for (int i = 0; i < N; i++) {
        char one[21];
        size_t ol = idm_sf_format_decimal(bulk[i], one, sizeof one);
        ASSERT_TRUE(memcmp(p, one, ol) == 0 && p[ol] == '\n');
        p += ol + 1;
    }
    ASSERT_EQ_INT(p - text, len);
    ASSERT_EQ_INT(idm_snowflake_next_text_n(t, text, 20, 1, 0, &len, &err), IDM_ENOSPC);
    idm_snowflake_free(a);
    idm_snowflake_free(b);
    idm_snowflake_free(t);
}

static const struct test_case tests[] = {
    TEST(test_statefile_refuses_another_layout_node_or_kind),
    TEST(test_statefile_refuses_other_versions_and_garbage),
    TEST(test_statefile_half_made_is_repaired),
    TEST(test_hostwide_two_generators_one_sequence),
    TEST(test_hostwide_processes_threads_and_kill9),
    TEST(test_hostwide_threads_own_mappings),
    TEST(test_unshared_generators_per_thread_unique),
    TEST(test_bulk_equals_singles),
    TEST(test_text_bulk_equals_formatted_binary),
    TEST(test_snowflake_bulk_and_text_equal_singles),
    {0},
};

int main(int argc, char **argv)
{
    int rc = test_main(argc, argv, tests);
    rmdir(tmpdir);
    return rc;
}
