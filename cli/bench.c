/*
 * bench.c - `idmint bench btree` (man/idmint.1, "bench btree"; issue 12;
 * docs/btree.md): what each ID format does to a database's
 * primary-key B-tree. For each format one table (idmint_bench_FORMAT, '-'
 * as '_'), N rows minted by libidmint (benchkeys.c) and inserted in
 * batches, the insert rate sampled about BENCH_SAMPLES times, the
 * database's counters read before and after, and the filled index's
 * figures; then the table is dropped (--keep keeps it). The databases are
 * the dbbench component's (dbbench/idmint_dbbench.h); the chart is svg.c's.
 *
 *   bench btree [--db URL] [--formats LIST] [--rows N] [--batch B]
 *               [--keys-per-ms K] [--scenario migrate] [--json|--csv]
 *               [--chart FILE.svg] [--keep]
 *   bench keys FORMAT N [--keys-per-ms K]   (a diagnostic: the keys in hex)
 *
 * --scenario migrate fills one table (idmint_bench_migrate) with N UUIDv4
 * keys, then N UUIDv7 keys, and reports each era: its rows, rate and
 * counters, the leaf pages it added (about its page splits), the whole
 * index's leaf density after it, and the era's own leaf density:
 *
 *   era_leaf_density = (used_after - used_before) / (leaf_bytes_after - leaf_bytes_before)
 *   used = leaf_density * leaf_pages * page_bytes, leaf_bytes = leaf_pages * page_bytes
 *
 * "before" being the figures after the previous era (the empty table for
 * era 1): how full the leaves are that the era's inserts made, counting
 * what they added to the leaves that were there.
 *
 * Deliberately left out: concurrent inserters, reads (point lookups, range
 * scans), secondary indexes, and any table without the prefix.
 */
#include "cli.h"

#include "bench.h"
#include "benchkeys.h"
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    OPT_DB = CLI_OPT_HELP + 1,
    OPT_FORMATS,
    OPT_ROWS,
    OPT_BATCH,
    OPT_KEYS_PER_MS,
    OPT_SCENARIO,
    OPT_JSON,
    OPT_CSV,
    OPT_CHART,
    OPT_KEEP
};

/* clang-format off */
static const idmx_option bench_options[] = {
    {"help", 'h', IDMX_NO_ARG, CLI_OPT_HELP},
    {"db", 0, IDMX_REQUIRED_ARG, OPT_DB},
    {"formats", 0, IDMX_REQUIRED_ARG, OPT_FORMATS},
    {"rows", 0, IDMX_REQUIRED_ARG, OPT_ROWS},
    {"batch", 0, IDMX_REQUIRED_ARG, OPT_BATCH},
    {"keys-per-ms", 0, IDMX_REQUIRED_ARG, OPT_KEYS_PER_MS},
    {"scenario", 0, IDMX_REQUIRED_ARG, OPT_SCENARIO},
    {"json", 0, IDMX_NO_ARG, OPT_JSON},
    {"csv", 0, IDMX_NO_ARG, OPT_CSV},
    {"chart", 0, IDMX_REQUIRED_ARG, OPT_CHART},
    {"keep", 0, IDMX_NO_ARG, OPT_KEEP},
    {NULL, 0, 0, 0},
};
/* clang-format on */

#define DEFAULT_DB "sqlite:idmint-bench.db"
#define DEFAULT_ROWS 100000
#define DEFAULT_BATCH 1000

static const idmx_range range_rows = {1, INT64_C(1000000000000), NULL};
static const idmx_range range_batch = {1, 1000000, NULL};
static const idmx_range range_keys_per_ms = {1, 1000000000, NULL};
/* bench keys: a diagnostic, not a load generator. */
static const idmx_range range_keys_n = {1, 100000000, NULL};

const char cli_bench_help[] =
    "Usage: idmint bench btree [--db URL] [--formats LIST] [--rows N] [--batch B]\n"
    "                          [--keys-per-ms K] [--scenario migrate]\n"
    "                          [--json | --csv] [--chart FILE.svg] [--keep]\n"
    "       idmint bench keys FORMAT N [--keys-per-ms K]\n"
    "\n"
    "Measure what each ID format does to a database's primary-key B-tree. For\n"
    "each format, one table idmint_bench_FORMAT ('-' as '_') with the format's\n"
    "natural key type, N rows of IDs minted by libidmint inserted in batches\n"
    "(one transaction each), then the index's size, leaf pages, leaf density\n"
    "and fragmentation and the database's counters. Only tables named\n"
    "idmint_bench_* are created and dropped; which, and where, is said on\n"
    "standard error before the run starts.\n"
    "\n"
    "Options:\n"
    "      --db URL          the database (default " DEFAULT_DB "):\n"
    "                        sqlite:PATH (embedded; the file is created),\n"
    "                        postgresql://... (libpq URI; needs pgstattuple),\n"
    "                        mysql://USER:PASS@HOST:PORT/DB (InnoDB; add\n"
    "                        ?key=uuid for MariaDB's UUID column type)\n"
    "      --formats LIST    comma-separated, in order (default all): bigint,\n"
    "                        uuidv4, uuidv7, uuidv7-unordered, ulid, ksuid,\n"
    "                        snowflake\n"
    "      --rows N          rows per format (default 100000)\n"
    "      --batch B         rows per insert transaction (default 1000)\n"
    "      --keys-per-ms K   mint through an injected clock that advances 1 ms\n"
    "                        per K keys, so that exactly K keys share each\n"
    "                        millisecond whatever the machine's speed (snowflake:\n"
    "                        at most 4096); default: the real clock\n"
    "      --scenario migrate\n"
    "                        N rows keyed by UUIDv4 into one table\n"
    "                        (idmint_bench_migrate), then N more keyed by\n"
    "                        UUIDv7, reported per era (instead of --formats)\n"
    "      --json            JSON Lines: one object per format (or era)\n"
    "      --csv             CSV with the same scalar columns, header first\n"
    "      --chart FILE.svg  draw the insert rate over rows and the final index\n"
    "                        size and leaf density per format\n"
    "      --keep            keep the tables (default: drop each when done)\n"
    "  -h, --help            show this help and exit\n"
    "\n"
    "Formats and keys: bigint 1..N (8 bytes); snowflake (twitter layout, node 1;\n"
    "8 bytes); uuidv4, uuidv7, ulid (16 bytes); uuidv7-unordered: UUIDv7 as most\n"
    "libraries mint it, 48-bit milliseconds then random bits and no counter, so\n"
    "keys within one millisecond arrive in random order (16 bytes); ksuid (20).\n"
    "\n"
    "Members (JSON; CSV columns without rate), null where the database does not\n"
    "report a figure: format, db (sqlite, postgresql, mysql), db_version, rows,\n"
    "batch, keys_per_ms (null: the real clock), seconds (spent in inserts),\n"
    "rows_per_s, index_bytes, leaf_pages, leaf_density (0..1),\n"
    "leaf_fragmentation (0..1, PostgreSQL), table_bytes, wal_bytes\n"
    "(PostgreSQL WAL, MySQL redo log), bytes_written (SQLite: this process's\n"
    "writes to disk), buffer_reads, buffer_writes (counters are the run's\n"
    "differences), and rate: [[rows, rows_per_s], ...] (about 100 samples; the\n"
    "rate since the sample before).\n"
    "With --scenario migrate, one object per era (era 1 uuidv4, era 2 uuidv7)\n"
    "with scenario \"migrate\", era, that era's rows, rate and counters, the\n"
    "whole index's figures after it, page_splits and leaf_pages_added (the leaf\n"
    "pages the era added: about its page splits), and era_leaf_density =\n"
    "(used leaf bytes after - used before) / (leaf bytes after - before), where\n"
    "used leaf bytes = leaf_density * leaf_pages * page_bytes and \"before\" is\n"
    "after the previous era (null where density is not reported).\n"
    "\n"
    "bench keys prints N keys of FORMAT as hex, one per line, minted as the\n"
    "benchmark mints them: a diagnostic for checking the key generation.\n"
    "\n"
    "Exit status: 0 done, 1 the database failed or could not be reached (or\n"
    "lacks pgstattuple or dbstat), 2 a usage error.\n";

typedef struct bench_opts {
    const char *sub;
    const char *operands[3]; /* after the subcommand */
    size_t n_operands;
    const char *db;
    const char *formats;
    const char *rows_text;
    const char *batch_text;
    const char *kpm_text;
    const char *scenario;
    const char *chart;
    char btree_only[72]; /* the first btree option seen, for bench keys; "" */
    int json, csv, keep;
    int64_t rows, batch;
    uint64_t keys_per_ms;
    int migrate;
    int list[BK_N_FORMATS];
    size_t n_list;
} bench_opts;

/* ---- interruption --------------------------------------------------------- */

/* SIGINT or SIGTERM between batches: the run stops, drops its table and
 * says so. A second signal has the default effect (SA_RESETHAND). */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
}

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- progress ------------------------------------------------------------- */

/* A bar on stderr, redrawn at each sample, when stderr is a terminal. */
typedef struct progress {
    int on;
    const char *label;
} progress;

static void progress_draw(const progress *pg, int64_t done, int64_t total, double rate)
{
    if (!pg->on) {
        return;
    }
    enum { WIDTH = 30 };
    char bar[WIDTH + 1];
    int filled = (int)((double)done / (double)total * WIDTH);
    for (int i = 0; i < WIDTH; i++) {
        bar[i] = i < filled ? '#' : '.';
    }
    bar[WIDTH] = '\0';
    fprintf(stderr, "\r%-22s [%s] %3d%% %12.0f rows/s", pg->label, bar,
            (int)((double)done * 100.0 / (double)total), rate);
    fflush(stderr);
}

static void progress_clear(const progress *pg)
{
    if (pg->on) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
}

/* ---- the run ------------------------------------------------------------ */

static const char *kind_name(idmb_kind k)
{
    switch (k) {
    case IDMB_SQLITE:
        return "sqlite";
    case IDMB_POSTGRESQL:
        return "postgresql";
    case IDMB_MYSQL:
        return "mysql";
    default:
        return "?";
    }
}

static void table_name(int format, char *dst, size_t cap)
{
    snprintf(dst, cap, IDMB_TABLE_PREFIX "%s", bk_format_name(format));
    for (char *p = dst; *p != '\0'; p++) {
        if (*p == '-') {
            *p = '_';
        }
    }
}

static int64_t diff(int64_t after, int64_t before)
{
    return after >= 0 && before >= 0 ? after - before : -1;
}

static void counters_delta(const idmb_counters *a, const idmb_counters *b, idmb_counters *d)
{
    d->wal_bytes = diff(a->wal_bytes, b->wal_bytes);
    d->bytes_written = diff(a->bytes_written, b->bytes_written);
    d->buffer_reads = diff(a->buffer_reads, b->buffer_reads);
    d->buffer_writes = diff(a->buffer_writes, b->buffer_writes);
}

/* A database failure: "idmint: bench btree: MESSAGE". */
static int db_fail(cli *c, const idmb_error *e)
{
    if (e->code == IDMB_EUSAGE) {
        return cli_usage(c, "bench btree: %s", e->msg[0] != '\0' ? e->msg : "a bad argument");
    }
    cli_diag(c, "bench btree: %s", e->msg[0] != '\0' ? e->msg : "the database failed");
    return CLI_EXIT_FAIL;
}

typedef struct runner {
    cli *c;
    const bench_opts *o;
    idmb_db *db;
    uint8_t *keys; /* batch * BK_KEY_MAX bytes */
    progress pg;
} runner;

/* Mints rows keys of format and inserts them into table in batches,
 * numbering rows from first_n: fills r's rows, seconds, rate and counter
 * differences. Returns CLI_EXIT_OK or a reported failure. */
static int fill(runner *R, const char *table, int format, int64_t first_n, bench_result *r)
{
    const bench_opts *o = R->o;
    idmb_error dberr;
    idm_error err;
    memset(&err, 0, sizeof err);
    bk_minter *m = NULL;
    int rc = bk_minter_new(&m, format, o->keys_per_ms, &err);
    if (rc != IDM_OK) {
        cli_diag(R->c, "bench btree: %s: %s", bk_format_name(format), cli_reason(&err, rc));
        return CLI_EXIT_FAIL;
    }
    int width = bk_key_bytes(format);
    idmb_counters before, after;
    rc = idmb_read_counters(R->db, &before, &dberr);
    if (rc != IDMB_OK) {
        bk_minter_free(m);
        return db_fail(R->c, &dberr);
    }
    int64_t every = o->rows / BENCH_SAMPLES > 0 ? o->rows / BENCH_SAMPLES : 1;
    int64_t next_sample = every;
    int64_t done = 0, prev_done = 0;
    double busy = 0.0, prev_busy = 0.0;
    r->n_rate = 0;
    R->pg.label = r->format;
    progress_draw(&R->pg, 0, o->rows, 0.0);
    int st = CLI_EXIT_OK;
    while (done < o->rows) {
        if (interrupted) {
            progress_clear(&R->pg);
            cli_diag(R->c, "bench btree: interrupted");
            st = CLI_EXIT_FAIL;
            break;
        }
        int64_t n = o->rows - done < o->batch ? o->rows - done : o->batch;
        rc = bk_mint(m, R->keys, (size_t)n, &err);
        if (rc != IDM_OK) {
            progress_clear(&R->pg);
            cli_diag(R->c, "bench btree: %s: %s", bk_format_name(format), cli_reason(&err, rc));
            st = CLI_EXIT_FAIL;
            break;
        }
        double t0 = now_s();
        rc = idmb_insert(R->db, table, width, R->keys, (size_t)n, first_n + done, &dberr);
        busy += now_s() - t0;
        if (rc != IDMB_OK) {
            progress_clear(&R->pg);
            st = db_fail(R->c, &dberr);
            break;
        }
        done += n;
        if ((done >= next_sample || done == o->rows) && r->n_rate < BENCH_SAMPLES + 2) {
            double dt = busy - prev_busy;
            double rate = dt > 0 ? (double)(done - prev_done) / dt : 0.0;
            r->rate[r->n_rate].rows = done;
            r->rate[r->n_rate].rows_per_s = rate;
            r->n_rate++;
            prev_done = done;
            prev_busy = busy;
            while (next_sample <= done) {
                next_sample += every;
            }
            progress_draw(&R->pg, done, o->rows, rate);
        }
    }
    bk_minter_free(m);
    if (st != CLI_EXIT_OK) {
        return st;
    }
    progress_clear(&R->pg);
    rc = idmb_read_counters(R->db, &after, &dberr);
    if (rc != IDMB_OK) {
        return db_fail(R->c, &dberr);
    }
    counters_delta(&after, &before, &r->delta);
    r->rows = done;
    r->seconds = busy;
    r->rows_per_s = busy > 0 ? (double)done / busy : 0.0;
    return CLI_EXIT_OK;
}

static void drop_quietly(runner *R, const char *table)
{
    if (R->o->keep) {
        return;
    }
    idmb_error dberr;
    if (idmb_drop_table(R->db, table, &dberr) != IDMB_OK) {
        cli_diag(R->c, "bench btree: cannot drop table %s: %s", table, dberr.msg);
    }
}

/* One format in its own table. */
static int run_format(runner *R, int format, bench_result *r)
{
    char table[IDMB_TABLE_MAX + 1];
    idmb_error dberr;
    table_name(format, table, sizeof table);
    memset(r, 0, sizeof *r);
    r->format = bk_format_name(format);
    r->leaf_pages_added = -1;
    r->era_leaf_density = -1.0;
    int rc = idmb_create_table(R->db, table, bk_key_bytes(format), &dberr);
    if (rc != IDMB_OK) {
        return db_fail(R->c, &dberr);
    }
    int st = fill(R, table, format, 1, r);
    if (st == CLI_EXIT_OK) {
        rc = idmb_read_stats(R->db, table, &r->stats, &dberr);
        if (rc != IDMB_OK) {
            st = db_fail(R->c, &dberr);
        }
    }
    drop_quietly(R, table);
    return st;
}

static double used_leaf_bytes(const idmb_stats *s)
{
    return s->leaf_density * (double)s->leaf_pages * (double)s->page_bytes;
}

/* --scenario migrate: era 1 uuidv4, era 2 uuidv7, one table. */
static int run_migrate(runner *R, bench_result *eras)
{
    static const char table[] = IDMB_TABLE_PREFIX "migrate";
    static const int formats[2] = {BK_UUIDV4, BK_UUIDV7};
    idmb_error dberr;
    int rc = idmb_create_table(R->db, table, 16, &dberr);
    if (rc != IDMB_OK) {
        return db_fail(R->c, &dberr);
    }
    idmb_stats prev;
    rc = idmb_read_stats(R->db, table, &prev, &dberr);
    if (rc != IDMB_OK) {
        drop_quietly(R, table);
        return db_fail(R->c, &dberr);
    }
    int st = CLI_EXIT_OK;
    for (int e = 0; e < 2 && st == CLI_EXIT_OK; e++) {
        bench_result *r = &eras[e];
        memset(r, 0, sizeof *r);
        r->format = bk_format_name(formats[e]);
        r->era = e + 1;
        st = fill(R, table, formats[e], 1 + e * R->o->rows, r);
        if (st != CLI_EXIT_OK) {
            break;
        }
        rc = idmb_read_stats(R->db, table, &r->stats, &dberr);
        if (rc != IDMB_OK) {
            st = db_fail(R->c, &dberr);
            break;
        }
        const idmb_stats *s = &r->stats;
        r->leaf_pages_added = s->leaf_pages >= 0 && prev.leaf_pages >= 0
                                  ? s->leaf_pages - prev.leaf_pages
                                  : -1;
        r->era_leaf_density = -1.0;
        if (r->leaf_pages_added > 0 && s->page_bytes > 0 && s->leaf_density >= 0 &&
            prev.leaf_density >= 0 && prev.page_bytes == s->page_bytes) {
            double added = (double)r->leaf_pages_added * (double)s->page_bytes;
            r->era_leaf_density = (used_leaf_bytes(s) - used_leaf_bytes(&prev)) / added;
        } else if (r->leaf_pages_added > 0 && s->leaf_density >= 0 && prev.leaf_pages == 0) {
            r->era_leaf_density = s->leaf_density; /* an empty index before */
        }
        prev = *s;
    }
    drop_quietly(R, table);
    return st;
}

/* ---- output --------------------------------------------------------------- */

/* One scalar member: its name and its text (NULL: null). */
typedef struct field {
    const char *name;
    char text[96];
    int is_null;
    int is_string;
} field;

#define MAX_FIELDS 24

static void set_i64(field *f, const char *name, int64_t v)
{
    f->name = name;
    f->is_string = 0;
    f->is_null = v < 0;
    snprintf(f->text, sizeof f->text, "%" PRId64, v);
}

static void set_real(field *f, const char *name, double v, int digits)
{
    f->name = name;
    f->is_string = 0;
    f->is_null = !(v >= 0) || !isfinite(v);
    snprintf(f->text, sizeof f->text, "%.*f", digits, v);
}

static void set_str(field *f, const char *name, const char *v)
{
    f->name = name;
    f->is_string = 1;
    f->is_null = v == NULL;
    snprintf(f->text, sizeof f->text, "%s", v != NULL ? v : "");
}

static size_t result_fields(const bench_run *run, const bench_result *r, field *f)
{
    size_t n = 0;
    set_str(&f[n++], "format", r->format);
    set_str(&f[n++], "db", run->db);
    set_str(&f[n++], "db_version", run->db_version);
    if (run->migrate) {
        set_str(&f[n++], "scenario", "migrate");
        set_i64(&f[n++], "era", r->era);
    }
    set_i64(&f[n++], "rows", r->rows);
    set_i64(&f[n++], "batch", run->batch);
    set_i64(&f[n++], "keys_per_ms", run->keys_per_ms > 0 ? (int64_t)run->keys_per_ms : -1);
    set_real(&f[n++], "seconds", r->seconds, 6);
    set_real(&f[n++], "rows_per_s", r->rows_per_s, 1);
    set_i64(&f[n++], "index_bytes", r->stats.index_bytes);
    set_i64(&f[n++], "leaf_pages", r->stats.leaf_pages);
    set_real(&f[n++], "leaf_density", r->stats.leaf_density, 6);
    set_real(&f[n++], "leaf_fragmentation", r->stats.leaf_fragmentation, 6);
    set_i64(&f[n++], "table_bytes", r->stats.table_bytes);
    set_i64(&f[n++], "wal_bytes", r->delta.wal_bytes);
    set_i64(&f[n++], "bytes_written", r->delta.bytes_written);
    set_i64(&f[n++], "buffer_reads", r->delta.buffer_reads);
    set_i64(&f[n++], "buffer_writes", r->delta.buffer_writes);
    if (run->migrate) {
        set_i64(&f[n++], "page_splits", r->leaf_pages_added);
        set_i64(&f[n++], "leaf_pages_added", r->leaf_pages_added);
        set_real(&f[n++], "era_leaf_density", r->era_leaf_density, 6);
    }
    return n;
}

static void put_json(cli *c, const bench_run *run, const bench_result *r)
{
    field f[MAX_FIELDS];
    size_t n = result_fields(run, r, f);
    idmx_outbuf_putc(&c->out, '{');
    for (size_t i = 0; i < n; i++) {
        if (i > 0) {
            idmx_outbuf_puts(&c->out, ", ");
        }
        idmx_json_string(&c->out, f[i].name, strlen(f[i].name));
        idmx_outbuf_puts(&c->out, ": ");
        if (f[i].is_null) {
            idmx_outbuf_puts(&c->out, "null");
        } else if (f[i].is_string) {
            idmx_json_string(&c->out, f[i].text, strlen(f[i].text));
        } else {
            idmx_outbuf_puts(&c->out, f[i].text);
        }
    }
    idmx_outbuf_puts(&c->out, ", \"rate\": [");
    for (size_t i = 0; i < r->n_rate; i++) {
        char t[64];
        snprintf(t, sizeof t, "%s[%" PRId64 ", %.1f]", i > 0 ? ", " : "", r->rate[i].rows,
                 isfinite(r->rate[i].rows_per_s) ? r->rate[i].rows_per_s : 0.0);
        idmx_outbuf_puts(&c->out, t);
    }
    idmx_outbuf_puts(&c->out, "]}\n");
}

/* A CSV cell (RFC 4180): quoted when it holds a comma, quote or newline. */
static void put_csv_cell(cli *c, const char *s)
{
    if (strpbrk(s, ",\"\r\n") == NULL) {
        idmx_outbuf_puts(&c->out, s);
        return;
    }
    idmx_outbuf_putc(&c->out, '"');
    for (; *s != '\0'; s++) {
        if (*s == '"') {
            idmx_outbuf_putc(&c->out, '"');
        }
        idmx_outbuf_putc(&c->out, *s);
    }
    idmx_outbuf_putc(&c->out, '"');
}

static void put_csv(cli *c, const bench_run *run, const bench_result *r, int header)
{
    field f[MAX_FIELDS];
    size_t n = result_fields(run, r, f);
    if (header) {
        for (size_t i = 0; i < n; i++) {
            if (i > 0) {
                idmx_outbuf_putc(&c->out, ',');
            }
            idmx_outbuf_puts(&c->out, f[i].name);
        }
        idmx_outbuf_putc(&c->out, '\n');
    }
    for (size_t i = 0; i < n; i++) {
        if (i > 0) {
            idmx_outbuf_putc(&c->out, ',');
        }
        if (!f[i].is_null) {
            put_csv_cell(c, f[i].text);
        }
    }
    idmx_outbuf_putc(&c->out, '\n');
}

static void human_bytes(int64_t v, char *dst, size_t cap)
{
    if (v < 0) {
        snprintf(dst, cap, "-");
    } else if (v < 1024) {
        snprintf(dst, cap, "%" PRId64 " B", v);
    } else if (v < 1024 * 1024) {
        snprintf(dst, cap, "%.1f KiB", (double)v / 1024.0);
    } else if (v < INT64_C(1024) * 1024 * 1024) {
        snprintf(dst, cap, "%.1f MiB", (double)v / (1024.0 * 1024.0));
    } else {
        snprintf(dst, cap, "%.2f GiB", (double)v / (1024.0 * 1024.0 * 1024.0));
    }
}

static void human_count(int64_t v, char *dst, size_t cap)
{
    if (v < 0) {
        snprintf(dst, cap, "-");
    } else {
        snprintf(dst, cap, "%" PRId64, v);
    }
}

static void human_ratio(double v, char *dst, size_t cap)
{
    if (!(v >= 0) || !isfinite(v)) {
        snprintf(dst, cap, "-");
    } else {
        snprintf(dst, cap, "%.3f", v);
    }
}

/* Without --json or --csv: a line saying what ran, then a table. */
static void put_table(cli *c, const bench_run *run)
{
    char line[256];
    char kpm[48];
    if (run->keys_per_ms > 0) {
        snprintf(kpm, sizeof kpm, "%" PRIu64 " keys per ms", run->keys_per_ms);
    } else {
        snprintf(kpm, sizeof kpm, "the real clock");
    }
    snprintf(line, sizeof line, "%s (%s): %" PRId64 " rows%s, batch %" PRId64 ", %s\n",
             run->db_version, run->url_shown, run->rows, run->migrate ? " per era" : " per format",
             run->batch, kpm);
    idmx_outbuf_puts(&c->out, line);
    snprintf(line, sizeof line, "%-18s%s%12s %12s %10s %8s %6s %11s %11s %9s %9s", "FORMAT",
             run->migrate ? "ERA " : "", "ROWS/S", "INDEX", "LEAVES", "DENSITY", "FRAG", "WAL",
             "WRITTEN", "READS", "WRITES");
    idmx_outbuf_puts(&c->out, line);
    if (run->migrate) {
        idmx_outbuf_puts(&c->out, "   SPLITS ERA_DENSITY");
    }
    idmx_outbuf_putc(&c->out, '\n');
    for (size_t i = 0; i < run->n_results; i++) {
        const bench_result *r = &run->results[i];
        char idx[24], leaves[24], dens[16], frag[16], wal[24], written[24], reads[24],
            writes[24];
        human_bytes(r->stats.index_bytes, idx, sizeof idx);
        human_count(r->stats.leaf_pages, leaves, sizeof leaves);
        human_ratio(r->stats.leaf_density, dens, sizeof dens);
        human_ratio(r->stats.leaf_fragmentation, frag, sizeof frag);
        human_bytes(r->delta.wal_bytes, wal, sizeof wal);
        human_bytes(r->delta.bytes_written, written, sizeof written);
        human_count(r->delta.buffer_reads, reads, sizeof reads);
        human_count(r->delta.buffer_writes, writes, sizeof writes);
        char era[8] = "";
        if (run->migrate) {
            snprintf(era, sizeof era, "%-4d", r->era);
        }
        snprintf(line, sizeof line, "%-18s%s%12.0f %12s %10s %8s %6s %11s %11s %9s %9s",
                 r->format, era, r->rows_per_s, idx, leaves, dens, frag, wal, written, reads,
                 writes);
        idmx_outbuf_puts(&c->out, line);
        if (run->migrate) {
            char splits[24], ed[16];
            human_count(r->leaf_pages_added, splits, sizeof splits);
            human_ratio(r->era_leaf_density, ed, sizeof ed);
            snprintf(line, sizeof line, " %8s %11s", splits, ed);
            idmx_outbuf_puts(&c->out, line);
        }
        idmx_outbuf_putc(&c->out, '\n');
    }
}

/* ---- options -------------------------------------------------------------- */

static int take_option(cli *c, void *ctx, int id, const idmx_optparse *p)
{
    bench_opts *o = ctx;
    (void)c;
    if (id != IDMX_OPT_OPERAND && id != OPT_KEYS_PER_MS && o->btree_only[0] == '\0') {
        /* p->name lives in the parser's buffer, reused by the next option. */
        snprintf(o->btree_only, sizeof o->btree_only, "%s", p->name != NULL ? p->name : "?");
    }
    switch (id) {
    case IDMX_OPT_OPERAND:
        if (o->sub == NULL) {
            o->sub = p->arg;
        } else if (o->n_operands < 3) {
            o->operands[o->n_operands++] = p->arg;
        }
        break;
    case OPT_DB:
        o->db = p->arg;
        break;
    case OPT_FORMATS:
        o->formats = p->arg;
        break;
    case OPT_ROWS:
        o->rows_text = p->arg;
        break;
    case OPT_BATCH:
        o->batch_text = p->arg;
        break;
    case OPT_KEYS_PER_MS:
        o->kpm_text = p->arg;
        break;
    case OPT_SCENARIO:
        o->scenario = p->arg;
        break;
    case OPT_JSON:
        o->json = 1;
        break;
    case OPT_CSV:
        o->csv = 1;
        break;
    case OPT_CHART:
        o->chart = p->arg;
        break;
    case OPT_KEEP:
        o->keep = 1;
        break;
    default:
        return cli_usage(c, "unhandled option '%s'", p->name != NULL ? p->name : "?");
    }
    return CLI_CONTINUE;
}

/* Copies an operand or value for a message: at most 64 bytes, control
 * characters as '?'. */
static void shown_text(const char *s, size_t len, char *dst, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len && i < 64 && o + 4 < cap; i++) {
        unsigned char ch = (unsigned char)s[i];
        dst[o++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
    }
    if (len > 64 && o + 4 < cap) {
        memcpy(dst + o, "...", 3);
        o += 3;
    }
    dst[o] = '\0';
}

static int parse_formats(cli *c, bench_opts *o)
{
    const char *s = o->formats;
    if (s == NULL) {
        for (int f = 0; f < BK_N_FORMATS; f++) {
            o->list[o->n_list++] = f;
        }
        return CLI_CONTINUE;
    }
    for (;;) {
        size_t len = strcspn(s, ",");
        char shown[80];
        shown_text(s, len, shown, sizeof shown);
        int f = bk_format_parse(s, len);
        if (f < 0) {
            if (len == 0) {
                char all[80];
                shown_text(o->formats, strlen(o->formats), all, sizeof all);
                return cli_usage(c, "--formats '%s': an empty format name (expected a "
                                    "comma-separated list of %s)",
                                 all, bk_format_list());
            }
            return cli_usage(c, "--formats: unknown format '%s' (expected %s)", shown,
                             bk_format_list());
        }
        for (size_t i = 0; i < o->n_list; i++) {
            if (o->list[i] == f) {
                return cli_usage(c, "--formats: '%s' is listed twice", shown);
            }
        }
        o->list[o->n_list++] = f;
        if (s[len] == '\0') {
            break;
        }
        s += len + 1;
    }
    return CLI_CONTINUE;
}

static int parse_number(cli *c, const char *name, const char *text, const idmx_range *r,
                        uint64_t *out)
{
    char msg[IDMX_OPT_MSG_CAP];
    if (idmx_parse_whole(name, text, r, out, msg, sizeof msg) != 0) {
        return cli_usage(c, "%s", msg);
    }
    return CLI_CONTINUE;
}

static int check_btree(cli *c, bench_opts *o)
{
    if (o->n_operands > 0) {
        char shown[80];
        shown_text(o->operands[0], strlen(o->operands[0]), shown, sizeof shown);
        return cli_usage(c, "unexpected argument '%s' (bench btree takes options only)", shown);
    }
    if (o->json && o->csv) {
        return cli_usage(c, "--json and --csv are exclusive (choose one)");
    }
    uint64_t v = DEFAULT_ROWS;
    if (o->rows_text != NULL && parse_number(c, "--rows", o->rows_text, &range_rows, &v) !=
                                    CLI_CONTINUE) {
        return CLI_EXIT_USAGE;
    }
    o->rows = (int64_t)v;
    v = DEFAULT_BATCH;
    if (o->batch_text != NULL && parse_number(c, "--batch", o->batch_text, &range_batch, &v) !=
                                     CLI_CONTINUE) {
        return CLI_EXIT_USAGE;
    }
    o->batch = (int64_t)v;
    if (o->kpm_text != NULL &&
        parse_number(c, "--keys-per-ms", o->kpm_text, &range_keys_per_ms, &o->keys_per_ms) !=
            CLI_CONTINUE) {
        return CLI_EXIT_USAGE;
    }
    if (o->scenario != NULL) {
        if (strcmp(o->scenario, "migrate") != 0) {
            char shown[80];
            shown_text(o->scenario, strlen(o->scenario), shown, sizeof shown);
            return cli_usage(c, "--scenario: unknown scenario '%s' (expected migrate)", shown);
        }
        if (o->formats != NULL) {
            return cli_usage(c, "--scenario migrate takes no --formats (it inserts uuidv4, "
                                "then uuidv7)");
        }
        o->migrate = 1;
    } else {
        int st = parse_formats(c, o);
        if (st != CLI_CONTINUE) {
            return st;
        }
    }
    if (o->db == NULL) {
        o->db = DEFAULT_DB;
    }
    if (o->db[0] == '\0') {
        return cli_usage(c, "--db: needs a URL (sqlite:PATH, postgresql://... or "
                            "mysql://USER:PASS@HOST:PORT/DB)");
    }
    if (idmb_url_kind(o->db) == 0) {
        char shown[1024];
        idmb_url_redact(o->db, shown, sizeof shown);
        return cli_usage(c, "--db %s: not a database URL (expected sqlite:PATH, "
                            "postgresql://... or mysql://USER:PASS@HOST:PORT/DB)",
                         shown);
    }
    if (o->chart != NULL && o->chart[0] == '\0') {
        return cli_usage(c, "--chart: needs a file name");
    }
    return CLI_CONTINUE;
}

/* Says which tables will be created and dropped where, before any is. */
static void announce(const bench_opts *o, const char *shown)
{
    fprintf(stderr, "idmint: bench btree: %s table%s ", o->keep ? "creating (and keeping)"
                                                                 : "creating and dropping",
            o->migrate || o->n_list == 1 ? "" : "s");
    if (o->migrate) {
        fputs(IDMB_TABLE_PREFIX "migrate", stderr);
    }
    for (size_t i = 0; i < o->n_list; i++) {
        char table[IDMB_TABLE_MAX + 1];
        table_name(o->list[i], table, sizeof table);
        fprintf(stderr, "%s%s", i > 0 ? ", " : "", table);
    }
    fprintf(stderr, " in %s\n", shown);
}

static int run_btree(cli *c, bench_opts *o)
{
    int st = check_btree(c, o);
    if (st != CLI_CONTINUE) {
        return st;
    }
    char shown[1024];
    idmb_url_redact(o->db, shown, sizeof shown);
    FILE *chart = NULL;
    if (o->chart != NULL) {
        chart = fopen(o->chart, "w");
        if (chart == NULL) {
            cli_diag(c, "bench btree: cannot write --chart %s: %s", o->chart, strerror(errno));
            return CLI_EXIT_FAIL;
        }
    }
    size_t n_results = o->migrate ? 2 : o->n_list;
    bench_result *results = calloc(n_results, sizeof *results);
    uint8_t *keys = malloc((size_t)o->batch * BK_KEY_MAX);
    if (results == NULL || keys == NULL) {
        cli_diag(c, "out of memory");
        st = CLI_EXIT_FAIL;
        goto done;
    }
    announce(o, shown);
    runner R;
    memset(&R, 0, sizeof R);
    R.c = c;
    R.o = o;
    R.keys = keys;
    R.pg.on = isatty(STDERR_FILENO);
    idmb_error dberr;
    int rc = idmb_open(o->db, &R.db, &dberr);
    if (rc != IDMB_OK) {
        st = db_fail(c, &dberr);
        goto done;
    }
    catch_signals();
    bench_run run;
    memset(&run, 0, sizeof run);
    run.db = kind_name(idmb_db_kind(R.db));
    run.db_version = idmb_db_version(R.db);
    run.url_shown = shown;
    run.rows = o->rows;
    run.batch = o->batch;
    run.keys_per_ms = o->keys_per_ms;
    run.migrate = o->migrate;
    run.results = results;
    st = CLI_EXIT_OK;
    if (o->migrate) {
        st = run_migrate(&R, results);
        run.n_results = st == CLI_EXIT_OK ? 2 : 0;
        for (size_t i = 0; i < run.n_results; i++) {
            if (o->json) {
                put_json(c, &run, &results[i]);
            } else if (o->csv) {
                put_csv(c, &run, &results[i], i == 0);
            }
        }
    } else {
        for (size_t i = 0; i < o->n_list && st == CLI_EXIT_OK; i++) {
            st = run_format(&R, o->list[i], &results[i]);
            if (st != CLI_EXIT_OK) {
                break;
            }
            run.n_results = i + 1;
            /* JSON and CSV leave as each format ends (a long run shows
             * its progress in a pipe too). */
            if (o->json) {
                put_json(c, &run, &results[i]);
            } else if (o->csv) {
                put_csv(c, &run, &results[i], i == 0);
            }
            if (o->json || o->csv) {
                int out_st = cli_out_flush(c);
                if (out_st != CLI_EXIT_OK) {
                    st = out_st;
                }
            }
        }
    }
    if (st == CLI_EXIT_OK && !o->json && !o->csv) {
        put_table(c, &run);
    }
    if (st == CLI_EXIT_OK && chart != NULL) {
        if (bench_svg_write(chart, &run) != 0 || fflush(chart) != 0) {
            cli_diag(c, "bench btree: cannot write --chart %s: %s", o->chart, strerror(errno));
            st = CLI_EXIT_FAIL;
        }
    }
    idmb_close(R.db);
done:
    if (chart != NULL && fclose(chart) != 0 && st == CLI_EXIT_OK) {
        cli_diag(c, "bench btree: cannot write --chart %s: %s", o->chart, strerror(errno));
        st = CLI_EXIT_FAIL;
    }
    free(keys);
    free(results);
    int out_st = cli_out_flush(c);
    return st != CLI_EXIT_OK ? st : out_st;
}

/* bench keys FORMAT N [--keys-per-ms K]: the keys in hex. */
static int run_keys(cli *c, bench_opts *o)
{
    if (o->btree_only[0] != '\0') {
        return cli_usage(c, "option '%s' applies only to bench btree", o->btree_only);
    }
    if (o->n_operands != 2) {
        return cli_usage(c, "bench keys needs FORMAT and N (e.g. bench keys uuidv7 10)");
    }
    int format = bk_format_parse(o->operands[0], strlen(o->operands[0]));
    if (format < 0) {
        char shown[80];
        shown_text(o->operands[0], strlen(o->operands[0]), shown, sizeof shown);
        return cli_usage(c, "unknown format '%s' (expected %s)", shown, bk_format_list());
    }
    uint64_t n = 0;
    if (parse_number(c, "N", o->operands[1], &range_keys_n, &n) != CLI_CONTINUE) {
        return CLI_EXIT_USAGE;
    }
    if (o->kpm_text != NULL &&
        parse_number(c, "--keys-per-ms", o->kpm_text, &range_keys_per_ms, &o->keys_per_ms) !=
            CLI_CONTINUE) {
        return CLI_EXIT_USAGE;
    }
    idm_error err;
    memset(&err, 0, sizeof err);
    bk_minter *m = NULL;
    int rc = bk_minter_new(&m, format, o->keys_per_ms, &err);
    if (rc != IDM_OK) {
        cli_diag(c, "bench keys: %s", cli_reason(&err, rc));
        return CLI_EXIT_FAIL;
    }
    size_t width = (size_t)bk_key_bytes(format);
    uint8_t buf[256 * BK_KEY_MAX];
    int st = CLI_EXIT_OK;
    while (n > 0 && st == CLI_EXIT_OK) {
        size_t take = n < 256 ? (size_t)n : 256;
        rc = bk_mint(m, buf, take, &err);
        if (rc != IDM_OK) {
            cli_diag(c, "bench keys: %s", cli_reason(&err, rc));
            st = CLI_EXIT_FAIL;
            break;
        }
        for (size_t i = 0; i < take; i++) {
            idmx_outbuf_hex(&c->out, buf + i * width, width);
            idmx_outbuf_putc(&c->out, '\n');
        }
        n -= take;
        st = cli_out_status(c);
    }
    bk_minter_free(m);
    int out_st = cli_out_flush(c);
    return st != CLI_EXIT_OK ? st : out_st;
}

int cli_bench(cli *c, int argc, char **argv)
{
    bench_opts o;
    memset(&o, 0, sizeof o);
    int st = cli_parse_options(c, argc, argv, bench_options, cli_bench_help, take_option, &o);
    if (st != CLI_CONTINUE) {
        return st;
    }
    if (o.sub == NULL) {
        return cli_usage(c, "bench needs a subcommand: btree");
    }
    if (strcmp(o.sub, "btree") == 0) {
        return run_btree(c, &o);
    }
    if (strcmp(o.sub, "keys") == 0) {
        return run_keys(c, &o);
    }
    char shown[80];
    shown_text(o.sub, strlen(o.sub), shown, sizeof shown);
    return cli_usage(c, "unknown bench subcommand '%s' (expected btree)", shown);
}
