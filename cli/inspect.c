/*
 * inspect.c - `idmint inspect [--json] [--as KIND] [--layout L] [--epoch E]
 * [ID ...]` (CONTRACT.md, "inspect").
 *
 * Decoding is idm_inspect's; rendering is common/inspect_render.c's, which
 * idmintd shares, so both front ends print the same members. Invalid
 * inputs do not stop the run: each is reported (a JSON error object on
 * stdout with --json, a diagnostic on stderr without) and the exit status
 * becomes 1 at the end.
 */
#include "cli.h"

#include "inspect_render.h"

#include <string.h>

enum { OPT_HELP = 1, OPT_JSON, OPT_AS, OPT_LAYOUT, OPT_EPOCH };

/* One option per line. */
/* clang-format off */
static const idmx_option inspect_options[] = {
    {"help", 'h', IDMX_NO_ARG, OPT_HELP},
    {"json", 0, IDMX_NO_ARG, OPT_JSON},
    {"as", 0, IDMX_REQUIRED_ARG, OPT_AS},
    {"layout", 0, IDMX_REQUIRED_ARG, OPT_LAYOUT},
    {"epoch", 0, IDMX_REQUIRED_ARG, OPT_EPOCH},
    {NULL, 0, 0, 0},
};
/* clang-format on */

const char cli_inspect_help[] =
    "Usage: idmint inspect [--json] [--as KIND] [--layout L] [--epoch E] [ID ...]\n"
    "\n"
    "Decode each ID: from the arguments, or one per line from standard input\n"
    "when there are none. The kind is recognised from the text: UUIDs (36\n"
    "characters, 32 hex digits, {...} or urn:uuid:), ULIDs (26 characters),\n"
    "KSUIDs (27), TypeIDs (prefix_suffix) and decimal snowflakes.\n"
    "\n"
    "Options:\n"
    "      --json        one JSON object per input (JSON Lines)\n"
    "      --as KIND     decode as uuid, ulid, ksuid, typeid or snowflake only\n"
    "      --layout L    the snowflake layout: a preset or a spec (default twitter)\n"
    "      --epoch E     the layout's epoch: Unix milliseconds or RFC 3339 time\n"
    "  -h, --help        show this help and exit\n"
    "\n"
    "Without --json, each ID is printed as 'field: value' lines, with a blank\n"
    "line between IDs. Invalid inputs are reported and make the exit status 1.\n";

int cli_inspect(cli *c, int argc, char **argv)
{
    int json = 0;
    int kind = IDM_KIND_AUTO;
    const char *layout_text = NULL;
    const char *epoch_text = NULL;
    idmx_optparse p;
    /* Operands are collected in place at the front of argv[1..]: the
     * parser has already passed every slot it overwrites. */
    char **ids = argv + 1;
    int n_ids = 0;

    idmx_opt_init(&p, argc, argv, 1);
    for (;;) {
        int id = idmx_opt_next(&p, inspect_options);
        if (id == IDMX_OPT_END) {
            break;
        }
        switch (id) {
        case IDMX_OPT_ERROR:
            return cli_usage(c, "%s", p.errmsg);
        case IDMX_OPT_OPERAND:
            ids[n_ids++] = (char *)p.arg;
            break;
        case OPT_HELP:
            return cli_help(c, cli_inspect_help);
        case OPT_JSON:
            json = 1;
            break;
        case OPT_AS:
            kind = idm_kind_from_name(p.arg, strlen(p.arg));
            if (kind <= IDM_KIND_AUTO) {
                return cli_usage(
                    c, "invalid kind '%s' (expected uuid, ulid, ksuid, typeid or snowflake)",
                    p.arg);
            }
            break;
        case OPT_LAYOUT:
            layout_text = p.arg;
            break;
        case OPT_EPOCH:
            epoch_text = p.arg;
            break;
        default:
            return cli_usage(c, "unhandled option '%s'", p.name != NULL ? p.name : "?");
        }
    }

    idm_sf_layout layout;
    int st = cli_layout_from_options(c, layout_text, epoch_text, &layout);
    if (st != CLI_EXIT_OK) {
        return st;
    }

    cli_inputs in;
    const char *text;
    size_t len;
    int any_invalid = 0;
    int printed = 0;
    cli_inputs_init(&in, ids, n_ids);
    while (c->out.err == 0 && cli_inputs_next(&in, &text, &len)) {
        idm_inspection insp;
        idm_error err = {0};
        int rc = idm_inspect(text, len, kind, &layout, &insp, &err);
        if (rc != IDM_OK) {
            any_invalid = 1;
            if (json) {
                idmx_inspect_json_error(&c->out, text, len, cli_reason(&err, rc));
                idmx_outbuf_putc(&c->out, '\n');
            } else {
                cli_diag_input(c, text, len, cli_reason(&err, rc));
                continue;
            }
        } else if (json) {
            idmx_inspect_json(&c->out, text, len, &insp, &layout);
            idmx_outbuf_putc(&c->out, '\n');
        } else {
            if (printed) {
                idmx_outbuf_putc(&c->out, '\n');
            }
            idmx_inspect_text(&c->out, text, len, &insp, &layout);
        }
        printed = 1;
        if (c->out_is_tty) {
            idmx_outbuf_flush(&c->out);
        }
    }
    st = cli_inputs_close(c, &in);
    int out_st = cli_out_flush(c);
    if (out_st != CLI_EXIT_OK) {
        return out_st;
    }
    if (st != CLI_EXIT_OK || any_invalid) {
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}
