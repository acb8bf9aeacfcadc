/*
 * resp_server.c - the Redis-protocol (RESP2) adapter, so that every Redis
 * client library can mint IDs:
 *
 *   PING [message]               +PONG, or the message
 *   NEXT format [count [prefix]] a bulk string, or an array for count > 1
 *   INFO [section]               server facts as a bulk string
 *   QUIT                         +OK, then the connection closes
 *
 * and what clients send while connecting: CONFIG GET (redis-benchmark
 * waits for any reply), COMMAND (redis-cli), CLIENT, SELECT 0, ECHO.
 * Every complete command in the buffer is answered in order (pipelining).
 */
#include "idmintd.h"

#include "resp/resp_parser.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static bool is(const idms_resp_arg *a, const char *word)
{
    size_t n = strlen(word);
    return a->len == n && strncasecmp(a->ptr, word, n) == 0;
}

static void error_reply(idms_buf *out, const char *msg)
{
    /* A RESP error is one line: no CR or LF inside. */
    idms_buf_puts(out, "-ERR ");
    for (const char *p = msg; *p; p++)
        idms_buf_append(out, (*p == '\r' || *p == '\n') ? " " : p, 1);
    idms_buf_puts(out, "\r\n");
}

static void bulk(idms_buf *out, const char *p, size_t n)
{
    idms_buf_printf(out, "$%zu\r\n", n);
    idms_buf_append(out, p, n);
    idms_buf_puts(out, "\r\n");
}

/* Returns true when the request parked (nothing written). */
static bool cmd_next(idms_conn *c, const idms_resp_command *cmd, idms_buf *out)
{
    if (cmd->argc < 2 || cmd->argc > 4) {
        error_reply(out, "wrong number of arguments for 'next' command (NEXT format [count [prefix]])");
        return false;
    }
    const idmx_format *f = idmx_format_by_name(cmd->argv[1].ptr, cmd->argv[1].len);
    if (f == NULL) {
        char names[IDMX_FORMAT_LIST_CAP], msg[IDMX_FORMAT_LIST_CAP + 32];
        if (idmx_format_list(names, sizeof names, IDMX_LIST_ALL, "or") == (size_t)-1)
            names[0] = '\0';
        snprintf(msg, sizeof msg, "unknown format (expected %s)", names);
        error_reply(out, msg);
        return false;
    }
    uint64_t count = 1;
    if (cmd->argc >= 3) {
        char n[24];
        if (cmd->argv[2].len == 0 || cmd->argv[2].len >= sizeof n) {
            error_reply(out, "count must be a whole number");
            return false;
        }
        memcpy(n, cmd->argv[2].ptr, cmd->argv[2].len);
        n[cmd->argv[2].len] = '\0';
        if (idmx_parse_u64(n, &count) != 0) {
            error_reply(out, "count must be a whole number");
            return false;
        }
    }
    char prefix[IDM_TYPEID_PREFIX_MAX + 2];
    const char *pp = NULL;
    if (cmd->argc == 4) {
        if (cmd->argv[3].len >= sizeof prefix) {
            error_reply(out, "invalid prefix: at most 63 characters of [a-z_]");
            return false;
        }
        memcpy(prefix, cmd->argv[3].ptr, cmd->argv[3].len);
        prefix[cmd->argv[3].len] = '\0';
        if (strlen(prefix) != cmd->argv[3].len) {
            error_reply(out, "invalid prefix: NUL byte");
            return false;
        }
        pp = prefix;
    }
    idms_mint_result r;
    idms_mint(c, f->id, pp, count, IDMS_OUT_RESP, out, &r);
    if (r.status == IDMS_MINT_PARKED)
        return true;
    if (r.status != 200) {
        if (r.retry_after_s > 0) {
            char msg[sizeof r.message + 48];
            snprintf(msg, sizeof msg, "%s (retry in %" PRId64 " s)", r.message, r.retry_after_s);
            error_reply(out, msg);
        } else {
            error_reply(out, r.message);
        }
    }
    return false;
}

static void cmd_info(idms_server *s, idms_buf *out)
{
    idms_buf text;
    idms_buf_init(&text);
    char why[256];
    bool ready = idms_ready(s, why, sizeof why);
    uint64_t total = 0;
    for (int f = 0; f < IDMX_FMT_COUNT; f++)
        total += s->metrics.minted[f];
    idms_buf_printf(&text,
                    "# Server\r\nidmint_version:%s\r\nprocess_id:%d\r\ntcp_port_http:%s\r\ntcp_port_resp:%s\r\n"
                    "\r\n# Generator\r\nnode:%" PRIu64 "\r\nlayout:%s\r\nmax_rewind_ms:%" PRId64
                    "\r\nready:%d\r\n\r\n# Stats\r\nids_minted:%" PRIu64 "\r\nconnected_clients:%" PRIu64 "\r\n",
                    idm_version(), (int)uv_os_getpid(), s->opt.http, s->opt.resp, s->opt.node,
                    s->layout_name, s->opt.max_rewind_ms, ready ? 1 : 0, total,
                    s->metrics.connections_open);
    if (text.failed) {
        error_reply(out, "out of memory");
    } else {
        bulk(out, text.data, text.len);
    }
    idms_buf_free(&text);
}

/* Whether buf[0..len) starts with another command (complete or malformed). */
static bool another_command(const char *buf, size_t len)
{
    idms_resp_command cmd;
    const char *why;
    return len > 0 && idms_resp_parse(buf, len, &cmd, &why) != IDMS_RESP_INCOMPLETE;
}

static ptrdiff_t resp_feed(idms_conn *c, const char *buf, size_t len, idms_buf *out)
{
    idms_server *s = c->server;
    size_t used = 0;
    while (used < len) {
        if (out->len >= IDMS_OUT_BATCH) {
            c->more = true;
            break;
        }
        idms_resp_command cmd;
        const char *why = "Protocol error";
        ptrdiff_t n = idms_resp_parse(buf + used, len - used, &cmd, &why);
        if (n == IDMS_RESP_INCOMPLETE)
            break;
        if (n < 0) {
            s->metrics.protocol_errors++;
            error_reply(out, why);
            idms_metrics_count_request(s, IDMS_ROUTE_RESP, 400);
            return -1;
        }
        used += (size_t)n;
        if (cmd.argc == 0)
            continue;
        const idms_resp_arg *a = &cmd.argv[0];
        int status = 200;
        if (is(a, "NEXT")) {
            size_t before = out->len;
            if (cmd_next(c, &cmd, out)) {
                used -= (size_t)n; /* parked: offered again on resume */
                break;
            }
            if (out->len > before && out->data[before] == '-')
                status = 400;
        } else if (is(a, "PING")) {
            if (cmd.argc > 1)
                bulk(out, cmd.argv[1].ptr, cmd.argv[1].len);
            else
                idms_buf_puts(out, "+PONG\r\n");
        } else if (is(a, "ECHO") && cmd.argc == 2) {
            bulk(out, cmd.argv[1].ptr, cmd.argv[1].len);
        } else if (is(a, "INFO")) {
            cmd_info(s, out);
        } else if (is(a, "QUIT")) {
            idms_buf_puts(out, "+OK\r\n");
            idms_metrics_count_request(s, IDMS_ROUTE_RESP, 200);
            c->close_after_write = true;
            return (ptrdiff_t)used;
        } else if (is(a, "CONFIG") && cmd.argc == 3 && is(&cmd.argv[1], "GET")) {
            /* redis-benchmark asks CONFIG GET save and appendonly before it
             * starts: the parameter with an empty value (no persistence). */
            idms_buf_puts(out, "*2\r\n");
            bulk(out, cmd.argv[2].ptr, cmd.argv[2].len);
            idms_buf_puts(out, "$0\r\n\r\n");
        } else if (is(a, "CONFIG") || is(a, "COMMAND")) {
            /* redis-cli asks COMMAND DOCS: nothing to tell. */
            idms_buf_puts(out, "*0\r\n");
        } else if (is(a, "CLIENT") || (is(a, "SELECT") && cmd.argc == 2)) {
            idms_buf_puts(out, "+OK\r\n");
        } else {
            char msg[160];
            snprintf(msg, sizeof msg, "unknown command '%.*s' (idmintd speaks PING, NEXT, INFO, QUIT)",
                     (int)(a->len > 32 ? 32 : a->len), a->ptr);
            error_reply(out, msg);
            status = 400;
        }
        idms_metrics_count_request(s, IDMS_ROUTE_RESP, status);
        /* Draining answers every command already received, then closes. */
        if (s->draining && !another_command(buf + used, len - used)) {
            c->close_after_write = true;
            return (ptrdiff_t)used;
        }
    }
    return (ptrdiff_t)used;
}

const idms_proto idms_resp_proto = {
    "resp",
    resp_feed,
    "-ERR max number of clients reached\r\n",
    1024 * 1024, /* the commands served are tiny; a megabyte is plenty */
};
