/*
 * segment.c - `idmint segment create|list|show` (man/idmint.1, "segment";
 * issue 10; docs/segments.md): the tags of a segment
 * store (<idmint/segstore.h>), the database rows from which idmintd
 * leases Leaf-style ranges of IDs.
 *
 *   segment create TAG --store URL [--first N] [--step N] [--max-step N]
 *                      [--stride K --offset R]
 *   segment list --store URL [--json]
 *   segment show TAG --store URL [--json]
 *
 * --store is required: the store is the domain in which an ID is unique,
 * so a default path (which would differ between root and other users, as
 * idmintd's state directory does) could give two servers two stores with
 * the same tags and the same IDs.
 *
 * create prints nothing on success (as mkdir does). list and show never
 * create a store: an SQLite file that does not exist is reported (exit 1),
 * not made empty. create makes a missing SQLite file but not its
 * directory (a mistyped path is an error, not a new directory).
 *
 * Deliberately left out: a command that hands out IDs (idmintd does, with
 * its buffers and dynamic step), and any way to change or drop a tag.
 */
#include "cli.h"

#include "json.h"
#include <idmint/segstore.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
    OPT_STORE = CLI_OPT_HELP + 1,
    OPT_JSON,
    OPT_FIRST,
    OPT_STEP,
    OPT_MAX_STEP,
    OPT_STRIDE,
    OPT_OFFSET
};

/* One option per line. */
/* clang-format off */
static const idmx_option segment_options[] = {
    {"help", 'h', IDMX_NO_ARG, CLI_OPT_HELP},
    {"store", 0, IDMX_REQUIRED_ARG, OPT_STORE},
    {"json", 0, IDMX_NO_ARG, OPT_JSON},
    {"first", 0, IDMX_REQUIRED_ARG, OPT_FIRST},
    {"step", 0, IDMX_REQUIRED_ARG, OPT_STEP},
    {"max-step", 0, IDMX_REQUIRED_ARG, OPT_MAX_STEP},
    {"stride", 0, IDMX_REQUIRED_ARG, OPT_STRIDE},
    {"offset", 0, IDMX_REQUIRED_ARG, OPT_OFFSET},
    {NULL, 0, 0, 0},
};
/* clang-format on */

/* The values' ranges: every one fits the store's BIGINT columns. */
static const idmx_range range_first = {0, INT64_MAX, NULL};
static const idmx_range range_step = {1, INT64_MAX, NULL};
static const idmx_range range_stride = {1, INT64_MAX, NULL};
static const idmx_range range_offset = {0, INT64_MAX - 1, NULL};

const char cli_segment_help[] =
    "Usage: idmint segment create TAG --store URL [--first N] [--step N]\n"
    "                             [--max-step N] [--stride K --offset R]\n"
    "       idmint segment list --store URL [--json]\n"
    "       idmint segment show TAG --store URL [--json]\n"
    "\n"
    "Manage the tags of a segment store: one database row per tag, from which\n"
    "idmintd (--segments URL) leases ranges of dense, increasing IDs.\n"
    "create makes a tag (it must not exist yet) and prints nothing; list shows\n"
    "every tag; show one. No command here hands out IDs.\n"
    "\n"
    "Options:\n"
    "      --store URL      the store, required (there is no default: the store\n"
    "                       is what keeps IDs unique): sqlite:PATH (an SQLite\n"
    "                       file; create makes it, not its directory) or\n"
    "                       postgresql://... (a libpq URI; postgres:// too)\n"
    "      --first N        create: the first ID (default 1), rounded up to the\n"
    "                       next one congruent to R modulo K\n"
    "      --step N         create: the IDs a server leases at once to begin\n"
    "                       with (default 1000)\n"
    "      --max-step N     create: the bound of the dynamic step (default\n"
    "                       1000000, or --step when that is larger)\n"
    "      --stride K --offset R\n"
    "                       create: hand out only IDs congruent to R modulo K\n"
    "                       (0 <= R < K; default 1 and 0), so that K stores\n"
    "                       with offsets 0..K-1 never collide; given together\n"
    "      --json           list, show: JSON objects (list: one per line): tag,\n"
    "                       next_id (a decimal string), step, max_step, stride,\n"
    "                       offset, leases, created_ms, updated_ms, created,\n"
    "                       updated\n"
    "  -h, --help           show this help and exit\n"
    "\n"
    "Tags are 1 to 128 bytes of A-Z a-z 0-9 _ . - : @ { } | + ~ (case-sensitive).\n"
    "Exit status: 0 done, 1 the store could not be read or written, the tag\n"
    "exists already (create) or does not exist (show), 2 a usage error (a bad\n"
    "tag name, option value or store URL).\n";

typedef enum { SUB_CREATE, SUB_LIST, SUB_SHOW } subcommand;

typedef struct seg_opts {
    const char *sub_text;
    subcommand sub;
    const char *tag;
    const char *extra; /* an operand too many */
    const char *store;
    int json;
    /* create's values, as given (NULL: not given), and parsed. */
    const char *given[5]; /* first, step, max-step, stride, offset */
    uint64_t first, step, max_step, stride, offset;
} seg_opts;

enum { V_FIRST, V_STEP, V_MAX_STEP, V_STRIDE, V_OFFSET };
static const char *const value_names[] = {"--first", "--step", "--max-step", "--stride",
                                          "--offset"};

/* ---- display ---------------------------------------------------------------- */

/* An operand for a message: at most 80 bytes of it. */
static void display_text(const char *text, char *dst, size_t cap)
{
    cli_escape(text, 80, dst, cap);
}

/* The store URL as messages show it: a password (in the userinfo or as a
 * password= parameter of a libpq URI) replaced by "***", so that it never
 * reaches a terminal or a log. */
static void display_store(const char *url, char *dst, size_t cap)
{
    char tmp[1024];
    size_t o = 0;
    const char *p = url;
    const char *auth = strstr(url, "://");
    const char *pw = NULL;
    const char *pw_end = NULL;
    if (auth != NULL) {
        auth += 3;
        const char *end = auth + strcspn(auth, "/?#");
        const char *at = NULL;
        for (const char *q = auth; q < end; q++) {
            if (*q == '@') {
                at = q;
            }
        }
        if (at != NULL) {
            const char *colon = memchr(auth, ':', (size_t)(at - auth));
            if (colon != NULL) {
                pw = colon + 1;
                pw_end = at;
            }
        }
    }
    while (*p != '\0' && o + 4 < sizeof tmp) {
        if (p == pw) {
            memcpy(tmp + o, "***", 3);
            o += 3;
            p = pw_end;
            continue;
        }
        /* password=... in the query: up to the next '&'. A URL too long
         * for tmp is cut short, never past a password's start. */
        if ((*p == '?' || *p == '&') && strncmp(p + 1, "password=", 9) == 0) {
            if (o + 14 >= sizeof tmp) {
                break;
            }
            memcpy(tmp + o, p, 10);
            o += 10;
            memcpy(tmp + o, "***", 3);
            o += 3;
            p += 10;
            p += strcspn(p, "&#");
            continue;
        }
        tmp[o++] = *p++;
    }
    tmp[o] = '\0';
    cli_escape(tmp, sizeof tmp, dst, cap);
}

static void format_time(int64_t ms, char *dst, size_t cap)
{
    if (idm_time_format(ms, dst, cap) != IDM_OK) {
        snprintf(dst, cap, "-");
    }
}

/* A tag as the store returned it: printed with control characters as '?'
 * (a row written by something else must not drive the terminal). */
static void put_text(cli *c, const char *s)
{
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        idmx_outbuf_putc(&c->out, ch < 0x20 || ch == 0x7f ? '?' : (char)ch);
    }
}

static void put_padded(cli *c, const char *s, size_t width)
{
    size_t len = strlen(s);
    put_text(c, s);
    for (; len < width + 2; len++) {
        idmx_outbuf_putc(&c->out, ' ');
    }
}

static void put_json_time(cli *c, int64_t ms)
{
    char t[IDM_RFC3339_CAP];
    if (idm_time_format(ms, t, sizeof t) == IDM_OK) {
        idmx_json_string(&c->out, t, strlen(t));
    } else {
        idmx_outbuf_puts(&c->out, "null");
    }
}

/* One tag as a JSON object and a newline. next_id is a decimal string (an
 * ID may pass 2^53, where JSON readers such as JavaScript's lose digits;
 * inspect writes snowflakes so too). */
static void put_json_tag(cli *c, const idmseg_tag_info *t)
{
    idmx_outbuf_puts(&c->out, "{\"tag\": ");
    idmx_json_string(&c->out, t->tag, strlen(t->tag));
    idmx_outbuf_puts(&c->out, ", \"next_id\": \"");
    idmx_outbuf_u64(&c->out, t->next_id);
    idmx_outbuf_puts(&c->out, "\", \"step\": ");
    idmx_outbuf_u64(&c->out, t->step);
    idmx_outbuf_puts(&c->out, ", \"max_step\": ");
    idmx_outbuf_u64(&c->out, t->max_step);
    idmx_outbuf_puts(&c->out, ", \"stride\": ");
    idmx_outbuf_u64(&c->out, t->stride);
    idmx_outbuf_puts(&c->out, ", \"offset\": ");
    idmx_outbuf_u64(&c->out, t->offset);
    idmx_outbuf_puts(&c->out, ", \"leases\": ");
    idmx_outbuf_u64(&c->out, t->leases);
    idmx_outbuf_puts(&c->out, ", \"created_ms\": ");
    idmx_outbuf_i64(&c->out, t->created_ms);
    idmx_outbuf_puts(&c->out, ", \"updated_ms\": ");
    idmx_outbuf_i64(&c->out, t->updated_ms);
    idmx_outbuf_puts(&c->out, ", \"created\": ");
    put_json_time(c, t->created_ms);
    idmx_outbuf_puts(&c->out, ", \"updated\": ");
    put_json_time(c, t->updated_ms);
    idmx_outbuf_puts(&c->out, "}\n");
}

/* show without --json: "field: value" lines, the JSON members' names. */
static void put_fields(cli *c, const idmseg_tag_info *t)
{
    char created[IDM_RFC3339_CAP];
    char updated[IDM_RFC3339_CAP];
    format_time(t->created_ms, created, sizeof created);
    format_time(t->updated_ms, updated, sizeof updated);
    idmx_outbuf_puts(&c->out, "tag: ");
    put_text(c, t->tag);
    idmx_outbuf_puts(&c->out, "\nnext_id: ");
    idmx_outbuf_u64(&c->out, t->next_id);
    idmx_outbuf_puts(&c->out, "\nstep: ");
    idmx_outbuf_u64(&c->out, t->step);
    idmx_outbuf_puts(&c->out, "\nmax_step: ");
    idmx_outbuf_u64(&c->out, t->max_step);
    idmx_outbuf_puts(&c->out, "\nstride: ");
    idmx_outbuf_u64(&c->out, t->stride);
    idmx_outbuf_puts(&c->out, "\noffset: ");
    idmx_outbuf_u64(&c->out, t->offset);
    idmx_outbuf_puts(&c->out, "\nleases: ");
    idmx_outbuf_u64(&c->out, t->leases);
    idmx_outbuf_puts(&c->out, "\ncreated_ms: ");
    idmx_outbuf_i64(&c->out, t->created_ms);
    idmx_outbuf_puts(&c->out, "\nupdated_ms: ");
    idmx_outbuf_i64(&c->out, t->updated_ms);
    idmx_outbuf_puts(&c->out, "\ncreated: ");
    idmx_outbuf_puts(&c->out, created);
    idmx_outbuf_puts(&c->out, "\nupdated: ");
    idmx_outbuf_puts(&c->out, updated);
    idmx_outbuf_putc(&c->out, '\n');
}

/* ---- list ----------------------------------------------------------------------- */

typedef struct tags {
    idmseg_tag_info *v;
    size_t n, cap;
    int oom;
} tags;

static void on_tag(void *ctx, const idmseg_tag_info *t)
{
    tags *r = ctx;
    if (r->oom) {
        return;
    }
    if (r->n == r->cap) {
        size_t cap = r->cap == 0 ? 16 : r->cap * 2;
        idmseg_tag_info *v = realloc(r->v, cap * sizeof *v);
        if (v == NULL) {
            r->oom = 1;
            return;
        }
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n] = *t;
    r->v[r->n].tag[IDMSEG_TAG_MAX] = '\0';
    r->n++;
}

/* The cells of one row, as the table shows them. */
typedef struct cells {
    char next[24], step[24], max_step[24], stride[24], offset[24], leases[24];
    char updated[IDM_RFC3339_CAP];
} cells;

static void tag_cells(const idmseg_tag_info *t, cells *k)
{
    snprintf(k->next, sizeof k->next, "%" PRIu64, t->next_id);
    snprintf(k->step, sizeof k->step, "%" PRIu64, t->step);
    snprintf(k->max_step, sizeof k->max_step, "%" PRIu64, t->max_step);
    snprintf(k->stride, sizeof k->stride, "%" PRIu64, t->stride);
    snprintf(k->offset, sizeof k->offset, "%" PRIu64, t->offset);
    snprintf(k->leases, sizeof k->leases, "%" PRIu64, t->leases);
    format_time(t->updated_ms, k->updated, sizeof k->updated);
}

static size_t max_size(size_t a, size_t b)
{
    return a > b ? a : b;
}

static void print_table(cli *c, const tags *r)
{
    static const char *const head[] = {"TAG",    "NEXT",   "STEP",   "MAX STEP",
                                       "STRIDE", "OFFSET", "LEASES", "UPDATED"};
    size_t w[7];
    for (size_t j = 0; j < 7; j++) {
        w[j] = strlen(head[j]);
    }
    for (size_t i = 0; i < r->n; i++) {
        cells k;
        tag_cells(&r->v[i], &k);
        w[0] = max_size(w[0], strlen(r->v[i].tag));
        w[1] = max_size(w[1], strlen(k.next));
        w[2] = max_size(w[2], strlen(k.step));
        w[3] = max_size(w[3], strlen(k.max_step));
        w[4] = max_size(w[4], strlen(k.stride));
        w[5] = max_size(w[5], strlen(k.offset));
        w[6] = max_size(w[6], strlen(k.leases));
    }
    for (size_t j = 0; j < 7; j++) {
        put_padded(c, head[j], w[j]);
    }
    idmx_outbuf_puts(&c->out, head[7]);
    idmx_outbuf_putc(&c->out, '\n');
    for (size_t i = 0; i < r->n; i++) {
        cells k;
        tag_cells(&r->v[i], &k);
        put_padded(c, r->v[i].tag, w[0]);
        put_padded(c, k.next, w[1]);
        put_padded(c, k.step, w[2]);
        put_padded(c, k.max_step, w[3]);
        put_padded(c, k.stride, w[4]);
        put_padded(c, k.offset, w[5]);
        put_padded(c, k.leases, w[6]);
        idmx_outbuf_puts(&c->out, k.updated);
        idmx_outbuf_putc(&c->out, '\n');
    }
}

/* ---- the store ---------------------------------------------------------------- */

/* list and show do not create a store: an SQLite file that does not exist
 * is an error. create makes the file (idmseg_store_open does) but not its
 * directory. Returns CLI_CONTINUE, or the reported failure. Other URLs
 * (and sqlite: forms other than a path) are left to idmseg_store_open. */
static int check_sqlite_path(cli *c, const seg_opts *o, const char *shown)
{
    if (strncmp(o->store, "sqlite:", 7) != 0) {
        return CLI_CONTINUE;
    }
    const char *path = o->store + 7;
    if (path[0] == '\0' || strcmp(path, ":memory:") == 0 || strncmp(path, "file:", 5) == 0 ||
        strncmp(path, "//", 2) == 0) {
        return CLI_CONTINUE;
    }
    struct stat sb;
    if (o->sub != SUB_CREATE) {
        if (stat(path, &sb) != 0 && errno == ENOENT) {
            cli_diag(c,
                     "--store %s: no such store (the file does not exist; segment create "
                     "makes it)",
                     shown);
            return CLI_EXIT_FAIL;
        }
        return CLI_CONTINUE;
    }
    size_t len = strlen(path);
    char *dir = malloc(len + 1);
    if (dir == NULL) {
        cli_diag(c, "out of memory");
        return CLI_EXIT_FAIL;
    }
    memcpy(dir, path, len + 1);
    char *slash = strrchr(dir, '/');
    int st = CLI_CONTINUE;
    if (slash != NULL) {
        if (slash == dir) {
            slash[1] = '\0'; /* "/x.db": the root */
        } else {
            *slash = '\0';
        }
        char dir_shown[1024];
        cli_escape(dir, sizeof dir_shown, dir_shown, sizeof dir_shown);
        if (stat(dir, &sb) != 0) {
            cli_diag(c, "--store %s: cannot use directory %s: %s", shown, dir_shown,
                     errno == ENOENT ? "it does not exist (create it first)" : strerror(errno));
            st = CLI_EXIT_FAIL;
        } else if (!S_ISDIR(sb.st_mode)) {
            cli_diag(c, "--store %s: %s is not a directory", shown, dir_shown);
            st = CLI_EXIT_FAIL;
        }
    }
    free(dir);
    return st;
}

static int open_store(cli *c, const seg_opts *o, const char *shown, idmseg_store **out)
{
    int st = check_sqlite_path(c, o, shown);
    if (st != CLI_CONTINUE) {
        return st;
    }
    idmseg_error serr;
    int rc = idmseg_store_open(o->store, out, &serr);
    if (rc == 0) {
        return CLI_CONTINUE;
    }
    if (rc == IDMSEG_EUSAGE) {
        return cli_usage(c, "--store %s: %s", shown, serr.msg);
    }
    cli_diag(c, "--store %s: %s", shown, serr.msg[0] != '\0' ? serr.msg : "cannot open the store");
    return CLI_EXIT_FAIL;
}

static int run_create(cli *c, const seg_opts *o, idmseg_store *st, const char *shown)
{
    idmseg_tag_spec spec;
    spec.first = o->first;
    spec.step = o->step;
    spec.max_step = o->max_step;
    spec.stride = o->stride;
    spec.offset = o->offset;
    idmseg_error serr;
    int rc = idmseg_store_create(st, o->tag, &spec, &serr);
    switch (rc) {
    case 0:
        return CLI_EXIT_OK;
    case IDMSEG_EEXISTS:
        cli_diag(c, "tag '%s' exists already in %s", o->tag, shown);
        return CLI_EXIT_FAIL;
    case IDMSEG_EUSAGE:
        /* The store's checks, past the CLI's (a first ID that rounds up
         * past 2^63 - 1): its message names the tag. */
        return cli_usage(c, "%s",
                         serr.msg[0] != '\0' ? serr.msg : "cannot create the tag: a bad value");
    case IDMSEG_EREADONLY:
        /* The store's message names it and says why. */
        if (serr.msg[0] != '\0') {
            cli_diag(c, "cannot create tag '%s': %s", o->tag, serr.msg);
        } else {
            cli_diag(c, "cannot create tag '%s': %s is read-only", o->tag, shown);
        }
        return CLI_EXIT_FAIL;
    default:
        cli_diag(c, "cannot create tag '%s' in %s: %s", o->tag, shown,
                 serr.msg[0] != '\0' ? serr.msg : "the store failed");
        return CLI_EXIT_FAIL;
    }
}

static int run_show(cli *c, const seg_opts *o, idmseg_store *st, const char *shown)
{
    idmseg_tag_info t;
    idmseg_error serr;
    memset(&t, 0, sizeof t);
    int rc = idmseg_store_show(st, o->tag, &t, &serr);
    if (rc == IDMSEG_ENOTAG) {
        cli_diag(c, "no tag '%s' in %s", o->tag, shown);
        return CLI_EXIT_FAIL;
    }
    if (rc != 0) {
        cli_diag(c, "cannot read tag '%s' from %s: %s", o->tag, shown,
                 serr.msg[0] != '\0' ? serr.msg : "the store failed");
        return CLI_EXIT_FAIL;
    }
    t.tag[IDMSEG_TAG_MAX] = '\0';
    if (o->json) {
        put_json_tag(c, &t);
    } else {
        put_fields(c, &t);
    }
    return CLI_EXIT_OK;
}

static int run_list(cli *c, const seg_opts *o, idmseg_store *st, const char *shown)
{
    tags r;
    idmseg_error serr;
    memset(&r, 0, sizeof r);
    int n = idmseg_store_list(st, on_tag, &r, &serr);
    int status = CLI_EXIT_OK;
    if (n < 0) {
        cli_diag(c, "cannot list the tags of %s: %s", shown,
                 serr.msg[0] != '\0' ? serr.msg : "the store failed");
        status = CLI_EXIT_FAIL;
    } else if (r.oom) {
        cli_diag(c, "out of memory");
        status = CLI_EXIT_FAIL;
    } else if (o->json) {
        for (size_t i = 0; i < r.n; i++) {
            put_json_tag(c, &r.v[i]);
        }
    } else {
        print_table(c, &r);
    }
    free(r.v);
    return status;
}

/* ---- options -------------------------------------------------------------------- */

static int take_option(cli *c, void *ctx, int id, const idmx_optparse *p)
{
    seg_opts *o = ctx;
    switch (id) {
    case IDMX_OPT_OPERAND:
        if (o->sub_text == NULL) {
            o->sub_text = p->arg;
        } else if (o->tag == NULL) {
            o->tag = p->arg;
        } else if (o->extra == NULL) {
            o->extra = p->arg;
        }
        break;
    case OPT_STORE:
        o->store = p->arg;
        break;
    case OPT_JSON:
        o->json = 1;
        break;
    case OPT_FIRST:
        o->given[V_FIRST] = p->arg;
        break;
    case OPT_STEP:
        o->given[V_STEP] = p->arg;
        break;
    case OPT_MAX_STEP:
        o->given[V_MAX_STEP] = p->arg;
        break;
    case OPT_STRIDE:
        o->given[V_STRIDE] = p->arg;
        break;
    case OPT_OFFSET:
        o->given[V_OFFSET] = p->arg;
        break;
    default:
        return cli_usage(c, "unhandled option '%s'", p->name != NULL ? p->name : "?");
    }
    return CLI_CONTINUE;
}

/* create's values: each in its range, then against each other. */
static int parse_values(cli *c, seg_opts *o)
{
    static const idmx_range *const ranges[] = {&range_first, &range_step, &range_step,
                                               &range_stride, &range_offset};
    const idmseg_tag_spec d = IDMSEG_TAG_SPEC_DEFAULTS;
    uint64_t v[5] = {d.first, d.step, d.max_step, d.stride, d.offset};
    char msg[IDMX_OPT_MSG_CAP];
    for (size_t i = 0; i < 5; i++) {
        if (o->given[i] != NULL &&
            idmx_parse_whole(value_names[i], o->given[i], ranges[i], &v[i], msg, sizeof msg) != 0) {
            return cli_usage(c, "%s", msg);
        }
    }
    if ((o->given[V_STRIDE] == NULL) != (o->given[V_OFFSET] == NULL)) {
        return cli_usage(c,
                         "%s needs %s too (--stride K --offset R: the IDs congruent to R "
                         "modulo K)",
                         o->given[V_STRIDE] != NULL ? "--stride" : "--offset",
                         o->given[V_STRIDE] != NULL ? "--offset" : "--stride");
    }
    if (v[V_OFFSET] >= v[V_STRIDE]) {
        return cli_usage(c, "--offset %" PRIu64 " must be below --stride %" PRIu64, v[V_OFFSET],
                         v[V_STRIDE]);
    }
    if (o->given[V_MAX_STEP] == NULL && v[V_STEP] > v[V_MAX_STEP]) {
        v[V_MAX_STEP] = v[V_STEP];
    }
    if (v[V_STEP] > v[V_MAX_STEP]) {
        return cli_usage(c, "--step %" PRIu64 " is above --max-step %" PRIu64, v[V_STEP],
                         v[V_MAX_STEP]);
    }
    o->first = v[V_FIRST];
    o->step = v[V_STEP];
    o->max_step = v[V_MAX_STEP];
    o->stride = v[V_STRIDE];
    o->offset = v[V_OFFSET];
    return CLI_CONTINUE;
}

/* Everything that can be checked without the store. */
static int check_options(cli *c, seg_opts *o)
{
    if (o->sub_text == NULL) {
        return cli_usage(c, "segment needs a subcommand: create, list or show");
    }
    if (strcmp(o->sub_text, "create") == 0) {
        o->sub = SUB_CREATE;
    } else if (strcmp(o->sub_text, "list") == 0) {
        o->sub = SUB_LIST;
    } else if (strcmp(o->sub_text, "show") == 0) {
        o->sub = SUB_SHOW;
    } else {
        char shown[400];
        display_text(o->sub_text, shown, sizeof shown);
        return cli_usage(c, "unknown segment subcommand '%s' (expected create, list or show)",
                         shown);
    }
    const char *name = o->sub_text;
    char shown[400];
    if (o->sub == SUB_LIST && o->tag != NULL) {
        display_text(o->tag, shown, sizeof shown);
        return cli_usage(c, "unexpected argument '%s' (segment list takes no TAG)", shown);
    }
    if (o->extra != NULL) {
        display_text(o->extra, shown, sizeof shown);
        return cli_usage(c, "unexpected argument '%s' (segment %s takes one TAG)", shown, name);
    }
    if (o->sub != SUB_LIST && o->tag == NULL) {
        return cli_usage(c, "segment %s needs a TAG", name);
    }
    if (o->sub == SUB_CREATE && o->json) {
        return cli_usage(c, "option '--json' applies only to segment list and show");
    }
    if (o->sub != SUB_CREATE) {
        for (size_t i = 0; i < 5; i++) {
            if (o->given[i] != NULL) {
                return cli_usage(c, "option '%s' applies only to segment create", value_names[i]);
            }
        }
    }
    if (o->tag != NULL) {
        idmseg_error serr;
        if (!idmseg_tag_valid(o->tag, strlen(o->tag), &serr)) {
            char reason[IDMSEG_ERR_CAP];
            display_text(o->tag, shown, sizeof shown);
            cli_escape(serr.msg, sizeof reason, reason, sizeof reason);
            return cli_usage(c, "invalid tag '%s': %s", shown,
                             reason[0] != '\0'
                                 ? reason
                                 : "tags are 1 to 128 bytes of A-Z a-z 0-9 _ . - : @ { } | + ~");
        }
    }
    if (o->sub == SUB_CREATE) {
        int st = parse_values(c, o);
        if (st != CLI_CONTINUE) {
            return st;
        }
    }
    if (o->store == NULL) {
        return cli_usage(c, "segment %s needs --store URL (sqlite:PATH or postgresql://...)", name);
    }
    if (o->store[0] == '\0') {
        return cli_usage(c, "--store: needs a URL (sqlite:PATH or postgresql://...)");
    }
    return CLI_CONTINUE;
}

int cli_segment(cli *c, int argc, char **argv)
{
    seg_opts o;
    memset(&o, 0, sizeof o);
    int st = cli_parse_options(c, argc, argv, segment_options, cli_segment_help, take_option, &o);
    if (st != CLI_CONTINUE) {
        return st;
    }
    st = check_options(c, &o);
    if (st != CLI_CONTINUE) {
        return st;
    }
    char shown[1024];
    display_store(o.store, shown, sizeof shown);
    idmseg_store *store = NULL;
    st = open_store(c, &o, shown, &store);
    if (st != CLI_CONTINUE) {
        return st;
    }
    switch (o.sub) {
    case SUB_CREATE:
        st = run_create(c, &o, store, shown);
        break;
    case SUB_SHOW:
        st = run_show(c, &o, store, shown);
        break;
    default:
        st = run_list(c, &o, store, shown);
        break;
    }
    idmseg_store_close(store);
    int out_st = cli_out_flush(c);
    return st != CLI_EXIT_OK ? st : out_st;
}
