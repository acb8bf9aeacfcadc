/*
 * lease.c - `idmint lease list [--coord URL] [--json]` (man/idmint.1,
 * "lease list"; docs/leases.md): every slot of a
 * coordinator's ID space (idmc_list), or of this host's registry for one
 * layout (idmc_local_list), with its holder, generation, mark and the
 * time its lease has left.
 *
 * The table is for people: columns as wide as their widest cell, control
 * characters in a holder line shown as '?'. --json is for programs: one
 * object per slot (JSON Lines), in node order, nulls where a value does
 * not apply (a free slot's holder; the local registry's generation and
 * TTL, which it has not).
 */
#include "cli.h"

#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { OPT_COORD = CLI_OPT_HELP + 1, OPT_JSON, OPT_REGISTRY, OPT_LAYOUT, OPT_EPOCH };

/* One option per line. */
/* clang-format off */
static const idmx_option lease_options[] = {
    {"help", 'h', IDMX_NO_ARG, CLI_OPT_HELP},
    {"coord", 0, IDMX_REQUIRED_ARG, OPT_COORD},
    {"json", 0, IDMX_NO_ARG, OPT_JSON},
    {"registry", 0, IDMX_REQUIRED_ARG, OPT_REGISTRY},
    {"layout", 0, IDMX_REQUIRED_ARG, OPT_LAYOUT},
    {"epoch", 0, IDMX_REQUIRED_ARG, OPT_EPOCH},
    {NULL, 0, 0, 0},
};
/* clang-format on */

const char cli_lease_help[] =
    "Usage: idmint lease list [--coord URL] [--json]\n"
    "       idmint lease list [--registry DIR] [--layout L] [--json]\n"
    "\n"
    "List the snowflake node slots: of a coordinator's ID space (--coord), or\n"
    "of this host's registry for one layout. Each slot shows whether it is\n"
    "held, the holder's fencing generation, the slot's time high-water mark\n"
    "(nothing at or below it may be minted by the next holder), the time the\n"
    "holder's lease has left, and the holder (pid, host, addresses).\n"
    "\n"
    "Options:\n"
    "      --coord URL      etcd://HOST:PORT[,...]/PREFIX or zk://HOST:PORT[,...]/PATH\n"
    "      --registry DIR   this host's node registry (default as idmintd's\n"
    "                       --node-registry); without --coord\n"
    "      --layout L       the registry's layout (default twitter); without --coord\n"
    "      --epoch E        the layout's epoch, as for gen\n"
    "      --json           one JSON object per slot (JSON Lines): node, held,\n"
    "                       generation, mark_ms, mark, ttl_ms_left, holder\n"
    "  -h, --help           show this help and exit\n"
    "\n"
    "Exit status: 0 listed (even none), 1 the coordinator or registry could\n"
    "not be read, 2 a usage error.\n";

typedef struct lease_opts {
    const char *sub;
    const char *coord;
    const char *registry;
    const char *layout;
    const char *epoch;
    int json;
} lease_opts;

/* One slot as listed. */
typedef struct row {
    uint64_t node;
    bool held;
    char *generation; /* NULL: none */
    char *holder;     /* NULL: none */
    int64_t mark_ms;
    int64_t ttl_ms_left; /* -1: unknown */
} row;

typedef struct rows {
    row *v;
    size_t n, cap;
    int oom;
} rows;

static char *dup_or_null(const char *s, int *oom)
{
    if (s == NULL) {
        return NULL;
    }
    size_t len = strlen(s);
    char *d = malloc(len + 1);
    if (d == NULL) {
        *oom = 1;
        return NULL;
    }
    memcpy(d, s, len + 1);
    return d;
}

static void add_row(rows *r, uint64_t node, bool held, const char *generation, const char *holder,
                    int64_t mark_ms, int64_t ttl_ms_left)
{
    if (r->oom) {
        return;
    }
    if (r->n == r->cap) {
        size_t cap = r->cap == 0 ? 16 : r->cap * 2;
        row *v = realloc(r->v, cap * sizeof *v);
        if (v == NULL) {
            r->oom = 1;
            return;
        }
        r->v = v;
        r->cap = cap;
    }
    row *x = &r->v[r->n++];
    x->node = node;
    x->held = held;
    x->generation = dup_or_null(generation, &r->oom);
    x->holder = dup_or_null(held ? holder : NULL, &r->oom);
    x->mark_ms = mark_ms;
    x->ttl_ms_left = held ? ttl_ms_left : -1;
}

static void free_rows(rows *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].generation);
        free(r->v[i].holder);
    }
    free(r->v);
}

static void on_coord_slot(void *ctx, const idmc_slot_info *s)
{
    add_row(ctx, s->node, s->held, s->held ? s->generation : NULL, s->holder, s->mark_ms,
            s->ttl_ms_left);
}

static void on_local_slot(void *ctx, uint64_t node, bool held, int64_t mark_ms, const char *holder)
{
    add_row(ctx, node, held, NULL, holder, mark_ms, -1);
}

static int by_node(const void *a, const void *b)
{
    const row *x = a;
    const row *y = b;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* ---- output --------------------------------------------------------------- */

/* "8.2s" */
static void format_ttl(int64_t ms, char *dst, size_t cap)
{
    if (ms < 0) {
        snprintf(dst, cap, "-");
        return;
    }
    snprintf(dst, cap, "%" PRId64 ".%" PRId64 "s", ms / 1000, ms % 1000 / 100);
}

static void format_mark(int64_t ms, char *dst, size_t cap)
{
    if (ms <= 0 || idm_time_format(ms, dst, cap) != IDM_OK) {
        snprintf(dst, cap, "-");
    }
}

/* The cells of one row, as the table shows them. */
typedef struct cells {
    char node[24];
    const char *state;
    const char *generation;
    char mark[IDM_RFC3339_CAP];
    char ttl[32];
} cells;

static void row_cells(const row *x, cells *out)
{
    snprintf(out->node, sizeof out->node, "%" PRIu64, x->node);
    out->state = x->held ? "held" : "free";
    out->generation = x->generation != NULL ? x->generation : "-";
    format_mark(x->mark_ms, out->mark, sizeof out->mark);
    format_ttl(x->ttl_ms_left, out->ttl, sizeof out->ttl);
}

static void put_padded(cli *c, const char *s, size_t width)
{
    size_t len = strlen(s);
    idmx_outbuf_puts(&c->out, s);
    for (; len < width + 2; len++) {
        idmx_outbuf_putc(&c->out, ' ');
    }
}

/* A holder line from a service: printed with control characters as '?'
 * (it must not drive the terminal). */
static void put_text(cli *c, const char *s)
{
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        idmx_outbuf_putc(&c->out, ch < 0x20 || ch == 0x7f ? '?' : (char)ch);
    }
}

static size_t max_size(size_t a, size_t b)
{
    return a > b ? a : b;
}

static void print_table(cli *c, const rows *r)
{
    size_t w[5] = {4, 5, 10, 4, 8}; /* NODE STATE GENERATION MARK TTL LEFT */
    for (size_t i = 0; i < r->n; i++) {
        cells k;
        row_cells(&r->v[i], &k);
        w[0] = max_size(w[0], strlen(k.node));
        w[1] = max_size(w[1], strlen(k.state));
        w[2] = max_size(w[2], strlen(k.generation));
        w[3] = max_size(w[3], strlen(k.mark));
        w[4] = max_size(w[4], strlen(k.ttl));
    }
    put_padded(c, "NODE", w[0]);
    put_padded(c, "STATE", w[1]);
    put_padded(c, "GENERATION", w[2]);
    put_padded(c, "MARK", w[3]);
    put_padded(c, "TTL LEFT", w[4]);
    idmx_outbuf_puts(&c->out, "HOLDER\n");
    for (size_t i = 0; i < r->n; i++) {
        cells k;
        row_cells(&r->v[i], &k);
        put_padded(c, k.node, w[0]);
        put_padded(c, k.state, w[1]);
        put_padded(c, k.generation, w[2]);
        put_padded(c, k.mark, w[3]);
        put_padded(c, k.ttl, w[4]);
        put_text(c, r->v[i].holder != NULL ? r->v[i].holder : "-");
        idmx_outbuf_putc(&c->out, '\n');
    }
}

static void put_json_text(cli *c, const char *s)
{
    if (s == NULL) {
        idmx_outbuf_puts(&c->out, "null");
    } else {
        idmx_json_string(&c->out, s, strlen(s));
    }
}

static void print_json(cli *c, const rows *r)
{
    for (size_t i = 0; i < r->n; i++) {
        const row *x = &r->v[i];
        char mark[IDM_RFC3339_CAP];
        bool has_mark = x->mark_ms > 0 && idm_time_format(x->mark_ms, mark, sizeof mark) == IDM_OK;
        idmx_outbuf_puts(&c->out, "{\"node\": ");
        idmx_outbuf_u64(&c->out, x->node);
        idmx_outbuf_puts(&c->out, x->held ? ", \"held\": true" : ", \"held\": false");
        idmx_outbuf_puts(&c->out, ", \"generation\": ");
        put_json_text(c, x->generation);
        idmx_outbuf_puts(&c->out, ", \"mark_ms\": ");
        idmx_outbuf_i64(&c->out, x->mark_ms);
        idmx_outbuf_puts(&c->out, ", \"mark\": ");
        put_json_text(c, has_mark ? mark : NULL);
        idmx_outbuf_puts(&c->out, ", \"ttl_ms_left\": ");
        if (x->ttl_ms_left >= 0) {
            idmx_outbuf_i64(&c->out, x->ttl_ms_left);
        } else {
            idmx_outbuf_puts(&c->out, "null");
        }
        idmx_outbuf_puts(&c->out, ", \"holder\": ");
        put_json_text(c, x->holder);
        idmx_outbuf_puts(&c->out, "}\n");
    }
}

/* ---- the sources ------------------------------------------------------------ */

static int list_coord(cli *c, const lease_opts *o, rows *r)
{
    idmc_error err;
    const char *msg = err.msg;
    idmc_coord *coord = NULL;
    int rc = idmc_open(o->coord, CLI_LEASE_TTL_MS, &coord, &err);
    if (rc == IDMC_USAGE) {
        return cli_usage(c, "--coord %s: %s", o->coord, msg);
    }
    if (rc != 0) {
        cli_diag(c, "--coord %s: %s", o->coord, msg);
        return CLI_EXIT_FAIL;
    }
    int n = idmc_list(coord, on_coord_slot, r, &err);
    idmc_close(coord);
    if (n < 0) {
        cli_diag(c, "cannot list the leases at %s: %s", o->coord, msg);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

static int list_local(cli *c, const lease_opts *o, rows *r)
{
    idm_sf_layout layout;
    int st = cli_layout_from_options(c, o->layout, o->epoch, &layout);
    if (st != CLI_EXIT_OK) {
        return st;
    }
    char ns[IDM_SF_SPEC_CAP];
    cli_layout_name(&layout, ns, sizeof ns);
    char dir[1024];
    if (o->registry != NULL) {
        snprintf(dir, sizeof dir, "%s", o->registry);
    } else if (idmc_local_default_dir(dir, sizeof dir) != 0) {
        cli_diag(c, "cannot name this host's node registry (the path is too long); give "
                    "--registry DIR");
        return CLI_EXIT_FAIL;
    }
    /* The host's registry is made by the first process that leases a
     * node (none yet since boot: no slots); a directory given that does
     * not exist is a mistake to report, not an empty registry. */
    struct stat sb;
    if (stat(dir, &sb) != 0) {
        if (errno == ENOENT && o->registry == NULL) {
            return CLI_EXIT_OK;
        }
        cli_diag(c, "cannot read the node registry %s: %s", dir, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if (!S_ISDIR(sb.st_mode)) {
        cli_diag(c, "the node registry %s is not a directory", dir);
        return CLI_EXIT_FAIL;
    }
    /* A registry nobody has used yet for this layout has no slots. */
    char nsdir[sizeof dir + IDM_SF_SPEC_CAP + 1];
    snprintf(nsdir, sizeof nsdir, "%s/%s", dir, ns);
    if (stat(nsdir, &sb) != 0 && errno == ENOENT) {
        return CLI_EXIT_OK;
    }
    idmc_error err;
    if (idmc_local_list(dir, ns, on_local_slot, r, &err) < 0) {
        cli_diag(c, "%s", err.msg);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

static int take_option(cli *c, void *ctx, int id, const idmx_optparse *p)
{
    lease_opts *o = ctx;
    switch (id) {
    case IDMX_OPT_OPERAND:
        if (o->sub != NULL) {
            return cli_usage(c, "unexpected argument '%s' (lease list takes no operands)", p->arg);
        }
        o->sub = p->arg;
        break;
    case OPT_COORD:
        o->coord = p->arg;
        break;
    case OPT_JSON:
        o->json = 1;
        break;
    case OPT_REGISTRY:
        o->registry = p->arg;
        break;
    case OPT_LAYOUT:
        o->layout = p->arg;
        break;
    case OPT_EPOCH:
        o->epoch = p->arg;
        break;
    default:
        return cli_usage(c, "unhandled option '%s'", p->name != NULL ? p->name : "?");
    }
    return CLI_CONTINUE;
}

int cli_lease(cli *c, int argc, char **argv)
{
    lease_opts o;
    memset(&o, 0, sizeof o);
    int st = cli_parse_options(c, argc, argv, lease_options, cli_lease_help, take_option, &o);
    if (st != CLI_CONTINUE) {
        return st;
    }
    if (o.sub == NULL) {
        return cli_usage(c, "lease needs a subcommand: list");
    }
    if (strcmp(o.sub, "list") != 0) {
        return cli_usage(c, "unknown lease subcommand '%s' (expected list)", o.sub);
    }
    if (o.coord != NULL) {
        const char *bad = o.registry != NULL ? "--registry"
                          : o.layout != NULL ? "--layout"
                          : o.epoch != NULL  ? "--epoch"
                                             : NULL;
        if (bad != NULL) {
            return cli_usage(c,
                             "option '%s' applies only to this host's registry, not with "
                             "--coord (a coordinator's path is one ID space)",
                             bad);
        }
    }
    if (o.registry != NULL && o.registry[0] == '\0') {
        return cli_usage(c, "--registry: needs a directory");
    }
    rows r;
    memset(&r, 0, sizeof r);
    st = o.coord != NULL ? list_coord(c, &o, &r) : list_local(c, &o, &r);
    if (st == CLI_EXIT_OK && r.oom) {
        cli_diag(c, "out of memory");
        st = CLI_EXIT_FAIL;
    }
    if (st == CLI_EXIT_OK) {
        if (r.n > 1) {
            qsort(r.v, r.n, sizeof *r.v, by_node);
        }
        if (o.json) {
            print_json(c, &r);
        } else {
            print_table(c, &r);
        }
    }
    free_rows(&r);
    int out_st = cli_out_flush(c);
    return st != CLI_EXIT_OK ? st : out_st;
}
