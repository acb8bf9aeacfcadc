/*
 * test_mark.c - the durable time mark (include/idmint/mark.h): the file's
 * bytes (CRC-32C's check value, two slots, a torn slot, damage), open's
 * refusals, the blocking mode (one write per reserve, threads at the
 * ceiling share one write), the split mode (want / write / commit), the
 * limit, a failed write, the close that lowers the mark, and the crash:
 * a child that mints and dies without closing, then a run with the clock
 * 5 s behind that still mints only above everything the child minted.
 */
#include "fakeclock.h"
#include "testlib.h"
#include "tmpfiles.h"

#include "mark/markfile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define T0_MS INT64_C(1767225600000) /* 2026-01-01T00:00Z */

static const char *tmp_path(const char *name)
{
    const char *path = test_tmp_path("mark", name);
    unlink(path);
    return path;
}


static idm_mark_config mark_cfg(struct fake_clock *c, int64_t reserve_ms, uint32_t flags)
{
    idm_mark_config cfg;
    idm_mark_config_init(&cfg);
    cfg.clock = fake_clock_as_clock(c);
    cfg.reserve_ms = reserve_ms;
    cfg.flags = flags;
    return cfg;
}

static idm_gen *new_gen(struct fake_clock *c)
{
    idm_gen_config gc;
    memset(&gc, 0, sizeof gc);
    gc.clock = fake_clock_as_clock(c);
    idm_gen *g = NULL;
    if (idm_gen_new(&g, &gc, NULL) != IDM_OK)
        return NULL;
    return g;
}

static int64_t v7_ms(const idm_uuid *u)
{
    idm_uuid_fields f;
    idm_uuid_decode(u, &f);
    return f.unix_ms;
}

/* ---- the bytes ------------------------------------------------------------ */

static void test_crc32c_check_value(void)
{
    /* The CRC-32C check value (RFC 3720, B.4; the catalogue's "check"). */
    ASSERT_EQ_U64(idm__crc32c("123456789", 9), 0xE3069283u);
    uint8_t zeros[32] = {0};
    ASSERT_EQ_U64(idm__crc32c(zeros, sizeof zeros), 0x8A9136AAu); /* RFC 3720 B.4 */
}

static void test_decode_slots(void)
{
    uint8_t buf[IDM_MARK_FILE_BYTES] = {0};
    int64_t mark = -1, written = 0;
    uint64_t seq = 9;
    idm_error err = {0};
    ASSERT_OK(idm_mark_decode(buf, 0, &mark, &seq, NULL, &err), &err);
    ASSERT_EQ_INT(mark, 0);
    ASSERT_EQ_U64(seq, 0);
    memset(buf, 0, sizeof buf);
    ASSERT_OK(idm_mark_decode(buf, sizeof buf, &mark, &seq, NULL, &err), &err);
    ASSERT_EQ_INT(mark, 0);

    struct idm_mark_slot a = {1, 1000, 77, 5, {0}}, b = {2, 2000, 88, 6, {0}};
    idm__mark_slot_encode(&a, buf);
    ASSERT_OK(idm_mark_decode(buf, sizeof buf, &mark, &seq, &written, &err), &err);
    ASSERT_EQ_INT(mark, 1000);
    ASSERT_EQ_U64(seq, 1);
    ASSERT_EQ_INT(written, 77);
    idm__mark_slot_encode(&b, buf + IDM_MARK_SLOT_STRIDE);
    ASSERT_OK(idm_mark_decode(buf, sizeof buf, &mark, &seq, NULL, &err), &err);
    ASSERT_EQ_INT(mark, 2000);
    ASSERT_EQ_U64(seq, 2);
    /* A torn write of the newer slot: the older one stands. */
    buf[IDM_MARK_SLOT_STRIDE + 20] ^= 1;
    ASSERT_OK(idm_mark_decode(buf, sizeof buf, &mark, &seq, NULL, &err), &err);
    ASSERT_EQ_INT(mark, 1000);
    /* Both gone: damaged, not new. */
    buf[3] ^= 1;
    ASSERT_EQ_INT(idm_mark_decode(buf, sizeof buf, &mark, &seq, NULL, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "no valid mark") != NULL);
    /* The old 16-byte state directory record is not a mark either. */
    memset(buf, 0, sizeof buf);
    memcpy(buf, "IDMHWM01\x10\x27\0\0\0\0\0\0", 16);
    ASSERT_EQ_INT(idm_mark_decode(buf, 16, &mark, NULL, NULL, &err), IDM_ESTATE);
    /* A mark past 48-bit ms is no mark. */
    struct idm_mark_slot far = {3, INT64_C(1) << 48, 0, 0, {0}};
    memset(buf, 0, sizeof buf);
    idm__mark_slot_encode(&far, buf);
    ASSERT_EQ_INT(idm_mark_decode(buf, sizeof buf, &mark, NULL, NULL, &err), IDM_ESTATE);
}

/* ---- open ----------------------------------------------------------------- */

static void test_open_creates_and_refuses(void)
{
    idm_error err = {0};
    idm_mark *m = NULL;
    char p[128];
    snprintf(p, sizeof p, "%s", tmp_path("new.mark"));
    ASSERT_OK(idm_mark_open(&m, p, NULL, &err), &err);
    struct stat st;
    ASSERT_TRUE(stat(p, &st) == 0);
    ASSERT_EQ_INT(st.st_size, IDM_MARK_FILE_BYTES);
    ASSERT_EQ_INT(st.st_mode & 0777, 0600);
    ASSERT_EQ_INT(idm_mark_resume_ms(m), 0);
    ASSERT_EQ_U64(idm_mark_writes(m), 0);
    /* Exclusive: a second opener is refused, naming the file. */
    idm_mark *m2 = NULL;
    ASSERT_EQ_INT(idm_mark_open(&m2, p, NULL, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "in use by another process") != NULL);
    ASSERT_TRUE(strstr(err.msg, p) != NULL);
    ASSERT_OK(idm_mark_close(m, &err), &err);

    char link[128];
    snprintf(link, sizeof link, "%s", tmp_path("link.mark"));
    ASSERT_TRUE(symlink(p, link) == 0);
    ASSERT_EQ_INT(idm_mark_open(&m2, link, NULL, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "symbolic link") != NULL);
    ASSERT_TRUE(chmod(p, 0620) == 0);
    ASSERT_EQ_INT(idm_mark_open(&m2, p, NULL, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "mark file") != NULL && strstr(err.msg, "group") != NULL);
    ASSERT_TRUE(chmod(p, 0600) == 0);

    /* Damaged: bytes but no mark. Nothing is written to it. */
    int fd = open(p, O_WRONLY | O_TRUNC);
    ASSERT_TRUE(fd >= 0 && write(fd, "garbage!", 8) == 8);
    close(fd);
    ASSERT_EQ_INT(idm_mark_open(&m2, p, NULL, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "damaged") != NULL);
    ASSERT_TRUE(stat(p, &st) == 0 && st.st_size == 8);

    idm_mark_config cfg;
    idm_mark_config_init(&cfg);
    cfg.reserve_ms = 0;
    ASSERT_EQ_INT(idm_mark_open(&m2, tmp_path("x.mark"), &cfg, &err), IDM_EINVAL);
    cfg.reserve_ms = 10;
    cfg.flags = 1u << 7;
    ASSERT_EQ_INT(idm_mark_open(&m2, tmp_path("x.mark"), &cfg, &err), IDM_EINVAL);
}

/* ---- blocking ------------------------------------------------------------- */

static void test_blocking_one_write_per_reserve(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0_MS);
    idm_mark_config cfg = mark_cfg(&c, 1000, 0);
    idm_error err = {0};
    idm_mark *m = NULL;
    const char *p = tmp_path("blocking.mark");
    ASSERT_OK(idm_mark_open(&m, p, &cfg, &err), &err);
    idm_gen *g = new_gen(&c);
    ASSERT_TRUE(g != NULL);
    ASSERT_OK(idm_mark_attach_gen(m, g, &err), &err);
    ASSERT_EQ_INT(idm_gen_ceiling(g), 0); /* nothing durable yet */
    idm_uuid u[100];
    ASSERT_OK(idm_uuidv7_next_n(g, u, 100, &err), &err);
    ASSERT_EQ_U64(idm_mark_writes(m), 1);
    ASSERT_EQ_INT(idm_mark_durable_ms(m), T0_MS + 1000);
    ASSERT_EQ_INT(test_file_mark(p), T0_MS + 1000);
    ASSERT_EQ_INT(idm_gen_ceiling(g), T0_MS + 1000);
    /* 1000 ms of minting within the reserve: no more writes. */
    for (int i = 0; i < 1000; i++) {
        fake_clock_set_ms(&c, T0_MS + i);
        ASSERT_OK(idm_uuidv7_next_n(g, u, 1, &err), &err);
    }
    ASSERT_EQ_U64(idm_mark_writes(m), 1);
    fake_clock_set_ms(&c, T0_MS + 1001);
    ASSERT_OK(idm_uuidv7_next_n(g, u, 1, &err), &err);
    ASSERT_EQ_U64(idm_mark_writes(m), 2);
    ASSERT_EQ_INT(test_file_mark(p), T0_MS + 2001);
    ASSERT_TRUE(v7_ms(&u[0]) <= test_file_mark(p));
    /* Other formats share the ceiling. */
    idm_ulid l;
    idm_ksuid k;
    ASSERT_OK(idm_ulid_next_n(g, &l, 1, &err), &err);
    ASSERT_OK(idm_ksuid_next_n(g, &k, 1, &err), &err);
    /* Close lowers the file to the last time used. */
    int64_t used = idm_mark_used_ms(m);
    ASSERT_TRUE(used >= T0_MS + 1001 && used < T0_MS + 2001);
    ASSERT_OK(idm_mark_close(m, &err), &err);
    ASSERT_EQ_INT(test_file_mark(p), used);
    /* ... and the generator mints nothing past it any more. */
    fake_clock_set_ms(&c, T0_MS + 5000);
    ASSERT_EQ_INT(idm_uuidv7_next_n(g, u, 1, &err), IDM_ECEILING);
    idm_gen_free(g);

    /* The next run resumes above it, whatever the clock reads. */
    fake_clock_set_ms(&c, T0_MS - 5000);
    ASSERT_OK(idm_mark_open(&m, p, &cfg, &err), &err);
    ASSERT_EQ_INT(idm_mark_resume_ms(m), used);
    g = new_gen(&c);
    ASSERT_OK(idm_mark_attach_gen(m, g, &err), &err);
    ASSERT_OK(idm_uuidv7_next_n(g, u, 1, &err), &err);
    ASSERT_TRUE(v7_ms(&u[0]) > used);
    ASSERT_EQ_INT(test_file_mark(p), used + 1 + 1000); /* the ms after it, and a reserve */
    ASSERT_OK(idm_mark_close(m, &err), &err);
    idm_gen_free(g);
}

struct crowd {
    idm_gen *g;
    struct fake_clock *c;
    int failures;
};

static void *crowd_thread(void *arg)
{
    struct crowd *cr = arg;
    idm_uuid u[10];
    for (int i = 0; i < 2000; i++) {
        if (idm_uuidv7_next_n(cr->g, u, 10, NULL) != IDM_OK)
            cr->failures++;
        atomic_fetch_add(&cr->c->now_ns, 100000); /* 0.1 ms per call */
    }
    return NULL;
}

static void test_blocking_threads_share_writes(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0_MS);
    idm_mark_config cfg = mark_cfg(&c, 100, 0);
    idm_error err = {0};
    idm_mark *m = NULL;
    ASSERT_OK(idm_mark_open(&m, tmp_path("crowd.mark"), &cfg, &err), &err);
    idm_gen *g = new_gen(&c);
    ASSERT_OK(idm_mark_attach_gen(m, g, &err), &err);
    struct crowd cr[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        cr[i] = (struct crowd){g, &c, 0};
        pthread_create(&t[i], NULL, crowd_thread, &cr[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        ASSERT_EQ_INT(cr[i].failures, 0);
    }
    /* 8000 calls, 0.1 ms each: 800 ms of clock, reserves of 100 ms. One
     * write per reserve, give or take the first and the last: never one
     * per thread per reserve. */
    int64_t elapsed = (int64_t)(atomic_load(&c.now_ns) / 1000000) - T0_MS;
    uint64_t writes = idm_mark_writes(m);
    ASSERT_TRUE(writes >= 1 && writes <= (uint64_t)(elapsed / 100 + 2));
    ASSERT_TRUE(idm_gen_high_water_ms(g) <= idm_mark_durable_ms(m));
    ASSERT_OK(idm_mark_close(m, &err), &err);
    idm_gen_free(g);
}

/* ---- split ---------------------------------------------------------------- */

static void test_split_want_write_commit(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0_MS);
    idm_mark_config cfg = mark_cfg(&c, 1000, IDM_MARK_SPLIT);
    idm_error err = {0};
    idm_mark *m = NULL;
    const char *p = tmp_path("split.mark");
    ASSERT_OK(idm_mark_open(&m, p, &cfg, &err), &err);
    idm_gen *g = new_gen(&c);
    ASSERT_OK(idm_mark_attach_gen(m, g, &err), &err);
    idm_uuid u;
    ASSERT_EQ_INT(idm_uuidv7_next_n(g, &u, 1, &err), IDM_ECEILING); /* no handler */
    ASSERT_EQ_U64(idm_mark_writes(m), 0);
    int64_t target = 0, durable = 0;
    ASSERT_TRUE(idm_mark_want(m, T0_MS, true, &target));
    ASSERT_EQ_INT(target, T0_MS + 1000);
    ASSERT_TRUE(!idm_mark_want(m, T0_MS, true, &target)); /* one in flight */
    ASSERT_OK(idm_mark_write(m, target, &durable, &err), &err);
    ASSERT_EQ_INT(durable, target);
    ASSERT_EQ_INT(idm_gen_ceiling(g), 0); /* only commit raises it */
    idm_mark_commit(m, durable);
    ASSERT_EQ_INT(idm_gen_ceiling(g), T0_MS + 1000);
    ASSERT_OK(idm_uuidv7_next_n(g, &u, 1, &err), &err);
    /* Writing ahead: not while need is far below the mark, once it is
     * within half a reserve. */
    ASSERT_TRUE(!idm_mark_want(m, T0_MS + 100, false, &target));
    ASSERT_TRUE(idm_mark_want(m, T0_MS + 600, false, &target));
    idm_mark_abort(m); /* a failed write: the ceiling stays */
    ASSERT_EQ_INT(idm_gen_ceiling(g), T0_MS + 1000);
    ASSERT_TRUE(idm_mark_want(m, T0_MS + 600, false, &target));
    ASSERT_OK(idm_mark_write(m, target, &durable, &err), &err);
    idm_mark_commit(m, durable);
    ASSERT_EQ_INT(test_file_mark(p), T0_MS + 1600);
    ASSERT_OK(idm_mark_close(m, &err), &err);
    idm_gen_free(g);
}

static idm_snowflake *new_sf(struct fake_clock *c, int64_t resume_ms)
{
    idm_snowflake_config sc;
    idm_snowflake_config_init(&sc);
    sc.gen.clock = fake_clock_as_clock(c);
    sc.resume_unix_ms = resume_ms;
    idm_snowflake *sf = NULL;
    if (idm_snowflake_new(&sf, &sc, NULL) != IDM_OK)
        return NULL;
    return sf;
}

static void test_limit_bounds_the_ceiling(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0_MS);
    idm_mark_config cfg = mark_cfg(&c, 1000, 0);
    idm_error err = {0};
    idm_mark *m = NULL;
    ASSERT_OK(idm_mark_open(&m, tmp_path("limit.mark"), &cfg, &err), &err);
    idm_gen *g = new_gen(&c);
    idm_snowflake *sf = new_sf(&c, 0);
    ASSERT_OK(idm_mark_attach_gen(m, g, &err), &err);
    ASSERT_OK(idm_mark_attach_snowflake(m, sf, &err), &err);
    idm_mark_set_limit(m, T0_MS + 10); /* a lease that ends soon */
    uint64_t id;
    ASSERT_OK(idm_snowflake_next_n(sf, &id, 1, NULL, &err), &err);
    ASSERT_EQ_INT(idm_mark_durable_ms(m), T0_MS + 1000);
    ASSERT_EQ_INT(idm_mark_ceiling_ms(m), T0_MS + 10);
    ASSERT_EQ_INT(idm_snowflake_ceiling(sf), T0_MS + 10);
    /* The lease is a node's: UUIDv7 carries none, its ceiling is the
     * durable mark. */
    ASSERT_EQ_INT(idm_gen_ceiling(g), T0_MS + 1000);
    fake_clock_set_ms(&c, T0_MS + 11);
    ASSERT_EQ_INT(idm_snowflake_next_n(sf, &id, 1, NULL, &err), IDM_ECEILING);
    ASSERT_TRUE(strstr(err.msg, "limit") != NULL);
    idm_uuid u;
    ASSERT_OK(idm_uuidv7_next_n(g, &u, 1, &err), &err);
    ASSERT_EQ_U64(idm_mark_writes(m), 1); /* the limit makes no write */
    /* Past the durable mark, a UUIDv7 writes the next reserve; the
     * snowflake still stops at the limit. */
    fake_clock_set_ms(&c, T0_MS + 1500);
    ASSERT_OK(idm_uuidv7_next_n(g, &u, 1, &err), &err);
    ASSERT_EQ_U64(idm_mark_writes(m), 2);
    ASSERT_EQ_INT(idm_snowflake_next_n(sf, &id, 1, NULL, &err), IDM_ECEILING);
    idm_mark_set_limit(m, INT64_MAX);
    ASSERT_OK(idm_snowflake_next_n(sf, &id, 1, NULL, &err), &err);
    ASSERT_OK(idm_mark_close(m, &err), &err);
    idm_gen_free(g);
    idm_snowflake_free(sf);
}

/* An owner that takes another node replaces its snowflake generator: the
 * old one detached still counts in the time used, the new one attached
 * gets the ceiling. */
static void test_detach_and_replace(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0_MS);
    idm_mark_config cfg = mark_cfg(&c, 1000, IDM_MARK_SPLIT);
    idm_error err = {0};
    idm_mark *m = NULL;
    const char *p = tmp_path("detach.mark");
    ASSERT_OK(idm_mark_open(&m, p, &cfg, &err), &err);
    ASSERT_OK(idm_mark_advance(m, T0_MS, &err), &err);
    idm_snowflake *a = new_sf(&c, 0), *b = NULL;
    ASSERT_OK(idm_mark_attach_snowflake(m, a, &err), &err);
    fake_clock_set_ms(&c, T0_MS + 700);
    uint64_t id;
    ASSERT_OK(idm_snowflake_next_n(a, &id, 1, NULL, &err), &err);
    ASSERT_EQ_INT(idm_mark_detach(m, a, &err), IDM_OK);
    ASSERT_EQ_INT(idm_mark_detach(m, a, &err), IDM_EINVAL);
    ASSERT_TRUE(strstr(err.msg, "not attached") != NULL);
    fake_clock_set_ms(&c, T0_MS + 100);
    b = new_sf(&c, T0_MS + 700);
    ASSERT_OK(idm_mark_attach_snowflake(m, b, &err), &err);
    ASSERT_EQ_INT(idm_snowflake_ceiling(b), idm_mark_durable_ms(m));
    ASSERT_EQ_INT(idm_mark_used_ms(m), T0_MS + 700);
    /* Nine more attach in the freed entry and beyond, up to eight. */
    idm_gen *gs[8] = {0};
    size_t n = 0;
    while (n < 8) {
        gs[n] = new_gen(&c);
        if (idm_mark_attach_gen(m, gs[n], &err) != IDM_OK)
            break;
        n++;
    }
    ASSERT_EQ_U64(n, 7); /* b and seven generators */
    ASSERT_OK(idm_mark_close(m, &err), &err);
    ASSERT_EQ_INT(test_file_mark(p), T0_MS + 700); /* lowered to the detached one's use */
    for (size_t i = 0; i < 8; i++)
        idm_gen_free(gs[i]);
    idm_snowflake_free(a);
    idm_snowflake_free(b);
}

/* The file removed or replaced under a running owner: the next write (or
 * idm_mark_check) puts it back where the next run reads it; a file with a
 * later mark put there is another writer's and left alone. */
static void test_file_removed_or_replaced(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0_MS);
    idm_mark_config cfg = mark_cfg(&c, 1000, IDM_MARK_SPLIT);
    idm_error err = {0};
    idm_mark *m = NULL;
    const char *p = tmp_path("relink.mark");
    char path[128], other[140];
    snprintf(path, sizeof path, "%s", p);
    snprintf(other, sizeof other, "%s.new", path);
    ASSERT_OK(idm_mark_open(&m, path, &cfg, &err), &err);
    ASSERT_OK(idm_mark_advance(m, T0_MS, &err), &err);
    ASSERT_EQ_U64(idm_mark_relinked(m), 0);
    /* Removed: the check makes it again with the durable mark. */
    ASSERT_EQ_INT(unlink(path), 0);
    ASSERT_OK(idm_mark_check(m, &err), &err);
    ASSERT_EQ_U64(idm_mark_relinked(m), IDM_MARK_REMADE);
    ASSERT_EQ_INT(test_file_mark(path), T0_MS + 1000);
    ASSERT_OK(idm_mark_check(m, &err), &err);
    ASSERT_EQ_U64(idm_mark_relinked(m), 0);
    /* Removed, then a write: made again with what is written. */
    ASSERT_EQ_INT(unlink(path), 0);
    ASSERT_OK(idm_mark_advance(m, T0_MS + 2000, &err), &err);
    ASSERT_EQ_U64(idm_mark_relinked(m), IDM_MARK_REMADE);
    ASSERT_EQ_INT(test_file_mark(path), T0_MS + 3000);
    /* Replaced by rename with an older mark (a backup put back): taken
     * over, written with ours. */
    {
        idm_mark *o = NULL;
        fake_clock_set_ms(&c, T0_MS);
        ASSERT_OK(idm_mark_open(&o, other, &cfg, &err), &err);
        ASSERT_OK(idm_mark_advance(o, T0_MS, &err), &err);
        ASSERT_OK(idm_mark_close(o, &err), &err);
    }
    ASSERT_EQ_INT(rename(other, path), 0);
    ASSERT_EQ_INT(test_file_mark(path), 0); /* lowered at close: nothing used */
    ASSERT_OK(idm_mark_check(m, &err), &err);
    ASSERT_EQ_U64(idm_mark_relinked(m), IDM_MARK_REPLACED);
    ASSERT_EQ_INT(test_file_mark(path), T0_MS + 3000);
    /* Replaced by another writer's file, locked by it: left alone. */
    {
        idm_mark *o = NULL;
        fake_clock_set_ms(&c, T0_MS + 9000);
        ASSERT_OK(idm_mark_open(&o, other, &cfg, &err), &err);
        ASSERT_OK(idm_mark_advance(o, T0_MS + 9000, &err), &err);
        ASSERT_EQ_INT(rename(other, path), 0);
        ASSERT_EQ_INT(idm_mark_check(m, &err), IDM_ESTATE);
        ASSERT_EQ_U64(idm_mark_relinked(m), IDM_MARK_TAKEN);
        ASSERT_TRUE(strstr(err.msg, "in use") != NULL);
        /* Its writer gone, its later mark still says it is not ours. */
        ASSERT_OK(idm_mark_close(o, &err), &err);
        unlink(other); /* made again by o's close, at its own path */
        ASSERT_EQ_INT(idm_mark_check(m, &err), IDM_ESTATE);
        ASSERT_EQ_U64(idm_mark_relinked(m), IDM_MARK_TAKEN);
        ASSERT_TRUE(strstr(err.msg, "later mark") != NULL);
        ASSERT_EQ_INT(test_file_mark(path), T0_MS + 10000);
    }
    /* Nor lowered at close. */
    ASSERT_EQ_INT(idm_mark_close(m, &err), IDM_ESTATE);
    ASSERT_EQ_INT(test_file_mark(path), T0_MS + 10000);
}

static void test_failed_write_is_reported(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0_MS);
    idm_mark_config cfg = mark_cfg(&c, 1000, 0);
    idm_error err = {0};
    idm_mark *m = NULL;
    const char *p = tmp_path("fail.mark");
    ASSERT_OK(idm_mark_open(&m, p, &cfg, &err), &err);
    idm_gen *g = new_gen(&c);
    ASSERT_OK(idm_mark_attach_gen(m, g, &err), &err);
    idm__mark_fail_write_at(1, ENOSPC);
    idm_uuid u;
    ASSERT_EQ_INT(idm_uuidv7_next_n(g, &u, 1, &err), IDM_ESTATE);
    ASSERT_TRUE(strstr(err.msg, "No space left") != NULL && strstr(err.msg, p) != NULL);
    ASSERT_EQ_INT(idm_gen_ceiling(g), 0); /* nothing was handed out */
    ASSERT_EQ_INT(test_file_mark(p), 0);
    ASSERT_OK(idm_uuidv7_next_n(g, &u, 1, &err), &err); /* the next write works */
    ASSERT_EQ_INT(test_file_mark(p), T0_MS + 1000);
    idm__mark_fail_write_at(1, EIO); /* the close's lowering fails: left as is */
    ASSERT_EQ_INT(idm_mark_close(m, &err), IDM_ESTATE);
    ASSERT_EQ_INT(test_file_mark(p), T0_MS + 1000);
    idm_gen_free(g);
}

static void test_shared_adopts_a_later_mark(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0_MS);
    idm_mark_config cfg = mark_cfg(&c, 1000, IDM_MARK_SHARED);
    idm_error err = {0};
    idm_mark *a = NULL, *b = NULL;
    const char *p = tmp_path("shared.mark");
    ASSERT_OK(idm_mark_open(&a, p, &cfg, &err), &err);
    ASSERT_OK(idm_mark_open(&b, p, &cfg, &err), &err);
    ASSERT_OK(idm_mark_advance(a, T0_MS + 5000, &err), &err);
    ASSERT_EQ_INT(test_file_mark(p), T0_MS + 6000);
    /* b wants less than a wrote: it adopts a's mark, writing nothing. */
    ASSERT_OK(idm_mark_advance(b, T0_MS + 1, &err), &err);
    ASSERT_EQ_INT(idm_mark_durable_ms(b), T0_MS + 6000);
    ASSERT_OK(idm_mark_advance(b, T0_MS + 7000, &err), &err);
    ASSERT_EQ_INT(test_file_mark(p), T0_MS + 8000);
    /* Shared marks are never lowered. */
    ASSERT_OK(idm_mark_close(a, &err), &err);
    ASSERT_OK(idm_mark_close(b, &err), &err);
    ASSERT_EQ_INT(test_file_mark(p), T0_MS + 8000);
}

static void test_tag_and_trusted_state(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0_MS);
    idm_mark_config cfg = mark_cfg(&c, 1000, IDM_MARK_SHARED | IDM_MARK_SPLIT);
    idm_error err = {0};
    idm_mark *a = NULL, *b = NULL;
    const char *p = tmp_path("tag.mark");
    const uint8_t boot1[IDM_MARK_TAG_BYTES] = "boot-one-0123456",
                  boot2[IDM_MARK_TAG_BYTES] = "boot-two-0123456";
    uint8_t got[IDM_MARK_TAG_BYTES];
    ASSERT_OK(idm_mark_open(&a, p, &cfg, &err), &err);
    idm_mark_set_tag(a, boot1);
    ASSERT_OK(idm_mark_advance(a, T0_MS, &err), &err);
    ASSERT_OK(idm_mark_open(&b, p, &cfg, &err), &err);
    idm_mark_tag(b, got);
    ASSERT_EQ_MEM(got, boot1, sizeof got);
    /* Another tag is written even though the mark is high enough: the
     * mark stays, the tag changes. */
    idm_mark_set_tag(b, boot2);
    int64_t target = 0, durable = 0;
    ASSERT_TRUE(idm_mark_want(b, T0_MS + 1000, true, &target));
    ASSERT_OK(idm_mark_write(b, T0_MS + 10, &durable, &err), &err);
    idm_mark_commit(b, durable);
    ASSERT_EQ_INT(durable, T0_MS + 1000);
    ASSERT_EQ_INT(test_file_mark(p), T0_MS + 1000);
    ASSERT_OK(idm_mark_close(b, &err), &err);
    ASSERT_OK(idm_mark_open(&b, p, &cfg, &err), &err);
    idm_mark_tag(b, got);
    ASSERT_EQ_MEM(got, boot2, sizeof got);

    /* A snowflake made without resuming: refused, unless the owner vouches
     * for its state. */
    idm_snowflake_config sc;
    idm_snowflake_config_init(&sc);
    sc.gen.clock = fake_clock_as_clock(&c);
    idm_snowflake *sf = NULL;
    ASSERT_OK(idm_snowflake_new(&sf, &sc, &err), &err);
    ASSERT_EQ_INT(idm_mark_attach_snowflake(b, sf, &err), IDM_EINVAL);
    idm_mark_trust_state(b);
    ASSERT_OK(idm_mark_attach_snowflake(b, sf, &err), &err);
    ASSERT_EQ_INT(idm_snowflake_ceiling(sf), T0_MS + 1000);
    ASSERT_OK(idm_mark_close(a, &err), &err);
    ASSERT_OK(idm_mark_close(b, &err), &err);
    idm_snowflake_free(sf);
}

/* ---- snowflakes and clocks ------------------------------------------------ */

static void test_snowflake_and_hlc(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0_MS);
    idm_mark_config cfg = mark_cfg(&c, 1, 0); /* a write per ms */
    idm_error err = {0};
    idm_mark *m = NULL;
    const char *p = tmp_path("sf.mark");
    /* A previous run minted at T0 + 3 s. */
    ASSERT_OK(idm_mark_open(&m, p, &cfg, &err), &err);
    idm_gen *g = new_gen(&c);
    ASSERT_OK(idm_mark_attach_gen(m, g, &err), &err);
    fake_clock_set_ms(&c, T0_MS + 3000);
    idm_uuid u;
    ASSERT_OK(idm_uuidv7_next_n(g, &u, 1, &err), &err);
    ASSERT_OK(idm_mark_close(m, &err), &err);
    idm_gen_free(g);
    ASSERT_EQ_INT(test_file_mark(p), T0_MS + 3000);
    fake_clock_set_ms(&c, T0_MS);
    ASSERT_OK(idm_mark_open(&m, p, &cfg, &err), &err);
    idm_snowflake_config sc;
    idm_snowflake_config_init(&sc);
    sc.gen.clock = fake_clock_as_clock(&c);
    sc.max_rewind_ms = 0;
    idm_snowflake *sf = NULL;
    ASSERT_OK(idm_snowflake_new(&sf, &sc, &err), &err);
    ASSERT_EQ_INT(idm_mark_attach_snowflake(m, sf, &err), IDM_EINVAL);
    ASSERT_TRUE(strstr(err.msg, "resume_unix_ms") != NULL);
    idm_snowflake_free(sf);
    sc.resume_unix_ms = idm_mark_resume_ms(m);
    sc.max_rewind_ms = 5000; /* the clock is 3 s behind the mark: waits */
    ASSERT_OK(idm_snowflake_new(&sf, &sc, &err), &err);
    ASSERT_OK(idm_mark_attach_snowflake(m, sf, &err), &err);
    /* 10,000 snowflakes over several reserves, kept in one call. */
    uint64_t ids[10000];
    size_t done = 0;
    ASSERT_OK(idm_snowflake_next_n(sf, ids, 10000, &done, &err), &err);
    ASSERT_EQ_U64(done, 10000);
    ASSERT_TRUE(idm_mark_writes(m) >= 2);
    for (size_t i = 1; i < done; i++)
        ASSERT_TRUE(ids[i] > ids[i - 1]);
    idm_sf_parts parts;
    ASSERT_OK(idm_sf_decode(idm_snowflake_layout(sf), ids[0], &parts, &err), &err);
    ASSERT_TRUE(parts.unix_ms > T0_MS + 3000); /* above the previous run's */
    ASSERT_TRUE(idm_snowflake_high_water_ms(sf) <= test_file_mark(p));
    /* The try_ calls never write. */
    uint64_t writes = idm_mark_writes(m);
    int64_t retry = 0;
    for (int i = 0; i < 100000 && done > 0; i++) {
        int rc = idm_snowflake_try_next_n(sf, ids, 1, &done, &retry, &err);
        if (rc == IDM_ECEILING)
            break;
        if (rc == IDM_EAGAIN)
            atomic_store(&c.now_ns, retry);
    }
    ASSERT_EQ_U64(idm_mark_writes(m), writes);

    idm_hlc_config hc;
    idm_hlc_config_init(&hc);
    hc.clock = fake_clock_as_clock(&c);
    idm_hlc *h = NULL;
    ASSERT_OK(idm_hlc_new(&h, &hc, &err), &err);
    ASSERT_OK(idm_mark_attach_hlc(m, h, &err), &err);
    uint64_t stamp = 0;
    fake_clock_set_ms(&c, idm_mark_durable_ms(m) + 10); /* past the ceiling */
    ASSERT_OK(idm_hlc_now(h, &stamp, &err), &err);
    int64_t wall = 0;
    idm_hlc_decode(stamp, &wall, NULL);
    ASSERT_TRUE(wall <= idm_mark_durable_ms(m) && wall <= test_file_mark(p));
    /* A remote stamp beyond the ceiling: the handler raises it. */
    uint64_t remote = 0;
    ASSERT_OK(idm_hlc_encode(wall + 200, 0, &remote, &err), &err);
    ASSERT_OK(idm_hlc_update(h, remote, &stamp, &err), &err);
    ASSERT_TRUE(idm_mark_durable_ms(m) >= wall + 200);
    ASSERT_OK(idm_mark_close(m, &err), &err);
    idm_hlc_free(h);
    idm_snowflake_free(sf);
}

/* ---- the crash ------------------------------------------------------------ */

static void test_crash_then_clock_back(void)
{
    const char *p = tmp_path("crash.mark");
    int pipefd[2];
    ASSERT_TRUE(pipe(pipefd) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        /* Mints with the real clock, reports its last ID's time, and dies
         * without closing anything. */
        close(pipefd[0]);
        idm_mark *m = NULL;
        idm_gen *g = NULL;
        if (idm_mark_open(&m, p, NULL, NULL) != IDM_OK || idm_gen_new(&g, NULL, NULL) != IDM_OK ||
            idm_mark_attach_gen(m, g, NULL) != IDM_OK)
            _exit(3);
        idm_uuid u[1000];
        int64_t last = 0;
        for (int i = 0; i < 20; i++) {
            if (idm_uuidv7_next_n(g, u, 1000, NULL) != IDM_OK)
                _exit(4);
            last = v7_ms(&u[999]);
        }
        if (write(pipefd[1], &last, sizeof last) != (ssize_t)sizeof last)
            _exit(5);
        _exit(0);
    }
    close(pipefd[1]);
    int64_t child_last = 0;
    ASSERT_TRUE(read(pipefd[0], &child_last, sizeof child_last) == (ssize_t)sizeof child_last);
    close(pipefd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_TRUE(test_file_mark(p) >= child_last); /* on disk before it was handed out */

    /* The next run, its clock 5 s behind the child's last ID. */
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, child_last - 5000);
    idm_mark_config cfg = mark_cfg(&c, 1000, 0);
    idm_error err = {0};
    idm_mark *m = NULL;
    ASSERT_OK(idm_mark_open(&m, p, &cfg, &err), &err);
    idm_gen *g = new_gen(&c);
    ASSERT_OK(idm_mark_attach_gen(m, g, &err), &err);
    idm_uuid u;
    ASSERT_OK(idm_uuidv7_next_n(g, &u, 1, &err), &err);
    ASSERT_TRUE(v7_ms(&u) > child_last);
    ASSERT_OK(idm_mark_close(m, &err), &err);
    idm_gen_free(g);
}

static const struct test_case tests[] = {
    TEST(test_crc32c_check_value),
    TEST(test_decode_slots),
    TEST(test_open_creates_and_refuses),
    TEST(test_blocking_one_write_per_reserve),
    TEST(test_blocking_threads_share_writes),
    TEST(test_split_want_write_commit),
    TEST(test_limit_bounds_the_ceiling),
    TEST(test_detach_and_replace),
    TEST(test_file_removed_or_replaced),
    TEST(test_failed_write_is_reported),
    TEST(test_shared_adopts_a_later_mark),
    TEST(test_tag_and_trusted_state),
    TEST(test_snowflake_and_hlc),
    TEST(test_crash_then_clock_back),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
