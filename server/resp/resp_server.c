/*
 * resp_server.c - the Redis-protocol adapter (RESP2, and RESP3 after
 * HELLO 3), so that every Redis client library can mint IDs with its
 * default options:
 *
 *   NEXT format [count] [prefix] [AFTER id]
 *                                 a bulk string without a count, an array
 *                                 of bulk strings with one (even count 1);
 *                                 AFTER id: every ID sorts after id (causal
 *                                 minting, mint.h; typeid takes its prefix
 *                                 as before: NEXT typeid 5 user AFTER
 *                                 user_01...), -ERR when it does not parse or
 *                                 lies further ahead than --max-offset
 *   OBFUSCATE id [prefix]         the ID's public form under --key-file
 *   REVEAL token                  the decimal ID it stands for (keyed.h)
 *   HLC [stamp]                   a new hybrid logical clock stamp, or one
 *                                 after the stamp given (merged; hlc.h), as
 *                                 a bulk string
 *   MULTI, EXEC, DISCARD          a transaction, as Redis runs one: each
 *                                 command after MULTI answered +QUEUED,
 *                                 EXEC runs them in order and answers an
 *                                 array of their replies (see "MULTI and
 *                                 EXEC" below)
 *   WATCH key..., UNWATCH         WATCH refused (nothing here can be
 *                                 watched), UNWATCH +OK
 *   DBSIZE                        the segment tags this server has loaded
 *   PING [message], ECHO message, INFO [section...], QUIT, RESET
 *   HELLO [2|3] [AUTH user pass] [SETNAME name]
 *   AUTH [user] pass              the token of --auth-token-file, for the
 *                                 user "default"; without one, as Redis
 *                                 without a password configured
 *   CLIENT ID|GETNAME|SETNAME|SETINFO|INFO|LIST
 *   COMMAND [COUNT|DOCS|INFO|LIST], CONFIG GET param..., SELECT 0
 *
 * Replies follow Redis 7's for the same command, including its error
 * wording where clients match it (ioredis looks for "without any password
 * configured for the default user"); RESP3 changes only the replies where
 * Redis sends a map, a set, a null or a verbatim string. Every complete
 * command in the buffer is answered in order (pipelining).
 *
 * Redis's cross-protocol guard: a connection whose command is "POST",
 * "Host:" or an HTTP request line (a browser tricked into posting to this
 * port) is closed without a reply and nothing after it runs.
 *
 * With --auth-token-file a connection runs only the commands flagged
 * no_auth in the table below (AUTH, HELLO, RESET, QUIT: Redis's own list)
 * until it has given the token; the others, unknown commands included,
 * get Redis's -NOAUTH, and a wrong token its -WRONGPASS (auth.h).
 *
 * MULTI and EXEC: the transaction is the session's (resp_session.h:
 * idms_resp_multi). While queueing, a command is checked as Redis checks
 * it before it queues (known, allowed, its number of arguments): one that
 * fails gets its error and makes EXEC answer -EXECABORT; the other checks
 * are the command's own and fail at EXEC, as one element of its array.
 * EXEC, DISCARD, MULTI, WATCH, QUIT and RESET run at once, as in Redis. A
 * command of the queue that waits (the ceiling, a segment tag, the next
 * time unit) parks EXEC with it, as it parks on its own: the loop serves
 * every other connection meanwhile, and EXEC goes on from the command's
 * record (idms_resp_held), not from its bytes. The queue is bounded:
 * IDMS_RESP_MULTI_MAX commands, and a quarter of the connection's share
 * of --max-buffered in bytes (what a read or a batch of replies may take:
 * conn.h); past either the command is refused with an error saying which
 * bound, and EXEC aborts. There is no WATCH: a segment tag changes with
 * every INCR of every server on the store, and IDs are never read back,
 * so there is nothing a transaction here could check and retry on.
 *
 * INFO: Redis's sections and the fields of them that mean something here
 * (cmd_info), so that redis-cli --stat, exporters and dashboards read real
 * figures. redis_version is 7.2.0, the Redis whose replies idmintd follows
 * (HELLO, CLIENT SETINFO, its error wording), so that a client or a job
 * queue that checks the version before it uses a command accepts it, and
 * none is told of a later Redis's commands; idmint_version is idmintd's
 * own. The counts
 * are the whole server's, every front end (core/counters.h, as /metrics
 * shows them): one idmintd is one server whatever its clients speak.
 *
 * DBSIZE and INFO's keyspace: the segment tags with an allocator on this
 * server (segments.h: the live table), not the store's rows: INFO is
 * answered from memory on the loop (redis-cli --stat asks every second),
 * while counting the store's rows would be a database call on the store
 * thread for each, and DBSIZE must agree with INFO.
 *
 * Left out: users other than "default" (ACLs), databases other than 0,
 * CLIENT LIST filters, COMMAND's subcommand entries and argument docs,
 * WATCH.
 */
#include "resp/resp_server.h"
#include "auth.h"
#include "buf.h"
#include "conn.h"
#include "core/counters.h"
#include "formats.h"
#include "hlc.h"
#include "keyed.h"
#include "lease.h"
#include "log.h"
#include "mint.h"
#include "node.h"
#include "resp/resp_session.h"
#include "segments.h"
#include "services.h"
#include "status.h"

#include "resp/resp_parser.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/* The connection and command being answered. */
typedef struct req {
    idms_conn *c;
    idms_services *s;
    idms_resp_session *ss;
    const idms_resp_command *cmd;
    idms_buf *out;
} req;

/* What a command did: answered; not consumed (parked, or a reply in
 * parts: offered again on resume); answered and the connection closes;
 * a reply in parts cut short (mint.h): close after what was sent;
 * queued by MULTI (+QUEUED: answered, and counted only when EXEC runs
 * it, as Redis counts a queued command). */
enum { RUN_DONE, RUN_PARKED, RUN_CLOSE, RUN_CUT, RUN_QUEUED };

typedef struct command {
    const char *name; /* lower case, as COMMAND reports it */
    size_t min_argc;  /* with the command name */
    size_t max_argc;  /* 0: no upper bound */
    const char *usage;
    const char *flags; /* COMMAND's flags and ACL categories, space-separated */
    const char *acl;
    const char *group;
    const char *summary;
    int (*run)(req *r);
} command;

/* CLIENT IDs count up from 1 and are never reused while the process runs,
 * as Redis's are. One server per process, used only on the loop thread. */
static uint64_t last_client_id;

/* The last second the cross-protocol guard was logged (at most once a
 * second: each attempt is only a connection). Loop thread only. */
static int64_t guard_logged_s = -1;

static bool is(const idms_resp_arg *a, const char *word)
{
    size_t n = strlen(word);
    return a->len == n && strncasecmp(a->ptr, word, n) == 0;
}

static bool is3(const req *r)
{
    return r->ss->protocol == 3;
}

/* "-CODE message": one line, so CR and LF become spaces. */
static void error_code(idms_buf *out, const char *code, const char *msg)
{
    idms_buf_printf(out, "-%s ", code);
    for (const char *p = msg; *p; p++)
        idms_buf_append(out, (*p == '\r' || *p == '\n') ? " " : p, 1);
    idms_buf_puts(out, "\r\n");
}

static void errorf(idms_buf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void errorf(idms_buf *out, const char *fmt, ...)
{
    char msg[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    error_code(out, "ERR", msg);
}

/* An argument quoted in an error: printable ASCII, other bytes as '?', at
 * most 40 bytes and then "...". */
static const char *shown(const idms_resp_arg *a, char dst[48])
{
    size_t n = a->len > 40 ? 40 : a->len, i;
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)a->ptr[i];
        dst[i] = (ch >= 0x20 && ch < 0x7F) ? (char)ch : '?';
    }
    if (a->len > n) {
        memcpy(dst + i, "...", 3);
        i += 3;
    }
    dst[i] = '\0';
    return dst;
}

static void bulk(idms_buf *out, const char *p, size_t n)
{
    idms_buf_printf(out, "$%zu\r\n", n);
    idms_buf_append(out, p, n);
    idms_buf_puts(out, "\r\n");
}

static void bulk_str(idms_buf *out, const char *s)
{
    bulk(out, s, strlen(s));
}

static void integer(idms_buf *out, int64_t v)
{
    idms_buf_printf(out, ":%" PRId64 "\r\n", v);
}

/* RESP3 has maps, sets, a null and verbatim strings; RESP2 sends flat
 * arrays, arrays, $-1 and bulk strings instead (as Redis does). */
static void map_header(const req *r, size_t pairs)
{
    idms_buf_printf(r->out, "%c%zu\r\n", is3(r) ? '%' : '*', is3(r) ? pairs : 2 * pairs);
}

static void set_header(const req *r, size_t n)
{
    idms_buf_printf(r->out, "%c%zu\r\n", is3(r) ? '~' : '*', n);
}

static void null_reply(const req *r)
{
    idms_buf_puts(r->out, is3(r) ? "_\r\n" : "$-1\r\n");
}

static void text_reply(const req *r, const char *p, size_t n)
{
    if (!is3(r)) {
        bulk(r->out, p, n);
        return;
    }
    idms_buf_printf(r->out, "=%zu\r\ntxt:", n + 4);
    idms_buf_append(r->out, p, n);
    idms_buf_puts(r->out, "\r\n");
}

/* Replies with a text built in a buffer of its own, and frees it. */
static void text_reply_buf(const req *r, idms_buf *text)
{
    if (text->failed)
        errorf(r->out, "out of memory");
    else
        text_reply(r, text->data, text->len);
    idms_buf_free(text);
}

/* A whole number of at most 19 digits, nothing else (no sign, no spaces,
 * no NUL: "5\0xyz" is not 5). */
static bool parse_count(const idms_resp_arg *a, uint64_t *v)
{
    if (a->len == 0 || a->len > 19)
        return false;
    uint64_t x = 0;
    for (size_t i = 0; i < a->len; i++) {
        if (a->ptr[i] < '0' || a->ptr[i] > '9')
            return false;
        x = x * 10 + (uint64_t)(a->ptr[i] - '0');
    }
    *v = x;
    return true;
}

/* A signed integer as Redis's string2ll reads it: optional '-', digits,
 * no leading zeros, within int64. */
static bool parse_int(const idms_resp_arg *a, int64_t *v)
{
    const char *p = a->ptr;
    size_t n = a->len;
    bool neg = n > 0 && p[0] == '-';
    if (neg) {
        p++;
        n--;
    }
    uint64_t mag;
    if (n == 0 || (n > 1 && p[0] == '0') || !parse_count(&(idms_resp_arg){p, n}, &mag))
        return false;
    if (mag > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
        return false;
    *v = neg ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
    return true;
}

/* Redis's rule for client names and library names: no spaces, newlines
 * or other bytes outside '!'..'~'. */
static bool printable_word(const idms_resp_arg *a)
{
    for (size_t i = 0; i < a->len; i++) {
        if (a->ptr[i] < '!' || a->ptr[i] > '~')
            return false;
    }
    return true;
}

/* Whether a is a valid client name (an error reply if not). */
static bool name_ok(req *r, const idms_resp_arg *a)
{
    if (!printable_word(a)) {
        errorf(r->out, "Client names cannot contain spaces, newlines or special characters.");
        return false;
    }
    if (a->len > IDMS_RESP_NAME_MAX) {
        errorf(r->out, "client name longer than %d bytes", IDMS_RESP_NAME_MAX);
        return false;
    }
    return true;
}

/* Sets a name that name_ok accepted ("" clears it). */
static void set_name(req *r, const idms_resp_arg *a)
{
    memcpy(r->ss->name, a->ptr, a->len);
    r->ss->name[a->len] = '\0';
}

/* --- NEXT ------------------------------------------------------------------------------- */

static const char *next_usage(const idmx_format *f, char *dst, size_t cap)
{
    static const char *const tail[] = {
        [IDMX_PREFIX_NONE] = "[count]",
        [IDMX_PREFIX_OPTIONAL] = "[count] [prefix]",
        [IDMX_PREFIX_REQUIRED] = "[count] prefix",
    };
    snprintf(dst, cap, "NEXT %s %s", f->name, tail[f->prefix]);
    return dst;
}

/* Whether NEXT's third argument is a count rather than a prefix: prefixes
 * are [a-z_] and never start with a digit or a sign. */
static bool count_like(const idms_resp_arg *a)
{
    return a->len == 0 || (a->ptr[0] >= '0' && a->ptr[0] <= '9') || a->ptr[0] == '-' ||
           a->ptr[0] == '+';
}

/* NEXT's replies (the mint service's sinks, mint.h): each ID a bulk
 * string, in an array when a count was given (even 1) or more than one
 * ID is asked for. */
static void resp_array_begin(idms_buf *out, uint64_t count)
{
    idms_buf_printf(out, "*%" PRIu64 "\r\n", count);
}

static void resp_bulk_begin(idms_buf *out, uint64_t count)
{
    if (count != 1)
        resp_array_begin(out, count);
}

/* "$LEN\r\nID\r\n", written in place: this runs once per ID of every
 * reply (a printf per ID took a sixth of a 10000-TypeID reply's time). */
static void resp_id(idms_buf *out, const char *text, size_t len, uint64_t index)
{
    (void)index;
    char *p = idms_buf_reserve(out, len + 26); /* '$', 20 digits, two CRLFs */
    if (p == NULL)
        return;
    char *start = p;
    *p++ = '$';
    p += idm_sf_format_decimal(len, p, 21);
    memcpy(p, "\r\n", 2);
    memcpy(p + 2, text, len);
    memcpy(p + 2 + len, "\r\n", 2);
    out->len += (size_t)(p + 4 + len - start);
}

static const idms_sink resp_array = {resp_array_begin, resp_id, NULL};
static const idms_sink resp_bulk = {resp_bulk_begin, resp_id, NULL};

/* A service's refusal as an error reply, with when to try again. */
static int refused(req *r, const char *message, int64_t retry_after_s)
{
    if (retry_after_s > 0)
        errorf(r->out, "%s (retry in %" PRId64 " s)", message, retry_after_s);
    else
        errorf(r->out, "%s", message);
    return RUN_DONE;
}

/* A command that parked or sent a part: its record h is kept in the
 * session (resp_session.h), where the resumed command goes on from it. */
static int hold(req *r, const idms_resp_held *h)
{
    if (h != &r->ss->held)
        r->ss->held = *h;
    return RUN_PARKED;
}

/* Ends the transaction, if any: its queue freed, out of MULTI. */
static void multi_reset(idms_resp_multi *m)
{
    idms_buf_free(&m->queue);
    memset(m, 0, sizeof *m);
}

/* NEXT, parsed (h): mints, or goes on with what it minted. after only
 * when it starts (the service observes it once). */
static int go_next(req *r, const idms_resp_held *h, const char *after)
{
    idms_mint_result m;
    idms_req q = idms_conn_req(r->c);
    idms_mint_after(&q, h->format, h->has_prefix ? h->text : NULL, after, h->count,
                    h->array ? &resp_array : &resp_bulk, idms_conn_part(r->c), r->out, &m);
    if (m.status == 200)
        return RUN_DONE;
    if (m.status == IDMS_MINT_PARKED) {
        idms_conn_park(r->c, &m.park);
        return hold(r, h);
    }
    if (m.status == IDMS_MINT_PART) {
        r->c->more = true; /* the rest once this part is written */
        return hold(r, h);
    }
    if (m.status == IDMS_MINT_CUT)
        return RUN_CUT;
    return refused(r, m.message, m.retry_after_s);
}

static int cmd_next(req *r)
{
    const idms_resp_command *cmd = r->cmd;
    char shown_buf[48], usage[64];
    const idmx_format *f = idmx_format_by_name(cmd->argv[1].ptr, cmd->argv[1].len);
    if (f == NULL) {
        char names[IDMX_FORMAT_LIST_CAP];
        if (idmx_format_list(names, sizeof names, IDMX_LIST_ALL, "or") == (size_t)-1)
            names[0] = '\0';
        errorf(r->out,
               "unknown format '%s' (NEXT format [count] [prefix] [AFTER id]; format is %s)",
               shown(&cmd->argv[1], shown_buf), names);
        return RUN_DONE;
    }
    /* AFTER id ends the command: no count or prefix is "AFTER" (a count
     * is digits, a prefix lowercase), so no command read before means
     * something else now. */
    size_t argc = cmd->argc;
    char after[IDM_TYPEID_STRLEN_MAX + 1];
    const char *after_id = NULL;
    if (argc >= 4 && cmd->argv[argc - 2].len == 5 &&
        strncasecmp(cmd->argv[argc - 2].ptr, "after", 5) == 0) {
        const idms_resp_arg *id = &cmd->argv[argc - 1];
        if (id->len > IDM_TYPEID_STRLEN_MAX || memchr(id->ptr, '\0', id->len) != NULL) {
            errorf(r->out, "the ID to mint after is not a %s ('%s'): too long or not text (%s)",
                   f->name, shown(id, shown_buf), next_usage(f, usage, sizeof usage));
            return RUN_DONE;
        }
        memcpy(after, id->ptr, id->len);
        after[id->len] = '\0';
        after_id = after;
        argc -= 2;
    }
    if (argc > 4) {
        errorf(r->out, "wrong number of arguments for 'next' command (%s)",
               next_usage(f, usage, sizeof usage));
        return RUN_DONE;
    }
    const idms_resp_arg *count_arg = NULL, *prefix_arg = NULL;
    if (argc == 4) {
        count_arg = &cmd->argv[2];
        prefix_arg = &cmd->argv[3];
    } else if (argc == 3) {
        if (f->prefix != IDMX_PREFIX_NONE && !count_like(&cmd->argv[2]))
            prefix_arg = &cmd->argv[2];
        else
            count_arg = &cmd->argv[2];
    }
    uint64_t count = 1;
    uint64_t max = r->s->opt->max_count;
    if (count_arg != NULL && (!parse_count(count_arg, &count) || count == 0 || count > max)) {
        errorf(r->out, "count must be a whole number from 1 to %" PRIu64 ", got '%s' (%s)", max,
               shown(count_arg, shown_buf), next_usage(f, usage, sizeof usage));
        return RUN_DONE;
    }
    char prefix[IDM_TYPEID_PREFIX_MAX + 1];
    if (prefix_arg != NULL) {
        if (f->prefix == IDMX_PREFIX_NONE) {
            char names[IDMX_FORMAT_LIST_CAP];
            if (idmx_format_list(names, sizeof names, IDMX_LIST_PREFIXED, "and") == (size_t)-1)
                names[0] = '\0';
            errorf(r->out, "prefix applies only to %s, not %s (%s)", names, f->name,
                   next_usage(f, usage, sizeof usage));
            return RUN_DONE;
        }
        idm_error err = {0};
        if (idm_typeid_check_prefix(prefix_arg->ptr, prefix_arg->len, &err) != IDM_OK) {
            errorf(r->out, "invalid prefix '%s': %s (%s)", shown(prefix_arg, shown_buf), err.msg,
                   next_usage(f, usage, sizeof usage));
            return RUN_DONE;
        }
        /* Checked: at most IDM_TYPEID_PREFIX_MAX bytes of [a-z_]. */
        _Static_assert(IDM_TYPEID_PREFIX_MAX <= IDMS_RESP_HELD_TEXT, "a held prefix");
        memcpy(prefix, prefix_arg->ptr, prefix_arg->len);
        prefix[prefix_arg->len] = '\0';
    } else if (f->prefix == IDMX_PREFIX_REQUIRED) {
        errorf(r->out, "%s needs a prefix (%s, e.g. NEXT %s user)", f->name,
               next_usage(f, usage, sizeof usage), f->name);
        return RUN_DONE;
    }
    /* Without a count the reply is a bulk string; with one (even 1), an
     * array, so that generic code need not look at the count. */
    idms_resp_held h = {
        .kind = IDMS_RESP_HELD_NEXT, .format = f->id, .count = count, .array = count_arg != NULL};
    if (prefix_arg != NULL) {
        h.text_len = prefix_arg->len;
        h.has_prefix = true;
        memcpy(h.text, prefix, prefix_arg->len + 1);
    }
    return go_next(r, &h, after_id);
}

/* --- HLC: the hybrid logical clock (hlc.h) ----------------------------------------------- */

static int go_hlc(req *r, const idms_resp_held *h);

/* HLC: a new stamp; HLC stamp: the stamp merged (a receive event) and one
 * after it. Both a bulk string of the 16 hex digits. */
static int cmd_hlc(req *r)
{
    const idms_resp_command *cmd = r->cmd;
    uint64_t remote = 0;
    if (cmd->argc == 2) {
        char msg[IDM_ERROR_MSG_CAP + 32], b[48];
        const idms_resp_arg *a = &cmd->argv[1];
        idm_error err = {0};
        if (idm_hlc_parse(a->ptr, a->len, &remote, &err) != IDM_OK) {
            snprintf(msg, sizeof msg, "%s", err.msg);
            errorf(r->out, "invalid stamp '%s': %s (HLC [stamp])", shown(a, b), msg);
            return RUN_DONE;
        }
    }
    idms_resp_held h = {.kind = IDMS_RESP_HELD_HLC};
    h.has_remote = cmd->argc == 2;
    h.remote = remote;
    return go_hlc(r, &h);
}

/* HLC, parsed (h): a stamp, or the wait for the ceiling. */
static int go_hlc(req *r, const idms_resp_held *h)
{
    idms_hlc_result res;
    idms_req q = idms_conn_req(r->c);
    idms_hlc_stamp(&q, h->has_remote ? &h->remote : NULL, &res);
    if (res.status == IDMS_HLC_PARKED) {
        idms_conn_park(r->c, &res.park);
        return hold(r, h);
    }
    if (res.status != 200)
        return refused(r, res.message, res.retry_after_s);
    char text[IDM_HLC_STRLEN + 1];
    if (idm_hlc_format(res.stamp, text, sizeof text) != IDM_OK)
        text[0] = '\0';
    bulk(r->out, text, strlen(text));
    return RUN_DONE;
}

/* --- OBFUSCATE, REVEAL: public IDs under --key-file (keyed.h) -------------------------------- */

/* OBFUSCATE id [prefix]: the obfuscated form of a decimal 64-bit ID, as
 * GET /v1/obfuscate/{id}[?prefix=P] gives it. */
static int cmd_obfuscate(req *r)
{
    const idms_resp_command *cmd = r->cmd;
    const idms_resp_arg *id = &cmd->argv[1];
    const idms_resp_arg *prefix = cmd->argc == 3 ? &cmd->argv[2] : NULL;
    char out[IDM_OBF_STRLEN_MAX + 1], msg[IDMS_KEYED_MSG_CAP];
    if (idms_keyed_obfuscate(r->s->keyed, id->ptr, id->len, prefix ? prefix->ptr : "",
                             prefix ? prefix->len : 0, out, sizeof out, msg, sizeof msg) != 200) {
        errorf(r->out, "%s", msg);
        return RUN_DONE;
    }
    bulk(r->out, out, strlen(out));
    return RUN_DONE;
}

/* REVEAL token: the decimal ID an obfuscated text stands for, as a bulk
 * string (an integer reply cannot hold IDs above 2^63 - 1), as GET
 * /v1/reveal/{token}. */
static int cmd_reveal(req *r)
{
    const idms_resp_arg *text = &r->cmd->argv[1];
    char msg[IDMS_KEYED_MSG_CAP], dec[24];
    uint64_t id = 0;
    if (idms_keyed_reveal(r->s->keyed, text->ptr, text->len, &id, msg, sizeof msg) != 200) {
        errorf(r->out, "%s", msg);
        return RUN_DONE;
    }
    size_t n = idm_sf_format_decimal(id, dec, sizeof dec);
    bulk(r->out, dec, n);
    return RUN_DONE;
}

/* --- INCR, INCRBY: segment tags (segments.h) --------------------------------------------- */

/* INCR or INCRBY, parsed (h: count and style; the tag is tag_len bytes
 * at tag, h's own text once held): mints, or waits for the tag's range.
 * A tag that parks has been looked up, so it fits the record. */
static int go_segment(req *r, const idms_resp_held *h, const char *tag, size_t tag_len)
{
    idms_mint_result m;
    idms_req q = idms_conn_req(r->c);
    idms_segment_mint(&q, tag, tag_len, h->count, h->style, r->out, &m);
    if (m.status == 200)
        return RUN_DONE;
    if (m.status == IDMS_MINT_PARKED) {
        /* (A tag longer than the record holds, refused long before it
         * could park, would be parsed again.) */
        idms_conn_park(r->c, &m.park);
        if (h != &r->ss->held && tag_len <= IDMS_RESP_HELD_TEXT) {
            r->ss->held = *h;
            memcpy(r->ss->held.text, tag, tag_len);
            r->ss->held.text_len = tag_len;
        }
        return RUN_PARKED;
    }
    return refused(r, m.message, m.retry_after_s);
}

/* INCR tag: the tag's next ID, as an integer reply (Redis's INCR of a
 * counter, from a segment of the store instead of one key of one server). */
static int cmd_incr(req *r)
{
    const idms_resp_arg *tag = &r->cmd->argv[1];
    idms_resp_held h = {.kind = IDMS_RESP_HELD_SEGMENT, .count = 1};
    h.style = IDMS_SEG_RESP_INT;
    return go_segment(r, &h, tag->ptr, tag->len);
}

/* INCRBY tag n: reserves n consecutive IDs of the tag's sequence and
 * answers the last, as Redis's INCRBY answers the counter's new value. */
static int cmd_incrby(req *r)
{
    const idms_resp_arg *tag = &r->cmd->argv[1];
    int64_t n = 0;
    if (!parse_int(&r->cmd->argv[2], &n)) {
        errorf(r->out, "value is not an integer or out of range");
        return RUN_DONE;
    }
    if (n < 1 || (uint64_t)n > r->s->opt->max_count) {
        errorf(r->out, "increment must be from 1 to %" PRIu64 " (INCRBY tag n reserves n IDs)",
               r->s->opt->max_count);
        return RUN_DONE;
    }
    idms_resp_held h = {.kind = IDMS_RESP_HELD_SEGMENT, .count = (uint64_t)n};
    h.style = IDMS_SEG_RESP_INCRBY;
    return go_segment(r, &h, tag->ptr, tag->len);
}

/* --- connection commands ----------------------------------------------------------------- */

static int cmd_ping(req *r)
{
    if (r->cmd->argc > 1)
        bulk(r->out, r->cmd->argv[1].ptr, r->cmd->argv[1].len);
    else
        idms_buf_puts(r->out, "+PONG\r\n");
    return RUN_DONE;
}

static int cmd_echo(req *r)
{
    bulk(r->out, r->cmd->argv[1].ptr, r->cmd->argv[1].len);
    return RUN_DONE;
}

static int cmd_quit(req *r)
{
    idms_buf_puts(r->out, "+OK\r\n");
    return RUN_CLOSE;
}

static int cmd_reset(req *r)
{
    r->ss->protocol = 2;
    r->ss->name[0] = '\0';
    /* As Redis: back to the default user as it is configured, which with
     * a token means unauthenticated. */
    r->ss->authed = false;
    /* ... and, as Redis's RESET, out of MULTI: the queue is dropped. */
    multi_reset(&r->ss->multi);
    idms_buf_puts(r->out, "+RESET\r\n");
    return RUN_DONE;
}

static int cmd_select(req *r)
{
    int64_t db;
    if (!parse_int(&r->cmd->argv[1], &db))
        errorf(r->out, "value is not an integer or out of range");
    else if (db != 0)
        errorf(r->out, "DB index is out of range (idmintd has only database 0)");
    else
        idms_buf_puts(r->out, "+OK\r\n");
    return RUN_DONE;
}

/* A token, however long auth.c lets it be, is one argument here. */
_Static_assert(IDMS_AUTH_TOKEN_MAX <= IDMS_RESP_MAX_BULK, "a token fits one RESP argument");

/* Whether user (NULL: AUTH with a password alone) and pass open the
 * connection; if not, Redis's -WRONGPASS, the same whichever was wrong,
 * so that it does not confirm which user names exist. With
 * --auth-token-file the user is "default" and the password the token.
 * Without one there is no password: as in a Redis whose default user has
 * none (its default configuration), the default user is accepted with any
 * password and other users are refused. */
static bool credentials_ok(req *r, const idms_resp_arg *user, const idms_resp_arg *pass)
{
    const idms_auth *a = r->c->net->auth;
    bool user_ok = user == NULL || (user->len == 7 && memcmp(user->ptr, "default", 7) == 0);
    /* The token is checked whatever the user, so that the time taken does
     * not tell a wrong user from a wrong token. */
    bool pass_ok = !a->required || idms_auth_token_ok(a, pass->ptr, pass->len);
    if (user_ok && pass_ok) {
        r->ss->authed = true;
        return true;
    }
    /* A failed AUTH leaves an authenticated connection so, as Redis does. */
    error_code(r->out, "WRONGPASS", "invalid username-password pair or user is disabled.");
    if (a->required)
        idms_auth_failed(r->c->net->auth, r->c, IDMS_AUTH_WRONG);
    return false;
}

static int cmd_auth(req *r)
{
    const idms_resp_command *cmd = r->cmd;
    if (cmd->argc > 3) {
        errorf(r->out, "syntax error");
    } else if (cmd->argc == 2 && !r->c->net->auth->required) {
        /* Redis's words, which clients given a password recognise and
         * ignore (ioredis, node-redis). */
        errorf(r->out, "AUTH <password> called without any password configured for the default "
                       "user. Are you sure your configuration is correct?");
    } else if (credentials_ok(r, cmd->argc == 3 ? &cmd->argv[1] : NULL,
                              &cmd->argv[cmd->argc - 1])) {
        idms_buf_puts(r->out, "+OK\r\n");
    }
    return RUN_DONE;
}

static int cmd_hello(req *r)
{
    const idms_resp_command *cmd = r->cmd;
    int64_t ver = 0;
    if (cmd->argc >= 2) {
        if (!parse_int(&cmd->argv[1], &ver)) {
            errorf(r->out, "Protocol version is not an integer or out of range");
            return RUN_DONE;
        }
        if (ver < 2 || ver > 3) {
            error_code(r->out, "NOPROTO", "unsupported protocol version");
            return RUN_DONE;
        }
    }
    const idms_resp_arg *user = NULL, *pass = NULL, *name = NULL;
    for (size_t j = 2; j < cmd->argc; j++) {
        size_t more = cmd->argc - 1 - j;
        if (is(&cmd->argv[j], "AUTH") && more >= 2) {
            user = &cmd->argv[j + 1];
            pass = &cmd->argv[j + 2];
            j += 2;
        } else if (is(&cmd->argv[j], "SETNAME") && more >= 1) {
            name = &cmd->argv[j + 1];
            if (!name_ok(r, name))
                return RUN_DONE;
            j++;
        } else {
            char b[48];
            errorf(r->out, "Syntax error in HELLO option '%s'", shown(&cmd->argv[j], b));
            return RUN_DONE;
        }
    }
    /* Nothing changes unless every option is valid and AUTH succeeds. */
    if (user != NULL && !credentials_ok(r, user, pass))
        return RUN_DONE;
    if (r->c->net->auth->required && !r->ss->authed) {
        /* Redis 7.2's words (7.0 leaves out "<proto>"). */
        error_code(r->out, "NOAUTH",
                   "HELLO must be called with the client already authenticated, otherwise the "
                   "HELLO <proto> AUTH <user> <pass> option can be used to authenticate the "
                   "client and select the RESP protocol version at the same time");
        idms_auth_failed(r->c->net->auth, r->c, IDMS_AUTH_MISSING);
        return RUN_DONE;
    }
    if (name != NULL)
        set_name(r, name);
    if (ver != 0)
        r->ss->protocol = (int)ver;
    map_header(r, 7);
    bulk_str(r->out, "server");
    bulk_str(r->out, "idmintd");
    bulk_str(r->out, "version");
    bulk_str(r->out, idm_version());
    bulk_str(r->out, "proto");
    integer(r->out, r->ss->protocol);
    bulk_str(r->out, "id");
    integer(r->out, (int64_t)r->ss->id);
    bulk_str(r->out, "mode");
    bulk_str(r->out, "standalone");
    bulk_str(r->out, "role");
    bulk_str(r->out, "master");
    bulk_str(r->out, "modules");
    idms_buf_puts(r->out, "*0\r\n");
    return RUN_DONE;
}

/* --- CLIENT ----------------------------------------------------------------------------- */

static void sock_name(idms_conn *c, bool peer, char *dst, size_t cap)
{
    if (c->listener->is_unix) {
        /* As Redis shows a Unix socket's clients: the path and port 0. */
        snprintf(dst, cap, "%s:0", c->listener->path);
        return;
    }
    uv_tcp_t *tcp = &c->sock.tcp;
    struct sockaddr_storage sa;
    int len = (int)sizeof sa;
    char host[64] = "?";
    int port = 0;
    int rc = peer ? uv_tcp_getpeername(tcp, (struct sockaddr *)&sa, &len)
                  : uv_tcp_getsockname(tcp, (struct sockaddr *)&sa, &len);
    if (rc == 0 && sa.ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&sa;
        uv_ip4_name(in, host, sizeof host);
        port = ntohs(in->sin_port);
    } else if (rc == 0 && sa.ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&sa;
        uv_ip6_name(in6, host, sizeof host);
        port = ntohs(in6->sin6_port);
    }
    snprintf(dst, cap, "%s:%d", host, port);
}

static idms_resp_session *session(idms_conn *c)
{
    idms_resp_session *ss = idms_conn_session(c);
    if (ss->id == 0) {
        ss->id = ++last_client_id;
        ss->protocol = 2;
        ss->start_ms = uv_now(c->net->loop);
        ss->last_ms = ss->start_ms;
    }
    return ss;
}

/* One line of CLIENT INFO / CLIENT LIST, in Redis's field order (the
 * fields idmintd has no use for keep Redis's neutral values). */
static void client_line(idms_buf *text, idms_conn *c)
{
    idms_resp_session *ss = session(c);
    char addr[160], laddr[160];
    sock_name(c, true, addr, sizeof addr);
    sock_name(c, false, laddr, sizeof laddr);
    uv_os_fd_t fd = -1;
    if (uv_fileno(&c->sock.handle, &fd) != 0)
        fd = -1;
    uint64_t now = uv_now(c->net->loop);
    idms_buf_printf(text,
                    "id=%" PRIu64 " addr=%s laddr=%s fd=%d name=%s age=%" PRIu64 " idle=%" PRIu64
                    " flags=%s db=0 sub=0 psub=0 ssub=0 multi=%" PRId64 " watch=0 qbuf=%zu "
                    "qbuf-free=0 argv-mem=0 multi-mem=%zu rbs=%zu rbp=0 obl=0 oll=0 omem=0 "
                    "tot-mem=%zu events=r cmd=%s user=default redir=-1 resp=%d lib-name=%s "
                    "lib-ver=%s\n",
                    ss->id, addr, laddr, (int)fd, ss->name, (now - ss->start_ms) / 1000,
                    (now - ss->last_ms) / 1000, ss->multi.open ? "x" : "N",
                    ss->multi.open ? (int64_t)ss->multi.n : (int64_t)-1, c->in_len,
                    ss->multi.queue.cap, c->in_cap, c->in_cap + ss->multi.queue.cap,
                    ss->last_cmd ? ss->last_cmd : "NULL", ss->protocol, ss->lib_name, ss->lib_ver);
}

static int cmd_client(req *r)
{
    const idms_resp_command *cmd = r->cmd;
    const idms_resp_arg *sub = &cmd->argv[1];
    static const struct {
        const char *name;
        size_t argc;
    } subs[] = {{"id", 2},      {"getname", 2}, {"setname", 3},
                {"setinfo", 4}, {"info", 2},    {"list", 2}};
    size_t k;
    for (k = 0; k < sizeof subs / sizeof subs[0]; k++) {
        if (is(sub, subs[k].name))
            break;
    }
    char b[48];
    if (k == sizeof subs / sizeof subs[0]) {
        errorf(r->out,
               "CLIENT %s is not supported by idmintd (it serves CLIENT ID, GETNAME, SETNAME, "
               "SETINFO, INFO and LIST)",
               shown(sub, b));
        return RUN_DONE;
    }
    if (cmd->argc != subs[k].argc) {
        if (k == 5) /* LIST */
            errorf(r->out,
                   "CLIENT LIST takes no filters in idmintd (TYPE and ID are not supported)");
        else
            errorf(r->out, "wrong number of arguments for 'client|%s' command", subs[k].name);
        return RUN_DONE;
    }
    if (is(sub, "ID")) {
        integer(r->out, (int64_t)r->ss->id);
    } else if (is(sub, "GETNAME")) {
        if (r->ss->name[0] == '\0')
            null_reply(r);
        else
            bulk_str(r->out, r->ss->name);
    } else if (is(sub, "SETNAME")) {
        if (name_ok(r, &cmd->argv[2])) {
            set_name(r, &cmd->argv[2]);
            idms_buf_puts(r->out, "+OK\r\n");
        }
    } else if (is(sub, "SETINFO")) {
        const idms_resp_arg *attr = &cmd->argv[2], *val = &cmd->argv[3];
        char *dst = is(attr, "LIB-NAME")  ? r->ss->lib_name
                    : is(attr, "LIB-VER") ? r->ss->lib_ver
                                          : NULL;
        if (dst == NULL) {
            errorf(r->out, "Unrecognized option '%s'", shown(attr, b));
        } else if (!printable_word(val)) {
            errorf(r->out, "%s cannot contain spaces, newlines or special characters.",
                   dst == r->ss->lib_name ? "lib-name" : "lib-ver");
        } else if (val->len > IDMS_RESP_LIB_MAX) {
            errorf(r->out, "%s longer than %d bytes",
                   dst == r->ss->lib_name ? "lib-name" : "lib-ver", IDMS_RESP_LIB_MAX);
        } else {
            memcpy(dst, val->ptr, val->len);
            dst[val->len] = '\0';
            idms_buf_puts(r->out, "+OK\r\n");
        }
    } else {
        idms_buf text;
        idms_buf_init(&text);
        if (is(sub, "INFO")) {
            client_line(&text, r->c);
        } else {
            for (idms_conn *c = r->c->net->conns; c != NULL; c = c->next) {
                if (c->proto == &idms_resp_proto)
                    client_line(&text, c);
            }
        }
        text_reply_buf(r, &text);
    }
    return RUN_DONE;
}

/* --- INFO, CONFIG --------------------------------------------------------------------------- */

/* The whole server's requests answered, every front end and route
 * (core/counters.h): INFO's total_commands_processed. */
static uint64_t commands_total(const idms_metrics *m)
{
    uint64_t n = 0;
    for (int route = 0; route < IDMS_ROUTE_COUNT; route++) {
        for (int cls = 0; cls < 6; cls++)
            n += m->requests[route][cls];
    }
    return n;
}

/* instantaneous_ops_per_sec without a timer of its own: the readings of
 * commands_total that INFO took (at most one per OPS_SPACING_MS, the
 * last OPS_READINGS kept); the rate is taken from the newest reading at
 * least OPS_WINDOW_MS old, or else the oldest at least OPS_SPACING_MS
 * old, or 0 (the first reading). Read every second (redis-cli --stat),
 * that is the last second's rate, as Redis's (its last 1.6 s); read less
 * often, the rate since the previous reading. One server per process,
 * loop thread only. */
#define OPS_READINGS   16
#define OPS_SPACING_MS 100
#define OPS_WINDOW_MS  1000
static struct {
    uint64_t ms, total;
} ops_readings[OPS_READINGS];
static size_t ops_n, ops_newest;

static uint64_t ops_per_sec(uint64_t now_ms, uint64_t total)
{
    size_t pick = OPS_READINGS;
    for (size_t i = 0; i < ops_n; i++) {
        size_t k = (ops_newest + OPS_READINGS - i) % OPS_READINGS;
        uint64_t age = now_ms - ops_readings[k].ms;
        if (age >= OPS_SPACING_MS)
            pick = k;
        if (age >= OPS_WINDOW_MS)
            break;
    }
    uint64_t rate = 0;
    if (pick != OPS_READINGS && total >= ops_readings[pick].total)
        rate = (total - ops_readings[pick].total) * 1000 / (now_ms - ops_readings[pick].ms);
    if (ops_n == 0 || now_ms - ops_readings[ops_newest].ms >= OPS_SPACING_MS) {
        ops_newest = ops_n == 0 ? 0 : (ops_newest + 1) % OPS_READINGS;
        ops_readings[ops_newest].ms = now_ms;
        ops_readings[ops_newest].total = total;
        if (ops_n < OPS_READINGS)
            ops_n++;
    }
    return rate;
}

/* A byte count as Redis's bytesToHuman writes it: 1023B, 1.50K, 12.25M. */
static void human_bytes(char *dst, size_t cap, uint64_t n)
{
    static const char units[] = "KMGTP";
    if (n < 1024) {
        snprintf(dst, cap, "%" PRIu64 "B", n);
        return;
    }
    double v = (double)n / 1024;
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof units - 1) {
        v /= 1024;
        u++;
    }
    snprintf(dst, cap, "%.2f%c", v, units[u]);
}

/* The connection's local port (Redis's tcp_port: the port the client
 * came to), 0 on a Unix socket. */
static int local_port(idms_conn *c)
{
    if (c->listener->is_unix)
        return 0;
    struct sockaddr_storage sa;
    int len = (int)sizeof sa;
    if (uv_tcp_getsockname(&c->sock.tcp, (struct sockaddr *)&sa, &len) != 0)
        return 0;
    if (sa.ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)&sa)->sin_port);
    if (sa.ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)&sa)->sin6_port);
    return 0;
}

static void info_server(req *r, idms_buf *text)
{
    const idms_services *s = r->s;
    uv_utsname_t u;
    if (uv_os_uname(&u) != 0) {
        memset(&u, 0, sizeof u);
        snprintf(u.sysname, sizeof u.sysname, "?");
    }
    int64_t up = (int64_t)time(NULL) - s->start_ms / 1000;
    if (up < 0)
        up = 0;
    idms_buf_printf(text,
                    "redis_version:7.2.0\r\nserver_name:idmintd\r\nidmint_version:%s\r\n"
                    "redis_mode:standalone\r\nos:%s %s %s\r\narch_bits:%d\r\nprocess_id:%d\r\n"
                    "tcp_port:%d\r\nuptime_in_seconds:%" PRId64 "\r\nuptime_in_days:%" PRId64
                    "\r\ntcp_port_http:%s\r\ntcp_port_resp:%s\r\n",
                    idm_version(), u.sysname, u.release, u.machine, (int)(sizeof(void *) * 8),
                    (int)uv_os_getpid(), local_port(r->c), up, up / 86400, s->opt->http,
                    s->opt->resp);
}

/* connected_clients: the open connections of every front end;
 * blocked_clients: the requests parked now (the ceiling, a segment tag,
 * the next time unit), Redis's clients blocked on a key; maxclients:
 * each port's limit. */
static void info_clients(req *r, idms_buf *text)
{
    const idms_metrics *m = r->s->metrics;
    idms_buf_printf(text,
                    "connected_clients:%" PRIu64 "\r\nmaxclients:%" PRIu64
                    "\r\nblocked_clients:%" PRIu64 "\r\n",
                    m->connections_open, r->c->net->max_conns, m->parked);
}

/* used_memory: what the allocator has handed out and not had back
 * (glibc's mallinfo2: the arenas' bytes in use and the mmap'd blocks);
 * used_memory_rss: the resident set. */
static void info_memory(req *r, idms_buf *text)
{
    (void)r;
    size_t rss = 0;
    if (uv_resident_set_memory(&rss) != 0)
        rss = 0;
    uint64_t used = rss;
    const char *allocator = "libc";
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = mallinfo2();
    if (mi.uordblks + mi.hblkhd > 0)
        used = mi.uordblks + mi.hblkhd;
    allocator = "glibc";
#endif
    char used_h[32], rss_h[32];
    human_bytes(used_h, sizeof used_h, used);
    human_bytes(rss_h, sizeof rss_h, rss);
    idms_buf_printf(text,
                    "used_memory:%" PRIu64 "\r\nused_memory_human:%s\r\nused_memory_rss:%zu\r\n"
                    "used_memory_rss_human:%s\r\nmem_allocator:%s\r\n",
                    used, used_h, rss, rss_h, allocator);
}

/* Nothing is loaded or saved in the background: idmintd serves from its
 * start (ioredis's ready check waits while loading is 1). */
static void info_persistence(req *r, idms_buf *text)
{
    (void)r;
    idms_buf_puts(text, "loading:0\r\nasync_loading:0\r\nrdb_bgsave_in_progress:0\r\n"
                        "aof_enabled:0\r\naof_rewrite_in_progress:0\r\n");
}

static void info_stats(req *r, idms_buf *text)
{
    const idms_metrics *m = r->s->metrics;
    uint64_t minted = 0;
    for (int f = 0; f < IDMX_FMT_COUNT; f++)
        minted += m->minted[f];
    uint64_t total = commands_total(m);
    idms_buf_printf(text,
                    "total_connections_received:%" PRIu64 "\r\ntotal_commands_processed:%" PRIu64
                    "\r\ninstantaneous_ops_per_sec:%" PRIu64 "\r\nrejected_connections:%" PRIu64
                    "\r\nids_minted:%" PRIu64 "\r\nhlc_stamps:%" PRIu64
                    "\r\nhlc_offset_refusals:%" PRIu64 "\r\n",
                    m->connections_total, total, ops_per_sec(uv_now(r->c->net->loop), total),
                    m->connections_rejected, minted, m->hlc_stamps, m->hlc_offset_refusals);
}

static void info_replication(req *r, idms_buf *text)
{
    (void)r;
    idms_buf_puts(text, "role:master\r\nconnected_slaves:0\r\n");
}

static void info_cpu(req *r, idms_buf *text)
{
    (void)r;
    uv_rusage_t ru;
    if (uv_getrusage(&ru) != 0)
        memset(&ru, 0, sizeof ru);
    idms_buf_printf(text, "used_cpu_sys:%ld.%06ld\r\nused_cpu_user:%ld.%06ld\r\n",
                    (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec, (long)ru.ru_utime.tv_sec,
                    (long)ru.ru_utime.tv_usec);
}

/* idmintd's own: the snowflake generator and readiness. */
static void info_generator(req *r, idms_buf *text)
{
    const idms_services *s = r->s;
    int64_t now;
    const idms_pauses *p = idms_status_poll(s->status, &now);
    bool ready = p->cause == IDMS_PAUSE_NONE;
    idms_buf_printf(
        text,
        "node:%" PRId64 "\r\nnode_coord:%s\r\nnode_state:%s\r\nnode_generation:%s"
        "\r\nnode_lease_ms_left:%" PRId64 "\r\nlayout:%s\r\nmax_rewind_ms:%" PRId64
        "\r\nmax_offset_ms:%" PRId64 "\r\npause_cause:%s\r\npause_ms:%" PRId64 "\r\nready:%d\r\n",
        s->node->held ? (int64_t)s->node->node : -1, idms_node_coord_name(s->node),
        idms_node_state_name(s->node),
        s->node->coord == IDMS_NODE_COORD && s->node->held ? s->node->generation : "",
        s->node->coord == IDMS_NODE_COORD ? idms_lease_ms_left(&s->node->lease) : (int64_t)-1,
        s->layout_name, s->opt->max_rewind_ms, s->opt->max_offset_ms,
        idms_pause_cause_name(p->cause), idms_pauses_current_ms(p, now), ready ? 1 : 0);
}

/* The segment tags this server has loaded (DBSIZE's count), in Redis's
 * db0 line; no line while there are none, as Redis leaves out an empty
 * database. */
static uint64_t tags_live(const req *r)
{
    const idms_segments *g = r->s->segments;
    return g != NULL && g->enabled ? (uint64_t)g->live : 0;
}

static void info_keyspace(req *r, idms_buf *text)
{
    uint64_t keys = tags_live(r);
    if (keys > 0)
        idms_buf_printf(text, "db0:keys=%" PRIu64 ",expires=0,avg_ttl=0\r\n", keys);
}

/* Redis's sections in its order, with idmintd's own before the keyspace.
 * Every one is in the default set (idmintd has none of Redis's costly
 * ones: commandstats, latencystats). */
static const struct {
    const char *name, *title;
    void (*fn)(req *r, idms_buf *text);
} info_sections[] = {
    {"server", "Server", info_server},
    {"clients", "Clients", info_clients},
    {"memory", "Memory", info_memory},
    {"persistence", "Persistence", info_persistence},
    {"stats", "Stats", info_stats},
    {"replication", "Replication", info_replication},
    {"cpu", "CPU", info_cpu},
    {"generator", "Generator", info_generator},
    {"keyspace", "Keyspace", info_keyspace},
};
#define N_INFO_SECTIONS (sizeof info_sections / sizeof info_sections[0])

/* INFO [section ...]: the sections named (any case), or every one without
 * a name or with all, everything or default; an unknown name adds
 * nothing (Redis answers an empty string for it). Sections are separated
 * by an empty line, as Redis's. */
static int cmd_info(req *r)
{
    const idms_resp_command *cmd = r->cmd;
    bool every = cmd->argc == 1;
    for (size_t j = 1; j < cmd->argc; j++) {
        if (is(&cmd->argv[j], "all") || is(&cmd->argv[j], "everything") ||
            is(&cmd->argv[j], "default"))
            every = true;
    }
    idms_buf text;
    idms_buf_init(&text);
    size_t shown_n = 0;
    for (size_t k = 0; k < N_INFO_SECTIONS; k++) {
        bool want = every;
        for (size_t j = 1; j < cmd->argc && !want; j++)
            want = is(&cmd->argv[j], info_sections[k].name);
        if (!want)
            continue;
        idms_buf_printf(&text, "%s# %s\r\n", shown_n++ ? "\r\n" : "", info_sections[k].title);
        info_sections[k].fn(r, &text);
    }
    text_reply_buf(r, &text);
    return RUN_DONE;
}

/* DBSIZE: the segment tags this server has loaded (see above). */
static int cmd_dbsize(req *r)
{
    integer(r->out, (int64_t)tags_live(r));
    return RUN_DONE;
}

static int cmd_config(req *r)
{
    const idms_resp_command *cmd = r->cmd;
    char b[48];
    if (!is(&cmd->argv[1], "GET")) {
        errorf(r->out,
               "CONFIG %s is not supported by idmintd (it has no Redis settings; CONFIG GET "
               "answers each parameter with an empty value)",
               shown(&cmd->argv[1], b));
        return RUN_DONE;
    }
    if (cmd->argc < 3) {
        errorf(r->out, "wrong number of arguments for 'config|get' command");
        return RUN_DONE;
    }
    /* redis-benchmark asks CONFIG GET save and appendonly before it starts
     * (any reply will do): each parameter with an empty value, as a Redis
     * without persistence answers, but databases. */
    map_header(r, cmd->argc - 2);
    for (size_t k = 2; k < cmd->argc; k++) {
        bulk(r->out, cmd->argv[k].ptr, cmd->argv[k].len);
        /* databases: 1 (database 0 only). redis-cli --stat sums the keys
         * of db0 up to this count. */
        if (is(&cmd->argv[k], "databases"))
            bulk_str(r->out, "1");
        else
            idms_buf_puts(r->out, "$0\r\n\r\n");
    }
    return RUN_DONE;
}

/* --- MULTI, EXEC, DISCARD, WATCH, UNWATCH ------------------------------------------------ */

static int dispatch(req *r);
static void count(idms_conn *c, int status);

/* The queue holds each command as its argument count, each argument's
 * length, then the arguments' bytes (size_t words, copied with memcpy:
 * the queue has no alignment). */
static size_t queued_size(const idms_resp_command *cmd)
{
    size_t n = sizeof(size_t) * (1 + cmd->argc);
    for (size_t i = 0; i < cmd->argc; i++)
        n += cmd->argv[i].len;
    return n;
}

/* The command at p of the queue, its arguments pointing into the queue;
 * returns the bytes it takes there. */
static size_t unqueue(const char *p, idms_resp_command *cmd)
{
    size_t argc, off = sizeof argc;
    memcpy(&argc, p, sizeof argc);
    const char *lens = p + off;
    off += argc * sizeof(size_t);
    for (size_t i = 0; i < argc; i++) {
        size_t len;
        memcpy(&len, lens + i * sizeof len, sizeof len);
        cmd->argv[i].ptr = p + off;
        cmd->argv[i].len = len;
        off += len;
    }
    cmd->argc = argc;
    return off;
}

/* A command refused while queueing (unknown, not allowed, the wrong number
 * of arguments, past the queue's bounds): EXEC will abort, so the queue
 * is dropped now, as nothing of it will run. */
static void multi_flag(idms_resp_multi *m)
{
    if (!m->open)
        return;
    idms_buf_free(&m->queue);
    m->dirty = true;
}

/* Queues r's command (checked: known, allowed, its arity) and answers
 * +QUEUED, or refuses it past the bounds. */
static int multi_queue(req *r)
{
    idms_resp_multi *m = &r->ss->multi;
    if (m->dirty) {
        /* EXEC will abort: answered as Redis does, kept nowhere. */
        idms_buf_puts(r->out, "+QUEUED\r\n");
        return RUN_QUEUED;
    }
    if (m->n >= IDMS_RESP_MULTI_MAX) {
        errorf(r->out, "transaction too large: at most %d commands can be queued (MULTI ... EXEC)",
               IDMS_RESP_MULTI_MAX);
        multi_flag(m);
        return RUN_DONE;
    }
    /* The share shrinks as connections open: a queue may be past it now.
     * (The bound is on the queue's bytes; its buffer grows by doubling.) */
    size_t need = queued_size(r->cmd), bound = idms_conn_share(r->c) / 4;
    if (m->queue.len > bound || need > bound - m->queue.len) {
        errorf(r->out,
               "transaction too large: the queued commands would take more than %zu bytes (a "
               "quarter of this connection's share of --max-buffered)",
               bound);
        multi_flag(m);
        return RUN_DONE;
    }
    size_t argc = r->cmd->argc;
    idms_buf_append(&m->queue, &argc, sizeof argc);
    for (size_t i = 0; i < argc; i++)
        idms_buf_append(&m->queue, &r->cmd->argv[i].len, sizeof(size_t));
    for (size_t i = 0; i < argc; i++)
        idms_buf_append(&m->queue, r->cmd->argv[i].ptr, r->cmd->argv[i].len);
    if (m->queue.failed) {
        errorf(r->out, "out of memory");
        multi_flag(m);
        return RUN_DONE;
    }
    m->n++;
    idms_buf_puts(r->out, "+QUEUED\r\n");
    return RUN_QUEUED;
}

static int cmd_multi(req *r)
{
    idms_resp_multi *m = &r->ss->multi;
    if (m->open) {
        errorf(r->out, "MULTI calls can not be nested");
        return RUN_DONE;
    }
    m->open = true;
    idms_buf_puts(r->out, "+OK\r\n");
    return RUN_DONE;
}

static int cmd_discard(req *r)
{
    if (!r->ss->multi.open) {
        errorf(r->out, "DISCARD without MULTI");
        return RUN_DONE;
    }
    multi_reset(&r->ss->multi);
    idms_buf_puts(r->out, "+OK\r\n");
    return RUN_DONE;
}

/* A command of EXEC's queue completed: counted (route="resp", as on its
 * own), and EXEC goes on with the next. before: where its reply began. */
static void exec_done_one(req *r, size_t before)
{
    idms_resp_multi *m = &r->ss->multi;
    idms_resp_command cmd;
    bool error = r->out->len > before && r->out->data[before] == '-';
    count(r->c, error ? 400 : 200);
    m->at += unqueue(m->queue.data + m->at, &cmd);
    m->next++;
}

/* Runs EXEC's queue from m->next: each command as it runs on its own.
 * One that parks parks EXEC (its record in held, as on its own); a full
 * batch of replies holds EXEC (IDMS_RESP_HELD_EXEC) until the next turn;
 * after the last, the transaction ends. */
static int exec_go(req *r)
{
    idms_resp_multi *m = &r->ss->multi;
    while (m->next < m->n) {
        if (r->out->len >= idms_conn_batch(r->c)) {
            r->c->more = true;
            r->ss->held.kind = IDMS_RESP_HELD_EXEC;
            return RUN_PARKED;
        }
        idms_resp_command cmd;
        unqueue(m->queue.data + m->at, &cmd);
        req inner = *r;
        inner.cmd = &cmd;
        size_t before = r->out->len;
        r->ss->held.kind = IDMS_RESP_HELD_NONE;
        int rc = dispatch(&inner);
        if (rc == RUN_PARKED) {
            /* A command that keeps no record (none does today: a segment
             * tag too long to hold is refused before it could park) runs
             * again from the queue. */
            if (r->ss->held.kind == IDMS_RESP_HELD_NONE)
                r->ss->held.kind = IDMS_RESP_HELD_EXEC;
            return RUN_PARKED;
        }
        if (rc == RUN_CUT) {
            count(r->c, 503);
            multi_reset(m);
            return RUN_CUT;
        }
        exec_done_one(r, before);
    }
    multi_reset(m);
    return RUN_DONE;
}

/* EXEC: aborts after a refused command (Redis's EXECABORT), else one
 * array of the queued commands' replies, in order. */
static int cmd_exec(req *r)
{
    idms_resp_multi *m = &r->ss->multi;
    if (!m->open) {
        errorf(r->out, "EXEC without MULTI");
        return RUN_DONE;
    }
    if (m->dirty) {
        multi_reset(m);
        error_code(r->out, "EXECABORT", "Transaction discarded because of previous errors.");
        return RUN_DONE;
    }
    m->open = false;
    m->running = true;
    idms_buf_printf(r->out, "*%zu\r\n", m->n);
    return exec_go(r);
}

/* WATCH: refused (see the top of this file); inside MULTI, Redis's own
 * error comes first. UNWATCH: nothing is watched, so +OK. */
static int cmd_watch(req *r)
{
    if (r->ss->multi.open)
        errorf(r->out, "WATCH inside MULTI is not allowed");
    else
        errorf(r->out,
               "WATCH is not supported by idmintd (a segment tag changes with every INCR of "
               "every server, so nothing watched would stay unchanged; MULTI ... EXEC runs "
               "its commands in order without it)");
    return RUN_DONE;
}

static int cmd_unwatch(req *r)
{
    idms_buf_puts(r->out, "+OK\r\n");
    return RUN_DONE;
}

/* --- COMMAND ---------------------------------------------------------------------------------- */

static int cmd_command(req *r);

static const command commands[] = {
    {"next", 2, 6, "NEXT format [count] [prefix] [AFTER id]", "write", "@write @fast", "idmint",
     "Mints IDs: a bulk string without a count, an array with one", cmd_next},
    {"hlc", 1, 2, "HLC [stamp]", "write fast", "@write @fast", "idmint",
     "A new hybrid logical clock stamp, or one after the stamp given (merged)", cmd_hlc},
    {"obfuscate", 2, 3, "OBFUSCATE id [prefix]", "readonly fast", "@read @fast", "idmint",
     "The public (obfuscated) form of a decimal 64-bit ID (--key-file)", cmd_obfuscate},
    {"reveal", 2, 2, "REVEAL token", "readonly fast", "@read @fast", "idmint",
     "The decimal ID an obfuscated ID stands for (--key-file)", cmd_reveal},
    {"incr", 2, 2, "INCR tag", "write fast", "@write @fast", "idmint",
     "The segment tag's next ID (--segments)", cmd_incr},
    {"incrby", 3, 3, "INCRBY tag n", "write fast", "@write @fast", "idmint",
     "Reserves n consecutive IDs of the tag and returns the last (--segments)", cmd_incrby},
    {"dbsize", 1, 1, "DBSIZE", "readonly fast", "@keyspace @read @fast", "server",
     "The segment tags this server has loaded (--segments)", cmd_dbsize},
    {"multi", 1, 1, "MULTI", "noscript loading stale fast allow_busy", "@fast @transaction",
     "transactions", "Starts a transaction: the commands after it are queued", cmd_multi},
    {"exec", 1, 1, "EXEC", "noscript loading stale skip_slowlog", "@slow @transaction",
     "transactions", "Runs the queued commands, in order: an array of their replies", cmd_exec},
    {"discard", 1, 1, "DISCARD", "noscript loading stale fast allow_busy", "@fast @transaction",
     "transactions", "Drops the queued commands", cmd_discard},
    {"watch", 2, 0, "WATCH key [key ...]", "noscript loading stale fast allow_busy",
     "@fast @transaction", "transactions", "Refused: nothing here can be watched", cmd_watch},
    {"unwatch", 1, 1, "UNWATCH", "noscript loading stale fast allow_busy", "@fast @transaction",
     "transactions", "Nothing is watched: +OK", cmd_unwatch},
    {"ping", 1, 2, "PING [message]", "fast", "@fast @connection", "connection",
     "Returns PONG, or the message", cmd_ping},
    {"echo", 2, 2, "ECHO message", "fast", "@fast @connection", "connection", "Returns the message",
     cmd_echo},
    {"info", 1, 0, "INFO [section ...]", "loading stale", "@slow", "server",
     "Version, generator settings, readiness and counters", cmd_info},
    {"hello", 1, 0, "HELLO [2|3] [AUTH user pass] [SETNAME name]",
     "noscript loading stale fast no_auth", "@fast @connection", "connection",
     "Chooses the protocol (2 or 3) and describes the server", cmd_hello},
    {"auth", 2, 0, "AUTH [user] pass", "noscript loading stale fast no_auth", "@fast @connection",
     "connection", "Gives the token of --auth-token-file (without one, any password)", cmd_auth},
    {"client", 2, 0, "CLIENT ID|GETNAME|SETNAME|SETINFO|INFO|LIST", "noscript loading stale",
     "@slow @connection", "connection", "The connection's ID, name and library", cmd_client},
    {"command", 1, 0, "COMMAND [COUNT|DOCS|INFO|LIST]", "loading stale", "@slow @connection",
     "server", "The commands idmintd serves", cmd_command},
    {"config", 2, 0, "CONFIG GET parameter [parameter ...]", "admin noscript loading stale",
     "@admin @slow", "server", "Answers each parameter with an empty value", cmd_config},
    {"select", 2, 2, "SELECT 0", "loading stale fast", "@fast @connection", "connection",
     "Database 0 is the only one", cmd_select},
    {"reset", 1, 1, "RESET", "noscript loading stale fast no_auth", "@fast @connection",
     "connection", "Back to RESP2 and no client name", cmd_reset},
    {"quit", 1, 0, "QUIT", "noscript loading stale fast no_auth", "@fast @connection", "connection",
     "Replies +OK and closes the connection", cmd_quit},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static const command *find_command(const idms_resp_arg *a)
{
    for (size_t k = 0; k < N_COMMANDS; k++) {
        if (is(a, commands[k].name))
            return &commands[k];
    }
    return NULL;
}

static size_t count_words(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p;) {
        while (*p == ' ')
            p++;
        if (*p == '\0')
            break;
        n++;
        while (*p && *p != ' ')
            p++;
    }
    return n;
}

static void put_words(const req *r, const char *s, bool status)
{
    set_header(r, count_words(s));
    for (const char *p = s; *p;) {
        while (*p == ' ')
            p++;
        const char *start = p;
        while (*p && *p != ' ')
            p++;
        if (p > start) {
            if (status)
                idms_buf_printf(r->out, "+%.*s\r\n", (int)(p - start), start);
            else
                bulk(r->out, start, (size_t)(p - start));
        }
    }
}

/* COMMAND INFO's entry: Redis 7's ten fields (no keys, tips or
 * subcommands). */
static void command_entry(const req *r, const command *k)
{
    int64_t arity = k->max_argc == k->min_argc ? (int64_t)k->min_argc : -(int64_t)k->min_argc;
    idms_buf_puts(r->out, "*10\r\n");
    bulk_str(r->out, k->name);
    integer(r->out, arity);
    put_words(r, k->flags, true);
    idms_buf_puts(r->out, ":0\r\n:0\r\n:0\r\n");
    put_words(r, k->acl, true);
    idms_buf_puts(r->out, "*0\r\n*0\r\n*0\r\n");
}

static void command_docs(const req *r, const command *k)
{
    bulk_str(r->out, k->name);
    map_header(r, 4);
    bulk_str(r->out, "summary");
    bulk_str(r->out, k->summary);
    bulk_str(r->out, "since");
    bulk_str(r->out, "0.1.0");
    bulk_str(r->out, "group");
    bulk_str(r->out, k->group);
    bulk_str(r->out, "syntax");
    bulk_str(r->out, k->usage);
}

static int cmd_command(req *r)
{
    const idms_resp_command *cmd = r->cmd;
    if (cmd->argc == 1) {
        idms_buf_printf(r->out, "*%zu\r\n", N_COMMANDS);
        for (size_t k = 0; k < N_COMMANDS; k++)
            command_entry(r, &commands[k]);
        return RUN_DONE;
    }
    const idms_resp_arg *sub = &cmd->argv[1];
    if (is(sub, "COUNT") || is(sub, "LIST")) {
        if (cmd->argc != 2) {
            errorf(r->out, "wrong number of arguments for 'command|%s' command",
                   is(sub, "COUNT") ? "count" : "list");
        } else if (is(sub, "COUNT")) {
            integer(r->out, (int64_t)N_COMMANDS);
        } else {
            idms_buf_printf(r->out, "*%zu\r\n", N_COMMANDS);
            for (size_t k = 0; k < N_COMMANDS; k++)
                bulk_str(r->out, commands[k].name);
        }
    } else if (is(sub, "INFO")) {
        /* Every command without names; a null for each unknown name. */
        size_t n = cmd->argc == 2 ? N_COMMANDS : cmd->argc - 2;
        idms_buf_printf(r->out, "*%zu\r\n", n);
        for (size_t j = 0; j < n; j++) {
            const command *k = cmd->argc == 2 ? &commands[j] : find_command(&cmd->argv[j + 2]);
            if (k != NULL)
                command_entry(r, k);
            else
                null_reply(r);
        }
    } else if (is(sub, "DOCS")) {
        /* Every command without names; unknown names are left out. */
        size_t n = 0;
        for (size_t j = 2; j < cmd->argc; j++)
            n += find_command(&cmd->argv[j]) != NULL;
        if (cmd->argc == 2)
            n = N_COMMANDS;
        map_header(r, n);
        if (cmd->argc == 2) {
            for (size_t k = 0; k < N_COMMANDS; k++)
                command_docs(r, &commands[k]);
        }
        for (size_t j = 2; j < cmd->argc; j++) {
            const command *k = find_command(&cmd->argv[j]);
            if (k != NULL)
                command_docs(r, k);
        }
    } else {
        char b[48];
        errorf(r->out,
               "unknown subcommand '%s' for 'command' (idmintd serves COMMAND, COMMAND COUNT, "
               "DOCS, INFO and LIST)",
               shown(sub, b));
    }
    return RUN_DONE;
}

/* --- the loop over the input ----------------------------------------------------------------- */

/* Redis's cross-protocol guard: "POST" or "Host:" as a command (Redis
 * checks these two), or any HTTP request line ("GET / HTTP/1.1"). */
static bool looks_like_http(const idms_resp_command *cmd)
{
    if (is(&cmd->argv[0], "POST") || is(&cmd->argv[0], "HOST:"))
        return true;
    const idms_resp_arg *v = &cmd->argv[cmd->argc - 1];
    return cmd->argc == 3 && v->len >= 6 && memcmp(v->ptr, "HTTP/", 5) == 0;
}

/* Counts a command under route="resp". */
static void count(idms_conn *c, int status)
{
    idms_metrics_count_command(idms_conn_services(c)->metrics, c->listener->slot, status);
}

static void guard(idms_conn *c)
{
    idms_net *s = c->net;
    s->metrics->protocol_errors++;
    count(c, 400);
    int64_t now_s = (int64_t)(uv_now(s->loop) / 1000);
    if (now_s != guard_logged_s) {
        guard_logged_s = now_s;
        idms_log(IDMS_LOG_WARN,
                 "closing a RESP connection that sent an HTTP request (POST, Host: or a request "
                 "line): possibly a cross-protocol attack; nothing it sent was run");
    }
}

static void unknown_command(idms_buf *out, const idms_resp_arg *a)
{
    char names[320], b[48];
    size_t used = 0;
    for (size_t k = 0; k < N_COMMANDS; k++) {
        int n =
            snprintf(names + used, sizeof names - used, "%s%s", k ? ", " : "", commands[k].name);
        if (n < 0 || (size_t)n >= sizeof names - used)
            break;
        for (int i = 0; i < n; i++) {
            char ch = names[used + (size_t)i];
            if (ch >= 'a' && ch <= 'z')
                names[used + (size_t)i] = (char)(ch - 'a' + 'A');
        }
        used += (size_t)n;
    }
    errorf(out, "unknown command '%s' (idmintd serves %s)", shown(a, b), names);
}

/* Whether a word is one of a space-separated list's (COMMAND's flags). */
static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(list, word); p != NULL; p = strstr(p + 1, word)) {
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    }
    return false;
}

/* Whether the connection may run k (NULL: an unknown command): always
 * without --auth-token-file; with it, once the token was given, and
 * before that only the commands whose flags say no_auth, as Redis's own
 * table does (the same flags COMMAND INFO reports). */
static bool allowed(const req *r, const command *k)
{
    return !r->c->net->auth->required || r->ss->authed ||
           (k != NULL && has_word(k->flags, "no_auth"));
}

/* Whether k runs at once inside MULTI instead of being queued: Redis's
 * list (processCommand). */
static bool runs_in_multi(const command *k)
{
    return k->run == cmd_exec || k->run == cmd_discard || k->run == cmd_multi ||
           k->run == cmd_watch || k->run == cmd_quit || k->run == cmd_reset;
}

/* Runs (or, inside MULTI, queues) r's command; RUN_* as its handler says.
 * A command refused before it runs - not allowed, unknown, the wrong
 * number of arguments - makes a transaction abort, as Redis's
 * rejectCommand does. */
static int dispatch(req *r)
{
    const idms_resp_command *cmd = r->cmd;
    const command *k = find_command(&cmd->argv[0]);
    r->ss->last_ms = uv_now(r->c->net->loop);
    /* Before the name or the arguments are looked at: a connection
     * without the token learns nothing but that one is needed. */
    if (!allowed(r, k)) {
        error_code(r->out, "NOAUTH", "Authentication required.");
        idms_auth_failed(r->c->net->auth, r->c, IDMS_AUTH_MISSING);
        multi_flag(&r->ss->multi);
        return RUN_DONE;
    }
    if (k == NULL) {
        unknown_command(r->out, &cmd->argv[0]);
        multi_flag(&r->ss->multi);
        return RUN_DONE;
    }
    r->ss->last_cmd = k->name;
    if (cmd->argc < k->min_argc || (k->max_argc != 0 && cmd->argc > k->max_argc)) {
        errorf(r->out, "wrong number of arguments for '%s' command (%s)", k->name, k->usage);
        multi_flag(&r->ss->multi);
        return RUN_DONE;
    }
    if (r->ss->multi.open && !runs_in_multi(k))
        return multi_queue(r);
    return k->run(r);
}

static int run(idms_conn *c, const idms_resp_command *cmd, idms_buf *out)
{
    req r = {c, idms_conn_services(c), session(c), cmd, out};
    return dispatch(&r);
}

/* Whether buf[0..len) starts with another command (complete or malformed). */
static bool another_command(idms_conn *c, const char *buf, size_t len)
{
    (void)c;
    idms_resp_command cmd;
    const char *why;
    return len > 0 && idms_resp_parse(buf, len, &cmd, &why) != IDMS_RESP_INCOMPLETE;
}

/* The command held at the head of the buffer goes on from its record
 * (resp_session.h), not parsed again. */
static int resume_held(idms_conn *c, idms_buf *out)
{
    idms_resp_session *ss = session(c);
    req r = {c, idms_conn_services(c), ss, NULL, out};
    idms_resp_held *h = &ss->held;
    if (h->kind == IDMS_RESP_HELD_EXEC) {
        h->kind = IDMS_RESP_HELD_NONE;
        return exec_go(&r);
    }
    size_t before = out->len;
    int rc;
    switch (h->kind) {
    case IDMS_RESP_HELD_NEXT:
        rc = go_next(&r, h, NULL);
        break;
    case IDMS_RESP_HELD_HLC:
        rc = go_hlc(&r, h);
        break;
    default:
        rc = go_segment(&r, h, h->text, h->text_len);
        break;
    }
    if (!ss->multi.running || rc == RUN_PARKED)
        return rc;
    /* A command of EXEC's queue completed: EXEC goes on after it. */
    if (rc == RUN_CUT) {
        count(c, 503);
        multi_reset(&ss->multi);
        return RUN_CUT;
    }
    h->kind = IDMS_RESP_HELD_NONE;
    exec_done_one(&r, before);
    return exec_go(&r);
}

static ptrdiff_t resp_feed(idms_conn *c, const char *buf, size_t len, idms_buf *out)
{
    idms_net *s = c->net;
    idms_resp_held *held = &((idms_resp_session *)idms_conn_session(c))->held;
    size_t used = 0;
    while (used < len) {
        if (out->len >= idms_conn_batch(c)) {
            c->more = true;
            break;
        }
        size_t before = out->len;
        ptrdiff_t n;
        int rc;
        if (used == 0 && held->kind != IDMS_RESP_HELD_NONE) {
            /* A command held (it parked, or sent a part): it is still at
             * the head of the buffer, and goes on from its record. */
            n = (ptrdiff_t)held->len;
            rc = resume_held(c, out);
        } else {
            idms_resp_command cmd;
            const char *why = "Protocol error";
            n = idms_resp_parse(buf + used, len - used, &cmd, &why);
            if (n == IDMS_RESP_INCOMPLETE)
                break;
            if (n < 0) {
                s->metrics->protocol_errors++;
                error_code(out, "ERR", why);
                count(c, 400);
                return -1;
            }
            if (cmd.argc == 0) {
                used += (size_t)n;
                continue;
            }
            if (looks_like_http(&cmd)) {
                guard(c);
                return -1;
            }
            rc = run(c, &cmd, out);
        }
        if (rc == RUN_PARKED) {
            /* Not consumed: held (hold), and gone on with on resume. */
            held->len = (size_t)n;
            break;
        }
        held->kind = IDMS_RESP_HELD_NONE;
        if (rc == RUN_CUT) {
            count(c, 503);
            return -1;
        }
        used += (size_t)n;
        bool error = out->len > before && out->data[before] == '-';
        if (rc != RUN_QUEUED)
            count(c, error ? 400 : 200);
        if (idms_conn_close_after(c, rc == RUN_CLOSE, another_command, buf + used, len - used))
            return (ptrdiff_t)used;
    }
    return (ptrdiff_t)used;
}

/* A request not complete within --header-timeout of its first byte. */
static void resp_too_slow(idms_buf *out, uint32_t ms)
{
    idms_buf_printf(out, "-ERR Protocol error: request incomplete after %" PRIu32 " ms\r\n", ms);
}

/* The connection is closed: a transaction's queue goes with it. */
static void resp_session_free(idms_conn *c)
{
    multi_reset(&((idms_resp_session *)idms_conn_session(c))->multi);
}

const idms_proto idms_resp_proto = {
    "resp",
    resp_feed,
    "-ERR max number of clients reached\r\n",
    "-ERR Protocol error: request too large\r\n",
    resp_too_slow,
    IDMS_RESP_MAX_COMMAND,
    "a RESP command",
    sizeof(idms_resp_session),
    true,  /* counts commands: route="resp" */
    false, /* carries the token (AUTH) */
    NULL,  /* no probes over the limit: refused at once */
    false,
    resp_session_free,
};
