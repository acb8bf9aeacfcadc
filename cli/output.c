/*
 * output.c - stdout through one large buffer and write(2), and the
 * diagnostics on stderr.
 *
 * IDs are formatted straight into the buffer and leave in writes of
 * CLI_OUT_CAP bytes: no stdio call per ID. A closed stdout (a reader such
 * as `head -1` that has gone) ends the program at the next write: SIGPIPE
 * is ignored so that the write fails with EPIPE, and EPIPE exits with
 * status 0 without a message, as man/idmint.1 says. That also spares
 * `set -o pipefail` scripts a 141.
 */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int drain_stdout(void *ctx, const char *data, size_t len)
{
    cli *c = ctx;
    while (len > 0) {
        ssize_t w = write(STDOUT_FILENO, data, len);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == EPIPE) {
                /* A leased node is given back first (it would otherwise
                 * stay held until its lease ran out). */
                if (c->on_close != NULL) {
                    c->on_close(c->on_close_ctx);
                }
                _exit(CLI_EXIT_OK);
            }
            return errno != 0 ? errno : EIO;
        }
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

void cli_out_init(cli *c, char *mem, size_t cap)
{
    signal(SIGPIPE, SIG_IGN);
    idmx_outbuf_init(&c->out, mem, cap, drain_stdout, c);
    c->out_is_tty = isatty(STDOUT_FILENO);
}

int cli_out_status(cli *c)
{
    if (c->out.err == 0) {
        return CLI_EXIT_OK;
    }
    if (!c->out_reported) {
        c->out_reported = 1;
        fprintf(stderr, "idmint: write error: %s\n", strerror(c->out.err));
    }
    return CLI_EXIT_FAIL;
}

int cli_out_flush(cli *c)
{
    idmx_outbuf_flush(&c->out);
    return cli_out_status(c);
}

static void vdiag(cli *c, const char *fmt, va_list ap) CLI_PRINTF(2, 0);

/* cli_diag's and cli_usage's common part: stdout flushed first, then
 * "idmint: " + the message + "\n" on stderr. */
static void vdiag(cli *c, const char *fmt, va_list ap)
{
    idmx_outbuf_flush(&c->out);
    fputs("idmint: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_diag(cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdiag(c, fmt, ap);
    va_end(ap);
}

void cli_escape(const char *text, size_t max_in, char *dst, size_t cap)
{
    size_t o = 0;
    size_t i = 0;
    for (; text[i] != '\0' && i < max_in && o + 5 < cap; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch < 0x20 || ch >= 0x7f) {
            snprintf(dst + o, cap - o, "\\x%02x", ch);
            o += 4;
        } else {
            dst[o++] = (char)ch;
        }
    }
    if (text[i] != '\0' && o + 4 <= cap) {
        memcpy(dst + o, "...", 3);
        o += 3;
    }
    dst[o] = '\0';
}

int cli_bad_prefix(cli *c, const char *prefix, const idm_error *err, int rc)
{
    char shown[96 * 4 + 4];
    cli_escape(prefix, 96, shown, sizeof shown);
    return cli_usage(c, "invalid prefix '%s': %s", shown, cli_reason(err, rc));
}

void cli_diag_input(cli *c, const char *input, size_t len, const char *reason)
{
    idmx_outbuf_flush(&c->out);
    fputs("idmint: ", stderr);
    /* The input is untrusted: control characters are shown as \xNN so a
     * hostile ID cannot send escape sequences to the user's terminal. */
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)input[i];
        if (ch < 0x20 || ch == 0x7f)
            fprintf(stderr, "\\x%02x", ch);
        else
            fputc(ch, stderr);
    }
    fprintf(stderr, ": %s\n", reason);
}

int cli_usage(cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdiag(c, fmt, ap);
    va_end(ap);
    if (c->cmd != NULL) {
        fprintf(stderr, "Try 'idmint %s --help' for more information.\n", c->cmd);
    } else {
        fputs("Try 'idmint --help' for more information.\n", stderr);
    }
    return CLI_EXIT_USAGE;
}

const char *cli_reason(const idm_error *err, int code)
{
    if (err != NULL && err->msg[0] != '\0') {
        return err->msg;
    }
    return idm_strerror(code);
}

int cli_help(cli *c, const char *text)
{
    idmx_outbuf_puts(&c->out, text);
    return cli_out_flush(c);
}
