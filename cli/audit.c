/*
 * audit.c - `idmint audit FORMAT [OPTIONS] [FILE ...]` and
 * `idmint audit FORMAT --db URL --table T --column C` (man/idmint.1,
 * "audit"; docs/audit.md): reads IDs that someone else's systems minted
 * and reports what must not happen - duplicates, two writers sharing a
 * snowflake node, a sequence that overflowed, IDs out of order where one
 * source promises order, IDs from the future or before the epoch - with
 * per-node counts and rates.
 *
 * This file is the command: options, the lines of files and stdin (as
 * input.c reads them: "\n" and one trailing "\r" removed, empty lines
 * skipped but counted in line numbers), the rows of a database through
 * idmint_dbbench's connectors, and the exit status. The checks are
 * audit_check.c's, the printing audit_report.c's.
 *
 * Exit status: 0 clean, 1 something that must not happen was found
 * (invalid lines count unless --skip-invalid), 2 the audit could not be
 * done (a usage error, an unreadable file, a database error).
 */
#include "cli.h"

#include "audit.h"
#include "idmint_dbbench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    OPT_JSON = CLI_OPT_HELP + 1,
    OPT_LAYOUT,
    OPT_EPOCH,
    OPT_ORDER,
    OPT_NOW,
    OPT_MAX_AHEAD,
    OPT_NOT_BEFORE,
    OPT_SKIP_INVALID,
    OPT_SHOW,
    OPT_DB,
    OPT_TABLE,
    OPT_COLUMN,
    OPT_ORDER_BY
};

/* clang-format off */
static const idmx_option audit_options[] = {
    {"help", 'h', IDMX_NO_ARG, CLI_OPT_HELP},
    {"json", 0, IDMX_NO_ARG, OPT_JSON},
    {"layout", 0, IDMX_REQUIRED_ARG, OPT_LAYOUT},
    {"epoch", 0, IDMX_REQUIRED_ARG, OPT_EPOCH},
    {"order", 0, IDMX_REQUIRED_ARG, OPT_ORDER},
    {"now", 0, IDMX_REQUIRED_ARG, OPT_NOW},
    {"max-ahead", 0, IDMX_REQUIRED_ARG, OPT_MAX_AHEAD},
    {"not-before", 0, IDMX_REQUIRED_ARG, OPT_NOT_BEFORE},
    {"skip-invalid", 0, IDMX_NO_ARG, OPT_SKIP_INVALID},
    {"show", 0, IDMX_REQUIRED_ARG, OPT_SHOW},
    {"db", 0, IDMX_REQUIRED_ARG, OPT_DB},
    {"table", 0, IDMX_REQUIRED_ARG, OPT_TABLE},
    {"column", 0, IDMX_REQUIRED_ARG, OPT_COLUMN},
    {"order-by", 0, IDMX_REQUIRED_ARG, OPT_ORDER_BY},
    {NULL, 0, 0, 0},
};
/* clang-format on */

const char cli_audit_help[] =
    "Usage: idmint audit FORMAT [OPTIONS] [FILE ...]\n"
    "       idmint audit FORMAT --db URL --table T --column C [--order-by C2] [OPTIONS]\n"
    "\n"
    "Check IDs minted elsewhere: one per line from the FILEs (- or none: standard\n"
    "input), or a column of a database table. FORMAT is snowflake, uuidv7, ulid,\n"
    "ksuid, typeid or uuidv4. Reports duplicates (with the first places they\n"
    "occur), two writers sharing a snowflake node (in one node and time unit,\n"
    "sequences that restart or interleave, or one node's ID ranges overlapping\n"
    "in two inputs), sequences that overflowed the layout, IDs out of order,\n"
    "IDs from the future or before the epoch, and per-node counts and rates.\n"
    "\n"
    "Options:\n"
    "      --layout L        snowflake layout: a preset or a spec (default twitter)\n"
    "      --epoch E         the layout's epoch: Unix ms or RFC 3339 time\n"
    "      --order O         what order each input promises: node (snowflake's\n"
    "                        default: each node's IDs in minting order), input\n"
    "                        (each input is one generator's output, in order), or\n"
    "                        none (the default of the other formats)\n"
    "      --now T           the time 'now' for the future check: Unix ms or RFC\n"
    "                        3339 (default: the clock)\n"
    "      --max-ahead MS    how far ahead of now an ID may be (default 60000)\n"
    "      --not-before T    IDs earlier than T are before the epoch (default: a\n"
    "                        snowflake's or KSUID's time field 0; 2000-01-01 for\n"
    "                        uuidv7, ulid and typeid)\n"
    "      --skip-invalid    count invalid lines in the report instead of failing\n"
    "      --show N          places listed per finding (default 10, at most 1000)\n"
    "      --json            one JSON object instead of the summary\n"
    "      --db URL          read from a database: sqlite:PATH, postgresql://...,\n"
    "                        mysql://USER:PASS@HOST:PORT/DB\n"
    "      --table T         the table (NAME or SCHEMA.NAME)\n"
    "      --column C        the column holding the IDs (text, integer or binary)\n"
    "      --order-by C2     read rows in this column's order (the order they were\n"
    "                        written, e.g. a serial key); default: the database's\n"
    "  -h, --help            show this help and exit\n"
    "\n"
    "Exit status: 0 nothing wrong found, 1 something that must not happen was\n"
    "found (or an invalid line), 2 usage error or unreadable input.\n";

#define DEFAULT_MAX_AHEAD_MS 60000
#define DEFAULT_SHOW         10
#define UUID_NOT_BEFORE_MS   INT64_C(946684800000) /* 2000-01-01T00:00:00Z */
#define DIAG_INVALID_MAX     10                    /* invalid lines named on stderr */
#define PROGRESS_EVERY       (1u << 20)

typedef struct audit_args {
    const char *format;
    bool json;
    const char *layout_text, *epoch_text, *order_text, *now_text, *max_ahead_text, *not_before_text,
        *show_text;
    bool skip_invalid;
    const char *db, *table, *column, *order_by;
    char **files;
    int n_files;
} audit_args;

typedef struct audit_run {
    cli *c;
    audit a;
    bool progress;      /* stderr is a terminal */
    uint64_t diagnosed; /* invalid lines named on stderr */
} audit_run;

static int take_option(cli *c, void *ctx, int id, const idmx_optparse *p)
{
    audit_args *g = ctx;
    switch (id) {
    case IDMX_OPT_OPERAND:
        if (g->format == NULL) {
            g->format = p->arg;
        } else {
            g->files[g->n_files++] = (char *)p->arg;
        }
        break;
    case OPT_JSON:
        g->json = true;
        break;
    case OPT_LAYOUT:
        g->layout_text = p->arg;
        break;
    case OPT_EPOCH:
        g->epoch_text = p->arg;
        break;
    case OPT_ORDER:
        g->order_text = p->arg;
        break;
    case OPT_NOW:
        g->now_text = p->arg;
        break;
    case OPT_MAX_AHEAD:
        g->max_ahead_text = p->arg;
        break;
    case OPT_NOT_BEFORE:
        g->not_before_text = p->arg;
        break;
    case OPT_SKIP_INVALID:
        g->skip_invalid = true;
        break;
    case OPT_SHOW:
        g->show_text = p->arg;
        break;
    case OPT_DB:
        g->db = p->arg;
        break;
    case OPT_TABLE:
        g->table = p->arg;
        break;
    case OPT_COLUMN:
        g->column = p->arg;
        break;
    case OPT_ORDER_BY:
        g->order_by = p->arg;
        break;
    default:
        return cli_usage(c, "unhandled option '%s'", p->name != NULL ? p->name : "?");
    }
    return CLI_CONTINUE;
}

static const char *const audit_formats[] = {"snowflake", "uuidv7", "ulid",
                                            "ksuid",     "typeid", "uuidv4"};

/* The options into the checks' settings. Returns CLI_CONTINUE or a
 * reported usage error. */
static int resolve(cli *c, const audit_args *g, audit_opts *o)
{
    char msg[IDMX_OPT_MSG_CAP];
    memset(o, 0, sizeof *o);
    if (g->format == NULL) {
        return cli_usage(c, "missing FORMAT (snowflake, uuidv7, ulid, ksuid, typeid or uuidv4)");
    }
    for (size_t i = 0; i < sizeof audit_formats / sizeof audit_formats[0]; i++) {
        if (strcmp(g->format, audit_formats[i]) == 0) {
            o->fmt = idm_format_by_name(g->format, strlen(g->format));
        }
    }
    if (o->fmt == NULL) {
        char shown[64 * 4 + 4];
        cli_escape(g->format, 64, shown, sizeof shown);
        return cli_usage(c,
                         "unknown format '%s' (expected snowflake, uuidv7, ulid, ksuid, typeid "
                         "or uuidv4)",
                         shown);
    }
    bool sf = o->fmt->id == IDM_FORMAT_SNOWFLAKE;
    if (!sf && (g->layout_text != NULL || g->epoch_text != NULL)) {
        return cli_usage(c, "--layout and --epoch apply only to snowflake");
    }
    int st = cli_layout_from_options(c, g->layout_text, g->epoch_text, &o->layout);
    if (st != CLI_EXIT_OK) {
        return st;
    }
    o->order = sf ? AUDIT_ORDER_NODE : AUDIT_ORDER_NONE;
    if (g->order_text != NULL) {
        if (strcmp(g->order_text, "none") == 0) {
            o->order = AUDIT_ORDER_NONE;
        } else if (strcmp(g->order_text, "input") == 0) {
            o->order = AUDIT_ORDER_INPUT;
        } else if (strcmp(g->order_text, "node") == 0 && sf) {
            o->order = AUDIT_ORDER_NODE;
        } else if (strcmp(g->order_text, "node") == 0) {
            return cli_usage(c, "--order node applies only to snowflake (use input or none)");
        } else {
            return cli_usage(c, "invalid --order '%s' (expected node, input or none)",
                             g->order_text);
        }
    }
    if (g->now_text != NULL) {
        if (idmx_parse_epoch(g->now_text, &o->now_ms, msg, sizeof msg) != 0) {
            return cli_usage(c, "--now: %s", msg);
        }
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        o->now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    }
    o->max_ahead_ms = DEFAULT_MAX_AHEAD_MS;
    if (g->max_ahead_text != NULL &&
        idmx_parse_ms("--max-ahead", g->max_ahead_text, &idmx_range_max_offset_ms, &o->max_ahead_ms,
                      msg, sizeof msg) != 0) {
        return cli_usage(c, "%s", msg);
    }
    if (g->not_before_text != NULL) {
        if (idmx_parse_epoch(g->not_before_text, &o->not_before_ms, msg, sizeof msg) != 0) {
            return cli_usage(c, "--not-before: %s", msg);
        }
    } else if (sf || o->fmt->id == IDM_FORMAT_KSUID || o->fmt->id == IDM_FORMAT_UUIDV4) {
        o->not_before_ms = INT64_MIN;
    } else {
        o->not_before_ms = UUID_NOT_BEFORE_MS;
    }
    uint64_t show = DEFAULT_SHOW;
    static const idmx_range show_range = {0, AUDIT_SHOW_MAX, NULL};
    if (g->show_text != NULL &&
        idmx_parse_whole("--show", g->show_text, &show_range, &show, msg, sizeof msg) != 0) {
        return cli_usage(c, "%s", msg);
    }
    o->show = (uint32_t)show;
    o->skip_invalid = g->skip_invalid;
    if (g->db != NULL) {
        if (g->table == NULL || g->column == NULL) {
            return cli_usage(c, "--db needs --table and --column");
        }
        if (g->n_files > 0) {
            return cli_usage(c, "--db reads no FILE: give one or the other");
        }
    } else if (g->table != NULL || g->column != NULL || g->order_by != NULL) {
        return cli_usage(c, "--table, --column and --order-by apply only with --db");
    }
    return CLI_CONTINUE;
}

static void progress_line(audit_run *r, bool done)
{
    if (!r->progress) {
        return;
    }
    if (done) {
        fputs("\r\033[K", stderr);
    } else {
        fprintf(stderr, "\ridmint audit: %llu lines read", (unsigned long long)r->a.lines);
    }
    fflush(stderr);
}

/* Takes one line or row. Returns 0, or the exit status to stop with. */
static int take_one(audit_run *r, const char *text, size_t len, bool binary)
{
    bool invalid;
    char why[160];
    int rc = audit_add(&r->a, text, len, binary, &invalid, why, sizeof why);
    if (rc == EOVERFLOW) {
        cli_diag(r->c, "more than %lu lines: audit them in parts", (unsigned long)AUDIT_MAX_LINES);
        return CLI_EXIT_USAGE;
    }
    if (rc != 0) {
        cli_diag(r->c, "out of memory after %zu IDs", r->a.n_recs);
        return CLI_EXIT_USAGE;
    }
    if (invalid && !r->a.o.skip_invalid && r->diagnosed++ < DIAG_INVALID_MAX) {
        char at[512];
        audit_place(&r->a, r->a.next_ord - 1, at, sizeof at);
        char shown[96 * 4 + 4];
        char copy[97];
        size_t n = binary ? 0 : len < 96 ? len : 96;
        memcpy(copy, text, n);
        copy[n] = '\0';
        cli_escape(copy, 96, shown, sizeof shown);
        progress_line(r, true);
        if (binary) {
            cli_diag(r->c, "%s: %s", at, why);
        } else {
            cli_diag(r->c, "%s: %s%s: %s", at, shown, len > 96 ? "..." : "", why);
        }
    }
    if (r->progress && r->a.lines % PROGRESS_EVERY == 0) {
        progress_line(r, false);
    }
    return 0;
}

/* Reads one file (or stdin for "-"). Returns 0 or an exit status. */
static int read_file(audit_run *r, const char *path)
{
    bool is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "r");
    if (f == NULL) {
        cli_diag(r->c, "%s: %s", path, strerror(errno));
        return CLI_EXIT_USAGE;
    }
    int st = audit_begin_input(&r->a, is_stdin ? "-" : path, false);
    if (st != 0) {
        cli_diag(r->c, st == EOVERFLOW ? "too many lines" : "out of memory");
        st = CLI_EXIT_USAGE;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while (st == 0 && (n = getline(&line, &cap, f)) >= 0) {
        size_t l = (size_t)n;
        if (l > 0 && line[l - 1] == '\n') {
            l--;
        }
        if (l > 0 && line[l - 1] == '\r') {
            l--;
        }
        if (l == 0) {
            if (audit_skip_line(&r->a) != 0) {
                cli_diag(r->c, "more than %lu lines: audit them in parts",
                         (unsigned long)AUDIT_MAX_LINES);
                st = CLI_EXIT_USAGE;
            }
            continue;
        }
        st = take_one(r, line, l, false);
    }
    if (st == 0 && ferror(f)) {
        cli_diag(r->c, "%s: %s", is_stdin ? "standard input" : path, strerror(errno));
        st = CLI_EXIT_USAGE;
    }
    free(line);
    if (!is_stdin) {
        fclose(f);
    }
    return st;
}

static int take_row(void *ctx, const void *data, size_t len, bool binary)
{
    audit_run *r = ctx;
    if (data == NULL) {
        /* SQL NULL: an invalid line named as such. */
        return take_one(r, "NULL", 4, false) == 0 ? 0 : -1;
    }
    return take_one(r, data, len, binary) == 0 ? 0 : -1;
}

/* Reads the column of a table. Returns 0 or an exit status. */
static int read_db(audit_run *r, const audit_args *g)
{
    idmb_error err = {0};
    char where[IDMB_ERR_CAP];
    idmb_url_redact(g->db, where, sizeof where);
    char name[IDMB_ERR_CAP + 160];
    snprintf(name, sizeof name, "%s %s.%s", where, g->table, g->column);
    if (audit_begin_input(&r->a, name, true) != 0) {
        cli_diag(r->c, "out of memory");
        return CLI_EXIT_USAGE;
    }
    idmb_db *db = NULL;
    int rc = idmb_open_reader(g->db, &db, &err);
    if (rc == IDMB_OK) {
        rc = idmb_scan(db, g->table, g->column, g->order_by, take_row, r, &err);
        idmb_close(db);
    }
    if (rc == IDMB_EABORTED) {
        return CLI_EXIT_USAGE; /* take_one has said why */
    }
    if (rc != IDMB_OK) {
        cli_diag(r->c, "%s", err.msg[0] != '\0' ? err.msg : idmb_strerror(rc));
        return CLI_EXIT_USAGE;
    }
    return 0;
}

int cli_audit(cli *c, int argc, char **argv)
{
    audit_args g = {0};
    g.files = argv + 1;
    int st = cli_parse_options(c, argc, argv, audit_options, cli_audit_help, take_option, &g);
    if (st != CLI_CONTINUE) {
        return st;
    }
    audit_opts o;
    st = resolve(c, &g, &o);
    if (st != CLI_CONTINUE) {
        return st;
    }
    audit_run r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.progress = isatty(STDERR_FILENO) != 0;
    if (audit_init(&r.a, &o) != 0) {
        cli_diag(c, "out of memory");
        return CLI_EXIT_USAGE;
    }
    st = 0;
    if (g.db != NULL) {
        st = read_db(&r, &g);
    } else if (g.n_files == 0) {
        st = read_file(&r, "-");
    }
    for (int i = 0; st == 0 && i < g.n_files; i++) {
        st = read_file(&r, g.files[i]);
    }
    progress_line(&r, true);
    if (st == 0 && audit_finish(&r.a) != 0) {
        cli_diag(c, "out of memory");
        st = CLI_EXIT_USAGE;
    }
    if (st != 0) {
        audit_free(&r.a);
        return st;
    }
    if (r.diagnosed > DIAG_INVALID_MAX) {
        cli_diag(c, "%llu more invalid lines",
                 (unsigned long long)(r.diagnosed - DIAG_INVALID_MAX));
    }
    if (g.json) {
        audit_report_json(&r.a, &c->out);
    } else {
        audit_report_text(&r.a, &c->out);
    }
    bool failed = audit_failed(&r.a);
    audit_free(&r.a);
    st = cli_out_flush(c);
    if (st != CLI_EXIT_OK) {
        return CLI_EXIT_USAGE;
    }
    return failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
