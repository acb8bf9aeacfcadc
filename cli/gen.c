/*
 * gen.c - `idmint gen FORMAT [-n COUNT] [options]` (man/idmint.1, "gen").
 *
 * FORMAT is a row of the library's format table (idmint/format.h): every
 * format is minted as text straight into the stdout buffer by its bulk
 * text call (idm_format_next_text_n, or idm_snowflake_next_text_n: one
 * clock read and one state reservation per batch): reserve a batch's worth
 * of room, let the library fill it, commit what it wrote. This is the path
 * that is benchmarked; keep stdio out of it.
 *
 * Without --state the generator is unshared (the CLI mints from one
 * thread); with --state it is host-wide, so concurrent runs with the same
 * path share one sequence.
 *
 * A snowflake node given as --node auto, or with --coord, is leased for
 * the run (nodelease.c): the generator resumes above the slot's mark and
 * mints under the lease's ceiling, raised between batches.
 *
 * --after ID (causal minting): ID, minted elsewhere, is parsed with the
 * format's parser (idm_format_parse: an ID that does not parse is a bad
 * option value, exit 2) and observed by the generator before anything is
 * minted (idm_format_observe, idm_snowflake_observe; --max-offset, default
 * 500 ms, as idmintd's), so every ID
 * printed sorts after it; one further ahead of the clock than that is
 * refused (exit 1) and nothing is printed. A typeid's ID may have any
 * prefix: the order is its UUIDv7's.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define TEXT_CHUNK_BYTES (64 * 1024) /* room reserved per bulk text call */

enum {
    OPT_COUNT = CLI_OPT_HELP + 1,
    OPT_NODE,
    OPT_LAYOUT,
    OPT_EPOCH,
    OPT_PREFIX,
    OPT_SEQ_START,
    OPT_MAX_REWIND,
    OPT_STATE,
    OPT_COORD,
    OPT_NODE_RANGE,
    OPT_LEASE_TTL,
    OPT_REGISTRY,
    OPT_EXPIRES,
    OPT_KEY_FILE,
    OPT_AFTER,
    OPT_MAX_OFFSET,
    OPT_MARK
};

/* One option per line. */
/* clang-format off */
static const idmx_option gen_options[] = {
    {"help", 'h', IDMX_NO_ARG, CLI_OPT_HELP},
    {"count", 'n', IDMX_REQUIRED_ARG, OPT_COUNT},
    {"node", 0, IDMX_REQUIRED_ARG, OPT_NODE},
    {"layout", 0, IDMX_REQUIRED_ARG, OPT_LAYOUT},
    {"epoch", 0, IDMX_REQUIRED_ARG, OPT_EPOCH},
    {"prefix", 0, IDMX_REQUIRED_ARG, OPT_PREFIX},
    {"seq-start", 0, IDMX_REQUIRED_ARG, OPT_SEQ_START},
    {"max-rewind", 0, IDMX_REQUIRED_ARG, OPT_MAX_REWIND},
    {"state", 0, IDMX_REQUIRED_ARG, OPT_STATE},
    {"coord", 0, IDMX_REQUIRED_ARG, OPT_COORD},
    {"node-range", 0, IDMX_REQUIRED_ARG, OPT_NODE_RANGE},
    {"lease-ttl", 0, IDMX_REQUIRED_ARG, OPT_LEASE_TTL},
    {"registry", 0, IDMX_REQUIRED_ARG, OPT_REGISTRY},
    {"expires", 0, IDMX_REQUIRED_ARG, OPT_EXPIRES},
    {"key-file", 0, IDMX_REQUIRED_ARG, OPT_KEY_FILE},
    {"after", 0, IDMX_REQUIRED_ARG, OPT_AFTER},
    {"max-offset", 0, IDMX_REQUIRED_ARG, OPT_MAX_OFFSET},
    {"mark", 0, IDMX_REQUIRED_ARG, OPT_MARK},
    {NULL, 0, 0, 0},
};
/* clang-format on */

const char cli_gen_help[] =
    "Usage: idmint gen FORMAT [-n COUNT] [OPTIONS]\n"
    "\n"
    "Mint COUNT IDs (default 1) of FORMAT, one per line.\n"
    "\n"
    "Formats:\n"
    "  uuidv7       RFC 9562 version 7 UUID, canonical lowercase (time-ordered)\n"
    "  uuidv4       RFC 9562 version 4 UUID, canonical lowercase (random)\n"
    "  ulid         ULID: 26 characters of Crockford base32 (time-ordered)\n"
    "  ksuid        KSUID: 27 characters of base62 (time-ordered)\n"
    "  snowflake    64-bit decimal integer laid out by --layout; needs --node\n"
    "               or --coord\n"
    "  typeid       TypeID: PREFIX_ + a UUIDv7 in base32; needs --prefix\n"
    "  token        opaque token: [PREFIX_] + base62 of 128 random bits\n"
    "  traceparent  W3C Trace Context traceparent value\n"
    "\n"
    "Options:\n"
    "  -n, --count N        how many IDs to mint (default 1)\n"
    "      --prefix P       typeid and token prefix: [a-z_], at most 63 characters,\n"
    "                       not starting or ending with '_'\n"
    "      --state PATH     host-wide generator: keep the sequence in the state file\n"
    "                       PATH (in a private directory, e.g.\n"
    "                       $XDG_RUNTIME_DIR/idmint), shared by every process\n"
    "                       that uses it (uuidv7, ulid, ksuid, typeid, snowflake)\n"
    "      --after ID       causal minting: every ID minted sorts after ID, one of\n"
    "                       FORMAT minted elsewhere (uuidv7, ulid, ksuid, typeid,\n"
    "                       snowflake); refused when ID is further ahead of the\n"
    "                       clock than --max-offset\n"
    "      --max-offset MS  how far ahead of the clock --after's ID may be\n"
    "                       (default 500)\n"
    "      --mark FILE      crash-safe minting: no ID is printed before a time\n"
    "                       mark at or above it is on disk in FILE, and a run\n"
    "                       resumes above the mark it finds there, so runs killed\n"
    "                       at any moment or run with the clock set back never\n"
    "                       repeat an ID (uuidv7, ulid, ksuid, typeid, snowflake;\n"
    "                       one run per FILE at a time)\n"
    "  -h, --help           show this help and exit\n"
    "\n"
    "Signed token options (token only; see idmint verify):\n"
    "      --expires D      mint expiring tokens signed under --key-file: D is a\n"
    "                       duration (30s, 15m, 2h, 7d, 1h30m) or an RFC 3339 time\n"
    "      --key-file F     the key (idmint keygen); needs --expires\n"
    "\n"
    "Snowflake options:\n"
    "      --node N|auto    the node (machine, worker or shard) number; required\n"
    "                       unless --coord is given. auto leases the lowest free\n"
    "                       node for the run: from --coord, else from this host's\n"
    "                       registry (as idmintd does)\n"
    "      --coord URL      lease the node from a coordinator shared by several\n"
    "                       hosts: etcd://HOST:PORT[,...]/PREFIX or\n"
    "                       zk://HOST:PORT[,...]/PATH; with --node N, exactly N\n"
    "                       (refused while another process holds it)\n"
    "      --node-range LO..HI  the nodes --node auto may lease (default: all of\n"
    "                       the layout's)\n"
    "      --lease-ttl SECONDS  the coordinator lease's time to live (default 10,\n"
    "                       at least 2)\n"
    "      --registry DIR   this host's node registry for --node auto without\n"
    "                       --coord (default as idmintd's --node-registry)\n"
    "      --layout L       a preset (twitter, discord, instagram, sonyflake,\n"
    "                       sonyflake2, baidu, safe53) or a spec such as\n"
    "                       time=41,node=10,seq=12,unit=1ms,epoch=1288834974657\n"
    "                       (default twitter)\n"
    "      --epoch E        the layout's epoch: Unix milliseconds or RFC 3339 time\n"
    "      --seq-start S    zero (default) or random: where each time unit's\n"
    "                       sequence starts\n"
    "      --max-rewind MS  wait out a clock step back of up to MS milliseconds;\n"
    "                       refuse beyond it (default 10)\n"
    "\n"
    "Time-ordered formats are strictly increasing within one run.\n";

typedef struct gen_opts {
    const char *format_text;  /* FORMAT as written */
    const idm_format *format; /* its row in the library's table (idmint/format.h) */
    uint64_t count;
    const char *node;
    const char *layout;
    const char *epoch;
    const char *prefix;
    const char *seq_start;
    const char *max_rewind;
    const char *state;
    const char *coord;
    const char *node_range;
    const char *lease_ttl;
    const char *registry;
    const char *expires;  /* token: a signed token (cli/keyed.c) */
    const char *key_file; /* its key */
    const char *after;
    const char *max_offset;
    const char *mark; /* --mark FILE */
} gen_opts;

/* --after's ID, parsed (seen_parse), and --max-offset. */
typedef struct gen_seen {
    idm_format_value id;
    int64_t max_offset_ms;
} gen_seen;

static int mint_failed(cli *c, const char *what, int rc, const idm_error *err)
{
    cli_diag(c, "cannot mint %s: %s", what, cli_reason(err, rc));
    return CLI_EXIT_FAIL;
}

/* Every format but snowflake: the library writes the text, PREFIX_ +
 * body for the formats that take a prefix. */
static int gen_text(cli *c, idm_gen *g, const gen_opts *o)
{
    const idm_format *f = o->format;
    size_t prefix_len = o->prefix != NULL ? strlen(o->prefix) : 0;
    size_t stride = idm_format_text_len(f, prefix_len) + 1;
    uint64_t count = o->count;
    while (count > 0 && c->out.err == 0) {
        size_t n = TEXT_CHUNK_BYTES / stride;
        if (count < n) {
            n = (size_t)count;
        }
        char *p = idmx_outbuf_reserve(&c->out, n * stride);
        if (p == NULL) {
            break;
        }
        size_t len = 0;
        idm_error err = {0};
        int rc = idm_format_next_text_n(f, g, o->prefix, prefix_len, p, n * stride, n,
                                        IDM_TEXT_NEWLINE, &len, &err);
        /* The IDs written before a failure are valid: they are printed. */
        idmx_outbuf_commit(&c->out, len);
        if (rc != IDM_OK) {
            return mint_failed(c, f->name, rc, &err);
        }
        count -= n;
    }
    return CLI_EXIT_OK;
}

/* The lease options: whether the node is leased (*leased), and from where
 * and which (*lo). ns receives the layout's name (the local registry's
 * namespace). Returns CLI_EXIT_OK or a reported usage error. */
static int lease_config(cli *c, const gen_opts *o, idm_snowflake_config *cfg, bool *leased,
                        cli_node_lease_opts *lo, char *ns, size_t ns_cap)
{
    char msg[IDMX_OPT_MSG_CAP];
    bool is_auto = o->node == NULL || strcmp(o->node, "auto") == 0;
    uint64_t max = idm_sf_layout_max_node(&cfg->layout);
    cli_layout_name(&cfg->layout, ns, ns_cap);
    *leased = is_auto || o->coord != NULL;
    memset(lo, 0, sizeof *lo);
    if (o->node == NULL && o->coord == NULL) {
        return cli_usage(c,
                         "gen snowflake needs --node N (0..%llu for layout %s), --node auto or "
                         "--coord URL",
                         (unsigned long long)max, ns);
    }
    if (!is_auto &&
        idmx_parse_node("--node", o->node, &cfg->layout, &cfg->node, msg, sizeof msg) != 0) {
        return cli_usage(c, "%s", msg);
    }
    if (o->node_range != NULL && !is_auto) {
        return cli_usage(c, "option '--node-range' applies only to --node auto");
    }
    if (o->lease_ttl != NULL && o->coord == NULL) {
        return cli_usage(c, "option '--lease-ttl' applies only with --coord");
    }
    if (o->registry != NULL && (o->coord != NULL || !is_auto)) {
        return cli_usage(c, "option '--registry' applies only to --node auto without --coord");
    }
    if (o->registry != NULL && o->registry[0] == '\0') {
        return cli_usage(c, "--registry: needs a directory");
    }
    lo->coord = o->coord;
    lo->registry = o->registry;
    lo->ns = ns;
    lo->max_mark_ms = idm_sf_layout_max_unix_ms(&cfg->layout);
    lo->lo = is_auto ? 0 : cfg->node;
    lo->hi = is_auto ? max : cfg->node;
    lo->exact = !is_auto;
    lo->ttl_ms = CLI_LEASE_TTL_MS;
    if (o->node_range != NULL) {
        if (idmx_parse_node_range("--node-range", o->node_range, &lo->lo, &lo->hi, msg,
                                  sizeof msg) != 0) {
            return cli_usage(c, "%s", msg);
        }
        if (lo->hi > max) {
            return cli_usage(c, "--node-range %s is outside layout %s's nodes 0..%llu",
                             o->node_range, ns, (unsigned long long)max);
        }
    }
    if (o->lease_ttl != NULL) {
        uint64_t s = 0;
        if (idmx_parse_whole("--lease-ttl", o->lease_ttl, &idmx_range_lease_ttl, &s, msg,
                             sizeof msg) != 0) {
            return cli_usage(c, "%s", msg);
        }
        lo->ttl_ms = (int64_t)s * 1000;
    }
    return CLI_EXIT_OK;
}

/* Turns the snowflake options into a configuration (the node: --node N's,
 * or 0 until a leased one is known) and the lease options. Returns
 * CLI_EXIT_OK or a reported usage error. */
static int snowflake_config(cli *c, const gen_opts *o, idm_snowflake_config *cfg, bool *leased,
                            cli_node_lease_opts *lo, char *ns, size_t ns_cap)
{
    idm_snowflake_config_init(cfg);
    int st = cli_layout_from_options(c, o->layout, o->epoch, &cfg->layout);
    if (st != CLI_EXIT_OK) {
        return st;
    }
    char msg[IDMX_OPT_MSG_CAP];
    st = lease_config(c, o, cfg, leased, lo, ns, ns_cap);
    if (st != CLI_EXIT_OK) {
        return st;
    }
    if (o->seq_start != NULL) {
        if (strcmp(o->seq_start, "zero") == 0) {
            cfg->seq_start = IDM_SF_SEQ_START_ZERO;
        } else if (strcmp(o->seq_start, "random") == 0) {
            cfg->seq_start = IDM_SF_SEQ_START_RANDOM;
        } else {
            return cli_usage(c, "invalid --seq-start '%s' (expected zero or random)", o->seq_start);
        }
    }
    if (o->max_rewind != NULL &&
        idmx_parse_ms("--max-rewind", o->max_rewind, &idmx_range_max_rewind_ms, &cfg->max_rewind_ms,
                      msg, sizeof msg) != 0) {
        return cli_usage(c, "%s", msg);
    }
    return CLI_EXIT_OK;
}

/* What a closed stdout needs done before the program ends (cli.h,
 * on_close): a leased node given back, the mark lowered to the last time
 * used (idm_mark_close), so that the next run need not wait or mint ahead. */
typedef struct held_node {
    cli_node_lease *lease; /* NULL: none */
    idm_snowflake *g;
    idm_mark *mark;        /* NULL: none */
} held_node;

static void release_on_close(void *ctx)
{
    held_node *h = ctx;
    if (h->lease != NULL) {
        cli_node_lease_end(h->lease, idm_snowflake_high_water_ms(h->g));
    }
    (void)idm_mark_close(h->mark, NULL);
}

/* The IDs in len bytes of newline-terminated text. */
static uint64_t count_lines(const char *p, size_t len)
{
    uint64_t n = 0;
    const char *end = p + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL) {
            break;
        }
        n++;
        p = nl + 1;
    }
    return n;
}

/* Parses --after's ID as one of o's format, and --max-offset. Returns
 * CLI_EXIT_OK or a reported usage error. */
static int seen_parse(cli *c, const gen_opts *o, gen_seen *seen)
{
    memset(seen, 0, sizeof *seen);
    seen->max_offset_ms = IDM_HLC_DEFAULT_MAX_OFFSET_MS;
    char msg[IDMX_OPT_MSG_CAP];
    if (o->max_offset != NULL &&
        idmx_parse_ms("--max-offset", o->max_offset, &idmx_range_max_offset_ms,
                      &seen->max_offset_ms, msg, sizeof msg) != 0) {
        return cli_usage(c, "%s", msg);
    }
    const char *id = o->after;
    idm_error err = {0};
    int rc = idm_format_parse(o->format, id, strlen(id), &seen->id, &err);
    if (rc == IDM_EUNSUPPORTED) {
        /* Well-formed, of another version ("its UUID is version 4, not 7"). */
        return cli_usage(c, "invalid --after '%s': %s", id, cli_reason(&err, rc));
    }
    if (rc != IDM_OK) {
        return cli_usage(c, "invalid --after '%s': not a %s: %s", id, o->format->name,
                         cli_reason(&err, rc));
    }
    return CLI_EXIT_OK;
}

/* Reports an observation's refusal: a seen ID the layout cannot hold is a
 * usage error, one too far ahead (or that cannot be followed) a failure. */
static int seen_refused(cli *c, const gen_opts *o, int rc, const idm_error *err)
{
    if (rc == IDM_EPARSE || rc == IDM_EINVAL) {
        return cli_usage(c, "invalid --after '%s': %s", o->after, cli_reason(err, rc));
    }
    cli_diag_input(c, o->after, strlen(o->after), cli_reason(err, rc));
    return CLI_EXIT_FAIL;
}

/* Observes --after's ID with an idm_gen (uuidv7, typeid, ulid, ksuid). */
static int observe_gen(cli *c, idm_gen *g, const gen_opts *o, const gen_seen *seen)
{
    idm_error err = {0};
    int rc = idm_format_observe(o->format, g, &seen->id, seen->max_offset_ms, &err);
    return rc == IDM_OK ? CLI_EXIT_OK : seen_refused(c, o, rc, &err);
}

/* --mark FILE: the durable mark (mark.h), blocking mode. NULL *out when
 * no --mark. */
static int mark_open(cli *c, const gen_opts *o, idm_mark **out)
{
    *out = NULL;
    if (o->mark == NULL) {
        return CLI_EXIT_OK;
    }
    idm_error err = {0};
    int rc = idm_mark_open(out, o->mark, NULL, &err);
    if (rc != IDM_OK) {
        cli_diag(c, "--mark: %s", cli_reason(&err, rc));
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* Closes the mark once nothing mints any more (it is lowered to the last
 * time used); st: the run's status so far. */
static int mark_close(cli *c, idm_mark *m, int st)
{
    idm_error err = {0};
    int rc = idm_mark_close(m, &err);
    if (rc != IDM_OK) {
        cli_diag(c, "--mark: %s", cli_reason(&err, rc));
        return st != CLI_EXIT_OK ? st : CLI_EXIT_FAIL;
    }
    return st;
}

/* A run killed a moment ago leaves its mark up to a reserve ahead of the
 * clock, and a snowflake cannot be minted below it: the next run waits
 * that moment out instead of failing. A mark further ahead means the clock
 * was set back; the generator then refuses (or waits up to --max-rewind). */
static void mark_wait(int64_t resume_ms)
{
    idm_clock clock = idm_clock_system();
    int64_t now_ns = 0;
    if (clock.now_ns(clock.ctx, &now_ns) != IDM_OK) {
        return;
    }
    int64_t ahead_ns = resume_ms * 1000000 - now_ns;
    if (ahead_ns > 0 && ahead_ns <= (int64_t)IDM_MARK_DEFAULT_RESERVE_MS * 1000000) {
        clock.sleep_ns(clock.ctx, ahead_ns + 1000000);
    }
}

/* The lease's part of a snowflake's ceiling: the mark's limit when there
 * is a mark (which computes min(durable, limit)), else the ceiling. */
static void lease_ceiling(idm_snowflake *g, idm_mark *m, const cli_node_lease *lease)
{
    if (m != NULL) {
        idm_mark_set_limit(m, cli_node_lease_ceiling(lease));
    } else {
        idm_snowflake_set_ceiling(g, cli_node_lease_ceiling(lease));
    }
}

static int gen_snowflake(cli *c, const gen_opts *o)
{
    idm_snowflake_config cfg;
    bool leased = false;
    cli_node_lease_opts lease_opts;
    char ns[IDM_SF_SPEC_CAP];
    int st = snowflake_config(c, o, &cfg, &leased, &lease_opts, ns, sizeof ns);
    if (st != CLI_EXIT_OK) {
        return st;
    }
    gen_seen seen;
    if (o->after != NULL) {
        st = seen_parse(c, o, &seen);
        if (st != CLI_EXIT_OK) {
            return st;
        }
    }
    cli_node_lease lease;
    if (leased) {
        st = cli_node_lease_claim(c, &lease_opts, &lease);
        if (st != CLI_EXIT_OK) {
            return st;
        }
        /* Nothing at or below the slot's mark: an earlier holder may have
         * minted up to it. */
        cfg.node = lease.node;
        cfg.resume_unix_ms = lease.claim_mark;
    }
    idm_mark *mark = NULL;
    st = mark_open(c, o, &mark);
    if (st != CLI_EXIT_OK) {
        if (leased) {
            cli_node_lease_end(&lease, 0);
        }
        return st;
    }
    if (mark != NULL && idm_mark_resume_ms(mark) > cfg.resume_unix_ms) {
        cfg.resume_unix_ms = idm_mark_resume_ms(mark);
    }
    if (mark != NULL) {
        mark_wait(idm_mark_resume_ms(mark));
    }
    cfg.gen.state_path = o->state;
    idm_snowflake *g = NULL;
    idm_error err = {0};
    int rc = idm_snowflake_new(&g, &cfg, &err);
    if (rc == IDM_OK && mark != NULL) {
        rc = idm_mark_attach_snowflake(mark, g, &err);
    }
    if (rc != IDM_OK) {
        if (leased) {
            cli_node_lease_end(&lease, 0);
        }
        idm_snowflake_free(g);
        (void)mark_close(c, mark, CLI_EXIT_FAIL);
        if (rc == IDM_EINVAL) {
            return cli_usage(c, "%s", cli_reason(&err, rc));
        }
        return mint_failed(c, "snowflake", rc, &err);
    }
    held_node held = {leased ? &lease : NULL, g, mark};
    if (leased) {
        lease_ceiling(g, mark, &lease);
    }
    if (leased || mark != NULL) {
        c->on_close = release_on_close;
        c->on_close_ctx = &held;
    }
    if (o->after != NULL) {
        rc = idm_snowflake_observe(g, seen.id.number, seen.max_offset_ms, &err);
        if (rc != IDM_OK) {
            st = seen_refused(c, o, rc, &err);
        }
    }
    uint64_t count = st == CLI_EXIT_OK ? o->count : 0;
    while (count > 0 && c->out.err == 0) {
        if (leased) {
            st = cli_node_lease_keep(c, &lease, false);
            if (st != CLI_EXIT_OK) {
                break;
            }
            lease_ceiling(g, mark, &lease);
        }
        /* Up to 20 digits and a newline each, and the formatter's NUL. */
        size_t n = (TEXT_CHUNK_BYTES - 1) / 21;
        if (count < n) {
            n = (size_t)count;
        }
        char *p = idmx_outbuf_reserve(&c->out, n * 21 + 1);
        if (p == NULL) {
            break;
        }
        size_t len = 0;
        rc = idm_snowflake_next_text_n(g, p, n * 21 + 1, n, IDM_TEXT_NEWLINE, &len, &err);
        /* The IDs minted before a failure are valid: they are printed. */
        idmx_outbuf_commit(&c->out, len);
        if (rc == IDM_ECEILING && leased) {
            /* The lease's promise is used up: extend it, then go on. */
            count -= count_lines(p, len);
            st = cli_node_lease_keep(c, &lease, true);
            if (st != CLI_EXIT_OK) {
                break;
            }
            lease_ceiling(g, mark, &lease);
            continue;
        }
        if (rc != IDM_OK) {
            char name[IDM_SF_SPEC_CAP];
            cli_layout_name(&cfg.layout, name, sizeof name);
            cli_diag(c, "cannot mint snowflake (layout %s): %s%s", name, cli_reason(&err, rc),
                     rc == IDM_ECLOCK_REWIND && mark != NULL
                         ? " (the clock is behind the time --mark's file says was used; mint "
                           "again once it has passed that, or allow the wait with --max-rewind)"
                         : "");
            st = CLI_EXIT_FAIL;
            break;
        }
        count -= n;
    }
    if (leased || mark != NULL) {
        /* What is minted must be out before the node goes back (a closed
         * stdout still releases it, through on_close). */
        idmx_outbuf_flush(&c->out);
        c->on_close = NULL;
        c->on_close_ctx = NULL;
    }
    if (leased) {
        cli_node_lease_end(&lease, idm_snowflake_high_water_ms(g));
    }
    st = mark_close(c, mark, st);
    idm_snowflake_free(g);
    return st;
}

/* Options that only some formats take: naming one elsewhere is a usage
 * error rather than silently ignored. */
static int check_applicable(cli *c, const gen_opts *o)
{
    const char *name = o->format->name;
    if (o->format->minted_by != IDM_FORMAT_BY_SNOWFLAKE) {
        const char *bad = o->node != NULL         ? "--node"
                          : o->coord != NULL      ? "--coord"
                          : o->node_range != NULL ? "--node-range"
                          : o->lease_ttl != NULL  ? "--lease-ttl"
                          : o->registry != NULL   ? "--registry"
                          : o->layout != NULL     ? "--layout"
                          : o->epoch != NULL      ? "--epoch"
                          : o->seq_start != NULL  ? "--seq-start"
                          : o->max_rewind != NULL ? "--max-rewind"
                                                  : NULL;
        if (bad != NULL) {
            return cli_usage(c, "option '%s' applies only to snowflake, not %s", bad, name);
        }
    }
    if ((o->expires != NULL || o->key_file != NULL) && o->format->id != IDM_FORMAT_TOKEN) {
        return cli_usage(c, "option '%s' applies only to token, not %s",
                         o->expires != NULL ? "--expires" : "--key-file", name);
    }
    if ((o->expires != NULL) != (o->key_file != NULL)) {
        return cli_usage(c, o->expires != NULL ? "option '--expires' needs --key-file F"
                                               : "option '--key-file' needs --expires D");
    }
    if (o->state != NULL && !o->format->time_ordered) {
        return cli_usage(c, "option '--state' applies only to time-ordered formats, not %s", name);
    }
    if (o->mark != NULL && !o->format->time_ordered) {
        return cli_usage(c, "option '--mark' applies only to time-ordered formats, not %s", name);
    }
    if (o->mark != NULL && o->state != NULL) {
        return cli_usage(c, "options '--mark' and '--state' do not go together: a mark file "
                            "belongs to one run at a time, a state file to every process");
    }
    if (o->mark != NULL && o->mark[0] == '\0') {
        return cli_usage(c, "--mark: needs a file");
    }
    if (o->after != NULL && !o->format->time_ordered) {
        return cli_usage(c, "option '--after' applies only to time-ordered formats, not %s", name);
    }
    if (o->max_offset != NULL && o->after == NULL) {
        return cli_usage(c, "option '--max-offset' applies only with --after");
    }
    if (o->prefix != NULL && o->format->prefix == IDM_PREFIX_NONE) {
        char list[IDMX_FORMAT_LIST_CAP];
        if (idmx_format_list(list, sizeof list, IDMX_LIST_PREFIXED, "and") == (size_t)-1) {
            list[0] = '\0';
        }
        return cli_usage(c, "option '--prefix' applies only to %s, not %s", list, name);
    }
    if (o->format->prefix == IDM_PREFIX_REQUIRED && o->prefix == NULL) {
        return cli_usage(c, "gen %s needs --prefix P (lowercase [a-z_], e.g. --prefix user)", name);
    }
    if (o->prefix != NULL) {
        idm_error err = {0};
        size_t len = strlen(o->prefix);
        int rc = idm_format_check_prefix(o->format, o->prefix, len, &err);
        if (rc != IDM_OK) {
            return cli_bad_prefix(c, o->prefix, &err, rc);
        }
    }
    return CLI_EXIT_OK;
}

static int take_option(cli *c, void *ctx, int id, const idmx_optparse *p)
{
    gen_opts *o = ctx;
    switch (id) {
    case IDMX_OPT_OPERAND:
        if (o->format_text != NULL) {
            return cli_usage(c, "unexpected argument '%s' (gen takes one FORMAT)", p->arg);
        }
        o->format_text = p->arg;
        break;
    case OPT_COUNT: {
        char msg[IDMX_OPT_MSG_CAP];
        if (idmx_parse_whole(p->name, p->arg, &idmx_range_count, &o->count, msg, sizeof msg) != 0) {
            return cli_usage(c, "%s", msg);
        }
        break;
    }
    case OPT_NODE:
        o->node = p->arg;
        break;
    case OPT_LAYOUT:
        o->layout = p->arg;
        break;
    case OPT_EPOCH:
        o->epoch = p->arg;
        break;
    case OPT_PREFIX:
        o->prefix = p->arg;
        break;
    case OPT_SEQ_START:
        o->seq_start = p->arg;
        break;
    case OPT_MAX_REWIND:
        o->max_rewind = p->arg;
        break;
    case OPT_STATE:
        o->state = p->arg;
        break;
    case OPT_COORD:
        o->coord = p->arg;
        break;
    case OPT_NODE_RANGE:
        o->node_range = p->arg;
        break;
    case OPT_LEASE_TTL:
        o->lease_ttl = p->arg;
        break;
    case OPT_REGISTRY:
        o->registry = p->arg;
        break;
    case OPT_EXPIRES:
        o->expires = p->arg;
        break;
    case OPT_KEY_FILE:
        o->key_file = p->arg;
        break;
    case OPT_AFTER:
        o->after = p->arg;
        break;
    case OPT_MAX_OFFSET:
        o->max_offset = p->arg;
        break;
    case OPT_MARK:
        o->mark = p->arg;
        break;
    default:
        return cli_usage(c, "unhandled option '%s'", p->name != NULL ? p->name : "?");
    }
    return CLI_CONTINUE;
}

int cli_gen(cli *c, int argc, char **argv)
{
    gen_opts o;
    memset(&o, 0, sizeof o);
    o.count = 1;
    int st = cli_parse_options(c, argc, argv, gen_options, cli_gen_help, take_option, &o);
    if (st != CLI_CONTINUE) {
        return st;
    }
    char list[IDMX_FORMAT_LIST_CAP];
    if (idmx_format_list(list, sizeof list, IDMX_LIST_ALL, "or") == (size_t)-1) {
        list[0] = '\0';
    }
    if (o.format_text == NULL) {
        return cli_usage(c, "gen needs a FORMAT: %s", list);
    }
    o.format = idm_format_by_name(o.format_text, strlen(o.format_text));
    if (o.format == NULL) {
        return cli_usage(c, "unknown format '%s' (expected %s)", o.format_text, list);
    }
    st = check_applicable(c, &o);
    if (st != CLI_EXIT_OK) {
        return st;
    }

    if (o.format->minted_by == IDM_FORMAT_BY_SNOWFLAKE) {
        st = gen_snowflake(c, &o);
    } else if (o.count == 0) {
        st = CLI_EXIT_OK;
    } else {
        gen_seen seen;
        if (o.after != NULL) {
            st = seen_parse(c, &o, &seen);
            if (st != CLI_EXIT_OK) {
                return st;
            }
        }
        idm_gen *g = NULL;
        idm_error err = {0};
        idm_gen_config cfg = {0};
        cfg.state_path = o.state;
        cfg.flags = o.state == NULL ? IDM_GEN_UNSHARED : 0;
        int rc = idm_gen_new(&g, &cfg, &err);
        if (rc != IDM_OK) {
            cli_diag(c, "cannot create a generator: %s", cli_reason(&err, rc));
            return CLI_EXIT_FAIL;
        }
        idm_mark *mark = NULL;
        st = mark_open(c, &o, &mark);
        if (st == CLI_EXIT_OK && mark != NULL && (rc = idm_mark_attach_gen(mark, g, &err)) != IDM_OK) {
            cli_diag(c, "--mark: %s", cli_reason(&err, rc));
            st = CLI_EXIT_FAIL;
        }
        held_node held = {NULL, NULL, mark};
        if (mark != NULL) {
            c->on_close = release_on_close;
            c->on_close_ctx = &held;
        }
        if (st == CLI_EXIT_OK && o.after != NULL) {
            st = observe_gen(c, g, &o, &seen);
        }
        if (st == CLI_EXIT_OK && o.expires != NULL) {
            /* Signed tokens (--expires, --key-file) are cli/keyed.c's. */
            st = cli_gen_stoken(c, g, o.count, o.prefix, o.expires, o.key_file);
        } else if (st == CLI_EXIT_OK) {
            st = gen_text(c, g, &o);
        }
        if (mark != NULL) {
            idmx_outbuf_flush(&c->out);
            c->on_close = NULL;
            c->on_close_ctx = NULL;
            st = mark_close(c, mark, st);
        }
        idm_gen_free(g);
    }
    int out_st = cli_out_flush(c);
    return st != CLI_EXIT_OK ? st : out_st;
}
