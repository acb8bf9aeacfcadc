/*
 * options.c - the option loop of every command: optparse's results in
 * argument order, with the malformed options and -h/--help handled here
 * and the rest handed to the command (cli.h, cli_parse_options).
 */
#include "cli.h"

int cli_parse_options(cli *c, int argc, char **argv, const idmx_option *opts, const char *help,
                      cli_option_fn take, void *ctx)
{
    idmx_optparse p;
    idmx_opt_init(&p, argc, argv, 1);
    for (;;) {
        int id = idmx_opt_next(&p, opts);
        if (id == IDMX_OPT_END) {
            return CLI_CONTINUE;
        }
        if (id == IDMX_OPT_ERROR) {
            return cli_usage(c, "%s", p.errmsg);
        }
        if (id == CLI_OPT_HELP) {
            return cli_help(c, help);
        }
        int st = take(c, ctx, id, &p);
        if (st != CLI_CONTINUE) {
            return st;
        }
    }
}
