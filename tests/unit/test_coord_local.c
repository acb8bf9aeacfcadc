/*
 * test_coord_local.c - the host-local node registry (coord/local.c): the
 * lowest free slot is claimed and a held one skipped; an exact claim of a
 * held node is refused naming the holder; a full range is IDMC_BUSY; a
 * holder that dies (a forked child that exits without releasing) frees its
 * slot at once; the mark is carried to the next holder, only raised while
 * held and shrunk at a clean stop; a registry others may write and a slot
 * that is a symbolic link are refused.
 */
#include "idmint_coord.h"
#include "testlib.h"

#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256];
static char made[8][256];
static int nmade;

/* Removes what fresh_dir made: DIR/test/node-N files and the two levels. */
static void clean_dirs(void)
{
    for (int i = 0; i < nmade; i++) {
        char ns[2100], path[2200];
        snprintf(ns, sizeof ns, "%s/test", made[i]);
        for (int n = 0; n < 16; n++) {
            snprintf(path, sizeof path, "%s/node-%d", ns, n);
            unlink(path);
        }
        rmdir(ns);
        rmdir(made[i]);
    }
}

static void fresh_dir(void)
{
    snprintf(dir, sizeof dir, "%s/idm-coord-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        exit(2);
    }
    if (nmade < 8)
        snprintf(made[nmade++], sizeof made[0], "%s", dir);
}

static idmc_slot *claim(uint64_t lo, uint64_t hi, int want_rc, char *msg, size_t cap)
{
    idmc_slot *s = NULL;
    int rc = idmc_local_claim(dir, "test", lo, hi, "pid=1 host=test", &s, msg, cap);
    if (rc != want_rc)
        TEST_REPORT_("claim %llu..%llu: rc %d, expected %d (%s)", (unsigned long long)lo,
                     (unsigned long long)hi, rc, want_rc, msg);
    return s;
}

static void test_lowest_free_and_release(void)
{
    fresh_dir();
    char msg[IDMC_MSG_CAP];
    idmc_slot *a = claim(3, 9, 0, msg, sizeof msg);
    idmc_slot *b = claim(3, 9, 0, msg, sizeof msg);
    ASSERT_TRUE(a != NULL && b != NULL);
    ASSERT_EQ_U64(idmc_slot_node(a), 3);
    ASSERT_EQ_U64(idmc_slot_node(b), 4);
    idmc_slot_release(a);
    idmc_slot *c = claim(3, 9, 0, msg, sizeof msg);
    ASSERT_TRUE(c != NULL);
    ASSERT_EQ_U64(idmc_slot_node(c), 3);
    idmc_slot_release(b);
    idmc_slot_release(c);
}

static void test_exact_and_full(void)
{
    fresh_dir();
    char msg[IDMC_MSG_CAP];
    idmc_slot *a = claim(0, 1, 0, msg, sizeof msg);
    idmc_slot *b = claim(0, 1, 0, msg, sizeof msg);
    ASSERT_TRUE(a != NULL && b != NULL);
    ASSERT_TRUE(claim(1, 1, IDMC_BUSY, msg, sizeof msg) == NULL);
    ASSERT_TRUE(strstr(msg, "node 1 is held by pid=1 host=test") != NULL);
    ASSERT_TRUE(claim(0, 1, IDMC_BUSY, msg, sizeof msg) == NULL);
    ASSERT_TRUE(strstr(msg, "every node from 0 to 1 is held") != NULL);
    idmc_slot_release(a);
    idmc_slot_release(b);
}

static void test_dead_holder_frees_its_slot(void)
{
    fresh_dir();
    char msg[IDMC_MSG_CAP];
    int pipefd[2];
    ASSERT_TRUE(pipe(pipefd) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        idmc_slot *s = NULL;
        char m[IDMC_MSG_CAP];
        int rc = idmc_local_claim(dir, "test", 7, 7, "pid=child", &s, m, sizeof m);
        char ok = rc == 0 ? 'y' : 'n';
        if (write(pipefd[1], &ok, 1) != 1)
            _exit(3);
        pause(); /* killed below, never released */
        _exit(0);
    }
    char ok = 0;
    bool child_held = read(pipefd[0], &ok, 1) == 1 && ok == 'y';
    idmc_slot *dup = claim(7, 7, IDMC_BUSY, msg, sizeof msg);
    bool named = strstr(msg, "held by pid=child") != NULL;
    /* The child goes before any assertion can end the test. */
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    idmc_slot_release(dup);
    ASSERT_TRUE(child_held);
    ASSERT_TRUE(dup == NULL && named);
    idmc_slot *s = claim(7, 7, 0, msg, sizeof msg);
    ASSERT_TRUE(s != NULL);
    idmc_slot_release(s);
    close(pipefd[0]);
    close(pipefd[1]);
}

static void test_mark_carried_raised_and_shrunk(void)
{
    fresh_dir();
    char msg[IDMC_MSG_CAP];
    idmc_slot *a = claim(2, 2, 0, msg, sizeof msg);
    ASSERT_TRUE(a != NULL);
    ASSERT_TRUE(idmc_slot_mark_ms(a) == 0);
    ASSERT_EQ_INT(idmc_slot_record_mark(a, 5000), 0);
    ASSERT_EQ_INT(idmc_slot_record_mark(a, 4000), 0); /* never lowered while held */
    idmc_slot_release(a);
    idmc_slot *b = claim(2, 2, 0, msg, sizeof msg);
    ASSERT_TRUE(b != NULL);
    ASSERT_TRUE(idmc_slot_mark_ms(b) == 5000);
    ASSERT_EQ_INT(idmc_slot_shrink_mark(b, 4500), 0);
    idmc_slot_release(b);
    idmc_slot *c = claim(2, 2, 0, msg, sizeof msg);
    ASSERT_TRUE(c != NULL);
    ASSERT_TRUE(idmc_slot_mark_ms(c) == 4500);
    idmc_slot_release(c);
}

static void test_unsafe_registry_refused(void)
{
    fresh_dir();
    char msg[IDMC_MSG_CAP];
    ASSERT_TRUE(chmod(dir, 0777) == 0);
    ASSERT_TRUE(claim(0, 0, IDMC_ERROR, msg, sizeof msg) == NULL);
    ASSERT_TRUE(strstr(msg, "writable by no one else") != NULL);
    ASSERT_TRUE(chmod(dir, 0700) == 0);
    char ns[300], link[400];
    snprintf(ns, sizeof ns, "%s/test", dir);
    ASSERT_TRUE(mkdir(ns, 0700) == 0);
    snprintf(link, sizeof link, "%s/node-0", ns);
    ASSERT_TRUE(symlink("/etc/passwd", link) == 0);
    ASSERT_TRUE(claim(0, 0, IDMC_ERROR, msg, sizeof msg) == NULL);
    ASSERT_TRUE(strstr(msg, "cannot open the slot of node 0") != NULL);
}

static int listed, listed_held;
static void on_slot(void *ctx, uint64_t node, bool held, int64_t mark_ms, const char *holder)
{
    (void)ctx;
    (void)mark_ms;
    listed++;
    if (held && node == 1 && strstr(holder, "pid=1") != NULL)
        listed_held++;
}

static void test_list(void)
{
    fresh_dir();
    char msg[IDMC_MSG_CAP];
    idmc_slot *a = claim(0, 3, 0, msg, sizeof msg);
    idmc_slot *b = claim(0, 3, 0, msg, sizeof msg);
    idmc_slot_release(a);
    listed = listed_held = 0;
    ASSERT_EQ_INT(idmc_local_list(dir, "test", on_slot, NULL, msg, sizeof msg), 2);
    ASSERT_EQ_INT(listed, 2);
    ASSERT_EQ_INT(listed_held, 1);
    idmc_slot_release(b);
}

static const struct test_case tests[] = {
    TEST(test_lowest_free_and_release),
    TEST(test_exact_and_full),
    TEST(test_dead_holder_frees_its_slot),
    TEST(test_mark_carried_raised_and_shrunk),
    TEST(test_unsafe_registry_refused),
    TEST(test_list),
    {0},
};

int main(int argc, char **argv)
{
    int rc = test_main(argc, argv, tests);
    clean_dirs();
    return rc;
}
