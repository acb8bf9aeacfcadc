/*
 * hlc.c - `idmint hlc now|update|inspect` (man/idmint.1, "hlc"; issue 13):
 * hybrid logical clock stamps (idmint/hlc.h) from the command line.
 *
 *   hlc now [--at UNIX_MS] [--state PATH] [-n N]   N new stamps (default 1)
 *   hlc update [--max-offset MS] [--at UNIX_MS] [--state PATH] STAMP
 *                                                  merge a received stamp
 *   hlc inspect [--json] [STAMP ...]               decode (stdin when none)
 *
 * One run is one clock: without --state it starts from nothing, so two
 * runs in the same millisecond can print the same stamp. --state PATH
 * keeps the last stamp handed out in a small file (its text and a newline,
 * 17 bytes) so that successive and concurrent runs are strictly
 * increasing, also when the wall clock steps back:
 *
 *  - the file is opened O_NOFOLLOW, created 0600, and used only when it is
 *    a regular file of this user that neither its group nor others may
 *    write (as the library's state files, src/os/linux/statefile.c);
 *  - it is held with flock(LOCK_EX) from the read to the last write, so
 *    concurrent runs take turns (the kernel drops the lock of a run that
 *    dies);
 *  - the clock resumes from the stamp in it by merging that stamp as if it
 *    were received (not offset-checked: it is our own), which is exactly
 *    the local event of a clock whose state is that stamp;
 *  - the new last stamp is written back in place (pwrite of the 17 bytes
 *    at offset 0, then fdatasync) before any stamp is printed, a batch of
 *    at most BATCH stamps at a time, so a stamp seen on stdout is on disk.
 *    In place rather than a temporary file and rename(2): a rename would
 *    swap the inode under the flock that other runs wait on. A write of 17
 *    bytes within one sector is not torn in practice; a file that does not
 *    hold a stamp is refused (exit 1), never reset.
 *
 * --at UNIX_MS reads that time instead of the wall clock (a fixed
 * idm_clock), for scripts and tests.
 */
#include "cli.h"

#include "hlc_render.h"
#include "inspect_render.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

enum { OPT_AT = CLI_OPT_HELP + 1, OPT_STATE, OPT_COUNT, OPT_MAX_OFFSET, OPT_JSON };

/* One option per line. */
/* clang-format off */
static const idmx_option hlc_options[] = {
    {"help", 'h', IDMX_NO_ARG, CLI_OPT_HELP},
    {"at", 0, IDMX_REQUIRED_ARG, OPT_AT},
    {"state", 0, IDMX_REQUIRED_ARG, OPT_STATE},
    {"count", 'n', IDMX_REQUIRED_ARG, OPT_COUNT},
    {"max-offset", 0, IDMX_REQUIRED_ARG, OPT_MAX_OFFSET},
    {"json", 0, IDMX_NO_ARG, OPT_JSON},
    {NULL, 0, 0, 0},
};
/* clang-format on */

const char cli_hlc_help[] =
    "Usage: idmint hlc now [--at UNIX_MS] [--state PATH] [-n COUNT]\n"
    "       idmint hlc update [--max-offset MS] [--at UNIX_MS] [--state PATH] STAMP\n"
    "       idmint hlc inspect [--json] [STAMP ...]\n"
    "\n"
    "Hybrid logical clock stamps: 16 lowercase hex digits of wall_ms << 16 | logical,\n"
    "ordered like causality and close to the wall clock.\n"
    "\n"
    "  now      print a new stamp (COUNT stamps, strictly increasing)\n"
    "  update   merge a stamp received from elsewhere and print one after it\n"
    "  inspect  decode stamps: from the arguments, or one per line from standard\n"
    "           input when there are none\n"
    "\n"
    "Options:\n"
    "      --at UNIX_MS      use this wall-clock time (Unix ms) instead of the clock\n"
    "      --state PATH      keep the last stamp in PATH (created 0600, locked while\n"
    "                        used), so that successive and concurrent runs are\n"
    "                        strictly increasing, even when the clock steps back\n"
    "  -n, --count COUNT     now: how many stamps (default 1)\n"
    "      --max-offset MS   update: refuse a stamp more than MS ahead of the wall\n"
    "                        clock (default 500)\n"
    "      --json            inspect: one JSON object per stamp (JSON Lines) with\n"
    "                        stamp, wall_ms, time and logical\n"
    "  -h, --help            show this help and exit\n"
    "\n"
    "Exit status: 0 success; 1 an invalid stamp, one too far ahead, or a state file\n"
    "that cannot be used; 2 a usage error.\n";

enum { SUB_NONE, SUB_NOW, SUB_UPDATE, SUB_INSPECT };

/* Stamps produced, written back and printed per round. */
#define BATCH 4096

/* The --at range: what idm_clock's nanoseconds hold (the year 2262). */
static const idmx_range at_range = {0, INT64_MAX / 1000000, "ms"};

typedef struct hlc_opts {
    int sub;
    const char *at_text, *state, *count_text, *max_offset_text;
    const char *first_opt; /* an option given (for "does not apply" messages) */
    unsigned given;        /* 1 << OPT_* */
    int json;
    char **operands; /* collected at the front of argv[1..] */
    int n_operands;
    int64_t at_ms, max_offset_ms;
    uint64_t count;
} hlc_opts;

static int take_option(cli *c, void *ctx, int id, const idmx_optparse *p)
{
    hlc_opts *o = ctx;
    if (id == IDMX_OPT_OPERAND) {
        if (o->sub == SUB_NONE) {
            if (strcmp(p->arg, "now") == 0) {
                o->sub = SUB_NOW;
            } else if (strcmp(p->arg, "update") == 0) {
                o->sub = SUB_UPDATE;
            } else if (strcmp(p->arg, "inspect") == 0) {
                o->sub = SUB_INSPECT;
            } else {
                return cli_usage(c, "unknown hlc command '%s' (expected now, update or inspect)",
                                 p->arg);
            }
            return CLI_CONTINUE;
        }
        /* The parser has already passed every slot this overwrites. */
        o->operands[o->n_operands++] = (char *)p->arg;
        return CLI_CONTINUE;
    }
    o->given |= 1u << id;
    char msg[IDMX_OPT_MSG_CAP];
    switch (id) {
    case OPT_AT: {
        uint64_t v;
        if (idmx_parse_whole(p->name, p->arg, &at_range, &v, msg, sizeof msg) != 0) {
            return cli_usage(c, "%s", msg);
        }
        o->at_ms = (int64_t)v;
        break;
    }
    case OPT_STATE:
        if (p->arg[0] == '\0') {
            return cli_usage(c, "option '%s' needs a file name", p->name);
        }
        o->state = p->arg;
        break;
    case OPT_COUNT:
        if (idmx_parse_whole(p->name, p->arg, &idmx_range_count, &o->count, msg, sizeof msg) != 0) {
            return cli_usage(c, "%s", msg);
        }
        break;
    case OPT_MAX_OFFSET:
        if (idmx_parse_ms(p->name, p->arg, &idmx_range_max_offset_ms, &o->max_offset_ms, msg,
                          sizeof msg) != 0) {
            return cli_usage(c, "%s", msg);
        }
        break;
    case OPT_JSON:
        o->json = 1;
        break;
    default:
        return cli_usage(c, "unhandled option '%s'", p->name != NULL ? p->name : "?");
    }
    return CLI_CONTINUE;
}

/* Refuses the options sub does not take. */
static int check_options(cli *c, const hlc_opts *o)
{
    static const char *const sub_names[] = {"", "now", "update", "inspect"};
    static const struct {
        int id;
        const char *name;
        unsigned subs; /* 1 << SUB_* */
    } rules[] = {
        {OPT_AT, "--at", 1u << SUB_NOW | 1u << SUB_UPDATE},
        {OPT_STATE, "--state", 1u << SUB_NOW | 1u << SUB_UPDATE},
        {OPT_COUNT, "-n/--count", 1u << SUB_NOW},
        {OPT_MAX_OFFSET, "--max-offset", 1u << SUB_UPDATE},
        {OPT_JSON, "--json", 1u << SUB_INSPECT},
    };
    if (o->sub == SUB_NONE) {
        return cli_usage(c, "missing hlc command (now, update or inspect)");
    }
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        if ((o->given & 1u << rules[i].id) && !(rules[i].subs & 1u << o->sub)) {
            return cli_usage(c, "option '%s' does not apply to 'hlc %s'", rules[i].name,
                             sub_names[o->sub]);
        }
    }
    if (o->sub == SUB_NOW && o->n_operands > 0) {
        return cli_usage(c, "'hlc now' takes no arguments, got '%s'", o->operands[0]);
    }
    if (o->sub == SUB_UPDATE && o->n_operands != 1) {
        if (o->n_operands == 0) {
            return cli_usage(c, "'hlc update' needs the STAMP received");
        }
        return cli_usage(c, "'hlc update' takes one STAMP, got %d", o->n_operands);
    }
    return CLI_CONTINUE;
}

/* ---- the clock ---------------------------------------------------------- */

/* --at: the clock reads one time. */
static int fixed_now_ns(void *ctx, int64_t *unix_ns)
{
    *unix_ns = *(const int64_t *)ctx * 1000000;
    return IDM_OK;
}

static void fixed_sleep_ns(void *ctx, int64_t ns)
{
    (void)ctx;
    (void)ns;
}

static int make_clock(cli *c, const hlc_opts *o, int64_t max_offset_ms, idm_hlc **out)
{
    idm_hlc_config cfg;
    idm_hlc_config_init(&cfg);
    cfg.max_offset_ms = max_offset_ms;
    if (o->given & 1u << OPT_AT) {
        cfg.clock.now_ns = fixed_now_ns;
        cfg.clock.sleep_ns = fixed_sleep_ns;
        cfg.clock.ctx = (void *)&o->at_ms;
    }
    idm_error err = {0};
    int rc = idm_hlc_new(out, &cfg, &err);
    if (rc != IDM_OK) {
        cli_diag(c, "cannot make a clock: %s", cli_reason(&err, rc));
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* ---- the state file ----------------------------------------------------- */

#define STATE_LEN (IDM_HLC_STRLEN + 1) /* the stamp's text and "\n" */

typedef struct hlc_state {
    const char *path;
    int fd;
    bool have; /* the file holds a stamp */
    uint64_t last;
} hlc_state;

/* Opens, vets and locks the file, and reads the stamp in it. Returns
 * CLI_EXIT_OK or CLI_EXIT_FAIL (reported, nothing held). */
static int state_open(cli *c, hlc_state *st, const char *path)
{
    memset(st, 0, sizeof *st);
    st->path = path;
    st->fd = -1;
    /* O_NONBLOCK and O_NOCTTY: a FIFO or a terminal at path must not block
     * the open or become the controlling terminal before it is refused. */
    int fd;
    do {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0600);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        int e = errno;
        struct stat ls;
        if (e == ELOOP && lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode)) {
            cli_diag(c, "state file %s is a symbolic link; refusing to follow it", path);
        } else {
            cli_diag(c, "cannot open state file %s: %s", path, strerror(e));
        }
        return CLI_EXIT_FAIL;
    }
    struct stat sb;
    const char *why = NULL;
    if (fstat(fd, &sb) != 0) {
        why = strerror(errno);
    } else if (!S_ISREG(sb.st_mode)) {
        why = "not a regular file";
    } else if (sb.st_uid != geteuid()) {
        why = "it belongs to another user";
    } else if (sb.st_mode & (S_IWGRP | S_IWOTH)) {
        why = "it is writable by its group or by others (chmod 600 it)";
    }
    if (why != NULL) {
        cli_diag(c, "state file %s cannot be used: %s", path, why);
        close(fd);
        return CLI_EXIT_FAIL;
    }
    int rc;
    do {
        rc = flock(fd, LOCK_EX);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        cli_diag(c, "cannot lock state file %s: %s", path, strerror(errno));
        close(fd);
        return CLI_EXIT_FAIL;
    }
    char buf[STATE_LEN + 1];
    ssize_t n;
    do {
        n = pread(fd, buf, sizeof buf, 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        cli_diag(c, "cannot read state file %s: %s", path, strerror(errno));
        close(fd);
        return CLI_EXIT_FAIL;
    }
    st->fd = fd;
    if (n == 0) {
        return CLI_EXIT_OK; /* new: no stamp yet */
    }
    if (n != STATE_LEN || buf[IDM_HLC_STRLEN] != '\n' ||
        idm_hlc_parse(buf, IDM_HLC_STRLEN, &st->last, NULL) != IDM_OK) {
        cli_diag(c,
                 "state file %s does not hold an hlc stamp (%zd bytes; expected 16 lowercase hex "
                 "digits and a newline); refusing to reset it",
                 path, n);
        close(fd);
        st->fd = -1;
        return CLI_EXIT_FAIL;
    }
    st->have = true;
    return CLI_EXIT_OK;
}

/* Writes stamp back and makes it durable. Returns CLI_EXIT_OK or
 * CLI_EXIT_FAIL (reported). */
static int state_save(cli *c, hlc_state *st, uint64_t stamp)
{
    char buf[STATE_LEN + 1];
    if (idm_hlc_format(stamp, buf, sizeof buf) != IDM_OK) {
        return CLI_EXIT_FAIL;
    }
    buf[IDM_HLC_STRLEN] = '\n';
    size_t done = 0;
    while (done < STATE_LEN) {
        ssize_t w = pwrite(st->fd, buf + done, STATE_LEN - done, (off_t)done);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            cli_diag(c, "cannot write state file %s: %s", st->path,
                     w < 0 ? strerror(errno) : "nothing written");
            return CLI_EXIT_FAIL;
        }
        done += (size_t)w;
    }
    if (fdatasync(st->fd) != 0) {
        cli_diag(c, "cannot write state file %s: %s", st->path, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    st->have = true;
    st->last = stamp;
    return CLI_EXIT_OK;
}

static void state_close(hlc_state *st)
{
    if (st->fd >= 0) {
        close(st->fd); /* drops the flock */
        st->fd = -1;
    }
}

/* ---- the commands ------------------------------------------------------- */

static void put_stamp(cli *c, uint64_t stamp)
{
    char text[IDM_HLC_STRLEN + 1];
    if (idm_hlc_format(stamp, text, sizeof text) == IDM_OK) {
        idmx_outbuf_append(&c->out, text, IDM_HLC_STRLEN);
        idmx_outbuf_putc(&c->out, '\n');
    }
}

static int mint_failed(cli *c, const idm_error *err, int rc)
{
    cli_diag(c, "cannot make a stamp: %s", cli_reason(err, rc));
    return CLI_EXIT_FAIL;
}

/* hlc now: the first stamp merges the state file's (a local event of the
 * clock resumed there), the others are local events. */
static int run_now(cli *c, const hlc_opts *o, idm_hlc *h, hlc_state *st)
{
    uint64_t batch[BATCH];
    uint64_t left = o->count;
    bool first = true;
    while (left > 0 && c->out.err == 0) {
        size_t n = left < BATCH ? (size_t)left : BATCH;
        for (size_t i = 0; i < n; i++) {
            idm_error err = {0};
            int rc;
            if (first && st->have) {
                rc = idm_hlc_update(h, st->last, &batch[i], &err);
            } else {
                rc = idm_hlc_now(h, &batch[i], &err);
            }
            first = false;
            if (rc != IDM_OK) {
                /* Those made so far are printed (and saved) first. */
                if (i > 0 && (st->fd < 0 || state_save(c, st, batch[i - 1]) == CLI_EXIT_OK)) {
                    for (size_t k = 0; k < i; k++) {
                        put_stamp(c, batch[k]);
                    }
                }
                return mint_failed(c, &err, rc);
            }
        }
        if (st->fd >= 0 && state_save(c, st, batch[n - 1]) != CLI_EXIT_OK) {
            return CLI_EXIT_FAIL;
        }
        for (size_t i = 0; i < n; i++) {
            put_stamp(c, batch[i]);
        }
        left -= n;
    }
    return CLI_EXIT_OK;
}

/* hlc update: the offset guard on a clock with --max-offset, then the
 * merge of the later of the received stamp and the state file's. */
static int run_update(cli *c, const hlc_opts *o, idm_hlc *h, hlc_state *st)
{
    const char *text = o->operands[0];
    size_t len = strlen(text);
    idm_error err = {0};
    uint64_t remote, stamp;
    int rc = idm_hlc_parse(text, len, &remote, &err);
    if (rc != IDM_OK) {
        cli_diag_input(c, text, len, cli_reason(&err, rc));
        return CLI_EXIT_FAIL;
    }
    idm_hlc *guard = NULL;
    int st_ = make_clock(c, o, o->max_offset_ms, &guard);
    if (st_ != CLI_EXIT_OK) {
        return st_;
    }
    rc = idm_hlc_update(guard, remote, &stamp, &err);
    idm_hlc_free(guard);
    if (rc == IDM_EOFFSET) {
        cli_diag_input(c, text, len, cli_reason(&err, rc));
        return CLI_EXIT_FAIL;
    }
    if (rc != IDM_OK) {
        return mint_failed(c, &err, rc);
    }
    uint64_t merge = st->have && st->last > remote ? st->last : remote;
    rc = idm_hlc_update(h, merge, &stamp, &err);
    if (rc != IDM_OK) {
        return mint_failed(c, &err, rc);
    }
    if (st->fd >= 0 && state_save(c, st, stamp) != CLI_EXIT_OK) {
        return CLI_EXIT_FAIL;
    }
    put_stamp(c, stamp);
    return CLI_EXIT_OK;
}

typedef struct inspect_ctx {
    int json;
    int printed;
} inspect_ctx;

static int inspect_one(cli *c, void *ctx, const char *text, size_t len)
{
    inspect_ctx *x = ctx;
    idm_error err = {0};
    uint64_t stamp;
    int rc = idm_hlc_parse(text, len, &stamp, &err);
    if (rc != IDM_OK) {
        if (!x->json) {
            cli_diag_input(c, text, len, cli_reason(&err, rc));
            return CLI_EXIT_FAIL;
        }
        idmx_inspect_json_error(&c->out, text, len, cli_reason(&err, rc));
        idmx_outbuf_putc(&c->out, '\n');
        return CLI_EXIT_FAIL;
    }
    if (x->json) {
        idmx_hlc_json(&c->out, stamp);
        idmx_outbuf_putc(&c->out, '\n');
    } else {
        if (x->printed) {
            idmx_outbuf_putc(&c->out, '\n');
        }
        idmx_hlc_text(&c->out, stamp);
    }
    x->printed = 1;
    return CLI_EXIT_OK;
}

int cli_hlc(cli *c, int argc, char **argv)
{
    hlc_opts o;
    memset(&o, 0, sizeof o);
    o.count = 1;
    o.max_offset_ms = IDM_HLC_DEFAULT_MAX_OFFSET_MS;
    o.operands = argv + 1;
    int st = cli_parse_options(c, argc, argv, hlc_options, cli_hlc_help, take_option, &o);
    if (st != CLI_CONTINUE) {
        return st;
    }
    st = check_options(c, &o);
    if (st != CLI_CONTINUE) {
        return st;
    }
    if (o.sub == SUB_INSPECT) {
        inspect_ctx x = {o.json, 0};
        return cli_for_each_input(c, o.operands, o.n_operands, inspect_one, &x);
    }
    /* Our own stamps are merged without the offset guard (the state file's
     * may be far ahead of a clock that stepped back). */
    idm_hlc *h = NULL;
    st = make_clock(c, &o, INT64_MAX, &h);
    if (st != CLI_EXIT_OK) {
        return st;
    }
    hlc_state state;
    memset(&state, 0, sizeof state);
    state.fd = -1;
    if (o.state != NULL && state_open(c, &state, o.state) != CLI_EXIT_OK) {
        idm_hlc_free(h);
        return CLI_EXIT_FAIL;
    }
    st = o.sub == SUB_NOW ? run_now(c, &o, h, &state) : run_update(c, &o, h, &state);
    /* Printed before the lock goes: a concurrent run's stamps come later
     * on a shared stdout too. */
    int out_st = cli_out_flush(c);
    state_close(&state);
    idm_hlc_free(h);
    return st != CLI_EXIT_OK ? st : out_st;
}
