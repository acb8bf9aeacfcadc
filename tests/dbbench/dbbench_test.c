/*
 * dbbench_test.c - the databases of `idmint bench btree` (dbbench/)
 * against a real database, through idmint_dbbench.h only.
 * tests/dbbench/test_dbbench.sh makes the databases and runs it.
 *
 *   dbbench_test URL [TEST_NAME]
 *       every test (or one) against URL (sqlite:PATH, postgresql://...,
 *       mysql://...): the pure parts (URL kinds, redaction, the mysql://
 *       parser, the error record written only on failure), table names
 *       refused without the prefix, for key widths 8, 16 and 20 a table made, filled with sequential and random keys
 *       in batches, its figures growing with its rows, a duplicate key
 *       refused (IDMB_EDB saying so, its batch rolled back), the table
 *       dropped; 16-byte random keys against sequential ones (50,000 rows
 *       each; PostgreSQL's leaves must be clearly less full, InnoDB's
 *       more numerous); the write counters growing (WAL on PostgreSQL,
 *       bytes written on SQLite, redo on MySQL); an unreachable database
 *       named in IDMB_EDB without its password.
 *   dbbench_test URL missing
 *       opening must be IDMB_EMISSING naming pgstattuple (a PostgreSQL
 *       role that may not create the extension, in a database without it).
 *
 * Tables are named after the PID, so runs on one database never meet.
 * Lines starting with "# " report measurements (rows/s, densities); they
 * are judged only by the bounds asserted. The exit status is non-zero
 * when any test failed.
 */
#include "idmint_dbbench.h"
#include "testlib.h"

#include <time.h>
#include <unistd.h>

#define DENSITY_ROWS 50000
#define DENSITY_BATCH 5000

static const char *url;
static idmb_kind kind;
static idmb_db *db;
static idmb_error err;
static uint64_t rng = 0x1d3a7e5b2c4f6a89u;

#define ASSERT_RC(call, want)                                                                      \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != (want))                                                                         \
            TEST_FAIL_("%s returned %d, expected %d: %s", #call, rc_, (int)(want), err.msg);       \
    } while (0)

#define ASSERT_CONTAINS(hay, needle)                                                               \
    do {                                                                                           \
        if (strstr((hay), (needle)) == NULL)                                                       \
            TEST_FAIL_("expected \"%s\" in \"%s\"", (needle), (hay));                              \
    } while (0)

#define ASSERT_LACKS(hay, needle)                                                                  \
    do {                                                                                           \
        if (strstr((hay), (needle)) != NULL)                                                       \
            TEST_FAIL_("did not expect \"%s\" in \"%s\"", (needle), (hay));                        \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *kind_name(void)
{
    return kind == IDMB_SQLITE ? "sqlite" : kind == IDMB_POSTGRESQL ? "postgresql" : "mysql";
}

/* This run's table NAME. */
static const char *table(const char *name)
{
    static char buf[4][IDMB_TABLE_MAX + 1];
    static int next;
    char *b = buf[next++ % 4];
    snprintf(b, sizeof buf[0], IDMB_TABLE_PREFIX "t%ld_%s", (long)getpid(), name);
    return b;
}

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

/* n keys of width w: sequential (a big-endian counter from *seq in front,
 * as time-ordered IDs have, the rest random) or wholly random. 8-byte
 * keys stay positive (bigint, snowflake). */
static void make_keys(uint8_t *out, int w, size_t n, bool sequential, uint64_t *seq)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t *k = out + i * (size_t)w;
        for (int j = 0; j < w; j += 8) {
            uint8_t r[8];
            put_be64(r, test_rng_next(&rng));
            memcpy(k + j, r, (size_t)(w - j < 8 ? w - j : 8));
        }
        if (sequential) {
            put_be64(k, (*seq)++);
        }
        if (w == 8)
            k[0] &= 0x7f;
    }
}

/* ---- the pure parts ------------------------------------------------------ */

static void test_url_kinds(void)
{
    ASSERT_EQ_INT(idmb_url_kind("sqlite:/tmp/x.db"), IDMB_SQLITE);
    ASSERT_EQ_INT(idmb_url_kind("postgresql://u@h/db"), IDMB_POSTGRESQL);
    ASSERT_EQ_INT(idmb_url_kind("postgres://u@h/db"), IDMB_POSTGRESQL);
    ASSERT_EQ_INT(idmb_url_kind("mysql://u@h/db"), IDMB_MYSQL);
    ASSERT_EQ_INT(idmb_url_kind("mariadb://u@h/db"), IDMB_MYSQL);
    ASSERT_EQ_INT(idmb_url_kind("redis://h"), 0);
    ASSERT_EQ_INT(idmb_url_kind(""), 0);
    ASSERT_TRUE(idmb_have(kind));
    idmb_db *none = NULL;
    ASSERT_RC(idmb_open("oracle://scott:tiger@h/db", &none, &err), IDMB_EUSAGE);
    ASSERT_TRUE(none == NULL);
    ASSERT_LACKS(err.msg, "tiger");
    ASSERT_RC(idmb_open("sqlite:", &none, &err), IDMB_EUSAGE);
}

/* docs/CONTRIBUTING.md's convention: positive codes, the caller's record
 * written only when a call fails (with the code), NULL allowed. */
static void test_error_record(void)
{
    idmb_error e;
    memset(&e, 0, sizeof e);
    e.code = 99;
    snprintf(e.msg, sizeof e.msg, "untouched");
    idmb_mysql_url u;
    const char *ok = "mysql://u@h/db";
    ASSERT_RC(idmb_mysql_url_parse(ok, strlen(ok), &u, &e), IDMB_OK);
    ASSERT_EQ_INT(e.code, 99);
    ASSERT_EQ_STR(e.msg, "untouched");
    ASSERT_RC(idmb_mysql_url_parse("mysql://", 8, &u, &e), IDMB_EUSAGE);
    ASSERT_EQ_INT(e.code, IDMB_EUSAGE);
    ASSERT_CONTAINS(e.msg, "mysql URL");
    ASSERT_RC(idmb_mysql_url_parse("mysql://", 8, &u, NULL), IDMB_EUSAGE);
    idmb_db *none = NULL;
    ASSERT_RC(idmb_open("oracle://h/db", &none, NULL), IDMB_EUSAGE);
    ASSERT_RC(idmb_open("oracle://h/db", &none, &e), IDMB_EUSAGE);
    ASSERT_EQ_INT(e.code, IDMB_EUSAGE);
    ASSERT_CONTAINS(e.msg, "is not a database URL");
    ASSERT_TRUE(IDMB_EUSAGE > 0 && IDMB_EUNSUPPORTED > 0 && IDMB_EDB > 0 && IDMB_EMISSING > 0);
    ASSERT_EQ_STR(idmb_strerror(IDMB_EDB), "the database failed or could not be reached");
    ASSERT_EQ_STR(idmb_strerror(-3), "unknown error");
}

static void test_url_redact(void)
{
    char out[256];
    idmb_url_redact("mysql://u:secret@127.0.0.1:3306/db", out, sizeof out);
    ASSERT_EQ_STR(out, "mysql://u:***@127.0.0.1:3306/db");
    idmb_url_redact("postgresql://postgres@127.0.0.1:5/postgres", out, sizeof out);
    ASSERT_EQ_STR(out, "postgresql://postgres@127.0.0.1:5/postgres");
    /* An unencoded '@' or '/' in the password is still hidden. */
    idmb_url_redact("mysql://u:se@c/ret@h/db", out, sizeof out);
    ASSERT_EQ_STR(out, "mysql://u:***@h/db");
    idmb_url_redact("postgresql://h/db?user=u&password=secret&sslmode=off", out, sizeof out);
    ASSERT_EQ_STR(out, "postgresql://h/db?user=u&password=***&sslmode=off");
    idmb_url_redact("sqlite:/tmp/a.db", out, sizeof out);
    ASSERT_EQ_STR(out, "sqlite:/tmp/a.db");
    /* Cut short, never with the password. */
    char small[12];
    idmb_url_redact("mysql://u:secret@host/db", small, sizeof small);
    ASSERT_TRUE(strlen(small) < sizeof small);
    ASSERT_LACKS(small, "sec");
}

static void test_mysql_url_parse(void)
{
    idmb_mysql_url u;
    const char *a = "mysql://bench:p%40ss@127.0.0.1:3307/idm%5Fdb";
    ASSERT_RC(idmb_mysql_url_parse(a, strlen(a), &u, &err), IDMB_OK);
    ASSERT_EQ_STR(u.user, "bench");
    ASSERT_EQ_STR(u.password, "p@ss");
    ASSERT_EQ_STR(u.host, "127.0.0.1");
    ASSERT_EQ_INT(u.port, 3307);
    ASSERT_EQ_STR(u.db, "idm_db");
    ASSERT_EQ_STR(u.socket, "");
    const char *b = "mariadb://root@localhost/d?socket=/tmp/my%20sock";
    ASSERT_RC(idmb_mysql_url_parse(b, strlen(b), &u, &err), IDMB_OK);
    ASSERT_EQ_STR(u.user, "root");
    ASSERT_EQ_STR(u.password, "");
    ASSERT_EQ_STR(u.host, "");
    ASSERT_EQ_INT(u.port, 0);
    ASSERT_EQ_STR(u.socket, "/tmp/my sock");
    ASSERT_EQ_INT(u.uuid_column, 0);
    /* ?key=uuid: a MariaDB UUID column, alone or beside socket= */
    const char *e = "mysql://u@h/d?key=uuid";
    ASSERT_RC(idmb_mysql_url_parse(e, strlen(e), &u, &err), IDMB_OK);
    ASSERT_EQ_INT(u.uuid_column, 1);
    ASSERT_EQ_STR(u.host, "h");
    const char *f = "mariadb://root@localhost/d?key=uuid&socket=/s";
    ASSERT_RC(idmb_mysql_url_parse(f, strlen(f), &u, &err), IDMB_OK);
    ASSERT_EQ_INT(u.uuid_column, 1);
    ASSERT_EQ_STR(u.socket, "/s");
    const char *c = "mysql://u:pw@[::1]:33/d";
    ASSERT_RC(idmb_mysql_url_parse(c, strlen(c), &u, &err), IDMB_OK);
    ASSERT_EQ_STR(u.host, "::1");
    ASSERT_EQ_INT(u.port, 33);
    /* Only len bytes count: the rest of the buffer is not read. */
    const char *d = "mysql://u@h/dbXXXX";
    ASSERT_RC(idmb_mysql_url_parse(d, strlen(d) - 4, &u, &err), IDMB_OK);
    ASSERT_EQ_STR(u.db, "db");
    static const char *const bad[] = {
        "mysql://h/db",           "mysql://@h/db",         "mysql://u:topsecret@h",
        "mysql://u:topsecret@h/", "mysql://u:topsecret@h:0/d", "mysql://u:topsecret@h:65536/d",
        "mysql://u:topsecret@h:x/d", "mysql://u:topsecret@/d", "mysql://u:topsecret@h/d?x=1",
        "mysql://u:topsecret@h:1/d?socket=/s", "mysql://u:top%zzsecret@h/d", "mysql://u:%00@h/d",
        "mysql://u@h/a/b", "http://u@h/d", "mysql://u:topsecret@[::1/d", "mysql://u@h/d?socket=",
        "mysql://u:topsecret@h/d?key=binary", "mysql://u:topsecret@h/d?key=uuid&",
        "mysql://u:topsecret@h/d?", "mysql://u:topsecret@h/d?key=uuidx",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&u, 'x', sizeof u);
        err.msg[0] = '\0';
        int rc = idmb_mysql_url_parse(bad[i], strlen(bad[i]), &u, &err);
        if (rc != IDMB_EUSAGE || err.msg[0] == '\0')
            TEST_FAIL_("'%s': rc %d, message '%s'", bad[i], rc, err.msg);
        ASSERT_LACKS(err.msg, "topsecret");
        ASSERT_EQ_STR(u.password, "");
    }
}

/* ---- against the database ------------------------------------------------ */

static void test_version(void)
{
    const char *v = idmb_db_version(db);
    printf("# %s: %s\n", kind_name(), v);
    ASSERT_EQ_INT(idmb_db_kind(db), kind);
    const char *want = kind == IDMB_SQLITE       ? "SQLite 3."
                       : kind == IDMB_POSTGRESQL ? "PostgreSQL "
                                                 : "MariaDB ";
    if (strncmp(v, want, strlen(want)) != 0 && strncmp(v, "MySQL ", 6) != 0)
        TEST_FAIL_("version '%s' does not start with '%s'", v, want);
}

static void test_table_names(void)
{
    static const char *const bad[] = {
        "t1", "users", "idmint_bench_", "idmint_bench_A", "idmint_bench_x;drop",
        "idmint_bench_x y", "Idmint_bench_x", "idmint_bench_0123456789012345678901234567890123456789012345678901",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (idmb_create_table(db, bad[i], 16, &err) != IDMB_EUSAGE)
            TEST_FAIL_("create '%s' was not refused", bad[i]);
        if (idmb_drop_table(db, bad[i], &err) != IDMB_EUSAGE)
            TEST_FAIL_("drop '%s' was not refused", bad[i]);
        idmb_stats st;
        if (idmb_read_stats(db, bad[i], &st, &err) != IDMB_EUSAGE)
            TEST_FAIL_("stats of '%s' were not refused", bad[i]);
    }
    ASSERT_RC(idmb_create_table(db, "users", 16, &err), IDMB_EUSAGE);
    ASSERT_CONTAINS(err.msg, IDMB_TABLE_PREFIX);
    ASSERT_RC(idmb_create_table(db, table("w"), 12, &err), IDMB_EUSAGE);
    uint8_t k[16] = {0};
    ASSERT_RC(idmb_insert(db, "users", 16, k, 1, 0, &err), IDMB_EUSAGE);
    ASSERT_RC(idmb_insert(db, table("w"), 16, k, 1, -1, &err), IDMB_EUSAGE);
}

static bool density_ok(double d)
{
    return d < 0 || (d > 0 && d <= 1);
}

/* Filled in batches: sequential keys, then random ones; the figures grow. */
static void check_width(int w)
{
    const char *t = table(w == 8 ? "w8" : w == 16 ? "w16" : "w20");
    enum { BATCH = 2000, BATCHES = 3 };
    uint8_t *keys = malloc((size_t)BATCH * (size_t)w);
    ASSERT_TRUE(keys != NULL);
    uint64_t seq = 1000;
    int64_t row = 0;
    ASSERT_RC(idmb_create_table(db, t, w, &err), IDMB_OK);
    /* Made again: dropped first. */
    ASSERT_RC(idmb_create_table(db, t, w, &err), IDMB_OK);
    idmb_stats s0, s1, s2;
    int rc = idmb_read_stats(db, t, &s0, &err);
    if (rc != IDMB_OK) {
        free(keys);
        TEST_FAIL_("stats of an empty table: %d: %s", rc, err.msg);
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int b = 0; b < BATCHES; b++) {
            make_keys(keys, w, BATCH, pass == 0, &seq);
            rc = idmb_insert(db, t, w, keys, BATCH, row, &err);
            if (rc != IDMB_OK) {
                free(keys);
                TEST_FAIL_("insert of %d-byte keys, batch %d: %d: %s", w, b, rc, err.msg);
            }
            row += BATCH;
        }
        rc = idmb_read_stats(db, t, pass == 0 ? &s1 : &s2, &err);
        if (rc != IDMB_OK) {
            free(keys);
            TEST_FAIL_("stats: %d: %s", rc, err.msg);
        }
    }
    printf("# %s: %d-byte keys: %lld rows: index %lld bytes, %lld leaves, density %.3f, page %lld\n",
           kind_name(), w, (long long)row, (long long)s2.index_bytes, (long long)s2.leaf_pages,
           s2.leaf_density, (long long)s2.page_bytes);
    /* A duplicate: the last batch's first key again, after a new one. The
     * batch is refused whole. */
    uint8_t two[2 * 20];
    uint64_t fresh = 1u << 30;
    make_keys(two, w, 1, true, &fresh);
    memcpy(two + w, keys, (size_t)w);
    rc = idmb_insert(db, t, w, two, 2, row, &err);
    free(keys);
    ASSERT_EQ_INT(rc, IDMB_EDB);
    ASSERT_CONTAINS(err.msg, "duplicate key");
    ASSERT_CONTAINS(err.msg, t);
    ASSERT_RC(idmb_insert(db, t, w, two, 1, row, &err), IDMB_OK);

    ASSERT_TRUE(s0.index_bytes >= 0);
    ASSERT_TRUE(s1.index_bytes > 0);
    ASSERT_TRUE(s2.index_bytes > s1.index_bytes);
    ASSERT_TRUE(s1.index_bytes >= s0.index_bytes);
    ASSERT_TRUE(s2.page_bytes == 4096 || s2.page_bytes == 8192 || s2.page_bytes == 16384 ||
                (s2.page_bytes >= 512 && s2.page_bytes <= 65536));
    ASSERT_TRUE(s2.leaf_pages > 0);
    ASSERT_TRUE(s2.leaf_pages > s1.leaf_pages);
    ASSERT_TRUE(density_ok(s1.leaf_density));
    ASSERT_TRUE(density_ok(s2.leaf_density));
    if (kind != IDMB_MYSQL) {
        ASSERT_TRUE(s2.leaf_density > 0);
    } else {
        ASSERT_TRUE(s2.leaf_density < 0);
    }
    if (kind == IDMB_POSTGRESQL) {
        ASSERT_TRUE(s2.leaf_fragmentation >= 0 && s2.leaf_fragmentation <= 1);
        ASSERT_TRUE(s2.table_bytes > 0);
    } else {
        ASSERT_TRUE(s2.leaf_fragmentation < 0);
        ASSERT_EQ_INT(s2.table_bytes, s2.index_bytes);
    }
    ASSERT_TRUE(s2.index_bytes >= s2.leaf_pages * s2.page_bytes);

    ASSERT_RC(idmb_drop_table(db, t, &err), IDMB_OK);
    idmb_stats gone;
    ASSERT_RC(idmb_read_stats(db, t, &gone, &err), IDMB_EDB);
    ASSERT_CONTAINS(err.msg, t);
    /* Dropping what is not there is fine. */
    ASSERT_RC(idmb_drop_table(db, t, &err), IDMB_OK);
}

static void test_width_8(void)
{
    check_width(8);
}

static void test_width_16(void)
{
    check_width(16);
}

static void test_width_20(void)
{
    check_width(20);
}

/* DENSITY_ROWS rows of 16-byte keys; their stats, and rows/s. */
static int fill(const char *t, bool sequential, idmb_stats *st, double *rows_per_s)
{
    uint8_t *keys = malloc((size_t)DENSITY_BATCH * 16);
    if (keys == NULL)
        return -100;
    uint64_t seq = 1;
    int rc = idmb_create_table(db, t, 16, &err);
    double spent = 0;
    for (int64_t row = 0; rc == IDMB_OK && row < DENSITY_ROWS; row += DENSITY_BATCH) {
        make_keys(keys, 16, DENSITY_BATCH, sequential, &seq);
        double t0 = now_s();
        rc = idmb_insert(db, t, 16, keys, DENSITY_BATCH, row, &err);
        spent += now_s() - t0;
    }
    free(keys);
    if (rc == IDMB_OK)
        rc = idmb_read_stats(db, t, st, &err);
    *rows_per_s = spent > 0 ? DENSITY_ROWS / spent : 0;
    return rc;
}

static void test_random_vs_sequential(void)
{
    const char *ts = table("seq"), *tr = table("rnd");
    idmb_stats ss, sr;
    double rs = 0, rr = 0;
    ASSERT_RC(fill(ts, true, &ss, &rs), IDMB_OK);
    ASSERT_RC(fill(tr, false, &sr, &rr), IDMB_OK);
    printf("# %s: %d rows of 16-byte keys in batches of %d: sequential %.0f rows/s, %lld leaves, "
           "density %.3f, %lld bytes; random %.0f rows/s, %lld leaves, density %.3f, %lld bytes\n",
           kind_name(), DENSITY_ROWS, DENSITY_BATCH, rs, (long long)ss.leaf_pages, ss.leaf_density,
           (long long)ss.index_bytes, rr, (long long)sr.leaf_pages, sr.leaf_density,
           (long long)sr.index_bytes);
    ASSERT_TRUE(density_ok(ss.leaf_density) && density_ok(sr.leaf_density));
    if (kind == IDMB_POSTGRESQL) {
        /* About 0.90 against 0.70 (B-tree splits in the middle for random
         * keys, at the right edge for ascending ones). */
        ASSERT_TRUE(ss.leaf_density > 0.8);
        ASSERT_TRUE(sr.leaf_density < ss.leaf_density - 0.1);
        ASSERT_TRUE(sr.index_bytes > ss.index_bytes);
    }
    if (kind == IDMB_MYSQL)
        ASSERT_TRUE(sr.leaf_pages > ss.leaf_pages);
    ASSERT_RC(idmb_drop_table(db, ts, &err), IDMB_OK);
    ASSERT_RC(idmb_drop_table(db, tr, &err), IDMB_OK);
}

static void test_counters_grow(void)
{
    const char *t = table("cnt");
    enum { ROWS = 20000, BATCH = 2000 };
    uint8_t *keys = malloc((size_t)BATCH * 16);
    ASSERT_TRUE(keys != NULL);
    idmb_counters c0, c1;
    int rc = idmb_create_table(db, t, 16, &err);
    if (rc == IDMB_OK)
        rc = idmb_read_counters(db, &c0, &err);
    for (int64_t row = 0; rc == IDMB_OK && row < ROWS; row += BATCH) {
        make_keys(keys, 16, BATCH, false, NULL);
        rc = idmb_insert(db, t, 16, keys, BATCH, row, &err);
    }
    free(keys);
    ASSERT_RC(rc, IDMB_OK);
    ASSERT_RC(idmb_read_counters(db, &c1, &err), IDMB_OK);
    printf("# %s: %d random rows: wal %lld, written %lld, reads %lld, writes %lld (deltas)\n",
           kind_name(), ROWS, (long long)(c1.wal_bytes - c0.wal_bytes),
           (long long)(c1.bytes_written - c0.bytes_written),
           (long long)(c1.buffer_reads - c0.buffer_reads),
           (long long)(c1.buffer_writes - c0.buffer_writes));
    ASSERT_TRUE(c1.buffer_reads >= c0.buffer_reads && c0.buffer_reads >= 0);
    ASSERT_TRUE(c1.buffer_writes >= c0.buffer_writes && c0.buffer_writes >= 0);
    if (kind == IDMB_SQLITE) {
        ASSERT_EQ_INT(c1.wal_bytes, -1);
        ASSERT_TRUE(c0.bytes_written >= 0);
        /* At least the rows' bytes went into the WAL file. */
        ASSERT_TRUE(c1.bytes_written - c0.bytes_written >= (int64_t)ROWS * 16);
    } else {
        ASSERT_EQ_INT(c1.bytes_written, -1);
        ASSERT_TRUE(c0.wal_bytes >= 0);
        ASSERT_TRUE(c1.wal_bytes - c0.wal_bytes >= (int64_t)ROWS * 16);
    }
    ASSERT_RC(idmb_drop_table(db, t, &err), IDMB_OK);
}

/* A loopback port nobody listens on: tcp/1 (tcpmux) is refused here. */
static int closed_port(void)
{
    return 1;
}

static void test_unreachable(void)
{
    char bad[256];
    if (kind == IDMB_SQLITE) {
        snprintf(bad, sizeof bad, "sqlite:/nonexistent-dir-%ld/x.db", (long)getpid());
    } else if (kind == IDMB_POSTGRESQL) {
        snprintf(bad, sizeof bad, "postgresql://postgres:hunter2pw@127.0.0.1:%d/postgres",
                 closed_port());
    } else {
        snprintf(bad, sizeof bad, "mysql://idmint:hunter2pw@127.0.0.1:%d/idmint", closed_port());
    }
    idmb_db *other = NULL;
    double t0 = now_s();
    int rc = idmb_open(bad, &other, &err);
    double took = now_s() - t0;
    printf("# %s: unreachable: %d after %.0f ms: %s\n", kind_name(), rc, took * 1000, err.msg);
    ASSERT_EQ_INT(rc, IDMB_EDB);
    ASSERT_TRUE(other == NULL);
    ASSERT_LACKS(err.msg, "hunter2pw");
    if (kind == IDMB_SQLITE) {
        ASSERT_CONTAINS(err.msg, "/nonexistent-dir-");
    } else {
        ASSERT_CONTAINS(err.msg, "127.0.0.1:1/");
        ASSERT_CONTAINS(err.msg, "***");
    }
    ASSERT_TRUE(took < 12);
}

static void test_missing(void)
{
    idmb_db *other = NULL;
    int rc = idmb_open(url, &other, &err);
    printf("# %s: a role that may not create pgstattuple: %d: %s\n", kind_name(), rc, err.msg);
    idmb_close(other);
    ASSERT_EQ_INT(rc, IDMB_EMISSING);
    ASSERT_CONTAINS(err.msg, "pgstattuple");
    ASSERT_CONTAINS(err.msg, "postgresql-contrib");
}

static const struct test_case pure[] = {
    TEST(test_error_record),
    TEST(test_url_kinds),
    TEST(test_url_redact),
    TEST(test_mysql_url_parse),
    {0},
};

static const struct test_case live[] = {
    TEST(test_version),     TEST(test_table_names),          TEST(test_width_8),
    TEST(test_width_16),    TEST(test_width_20),             TEST(test_random_vs_sequential),
    TEST(test_counters_grow), TEST(test_unreachable),
    {0},
};

static int run(const struct test_case *t, const char *only, int *ran, int *failed)
{
    for (; t->name != NULL; t++) {
        if (only != NULL && strcmp(only, t->name) != 0)
            continue;
        int before = test_failures_;
        test_current_ = t->name;
        t->fn();
        (*ran)++;
        if (test_failures_ != before)
            (*failed)++;
        printf("%s %s\n", test_failures_ == before ? "ok  " : "FAIL", t->name);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: dbbench_test URL [TEST | missing]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    url = argv[1];
    kind = idmb_url_kind(url);
    if (kind == 0) {
        fprintf(stderr, "dbbench_test: not a database URL\n");
        return 2;
    }
    const char *only = argc >= 3 ? argv[2] : NULL;
    int ran = 0, failed = 0;
    if (only != NULL && strcmp(only, "missing") == 0) {
        static const struct test_case miss[] = {TEST(test_missing), {0}};
        run(miss, NULL, &ran, &failed);
    } else {
        run(pure, only, &ran, &failed);
        int rc = idmb_open(url, &db, &err);
        if (rc != IDMB_OK) {
            fprintf(stderr, "dbbench_test: cannot open the database: %d: %s\n", rc, err.msg);
            return 1;
        }
        run(live, only, &ran, &failed);
        idmb_close(db);
    }
    printf("%d passed, %d failed\n", ran - failed, failed);
    return failed ? 1 : (ran ? 0 : 1);
}
