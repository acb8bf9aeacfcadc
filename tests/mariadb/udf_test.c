/*
 * udf_test.c - idmint_udf's functions called as the server calls them
 * (_init, the function per row, _deinit), from many threads at once, in one
 * process linked with the module's objects, so that the sanitizer builds
 * check them (a module inside mysqld cannot be): the argument checks of
 * every _init, the values, strict order per thread and uniqueness across
 * threads of uuid_v7() and snowflake(), uuid_v7_timestamp's inputs, and
 * snowflake()'s node file. tests/mariadb/test_mariadb.sh runs the same
 * functions inside a real MariaDB.
 */
#include "testlib.h"
#include "udf.h"

#include <dirent.h>
#include <pthread.h>
#include <unistd.h>

#define THREADS 8
#define PER_THREAD 20000

static void init_args(UDF_ARGS *args, unsigned n, enum Item_result *types, char **values,
                      unsigned long *lengths)
{
    memset(args, 0, sizeof *args);
    args->arg_count = n;
    args->arg_type = types;
    args->args = values;
    args->lengths = lengths;
}

/* The server's result buffer: at least 255 bytes. */
typedef char result_buf[766];

static void test_udf_init_refuses_arguments(void)
{
    enum Item_result types[2] = {INT_RESULT, STRING_RESULT};
    char *values[2] = {NULL, NULL};
    unsigned long lengths[2] = {0, 0};
    UDF_ARGS args;
    UDF_INIT init;
    char message[512];
    static const struct {
        const char *name;
        my_bool (*fn)(UDF_INIT *, UDF_ARGS *, char *);
    } gens[] = {{"uuid_v7", uuid_v7_init}, {"uuid_v4", uuid_v4_init},
                {"uuid_v7_bin", uuid_v7_bin_init}, {"ulid", ulid_init},
                {"snowflake", snowflake_init}};
    for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++) {
        init_args(&args, 1, types, values, lengths);
        memset(&init, 0, sizeof init);
        ASSERT_EQ_INT(1, gens[i].fn(&init, &args, message));
        char want[128];
        snprintf(want, sizeof want, "%s() takes no arguments, got 1", gens[i].name);
        ASSERT_EQ_STR(want, message);
    }
    init_args(&args, 0, types, values, lengths);
    ASSERT_EQ_INT(1, uuid_v7_timestamp_init(&init, &args, message));
    ASSERT_EQ_STR("uuid_v7_timestamp(X) takes one argument, got 0", message);
    init_args(&args, 2, types, values, lengths);
    ASSERT_EQ_INT(1, uuid_v7_timestamp_init(&init, &args, message));
    ASSERT_EQ_STR("uuid_v7_timestamp(X) takes one argument, got 2", message);
    init_args(&args, 1, types, values, lengths);
    ASSERT_EQ_INT(1, uuid_v7_timestamp_init(&init, &args, message));
    ASSERT_EQ_STR("uuid_v7_timestamp(X): X must be a UUID as text or BINARY(16), not a number",
                  message);
}

/* A generator's _init: no arguments, and the server must evaluate it per
 * row (const_item 0, as the server sets 1 for a call without arguments). */
static void test_udf_generators_are_per_row(void)
{
    UDF_ARGS args;
    UDF_INIT init;
    char message[512];
    init_args(&args, 0, NULL, NULL, NULL);
    memset(&init, 0, sizeof init);
    init.const_item = 1;
    ASSERT_EQ_INT(0, uuid_v7_init(&init, &args, message));
    ASSERT_EQ_INT(0, init.const_item);
    ASSERT_EQ_INT(36, (int)init.max_length);
    init.const_item = 1;
    ASSERT_EQ_INT(0, uuid_v7_bin_init(&init, &args, message));
    ASSERT_EQ_INT(0, init.const_item);
    ASSERT_EQ_INT(16, (int)init.max_length);
    init.const_item = 1;
    ASSERT_EQ_INT(0, ulid_init(&init, &args, message));
    ASSERT_EQ_INT(0, init.const_item);
    ASSERT_EQ_INT(26, (int)init.max_length);
}

static void test_udf_values(void)
{
    UDF_ARGS args;
    UDF_INIT init;
    result_buf result;
    unsigned long length = 0;
    char is_null = 0, error = 0;
    char message[512];
    init_args(&args, 0, NULL, NULL, NULL);
    memset(&init, 0, sizeof init);

    ASSERT_EQ_INT(0, uuid_v4_init(&init, &args, message));
    char *r = uuid_v4(&init, &args, result, &length, &is_null, &error);
    ASSERT_TRUE(r != NULL && !is_null && !error);
    ASSERT_EQ_INT(36, (int)length);
    idm_uuid u;
    ASSERT_OK(idm_uuid_parse(r, length, &u, NULL), NULL);
    ASSERT_EQ_INT(4, idm_uuid_version(&u));
    ASSERT_EQ_INT(IDM_UUID_VARIANT_RFC9562, idm_uuid_variant(&u));

    ASSERT_EQ_INT(0, uuid_v7_bin_init(&init, &args, message));
    r = uuid_v7_bin(&init, &args, result, &length, &is_null, &error);
    ASSERT_TRUE(r != NULL && !is_null && !error);
    ASSERT_EQ_INT(16, (int)length);
    memcpy(u.bytes, r, 16);
    ASSERT_EQ_INT(7, idm_uuid_version(&u));

    ASSERT_EQ_INT(0, ulid_init(&init, &args, message));
    r = ulid(&init, &args, result, &length, &is_null, &error);
    ASSERT_TRUE(r != NULL && !is_null && !error);
    ASSERT_EQ_INT(26, (int)length);
    idm_ulid l;
    ASSERT_OK(idm_ulid_parse(r, length, &l, NULL), NULL);
}

static long long timestamp_of(const char *x, unsigned long len, char *is_null)
{
    enum Item_result types[1] = {STRING_RESULT};
    char *values[1] = {(char *)x};
    unsigned long lengths[1] = {len};
    UDF_ARGS args;
    UDF_INIT init;
    char message[512];
    char error = 0;
    init_args(&args, 1, types, values, lengths);
    memset(&init, 0, sizeof init);
    if (uuid_v7_timestamp_init(&init, &args, message) != 0) {
        TEST_REPORT_("uuid_v7_timestamp_init: %s", message);
    }
    *is_null = 0;
    return uuid_v7_timestamp(&init, &args, is_null, &error);
}

static void test_udf_uuid_v7_timestamp(void)
{
    char is_null;
    /* RFC 9562 appendix A.6. */
    static const char text[] = "017F22E2-79B0-7CC3-98C4-DC0C0C07398F";
    static const char bin[16] = {0x01, 0x7f, 0x22, (char)0xe2, 0x79, (char)0xb0, 0x7c, (char)0xc3,
                                 (char)0x98, (char)0xc4, (char)0xdc, 0x0c, 0x0c, 0x07, 0x39,
                                 (char)0x8f};
    ASSERT_EQ_INT(1645557742000, (int64_t)timestamp_of(text, strlen(text), &is_null));
    ASSERT_EQ_INT(0, is_null);
    ASSERT_EQ_INT(1645557742000, (int64_t)timestamp_of(bin, 16, &is_null));
    ASSERT_EQ_INT(0, is_null);
    timestamp_of(NULL, 0, &is_null);
    ASSERT_EQ_INT(1, is_null);
    timestamp_of("not a uuid", 10, &is_null);
    ASSERT_EQ_INT(1, is_null);
    timestamp_of(text, 15, &is_null);
    ASSERT_EQ_INT(1, is_null);
    static const char v4[] = "919108f7-52d1-4320-9bac-f847db4148a8";
    timestamp_of(v4, strlen(v4), &is_null);
    ASSERT_EQ_INT(1, is_null);
}

/* --- many threads --------------------------------------------------------- */

typedef struct worker {
    pthread_t thread;
    int snowflake; /* 0: uuid_v7() */
    int failures;
    unsigned char uuids[PER_THREAD][16];
    long long ids[PER_THREAD];
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    UDF_ARGS args;
    UDF_INIT init;
    char message[512];
    result_buf result;
    init_args(&args, 0, NULL, NULL, NULL);
    memset(&init, 0, sizeof init);
    if ((w->snowflake ? snowflake_init : uuid_v7_init)(&init, &args, message) != 0) {
        w->failures++;
        return NULL;
    }
    for (int i = 0; i < PER_THREAD; i++) {
        char is_null = 0, error = 0;
        if (w->snowflake) {
            w->ids[i] = snowflake(&init, &args, &is_null, &error);
        } else {
            unsigned long length = 0;
            char *r = uuid_v7(&init, &args, result, &length, &is_null, &error);
            idm_uuid u;
            if (r == NULL || idm_uuid_parse(r, length, &u, NULL) != IDM_OK) {
                w->failures++;
                continue;
            }
            memcpy(w->uuids[i], u.bytes, 16);
            if (i > 0 && memcmp(w->uuids[i - 1], w->uuids[i], 16) >= 0) {
                w->failures++; /* not increasing within a thread */
            }
        }
        if (is_null || error || (w->snowflake && i > 0 && w->ids[i] <= w->ids[i - 1])) {
            w->failures++;
        }
    }
    return NULL;
}

static int cmp16(const void *a, const void *b)
{
    return memcmp(a, b, 16);
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Runs THREADS workers; returns the number of duplicates across them. */
static int run_workers(worker *ws, int snowflake_fn)
{
    for (int t = 0; t < THREADS; t++) {
        ws[t].snowflake = snowflake_fn;
        pthread_create(&ws[t].thread, NULL, work, &ws[t]);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(ws[t].thread, NULL);
        if (ws[t].failures != 0)
            TEST_REPORT_("thread %d: %d failures", t, ws[t].failures);
    }
    size_t n = (size_t)THREADS * PER_THREAD;
    int dups = 0;
    if (snowflake_fn) {
        long long *all = malloc(n * sizeof *all);
        for (int t = 0; t < THREADS; t++)
            memcpy(all + (size_t)t * PER_THREAD, ws[t].ids, sizeof ws[t].ids);
        qsort(all, n, sizeof *all, cmp_ll);
        for (size_t i = 1; i < n; i++)
            dups += all[i] == all[i - 1];
        free(all);
    } else {
        unsigned char(*all)[16] = malloc(n * 16);
        for (int t = 0; t < THREADS; t++)
            memcpy(all + (size_t)t * PER_THREAD, ws[t].uuids, sizeof ws[t].uuids);
        qsort(all, n, 16, cmp16);
        for (size_t i = 1; i < n; i++)
            dups += memcmp(all[i], all[i - 1], 16) == 0;
        free(all);
    }
    return dups;
}

static void test_udf_uuid_v7_threads(void)
{
    worker *ws = calloc(THREADS, sizeof *ws);
    ASSERT_EQ_INT(0, run_workers(ws, 0));
    free(ws);
}

/* Removes dir's files and dir. */
static void remove_dir(const char *dir)
{
    char path[4096];
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%.2000s/%.1000s", dir, e->d_name);
            unlink(path);
        }
    }
    if (d != NULL)
        closedir(d);
    rmdir(dir);
}

static void test_udf_snowflake_node_file_and_threads(void)
{
    char dir[] = "/tmp/idmint-udf-test.XXXXXX";
    char old[4096];
    ASSERT_TRUE(mkdtemp(dir) != NULL);
    ASSERT_TRUE(getcwd(old, sizeof old) != NULL);
    ASSERT_EQ_INT(0, chdir(dir)); /* mysqld's working directory: its datadir */
    UDF_ARGS args;
    UDF_INIT init;
    char message[512];
    init_args(&args, 0, NULL, NULL, NULL);
    memset(&init, 0, sizeof init);
    ASSERT_EQ_INT(1, snowflake_init(&init, &args, message));
    ASSERT_EQ_STR("snowflake(): no node: put snowflake_node = N in DATADIR/idmint_udf.cnf", message);
    static const struct {
        const char *text;
        const char *why;
    } bad[] = {
        {"snowflake_node = -1\n", "idmint_udf.cnf:1: snowflake_node must be a number"},
        {"snowflake_node = 7x\n", "idmint_udf.cnf:1: snowflake_node must be a number"},
        {"# c\nnode = 7\n", "idmint_udf.cnf:2: unknown setting node"},
        {"snowflake_node 7\n", "idmint_udf.cnf:1: expected key = value"},
        {"\n", "idmint_udf.cnf sets no snowflake_node"},
        {"snowflake_node = 1\nsnowflake_layout = time=41,node=11,seq=12\n",
         "idmint_udf.cnf:2: the layout needs 63 bits or fewer"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen("idmint_udf.cnf", "w");
        fputs(bad[i].text, f);
        fclose(f);
        ASSERT_EQ_INT(1, snowflake_init(&init, &args, message));
        ASSERT_EQ_STR(bad[i].why, message);
    }
    FILE *f = fopen("idmint_udf.cnf", "w");
    fputs("# this server's node\nsnowflake_node = 7\n", f);
    fclose(f);
    worker *ws = calloc(THREADS, sizeof *ws);
    ASSERT_EQ_INT(0, run_workers(ws, 1));
    ASSERT_EQ_INT(7, (int)((ws[0].ids[0] >> 12) & 1023));
    free(ws);
    ASSERT_EQ_INT(0, chdir(old));
    remove_dir(dir);
}

static const struct test_case tests[] = {
    TEST(test_udf_init_refuses_arguments),
    TEST(test_udf_generators_are_per_row),
    TEST(test_udf_values),
    TEST(test_udf_uuid_v7_timestamp),
    TEST(test_udf_uuid_v7_threads),
    TEST(test_udf_snowflake_node_file_and_threads),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
