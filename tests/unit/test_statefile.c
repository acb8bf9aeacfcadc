/*
 * test_statefile.c - host-wide state files are checked, not trusted: a
 * symlink, a file other users may write, a file of another owner and a
 * file that is not a regular one are refused by name; a full filesystem
 * and a file truncated under a running generator give IDM_ESTATE, never
 * SIGBUS; random words written after the header never give a crash, a
 * hang or an ID outside the layout.
 *
 * Whatever may crash runs in a forked child (in_child): the test then
 * checks that the child exited normally with no failed assertion, not by a
 * signal. The tests that need root (chown to another user, mounting a
 * small tmpfs) say so and skip without it.
 */
#include "fakeclock.h"
#include "internal.h"
#include "testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define T2026_MS INT64_C(1795000000000)

static char tmpdir[200];

/* A fresh path in this run's temporary directory, written to dst. */
static const char *tmp_path(char *dst, size_t cap, const char *name)
{
    if (tmpdir[0] == '\0') {
        snprintf(tmpdir, sizeof tmpdir, "%s/idm-statefile-XXXXXX",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (mkdtemp(tmpdir) == NULL) {
            perror("mkdtemp");
            exit(2);
        }
    }
    snprintf(dst, cap, "%s/%s", tmpdir, name);
    unlink(dst);
    return dst;
}

/* Runs fn(arg) in a forked child with alarm(secs) as a hang guard. The
 * child reports its own failed assertions on stderr and exits 1 if any.
 * Returns 1 when it exited with status 0; otherwise reports how it ended
 * (a signal: a crash or, for SIGALRM, a hang) and returns 0. */
static int in_child(const char *what, void (*fn)(void *), void *arg, unsigned secs)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        TEST_REPORT_("%s: fork: %s", what, strerror(errno));
        return 0;
    }
    if (pid == 0) {
        alarm(secs);
        int before = test_failures_;
        fn(arg);
        fflush(NULL);
        _exit(test_failures_ != before ? 1 : 0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            TEST_REPORT_("%s: waitpid: %s", what, strerror(errno));
            return 0;
        }
    }
    if (WIFSIGNALED(status)) {
        TEST_REPORT_("%s: the child was killed by signal %d (%s)%s", what, WTERMSIG(status),
                     strsignal(WTERMSIG(status)), WTERMSIG(status) == SIGALRM ? ": a hang" : "");
        return 0;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        TEST_REPORT_("%s: the child exited with status %d", what, WEXITSTATUS(status));
        return 0;
    }
    return 1;
}

static int new_gen(idm_gen **g, const char *path, idm_error *err)
{
    idm_gen_config cfg = {0};
    cfg.state_path = path;
    return idm_gen_new(g, &cfg, err);
}

static int new_sf(idm_snowflake **g, const char *path, const char *layout, uint64_t node,
                  struct fake_clock *c, idm_error *err)
{
    idm_snowflake_config cfg;
    idm_snowflake_config_init(&cfg);
    int rc = idm_sf_layout_parse(&cfg.layout, layout, strlen(layout), err);
    if (rc != IDM_OK)
        return rc;
    cfg.node = node;
    cfg.gen.state_path = path;
    if (c != NULL)
        cfg.gen.clock = fake_clock_as_clock(c);
    return idm_snowflake_new(g, &cfg, err);
}

/* Creates a valid generator state file at path. 0, or -1 on failure. */
static int make_gen_state(const char *path)
{
    idm_gen *g = NULL;
    if (new_gen(&g, path, NULL) != IDM_OK)
        return -1;
    idm_gen_free(g);
    return 0;
}

/* Asserts that opening path as a UUIDv7/ULID/KSUID and as a snowflake state
 * file both fail with IDM_ESTATE and a message holding want and the path. */
#define ASSERT_REFUSED(path, want)                                                                 \
    do {                                                                                           \
        idm_gen *g_ = NULL;                                                                        \
        idm_snowflake *s_ = NULL;                                                                  \
        idm_error e_ = {0};                                                                        \
        ASSERT_EQ_INT(new_gen(&g_, (path), &e_), IDM_ESTATE);                                      \
        ASSERT_TRUE(g_ == NULL);                                                                   \
        if (strstr(e_.msg, (want)) == NULL || strstr(e_.msg, (path)) == NULL)                      \
            TEST_FAIL_("message \"%s\" should name \"%s\" and %s", e_.msg, (want), (path));        \
        ASSERT_EQ_INT(new_sf(&s_, (path), "twitter", 1, NULL, &e_), IDM_ESTATE);                   \
        ASSERT_TRUE(s_ == NULL);                                                                   \
        if (strstr(e_.msg, (want)) == NULL)                                                        \
            TEST_FAIL_("message \"%s\" should name \"%s\"", e_.msg, (want));                       \
    } while (0)

/* ---- refusals at open ------------------------------------------------------ */

static void test_statefile_symlink_refused(void)
{
    char target[300], link[300], dangling[300], missing[300];
    tmp_path(target, sizeof target, "target");
    tmp_path(link, sizeof link, "link");
    tmp_path(dangling, sizeof dangling, "dangling");
    tmp_path(missing, sizeof missing, "missing");
    ASSERT_EQ_INT(make_gen_state(target), 0);
    ASSERT_EQ_INT(symlink(target, link), 0);
    ASSERT_REFUSED(link, "is a symbolic link; refusing to follow it");
    /* A symlink to a missing file: refused, and the target is not created. */
    ASSERT_EQ_INT(symlink(missing, dangling), 0);
    ASSERT_REFUSED(dangling, "is a symbolic link; refusing to follow it");
    struct stat st;
    ASSERT_TRUE(lstat(missing, &st) != 0 && errno == ENOENT);
    unlink(link);
    unlink(dangling);
    unlink(target);
}

static void test_statefile_writable_by_others_refused(void)
{
    char path[300];
    tmp_path(path, sizeof path, "modes");
    ASSERT_EQ_INT(make_gen_state(path), 0);
    ASSERT_EQ_INT(chmod(path, 0666), 0);
    ASSERT_REFUSED(path, "is writable by other users (mode 0666); chmod 600 it");
    ASSERT_EQ_INT(chmod(path, 0602), 0);
    ASSERT_REFUSED(path, "is writable by other users (mode 0602); chmod 600 it");
    ASSERT_EQ_INT(chmod(path, 0620), 0);
    ASSERT_REFUSED(path, "is writable by its group (mode 0620); chmod 600 it");
    /* Readable by others is no threat to the sequence: accepted. */
    ASSERT_EQ_INT(chmod(path, 0644), 0);
    idm_gen *g = NULL;
    idm_error err = {0};
    ASSERT_OK(new_gen(&g, path, &err), &err);
    idm_gen_free(g);
    /* A new file is 0600 whatever the umask. */
    unlink(path);
    mode_t old = umask(0);
    int rc = make_gen_state(path);
    umask(old);
    ASSERT_EQ_INT(rc, 0);
    struct stat st;
    ASSERT_EQ_INT(stat(path, &st), 0);
    ASSERT_EQ_INT(st.st_mode & 07777, 0600);
    unlink(path);
}

static void test_statefile_foreign_owner_refused(void)
{
    if (geteuid() != 0) {
        printf("  skipped: needs root to give a file to another user\n");
        return;
    }
    char path[300], want[100];
    tmp_path(path, sizeof path, "foreign");
    ASSERT_EQ_INT(make_gen_state(path), 0);
    ASSERT_EQ_INT(chown(path, 65534, 65534), 0);
    snprintf(want, sizeof want, "belongs to uid 65534, not to this user (uid %u)",
             (unsigned)geteuid());
    ASSERT_REFUSED(path, want);
    unlink(path);
}

static void not_regular_child(void *arg)
{
    (void)arg;
    char fifo[300], dir[300];
    tmp_path(fifo, sizeof fifo, "fifo");
    tmp_path(dir, sizeof dir, "dir");
    ASSERT_EQ_INT(mkfifo(fifo, 0600), 0);
    ASSERT_REFUSED(fifo, "is not a regular file (a FIFO)");
    unlink(fifo);
    ASSERT_EQ_INT(mkdir(dir, 0700), 0);
    ASSERT_REFUSED(dir, "is a directory, not a regular file");
    rmdir(dir);
}

static void test_statefile_not_regular_refused(void)
{
    /* In a child: opening a FIFO the wrong way blocks forever. */
    ASSERT_TRUE(in_child("FIFO and directory", not_regular_child, NULL, 20));
}

/* ---- a full filesystem ----------------------------------------------------- */

struct full_arg {
    const char *fresh;  /* a path to create */
    const char *sparse; /* a half-made file with no blocks (an older idmint's) */
};

static void full_child(void *p)
{
    const struct full_arg *a = p;
    idm_gen *g = NULL;
    idm_snowflake *s = NULL;
    idm_error err = {0};
    ASSERT_EQ_INT(new_gen(&g, a->fresh, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "no space left for state file") != NULL);
    ASSERT_TRUE(strstr(err.msg, a->fresh) != NULL);
    ASSERT_EQ_INT(new_sf(&s, a->fresh, "twitter", 1, NULL, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "no space left for state file") != NULL);
    ASSERT_EQ_INT(new_gen(&g, a->sparse, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "no space left for state file") != NULL);
}

static void test_statefile_full_filesystem_is_an_error(void)
{
    if (geteuid() != 0) {
        printf("  skipped: needs root to mount a small tmpfs\n");
        return;
    }
    char mnt[300], fresh[320], sparse[320], filler[320];
    tmp_path(mnt, sizeof mnt, "tmpfs");
    ASSERT_EQ_INT(mkdir(mnt, 0700), 0);
    if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k,mode=0700") != 0) {
        printf("  skipped: cannot mount a tmpfs: %s\n", strerror(errno));
        rmdir(mnt);
        return;
    }
    snprintf(fresh, sizeof fresh, "%s/state", mnt);
    snprintf(sparse, sizeof sparse, "%s/sparse", mnt);
    snprintf(filler, sizeof filler, "%s/filler", mnt);
    /* A half-made state file as an older idmint left it: sized by
     * ftruncate, so it has no blocks yet. */
    int fd = open(sparse, O_RDWR | O_CREAT | O_EXCL, 0600);
    int sized = fd >= 0 && ftruncate(fd, (off_t)(sizeof(struct idm_state_header) +
                                                 sizeof(struct idm_gen_states))) == 0;
    if (fd >= 0)
        close(fd);
    /* Fill the filesystem. */
    fd = open(filler, O_WRONLY | O_CREAT | O_EXCL, 0600);
    static const char block[4096];
    int full = 0;
    while (fd >= 0 && !full) {
        ssize_t w = write(fd, block, sizeof block);
        full = w < 0 && errno == ENOSPC;
        if (w < 0 && !full)
            break;
    }
    if (fd >= 0)
        close(fd);
    int ok = sized && full;
    struct full_arg a = {fresh, sparse};
    if (ok)
        ok = in_child("a full filesystem", full_child, &a, 20);
    /* With room again, the file the failed open left is usable. */
    unlink(filler);
    idm_gen *g = NULL;
    idm_error err = {0};
    int rc = ok ? new_gen(&g, fresh, &err) : IDM_OK;
    idm_gen_free(g);
    umount2(mnt, MNT_DETACH);
    rmdir(mnt);
    ASSERT_TRUE(sized);
    ASSERT_TRUE(full);
    ASSERT_TRUE(ok);
    ASSERT_OK(rc, &err);
}

/* ---- truncation under a running generator ---------------------------------- */

static void check_after_truncation(void)
{
    char path[300];
    tmp_path(path, sizeof path, "check");
    struct idm_state_header want = {0};
    want.version = IDM_STATE_VERSION;
    want.kind = IDM_STATE_KIND_GEN;
    want.size = sizeof want + sizeof(struct idm_gen_states);
    struct idm_state_map map;
    idm_error err = {0};
    ASSERT_OK(idm__state_open(path, &want, &map, &err), &err);
    ASSERT_OK(idm__state_check(&map, &err), &err);
    ASSERT_EQ_INT(truncate(path, 100), 0);
    ASSERT_EQ_INT(idm__state_check(&map, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "truncated to 100 bytes under this process") != NULL);
    ASSERT_EQ_INT(truncate(path, 0), 0);
    ASSERT_EQ_INT(idm__state_check(&map, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "truncated to 0 bytes") != NULL);
    ASSERT_EQ_INT(truncate(path, (off_t)want.size), 0);
    ASSERT_OK(idm__state_check(&map, &err), &err);
    /* The program closed the descriptor and reused its number. */
    ASSERT_EQ_INT(close(map.fd), 0);
    int other = open(tmpdir, O_RDONLY | O_DIRECTORY);
    ASSERT_EQ_INT(other, map.fd);
    ASSERT_EQ_INT(idm__state_check(&map, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "no longer refers to the state file") != NULL);
    idm__state_close(&map); /* closes other */
    /* A map never opened (zeroed, as inside a generator) is left alone. */
    int fd0_open = fcntl(0, F_GETFD) >= 0;
    struct idm_state_map none = {0};
    ASSERT_OK(idm__state_check(&none, &err), &err);
    idm__state_close(&none);
    ASSERT_EQ_INT(fcntl(0, F_GETFD) >= 0, fd0_open); /* fd 0 is not closed */
    unlink(path);
}

static void test_statefile_check_notices_truncation(void)
{
    check_after_truncation();
}

static void truncate_gen_child(void *p)
{
    const char *path = p;
    idm_gen *g = NULL;
    idm_error err = {0};
    idm_uuid u[4];
    ASSERT_OK(new_gen(&g, path, &err), &err);
    ASSERT_OK(idm_uuidv7_next_n(g, u, 4, &err), &err);
    ASSERT_EQ_INT(truncate(path, 0), 0);
    usleep(2000); /* the size is checked once per clock millisecond */
    ASSERT_EQ_INT(idm_uuidv7_next_n(g, u, 4, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "truncated to 0 bytes") != NULL);
    idm_gen_free(g);
}

static void truncate_sf_child(void *p)
{
    const char *path = p;
    idm_snowflake *s = NULL;
    idm_error err = {0};
    uint64_t ids[4];
    size_t done = 99;
    ASSERT_OK(new_sf(&s, path, "twitter", 3, NULL, &err), &err);
    ASSERT_OK(idm_snowflake_next_n(s, ids, 4, &done, &err), &err);
    ASSERT_EQ_INT(truncate(path, 0), 0);
    usleep(2000); /* the size is checked once per clock millisecond */
    ASSERT_EQ_INT(idm_snowflake_next_n(s, ids, 4, &done, &err), IDM_ESTATE);
    ASSERT_EQ_INT(done, 0);
    ASSERT_TRUE(strstr(err.msg, "truncated to 0 bytes") != NULL);
    idm_snowflake_free(s);
}

static void test_statefile_truncated_under_generator(void)
{
    char gpath[300], spath[300];
    tmp_path(gpath, sizeof gpath, "trunc-gen");
    tmp_path(spath, sizeof spath, "trunc-sf");
    int gen_ok = in_child("idm_uuidv7_next_n after truncation", truncate_gen_child, gpath, 20);
    int sf_ok = in_child("idm_snowflake_next_n after truncation", truncate_sf_child, spath, 20);
    unlink(gpath);
    unlink(spath);
    ASSERT_TRUE(gen_ok);
    ASSERT_TRUE(sf_ok);
}

/* ---- random words after the header ----------------------------------------- */

enum { WORDS = 8, ROUNDS = 200, MINT = 100 };

struct fuzz_arg {
    const char *path;
    const char *layout;
};

/* The words to write after the header in round r: sometimes all random,
 * sometimes near a sane state (around the clock's unit, or the layout's
 * last one) so that the checks, not just the rewind refusal, are met. */
static void fuzz_words(uint64_t *w, int r, uint64_t *rng, const idm_sf_layout *l)
{
    for (int i = 0; i < WORDS; i++)
        w[i] = test_rng_next(rng);
    unsigned seq_bits = l->bits[IDM_SF_SEQ];
    uint64_t max_tick = ((uint64_t)1 << l->bits[IDM_SF_TIME]) - 1;
    uint64_t now_tick = (uint64_t)(T2026_MS - l->epoch_ms) / (uint64_t)l->unit_ms;
    uint64_t seq = w[2] & (((uint64_t)1 << (seq_bits + 1)) - 1); /* may overflow the field */
    int64_t near_ms = T2026_MS + (int64_t)(w[3] % 41) - 20;
    switch (r % 5) {
    case 0: /* all random */
        break;
    case 1: /* a random state word, a sane mark */
        w[1] = (uint64_t)near_ms;
        break;
    case 2: /* a tick near the clock's */
        w[0] = ((now_tick + w[4] % 7 - 3) << seq_bits | seq) + 1;
        w[1] = (uint64_t)near_ms;
        break;
    case 3: /* a tick far ahead of the mark, or past the layout */
        w[0] = (((now_tick + 1 + w[4] % (max_tick - now_tick + 16)) << seq_bits) | seq) + 1;
        w[1] = (uint64_t)near_ms;
        break;
    default: /* the layout's last tick, or just past it */
        w[0] = ((max_tick + w[4] % 2) << seq_bits | seq) + w[5] % 2;
        w[1] = w[6] % 2 ? (uint64_t)near_ms : w[1];
        break;
    }
}

static void random_words_child(void *p)
{
    const struct fuzz_arg *a = p;
    idm_sf_layout l;
    ASSERT_OK(idm_sf_layout_parse(&l, a->layout, strlen(a->layout), NULL), NULL);
    const uint64_t node = 5;
    const unsigned total = l.bits[0] + l.bits[1] + l.bits[2];
    const int64_t max_rewind_ms = IDM_SF_DEFAULT_MAX_REWIND_MS;
    uint64_t rng = 0x5eed0000u + total;
    size_t ok_ids = 0, refused = 0;
    for (int r = 0; r < ROUNDS; r++) {
        unlink(a->path);
        idm_snowflake *s = NULL;
        idm_error err = {0};
        ASSERT_OK(new_sf(&s, a->path, a->layout, node, NULL, &err), &err);
        idm_snowflake_free(s);
        uint64_t w[WORDS];
        fuzz_words(w, r, &rng, &l);
        int fd = open(a->path, O_RDWR);
        ASSERT_TRUE(fd >= 0);
        ssize_t wrote = pwrite(fd, w, sizeof w, (off_t)sizeof(struct idm_state_header));
        close(fd);
        ASSERT_EQ_INT(wrote, sizeof w);

        struct fake_clock c = {0};
        fake_clock_set_ms(&c, T2026_MS);
        int rc = new_sf(&s, a->path, a->layout, node, &c, &err);
        if (rc == IDM_ESTATE) {
            refused++;
            continue;
        }
        if (rc != IDM_OK)
            TEST_FAIL_("%s round %d (words %016" PRIx64 " %016" PRIx64 "): _new returned %d: %s",
                       a->layout, r, w[0], w[1], rc, err.msg);
        uint64_t last = 0;
        size_t minted = 0;
        for (int call = 0; call < 40 && minted < MINT; call++) {
            uint64_t ids[17];
            size_t n = 1 + (size_t)(test_rng_next(&rng) % 17), done = 0;
            rc = idm_snowflake_next_n(s, ids, n, &done, &err);
            if (rc != IDM_OK && rc != IDM_ESTATE && rc != IDM_ECLOCK_REWIND &&
                rc != IDM_ETIME_RANGE) {
                idm_snowflake_free(s);
                TEST_FAIL_("%s round %d (words %016" PRIx64 " %016" PRIx64 "): rc %d: %s",
                           a->layout, r, w[0], w[1], rc, err.msg);
            }
            if (done > n || (rc == IDM_OK && done != n)) {
                idm_snowflake_free(s);
                TEST_FAIL_("%s round %d: rc %d, %zu of %zu IDs", a->layout, r, rc, done, n);
            }
            int64_t now_ms = atomic_load(&c.now_ns) / 1000000;
            for (size_t i = 0; i < done; i++) {
                idm_sf_parts parts;
                int drc = idm_sf_decode(&l, ids[i], &parts, NULL);
                int bad = drc != IDM_OK || (total < 64 && ids[i] >> total != 0) ||
                          parts.node != node || (minted + i > 0 && ids[i] <= last) ||
                          parts.unix_ms > now_ms + max_rewind_ms;
                if (bad) {
                    idm_snowflake_free(s);
                    TEST_FAIL_("%s round %d (words %016" PRIx64 " %016" PRIx64 "): ID %016" PRIx64
                               " after %016" PRIx64 " (node %" PRIu64 ", time %" PRId64
                               ", clock %" PRId64 ")",
                               a->layout, r, w[0], w[1], ids[i], last, parts.node, parts.unix_ms,
                               now_ms);
                }
                last = ids[i];
            }
            minted += done;
            if (rc != IDM_OK)
                refused++;
        }
        ok_ids += minted;
        idm_snowflake_free(s);
        /* A fake clock never blocks, but a generator waiting for a far
         * tick would advance it by as much: a hang in fake time. */
        int64_t slept_ms = atomic_load(&c.slept_ns) / 1000000;
        if (slept_ms > max_rewind_ms + 3 * l.unit_ms)
            TEST_FAIL_("%s round %d (words %016" PRIx64 " %016" PRIx64 "): waited %" PRId64
                       " ms of clock time",
                       a->layout, r, w[0], w[1], slept_ms);
    }
    printf("  %s: %zu IDs checked, %zu refusals over %d damaged files\n", a->layout, ok_ids,
           refused, ROUNDS);
}

static void test_statefile_random_words_never_crash(void)
{
    static const char *const layouts[] = {"twitter", "sonyflake", "time=41,node=10,seq=8,unit=1s"};
    char path[300];
    tmp_path(path, sizeof path, "random");
    int ok = 1;
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        struct fuzz_arg a = {path, layouts[i]};
        char what[100];
        snprintf(what, sizeof what, "random words, layout %s", layouts[i]);
        ok &= in_child(what, random_words_child, &a, 60);
    }
    unlink(path);
    ASSERT_TRUE(ok);
}

static const struct test_case tests[] = {
    TEST(test_statefile_symlink_refused),
    TEST(test_statefile_writable_by_others_refused),
    TEST(test_statefile_foreign_owner_refused),
    TEST(test_statefile_not_regular_refused),
    TEST(test_statefile_full_filesystem_is_an_error),
    TEST(test_statefile_check_notices_truncation),
    TEST(test_statefile_truncated_under_generator),
    TEST(test_statefile_random_words_never_crash),
    {0},
};

int main(int argc, char **argv)
{
    int rc = test_main(argc, argv, tests);
    /* What a failed test left behind (files, a FIFO, a directory). */
    DIR *d = tmpdir[0] ? opendir(tmpdir) : NULL;
    for (struct dirent *e = d ? readdir(d) : NULL; e != NULL; e = readdir(d)) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && unlink(path) != 0)
            rmdir(path);
    }
    if (d != NULL)
        closedir(d);
    rmdir(tmpdir);
    return rc;
}
