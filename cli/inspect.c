/*
 * inspect.c - `idmint inspect [--json] [--as KIND] [--layout L] [--epoch E]
 * [ID ...]` (man/idmint.1, "inspect").
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

enum { OPT_JSON = CLI_OPT_HELP + 1, OPT_AS, OPT_LAYOUT, OPT_EPOCH };

/* One option per line. */
/* clang-format off */
static const idmx_option inspect_options[] = {
    {"help", 'h', IDMX_NO_ARG, CLI_OPT_HELP},
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

/* The command line and the state of one run. */
typedef struct inspect_args {
    int json;
    int kind;
    const char *layout_text;
    const char *epoch_text;
    idm_sf_layout layout;
    int printed; /* an ID has been written: the next text block needs a blank line */
    char **ids;  /* the operands, collected at the front of argv[1..] */
    int n_ids;
} inspect_args;

static int take_option(cli *c, void *ctx, int id, const idmx_optparse *p)
{
    inspect_args *a = ctx;
    switch (id) {
    case IDMX_OPT_OPERAND:
        /* The parser has already passed every slot this overwrites. */
        a->ids[a->n_ids++] = (char *)p->arg;
        break;
    case OPT_JSON:
        a->json = 1;
        break;
    case OPT_AS:
        a->kind = idm_kind_from_name(p->arg, strlen(p->arg));
        if (a->kind <= IDM_KIND_AUTO) {
            char kinds[IDMX_FORMAT_LIST_CAP];
            if (idmx_kind_list(kinds, sizeof kinds, "or") == (size_t)-1) {
                kinds[0] = '\0';
            }
            return cli_usage(c, "invalid kind '%s' (expected %s)", p->arg, kinds);
        }
        break;
    case OPT_LAYOUT:
        a->layout_text = p->arg;
        break;
    case OPT_EPOCH:
        a->epoch_text = p->arg;
        break;
    default:
        return cli_usage(c, "unhandled option '%s'", p->name != NULL ? p->name : "?");
    }
    return CLI_CONTINUE;
}

static int inspect_one(cli *c, void *ctx, const char *text, size_t len)
{
    inspect_args *a = ctx;
    idm_inspection insp;
    idm_error err = {0};
    int rc = idm_inspect(text, len, a->kind, &a->layout, &insp, &err);
    if (rc != IDM_OK) {
        if (!a->json) {
            cli_diag_input(c, text, len, cli_reason(&err, rc));
            return CLI_EXIT_FAIL;
        }
        idmx_inspect_json_error(&c->out, text, len, cli_reason(&err, rc));
        idmx_outbuf_putc(&c->out, '\n');
    } else if (a->json) {
        idmx_inspect_json(&c->out, text, len, &insp, &a->layout);
        idmx_outbuf_putc(&c->out, '\n');
    } else {
        if (a->printed) {
            idmx_outbuf_putc(&c->out, '\n');
        }
        idmx_inspect_text(&c->out, text, len, &insp, &a->layout);
    }
    a->printed = 1;
    return rc == IDM_OK ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

int cli_inspect(cli *c, int argc, char **argv)
{
    inspect_args a = {0};
    a.kind = IDM_KIND_AUTO;
    a.ids = argv + 1;
    int st = cli_parse_options(c, argc, argv, inspect_options, cli_inspect_help, take_option, &a);
    if (st != CLI_CONTINUE) {
        return st;
    }
    st = cli_layout_from_options(c, a.layout_text, a.epoch_text, &a.layout);
    if (st != CLI_EXIT_OK) {
        return st;
    }
    return cli_for_each_input(c, a.ids, a.n_ids, inspect_one, &a);
}
