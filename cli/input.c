/*
 * input.c - the inputs of inspect and convert: operands, or stdin lines.
 *
 * Lines from stdin lose their "\n" and one trailing "\r" (files written on
 * Windows); nothing else is trimmed, so " 01ARZ..." is reported as invalid
 * rather than silently repaired. Empty lines are skipped, so that a file
 * with a blank last line does not count as an invalid input.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct cli_inputs {
    char **args;
    int n_args;
    int next;
    FILE *in;   /* NULL when reading operands */
    char *line; /* getline's buffer */
    size_t line_cap;
    int read_error; /* errno of a failed read, or 0 */
} cli_inputs;

static void inputs_init(cli_inputs *it, char **args, int n_args)
{
    memset(it, 0, sizeof *it);
    it->args = args;
    it->n_args = n_args;
    it->in = n_args > 0 ? NULL : stdin;
}

/* Sets *text and *len to the next input. Returns 1, or 0 at the end. */
static int inputs_next(cli_inputs *it, const char **text, size_t *len)
{
    if (it->in == NULL) {
        if (it->next >= it->n_args) {
            return 0;
        }
        *text = it->args[it->next++];
        *len = strlen(*text);
        return 1;
    }
    for (;;) {
        errno = 0;
        ssize_t n = getline(&it->line, &it->line_cap, it->in);
        if (n < 0) {
            if (ferror(it->in)) {
                it->read_error = errno != 0 ? errno : EIO;
            }
            return 0;
        }
        size_t l = (size_t)n;
        if (l > 0 && it->line[l - 1] == '\n') {
            l--;
        }
        if (l > 0 && it->line[l - 1] == '\r') {
            l--;
        }
        if (l == 0) {
            continue;
        }
        it->line[l] = '\0';
        *text = it->line;
        *len = l;
        return 1;
    }
}

/* Frees the line buffer. Returns CLI_EXIT_OK, or CLI_EXIT_FAIL after
 * reporting a read error. */
static int inputs_close(cli *c, cli_inputs *it)
{
    free(it->line);
    it->line = NULL;
    if (it->read_error != 0) {
        cli_diag(c, "standard input: %s", strerror(it->read_error));
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

int cli_for_each_input(cli *c, char **args, int n_args, cli_input_fn fn, void *ctx)
{
    cli_inputs in;
    const char *text;
    size_t len;
    int any_invalid = 0;
    inputs_init(&in, args, n_args);
    while (c->out.err == 0 && inputs_next(&in, &text, &len)) {
        if (fn(c, ctx, text, len) != CLI_EXIT_OK) {
            any_invalid = 1;
        }
        /* After a diagnostic this finds nothing to write: cli_diag_input
         * has flushed stdout already. */
        if (c->out_is_tty) {
            idmx_outbuf_flush(&c->out);
        }
    }
    int st = inputs_close(c, &in);
    int out_st = cli_out_flush(c);
    if (out_st != CLI_EXIT_OK) {
        return out_st;
    }
    if (st != CLI_EXIT_OK || any_invalid) {
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}
