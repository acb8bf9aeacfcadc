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

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256];
static char made[16][256];
static int nmade;

/* Removes what fresh_dir made: DIR/test/node-N files and the two levels. */
static void clean_dirs(void)
{
    for (int i = 0; i < nmade; i++) {
        char ns[2100], path[2200];
        snprintf(ns, sizeof ns, "%.255s/test", made[i]);
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
    if (nmade < 16)
        snprintf(made[nmade++], sizeof made[0], "%s", dir);
}

static idmc_slot *claim(uint64_t lo, uint64_t hi, int want_rc, idmc_error *err)
{
    idmc_slot *s = NULL;
    int rc = idmc_local_claim(dir, "test", lo, hi, INT64_MAX, "pid=1 host=test", &s, err);
    if (rc != want_rc || err->code != rc)
        TEST_REPORT_("claim %llu..%llu: rc %d (record %d), expected %d (%s)",
                     (unsigned long long)lo, (unsigned long long)hi, rc, err->code, want_rc,
                     err->msg);
    return s;
}

static void test_lowest_free_and_release(void)
{
    fresh_dir();
    idmc_error err;
    idmc_slot *a = claim(3, 9, 0, &err);
    idmc_slot *b = claim(3, 9, 0, &err);
    ASSERT_TRUE(a != NULL && b != NULL);
    ASSERT_EQ_U64(idmc_slot_node(a), 3);
    ASSERT_EQ_U64(idmc_slot_node(b), 4);
    idmc_slot_release(a);
    idmc_slot *c = claim(3, 9, 0, &err);
    ASSERT_TRUE(c != NULL);
    ASSERT_EQ_U64(idmc_slot_node(c), 3);
    idmc_slot_release(b);
    idmc_slot_release(c);
}

static void test_exact_and_full(void)
{
    fresh_dir();
    idmc_error err;
    idmc_slot *a = claim(0, 1, 0, &err);
    idmc_slot *b = claim(0, 1, 0, &err);
    ASSERT_TRUE(a != NULL && b != NULL);
    ASSERT_TRUE(claim(1, 1, IDMC_BUSY, &err) == NULL);
    ASSERT_TRUE(strstr(err.msg, "node 1 is held by pid=1 host=test") != NULL);
    ASSERT_TRUE(claim(0, 1, IDMC_BUSY, &err) == NULL);
    ASSERT_TRUE(strstr(err.msg, "every node from 0 to 1 is held") != NULL);
    idmc_slot_release(a);
    idmc_slot_release(b);
}

static void test_dead_holder_frees_its_slot(void)
{
    fresh_dir();
    idmc_error err;
    int pipefd[2];
    ASSERT_TRUE(pipe(pipefd) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        idmc_slot *s = NULL;
        int rc = idmc_local_claim(dir, "test", 7, 7, INT64_MAX, "pid=child", &s, NULL);
        char ok = rc == 0 ? 'y' : 'n';
        if (write(pipefd[1], &ok, 1) != 1)
            _exit(3);
        pause(); /* killed below, never released */
        _exit(0);
    }
    char ok = 0;
    bool child_held = read(pipefd[0], &ok, 1) == 1 && ok == 'y';
    idmc_slot *dup = claim(7, 7, IDMC_BUSY, &err);
    bool named = strstr(err.msg, "held by pid=child") != NULL;
    /* The child goes before any assertion can end the test. */
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    idmc_slot_release(dup);
    ASSERT_TRUE(child_held);
    ASSERT_TRUE(dup == NULL && named);
    idmc_slot *s = claim(7, 7, 0, &err);
    ASSERT_TRUE(s != NULL);
    idmc_slot_release(s);
    close(pipefd[0]);
    close(pipefd[1]);
}

static void test_mark_carried_raised_and_shrunk(void)
{
    fresh_dir();
    idmc_error err;
    idmc_slot *a = claim(2, 2, 0, &err);
    ASSERT_TRUE(a != NULL);
    ASSERT_TRUE(idmc_slot_mark_ms(a) == 0);
    ASSERT_EQ_INT(idmc_slot_record_mark(a, 5000), 0);
    ASSERT_EQ_INT(idmc_slot_record_mark(a, 4000), 0); /* never lowered while held */
    idmc_slot_release(a);
    idmc_slot *b = claim(2, 2, 0, &err);
    ASSERT_TRUE(b != NULL);
    ASSERT_TRUE(idmc_slot_mark_ms(b) == 5000);
    ASSERT_EQ_INT(idmc_slot_shrink_mark(b, 4500), 0);
    idmc_slot_release(b);
    idmc_slot *c = claim(2, 2, 0, &err);
    ASSERT_TRUE(c != NULL);
    ASSERT_TRUE(idmc_slot_mark_ms(c) == 4500);
    idmc_slot_release(c);
}

static void test_unsafe_registry_refused(void)
{
    fresh_dir();
    idmc_error err;
    ASSERT_TRUE(chmod(dir, 0777) == 0);
    ASSERT_TRUE(claim(0, 0, IDMC_ERROR, &err) == NULL);
    ASSERT_TRUE(strstr(err.msg, "writable by no one else") != NULL);
    ASSERT_TRUE(chmod(dir, 0700) == 0);
    char ns[300], link[400];
    snprintf(ns, sizeof ns, "%s/test", dir);
    ASSERT_TRUE(mkdir(ns, 0700) == 0);
    snprintf(link, sizeof link, "%s/node-0", ns);
    ASSERT_TRUE(symlink("/etc/passwd", link) == 0);
    ASSERT_TRUE(claim(0, 0, IDMC_ERROR, &err) == NULL);
    ASSERT_TRUE(strstr(err.msg, "cannot open the slot of node 0") != NULL);
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
    idmc_error err;
    idmc_slot *a = claim(0, 3, 0, &err);
    idmc_slot *b = claim(0, 3, 0, &err);
    idmc_slot_release(a);
    listed = listed_held = 0;
    ASSERT_EQ_INT(idmc_local_list(dir, "test", on_slot, NULL, &err), 2);
    ASSERT_EQ_INT(listed, 2);
    ASSERT_EQ_INT(listed_held, 1);
    idmc_slot_release(b);
}

/* rm -rf of what fresh_dir made, under a holder. */
static void remove_registry(void)
{
    char ns[300], path[400];
    snprintf(ns, sizeof ns, "%s/test", dir);
    for (int n = 0; n < 16; n++) {
        snprintf(path, sizeof path, "%s/node-%d", ns, n);
        unlink(path);
    }
    ASSERT_TRUE(rmdir(ns) == 0);
    ASSERT_TRUE(rmdir(dir) == 0);
}

static void test_removed_registry_hands_out_nothing(void)
{
    fresh_dir();
    idmc_error err;
    idmc_slot *a = claim(0, 3, 0, &err);
    ASSERT_TRUE(a != NULL);
    ASSERT_EQ_INT(idmc_slot_record_mark(a, 7000), 0);
    ASSERT_EQ_INT(idmc_slot_check(a, &err), 0);
    remove_registry();
    /* The directory and the file are made anew; the node is still a's. */
    ASSERT_TRUE(claim(0, 0, IDMC_BUSY, &err) == NULL);
    ASSERT_TRUE(strstr(err.msg, "node 0 is held by a process whose slot file") != NULL);
    idmc_slot *b = claim(0, 3, 0, &err);
    ASSERT_TRUE(b != NULL);
    ASSERT_EQ_U64(idmc_slot_node(b), 1);
    /* a notices, and puts its file back with its mark. */
    ASSERT_EQ_INT(idmc_slot_check(a, &err), IDMC_LOST);
    ASSERT_TRUE(strstr(err.msg, "was removed or replaced") != NULL);
    ASSERT_EQ_INT(idmc_slot_repair(a, &err), 0);
    ASSERT_TRUE(strstr(err.msg, "made it again with the mark") != NULL);
    ASSERT_EQ_INT(idmc_slot_check(a, &err), 0);
    ASSERT_EQ_INT(idmc_slot_repair(a, &err), 0);
    ASSERT_TRUE(err.msg[0] == '\0'); /* nothing to do */
    idmc_slot_release(a);
    idmc_slot *c = claim(0, 0, 0, &err);
    ASSERT_TRUE(c != NULL);
    ASSERT_TRUE(idmc_slot_mark_ms(c) == 7000); /* the hand-over survived */
    idmc_slot_release(b);
    idmc_slot_release(c);
}

/* A shared registry (mode 1777: holders of several users) removed under
 * its holders is made again shared, whoever repairs first: made private,
 * the other users' holders could not put their files back and would stop
 * minting for good (found by tests/faults: registry_removed). */
static void test_shared_registry_repaired_shared(void)
{
    fresh_dir();
    ASSERT_TRUE(chmod(dir, 01777) == 0);
    idmc_error err;
    idmc_slot *a = claim(0, 3, 0, &err);
    ASSERT_TRUE(a != NULL);
    remove_registry();
    ASSERT_EQ_INT(idmc_slot_check(a, &err), IDMC_LOST);
    ASSERT_EQ_INT(idmc_slot_repair(a, &err), 0);
    char ns[300];
    snprintf(ns, sizeof ns, "%s/test", dir);
    struct stat st;
    ASSERT_TRUE(stat(dir, &st) == 0);
    ASSERT_EQ_INT(st.st_mode & 07777, 01777);
    ASSERT_TRUE(stat(ns, &st) == 0);
    ASSERT_EQ_INT(st.st_mode & 07777, 01777);
    /* Removed again, and made anew by a new server's claim first (which
     * knows nothing of it: private): the repair makes it shared again. */
    remove_registry();
    idmc_slot *n = claim(1, 3, 0, &err);
    ASSERT_TRUE(n != NULL);
    ASSERT_TRUE(stat(dir, &st) == 0);
    ASSERT_EQ_INT(st.st_mode & 07777, 0700);
    ASSERT_EQ_INT(idmc_slot_check(a, &err), IDMC_LOST);
    ASSERT_EQ_INT(idmc_slot_repair(a, &err), 0);
    ASSERT_TRUE(stat(dir, &st) == 0);
    ASSERT_EQ_INT(st.st_mode & 07777, 01777);
    ASSERT_TRUE(stat(ns, &st) == 0);
    ASSERT_EQ_INT(st.st_mode & 07777, 01777);
    idmc_slot_release(n);
    idmc_slot_release(a);
    /* A private one stays private. */
    fresh_dir();
    idmc_slot *b = claim(0, 3, 0, &err);
    ASSERT_TRUE(b != NULL);
    remove_registry();
    ASSERT_EQ_INT(idmc_slot_check(b, &err), IDMC_LOST);
    ASSERT_EQ_INT(idmc_slot_repair(b, &err), 0);
    ASSERT_TRUE(stat(dir, &st) == 0);
    ASSERT_EQ_INT(st.st_mode & 07777, 0700);
    idmc_slot_release(b);
}

static void test_repair_refused_when_another_holds_the_file(void)
{
    fresh_dir();
    idmc_error err;
    idmc_slot *a = claim(2, 2, 0, &err);
    ASSERT_TRUE(a != NULL);
    char path[400];
    snprintf(path, sizeof path, "%s/test/node-2", dir);
    ASSERT_TRUE(unlink(path) == 0);
    /* Someone (an idmint of before the names, another network namespace)
     * makes and locks a file of its own there. */
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_TRUE(fd >= 0);
    ASSERT_TRUE(flock(fd, LOCK_EX | LOCK_NB) == 0);
    ASSERT_EQ_INT(idmc_slot_check(a, &err), IDMC_LOST);
    ASSERT_EQ_INT(idmc_slot_repair(a, &err), IDMC_BUSY);
    ASSERT_TRUE(strstr(err.msg, "another process now holds") != NULL);
    close(fd);
    idmc_slot_release(a);
}

static void write_slot(const char *path, int64_t mark)
{
    char rec[IDMC_SLOT_BYTES] = {0};
    memcpy(rec, "IDMSLOT1", 8);
    memcpy(rec + 8, &mark, sizeof mark);
    snprintf(rec + IDMC_HOLDER_AT, sizeof rec - IDMC_HOLDER_AT, "pid=9 host=old\n");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_TRUE(fd >= 0);
    ASSERT_TRUE(write(fd, rec, sizeof rec) == (ssize_t)sizeof rec);
    close(fd);
}

static void read_file(const char *path, char *dst, size_t cap)
{
    memset(dst, 0, cap);
    int fd = open(path, O_RDONLY);
    ASSERT_TRUE(fd >= 0 && read(fd, dst, cap) > 0);
    close(fd);
}

static void test_mark_past_the_layout_refused_unwritten(void)
{
    fresh_dir();
    idmc_error err;
    char ns[300], path[400];
    snprintf(ns, sizeof ns, "%s/test", dir);
    ASSERT_TRUE(mkdir(ns, 0700) == 0);
    snprintf(path, sizeof path, "%s/node-0", ns);
    write_slot(path, 9000);
    char before[IDMC_SLOT_BYTES], after[IDMC_SLOT_BYTES];
    read_file(path, before, sizeof before);
    idmc_slot *s = NULL;
    ASSERT_EQ_INT(idmc_local_claim(dir, "test", 0, 0, 8999, "pid=1", &s, &err), IDMC_ERROR);
    ASSERT_TRUE(s == NULL && strstr(err.msg, "past the layout's last time") != NULL);
    ASSERT_TRUE(strstr(err.msg, path) != NULL && strstr(err.msg, "rm ") != NULL);
    read_file(path, after, sizeof after);
    ASSERT_TRUE(memcmp(before, after, sizeof before) == 0);
    /* A range skips it, and says so. */
    ASSERT_EQ_INT(idmc_local_claim(dir, "test", 0, 3, 8999, "pid=1", &s, &err), 0);
    ASSERT_TRUE(s != NULL);
    ASSERT_EQ_U64(idmc_slot_node(s), 1);
    ASSERT_TRUE(strncmp(err.msg, "skipped the slot of node 0", 26) == 0);
    read_file(path, after, sizeof after);
    ASSERT_TRUE(memcmp(before, after, sizeof before) == 0);
    idmc_slot_release(s);
    /* At the layout's end exactly: usable. */
    ASSERT_EQ_INT(idmc_local_claim(dir, "test", 0, 0, 9000, "pid=1", &s, &err), 0);
    ASSERT_TRUE(s != NULL && idmc_slot_mark_ms(s) == 9000);
    idmc_slot_release(s);
}

/* In a child as uid 65534: claims lo..hi in the shared registry, records
 * mark, exits with the node + 1 (0: refused). */
static int claim_as_other_user(uint64_t lo, uint64_t hi, int64_t mark, int64_t *seen_mark)
{
    int pipefd[2];
    if (pipe(pipefd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        idmc_slot *s = NULL;
        int64_t got = -1;
        int code = 0;
        if (setgid(65534) == 0 && setuid(65534) == 0 &&
            idmc_local_claim(dir, "test", lo, hi, INT64_MAX, "pid=other", &s, NULL) == 0) {
            got = idmc_slot_mark_ms(s);
            code = (int)idmc_slot_node(s) + 1;
            if (idmc_slot_record_mark(s, mark) != 0)
                code = 0;
            idmc_slot_release(s);
        }
        if (write(pipefd[1], &got, sizeof got) != (ssize_t)sizeof got)
            _exit(0);
        _exit(code);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (read(pipefd[0], seen_mark, sizeof *seen_mark) != (ssize_t)sizeof *seen_mark)
        *seen_mark = -1;
    close(pipefd[0]);
    close(pipefd[1]);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_shared_registry_across_users(void)
{
    if (geteuid() != 0) {
        fprintf(stderr, "  (not root: the second user's half is not run)\n");
        return;
    }
    fresh_dir();
    ASSERT_TRUE(chmod(dir, 01777) == 0);
    idmc_error err;
    char ns[300];
    idmc_slot *a = claim(0, 3, 0, &err);
    ASSERT_TRUE(a != NULL);
    ASSERT_EQ_INT(idmc_slot_record_mark(a, 1111), 0);
    snprintf(ns, sizeof ns, "%s/test", dir);
    struct stat st;
    ASSERT_TRUE(stat(ns, &st) == 0 && (st.st_mode & 07777) == 01777);
    int64_t seen = 0;
    /* Node 0 is root's: the other user gets 1 and makes its file. */
    ASSERT_EQ_INT(claim_as_other_user(0, 3, 2222, &seen), 2);
    idmc_slot_release(a);
    /* Root's file, freed: the other user takes it and sees root's mark. */
    ASSERT_EQ_INT(claim_as_other_user(0, 0, 3333, &seen), 1);
    ASSERT_TRUE(seen == 1111);
    /* And root takes the other user's file with its mark. */
    idmc_slot *b = claim(1, 1, 0, &err);
    ASSERT_TRUE(b != NULL && idmc_slot_mark_ms(b) == 2222);
    char path[400];
    snprintf(path, sizeof path, "%s/node-1", ns);
    ASSERT_TRUE(stat(path, &st) == 0 && st.st_uid == 65534 && (st.st_mode & 0777) == 0666);
    idmc_slot_release(b);
}

/* The holders' rule (idmc_slot_keep, idmc_slot_end): a mark recorded
 * IDMC_SLOT_AHEAD_MS past the later of the clock and the time used, anew
 * only within IDMC_SLOT_LOW_MS of it or at the ceiling, after putting a
 * removed file back; at the end lowered to the time used, never below the
 * claim's mark. */
static void test_keep_records_ahead_and_end_lowers(void)
{
    fresh_dir();
    idmc_error err;
    idmc_slot *a = claim(4, 4, 0, &err);
    ASSERT_TRUE(a != NULL);
    ASSERT_EQ_INT(idmc_slot_record_mark(a, 10000), 0); /* an earlier holder's */
    idmc_slot_release(a);
    a = claim(4, 4, 0, &err);
    ASSERT_TRUE(a != NULL);
    int64_t claim_ms = idmc_slot_mark_ms(a), recorded = claim_ms;
    ASSERT_TRUE(claim_ms == 10000);
    /* Due (the clock is past the recorded mark): now + AHEAD. */
    ASSERT_EQ_INT(idmc_slot_keep(a, &recorded, 0, 20000, false, &err), 0);
    ASSERT_TRUE(recorded == 20000 + IDMC_SLOT_AHEAD_MS);
    /* Not due: more than LOW ahead of the clock, not at the ceiling. */
    int64_t before = recorded;
    ASSERT_EQ_INT(idmc_slot_keep(a, &recorded, 0, 20000 + 100, false, &err), 0);
    ASSERT_TRUE(recorded == before);
    /* Within LOW of it: recorded anew from the clock. */
    int64_t near = before - IDMC_SLOT_LOW_MS;
    ASSERT_EQ_INT(idmc_slot_keep(a, &recorded, 0, near, false, &err), 0);
    ASSERT_TRUE(recorded == near + IDMC_SLOT_AHEAD_MS);
    /* At the ceiling with the time used ahead of the clock: from the time used. */
    ASSERT_EQ_INT(idmc_slot_keep(a, &recorded, 30000, 20500, true, &err), 0);
    ASSERT_TRUE(recorded == 30000 + IDMC_SLOT_AHEAD_MS);
    /* The file removed: put back with the new mark. */
    char path[600];
    snprintf(path, sizeof path, "%s", idmc_slot_path(a));
    ASSERT_TRUE(unlink(path) == 0);
    ASSERT_EQ_INT(idmc_slot_keep(a, &recorded, 0, 40000, true, &err), 0);
    ASSERT_TRUE(recorded == 40000 + IDMC_SLOT_AHEAD_MS);
    ASSERT_TRUE(access(path, F_OK) == 0);
    /* The end lowers the mark to the time used... */
    idmc_slot_end(a, claim_ms, recorded, 40200);
    a = claim(4, 4, 0, &err);
    ASSERT_TRUE(a != NULL);
    ASSERT_TRUE(idmc_slot_mark_ms(a) == 40200);
    /* ...but never below the claim's mark (nothing minted: used 0). */
    claim_ms = recorded = idmc_slot_mark_ms(a);
    ASSERT_EQ_INT(idmc_slot_keep(a, &recorded, 0, 41000, false, &err), 0);
    idmc_slot_end(a, claim_ms, recorded, 0);
    a = claim(4, 4, 0, &err);
    ASSERT_TRUE(a != NULL);
    ASSERT_TRUE(idmc_slot_mark_ms(a) == 40200);
    idmc_slot_end(a, 0, 0, 0);
    idmc_slot_end(NULL, 0, 0, 0);
}

static const struct test_case tests[] = {
    TEST(test_lowest_free_and_release),
    TEST(test_exact_and_full),
    TEST(test_dead_holder_frees_its_slot),
    TEST(test_mark_carried_raised_and_shrunk),
    TEST(test_unsafe_registry_refused),
    TEST(test_list),
    TEST(test_removed_registry_hands_out_nothing),
    TEST(test_repair_refused_when_another_holds_the_file),
    TEST(test_shared_registry_repaired_shared),
    TEST(test_mark_past_the_layout_refused_unwritten),
    TEST(test_shared_registry_across_users),
    TEST(test_keep_records_ahead_and_end_lowers),
    {0},
};

int main(int argc, char **argv)
{
    int rc = test_main(argc, argv, tests);
    clean_dirs();
    return rc;
}
