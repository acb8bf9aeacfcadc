/*
 * static_test.c - idmint_sqlite linked statically (libidmint_sqlite.a,
 * idmint_sqlite.h) into a program that links libsqlite3: registration
 * through sqlite3_auto_extension and through a direct call, the functions
 * in both connections, errors, and every connection's state freed at
 * close (the sanitizer builds run this: a loadable module cannot be
 * tested inside an uninstrumented sqlite3 shell).
 *
 * Usage: static_test [SCRATCH_DIR]   (SCRATCH_DIR: for the snowflake
 * database; default: a new directory under /tmp)
 */
#include "idmint_sqlite.h"

#include "testlib.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *scratch_dir;

/* The first column of the one row of sql as text in buf ("" for NULL); the
 * return code of the step (SQLITE_ROW) or of the prepare. */
static int one(sqlite3 *db, const char *sql, char *buf, size_t cap)
{
    sqlite3_stmt *st = NULL;
    buf[0] = '\0';
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        snprintf(buf, cap, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return rc;
}

static void check_functions(sqlite3 *db)
{
    char buf[512];
    ASSERT_EQ_INT(one(db, "SELECT uuid_extract_version(uuidv7())", buf, sizeof buf), SQLITE_ROW);
    ASSERT_EQ_STR(buf, "7");
    ASSERT_EQ_INT(
        one(db, "SELECT uuid_str('{A0EEBC99-9C0B4EF8-BB6D6BB9-BD380A11}')", buf, sizeof buf),
        SQLITE_ROW);
    ASSERT_EQ_STR(buf, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
    ASSERT_EQ_INT(one(db, "SELECT uuid_str('a0eebc99')", buf, sizeof buf), SQLITE_ROW);
    ASSERT_EQ_STR(buf, "");
    ASSERT_EQ_INT(one(db, "SELECT uuid7_timestamp_ms(uuid7(1717777901))", buf, sizeof buf),
                  SQLITE_ROW);
    ASSERT_EQ_STR(buf, "1717777901000");
    ASSERT_EQ_INT(
        one(db, "SELECT length(ulid()) || length(ksuid()) || length(typeid('t'))", buf, sizeof buf),
        SQLITE_ROW);
    ASSERT_EQ_STR(buf, "262728");
    ASSERT_EQ_INT(
        one(db, "SELECT json_extract(idmint_inspect(uuid4()), '$.version')", buf, sizeof buf),
        SQLITE_ROW);
    ASSERT_EQ_STR(buf, "4");
    /* Errors reach the caller with their message. */
    ASSERT_EQ_INT(one(db, "SELECT typeid('Bad')", buf, sizeof buf), SQLITE_ERROR);
    ASSERT_TRUE(strstr(sqlite3_errmsg(db), "typeid: invalid prefix 'Bad'") != NULL);
    ASSERT_EQ_INT(one(db, "SELECT idmint_inspect('?')", buf, sizeof buf), SQLITE_ERROR);
    ASSERT_TRUE(strstr(sqlite3_errmsg(db), "idmint_inspect: invalid ID '?'") != NULL);
}

/* 200,000 uuidv7_blob() in one connection, each greater than the last. */
static void check_order(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    ASSERT_EQ_INT(sqlite3_prepare_v2(db,
                                     "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
                                     "FROM c WHERE i < 200000) SELECT uuidv7_blob() FROM c",
                                     -1, &st, NULL),
                  SQLITE_OK);
    unsigned char prev[16] = {0};
    int n = 0, bad = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *u = sqlite3_column_blob(st, 0);
        if (sqlite3_column_bytes(st, 0) != 16 || (n > 0 && memcmp(u, prev, 16) <= 0))
            bad++;
        memcpy(prev, u, 16);
        n++;
    }
    sqlite3_finalize(st);
    ASSERT_EQ_INT(n, 200000);
    ASSERT_EQ_INT(bad, 0);
}

static void test_auto_extension(void)
{
    ASSERT_EQ_INT(sqlite3_auto_extension((void (*)(void))sqlite3_idmintsqlite_init), SQLITE_OK);
    sqlite3 *db = NULL;
    ASSERT_EQ_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
    check_functions(db);
    check_order(db);
    ASSERT_EQ_INT(sqlite3_close(db), SQLITE_OK);
    sqlite3_reset_auto_extension();
}

static void test_direct_call(void)
{
    sqlite3 *db = NULL;
    ASSERT_EQ_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
    char buf[64];
    /* Not registered yet. */
    ASSERT_EQ_INT(one(db, "SELECT uuidv7()", buf, sizeof buf), SQLITE_ERROR);
    char *msg = NULL;
    ASSERT_EQ_INT(sqlite3_idmintsqlite_init(db, &msg, NULL), SQLITE_OK);
    ASSERT_TRUE(msg == NULL);
    check_functions(db);
    /* Registering twice replaces the functions; the first state is freed. */
    ASSERT_EQ_INT(sqlite3_idmintsqlite_init(db, &msg, NULL), SQLITE_OK);
    check_functions(db);
    ASSERT_EQ_INT(sqlite3_close(db), SQLITE_OK);
}

/* Two connections to one file share its snowflake: distinct IDs, one node
 * from the table, a change of node seen by the other connection. */
static void test_snowflake(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/sf.db", scratch_dir);
    sqlite3 *a = NULL, *b = NULL;
    char buf[512];
    ASSERT_EQ_INT(sqlite3_auto_extension((void (*)(void))sqlite3_idmintsqlite_init), SQLITE_OK);
    ASSERT_EQ_INT(sqlite3_open(path, &a), SQLITE_OK);
    ASSERT_EQ_INT(sqlite3_open(path, &b), SQLITE_OK);
    ASSERT_EQ_INT(one(a, "SELECT snowflake()", buf, sizeof buf), SQLITE_ERROR);
    ASSERT_TRUE(strstr(sqlite3_errmsg(a), "no node is set") != NULL);
    ASSERT_EQ_INT(one(a, "SELECT idmint_snowflake_config(3, 'discord')", buf, sizeof buf),
                  SQLITE_ROW);
    ASSERT_TRUE(strstr(buf, "\"node\": 3, \"layout\": \"discord\"") != NULL);
    ASSERT_EQ_INT(one(b, "SELECT idmint_snowflake_config(5000)", buf, sizeof buf), SQLITE_ERROR);
    ASSERT_TRUE(strstr(sqlite3_errmsg(b), "node 5000 is out of range") != NULL);
    /* 2,000 IDs from each, interleaved: all distinct and increasing. */
    ASSERT_EQ_INT(sqlite3_exec(a, "CREATE TABLE ids(id INTEGER PRIMARY KEY)", NULL, NULL, NULL),
                  SQLITE_OK);
    for (int i = 0; i < 2000; i++) {
        ASSERT_EQ_INT(
            sqlite3_exec(i % 2 ? a : b, "INSERT INTO ids VALUES (snowflake())", NULL, NULL, NULL),
            SQLITE_OK);
    }
    ASSERT_EQ_INT(one(a, "SELECT count(*) FROM ids", buf, sizeof buf), SQLITE_ROW);
    ASSERT_EQ_STR(buf, "2000");
    ASSERT_EQ_INT(one(b,
                      "SELECT json_extract(idmint_inspect(CAST(snowflake() AS TEXT), 'discord'), "
                      "'$.node')",
                      buf, sizeof buf),
                  SQLITE_ROW);
    ASSERT_EQ_STR(buf, "3");
    ASSERT_EQ_INT(one(a, "SELECT idmint_snowflake_config(4, 'discord')", buf, sizeof buf),
                  SQLITE_ROW);
    ASSERT_EQ_INT(one(b,
                      "SELECT json_extract(idmint_inspect(CAST(snowflake() AS TEXT), 'discord'), "
                      "'$.node')",
                      buf, sizeof buf),
                  SQLITE_ROW);
    ASSERT_EQ_STR(buf, "4");
    ASSERT_EQ_INT(sqlite3_close(a), SQLITE_OK);
    ASSERT_EQ_INT(sqlite3_close(b), SQLITE_OK);
    sqlite3_reset_auto_extension();
}

static const struct test_case tests[] = {
    TEST(test_auto_extension),
    TEST(test_direct_call),
    TEST(test_snowflake),
    {0},
};

int main(int argc, char **argv)
{
    char made[] = "/tmp/idmsq-static.XXXXXX";
    if (argc > 1) {
        scratch_dir = argv[1];
    } else {
        scratch_dir = mkdtemp(made);
        if (scratch_dir == NULL) {
            perror("mkdtemp");
            return 1;
        }
    }
    char *args[] = {argv[0], NULL};
    int rc = test_main(1, args, tests);
    if (argc <= 1) {
        /* The database and its state directory, made above. */
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", scratch_dir);
    }
    return rc;
}
