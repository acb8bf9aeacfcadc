/*
 * convert.c - `idmint convert --to uuid|ulid|typeid [--prefix P] [ID ...]`
 * (man/idmint.1, "convert").
 *
 * The 128 bits are kept as they are; only the text form changes. The input
 * may be any 128-bit form idm_parse_128 accepts (UUID forms, ULID, TypeID);
 * KSUIDs (160 bits) and snowflakes (64 bits) are refused by the library
 * with a message saying why, and make the exit status 1.
 */
#include "cli.h"

#include <string.h>

enum { OPT_TO = CLI_OPT_HELP + 1, OPT_PREFIX };

/* One option per line. */
/* clang-format off */
static const idmx_option convert_options[] = {
    {"help", 'h', IDMX_NO_ARG, CLI_OPT_HELP},
    {"to", 0, IDMX_REQUIRED_ARG, OPT_TO},
    {"prefix", 0, IDMX_REQUIRED_ARG, OPT_PREFIX},
    {NULL, 0, 0, 0},
};
/* clang-format on */

const char cli_convert_help[] =
    "Usage: idmint convert --to uuid|ulid|typeid [--prefix P] [ID ...]\n"
    "\n"
    "Re-encode 128-bit IDs (UUIDs, ULIDs, TypeIDs) in another text form; the\n"
    "bits are unchanged. IDs come from the arguments, or one per line from\n"
    "standard input when there are none. KSUIDs and snowflakes are not 128-bit\n"
    "IDs and are refused.\n"
    "\n"
    "Options:\n"
    "      --to FORM     uuid (canonical lowercase), ulid (uppercase) or typeid\n"
    "      --prefix P    the TypeID prefix for --to typeid (default: none, which\n"
    "                    writes the bare 26-character suffix)\n"
    "  -h, --help        show this help and exit\n";

enum { TO_UUID = 1, TO_ULID, TO_TYPEID };

/* Writes u in the target form followed by "\n". Returns IDM_OK or the
 * encoder's code. */
static int emit(cli *c, int to, const idm_uuid *u, const char *prefix, size_t prefix_len,
                idm_error *err)
{
    char s[IDM_TYPEID_STRLEN_MAX + 1];
    int rc;
    if (to == TO_UUID) {
        rc = idm_uuid_format(u, s, sizeof s);
    } else if (to == TO_ULID) {
        idm_ulid l;
        memcpy(l.bytes, u->bytes, sizeof l.bytes);
        rc = idm_ulid_format(&l, s, sizeof s);
    } else {
        rc = idm_typeid_format(prefix, prefix_len, u, s, sizeof s, err);
    }
    if (rc == IDM_OK) {
        idmx_outbuf_puts(&c->out, s);
        idmx_outbuf_putc(&c->out, '\n');
    }
    return rc;
}

/* The command line and the state of one run. */
typedef struct convert_args {
    const char *to_text;
    const char *prefix;
    size_t prefix_len;
    int to;
    char **ids; /* the operands, collected at the front of argv[1..] */
    int n_ids;
} convert_args;

static int take_option(cli *c, void *ctx, int id, const idmx_optparse *p)
{
    convert_args *a = ctx;
    switch (id) {
    case IDMX_OPT_OPERAND:
        /* The parser has already passed every slot this overwrites. */
        a->ids[a->n_ids++] = (char *)p->arg;
        break;
    case OPT_TO:
        a->to_text = p->arg;
        break;
    case OPT_PREFIX:
        a->prefix = p->arg;
        break;
    default:
        return cli_usage(c, "unhandled option '%s'", p->name != NULL ? p->name : "?");
    }
    return CLI_CONTINUE;
}

static int convert_one(cli *c, void *ctx, const char *text, size_t len)
{
    const convert_args *a = ctx;
    idm_uuid u;
    idm_error err = {0};
    int rc = idm_parse_128(text, len, &u, NULL, &err);
    if (rc == IDM_OK) {
        rc = emit(c, a->to, &u, a->prefix, a->prefix_len, &err);
    }
    if (rc != IDM_OK) {
        cli_diag_input(c, text, len, cli_reason(&err, rc));
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

int cli_convert(cli *c, int argc, char **argv)
{
    convert_args a = {0};
    a.ids = argv + 1;
    int st = cli_parse_options(c, argc, argv, convert_options, cli_convert_help, take_option, &a);
    if (st != CLI_CONTINUE) {
        return st;
    }

    if (a.to_text == NULL) {
        return cli_usage(c, "convert needs --to uuid, --to ulid or --to typeid");
    } else if (strcmp(a.to_text, "uuid") == 0) {
        a.to = TO_UUID;
    } else if (strcmp(a.to_text, "ulid") == 0) {
        a.to = TO_ULID;
    } else if (strcmp(a.to_text, "typeid") == 0) {
        a.to = TO_TYPEID;
    } else {
        return cli_usage(c, "invalid --to '%s' (expected uuid, ulid or typeid)", a.to_text);
    }
    if (a.prefix != NULL) {
        if (a.to != TO_TYPEID) {
            return cli_usage(c, "option '--prefix' applies only to --to typeid");
        }
        idm_error err = {0};
        a.prefix_len = strlen(a.prefix);
        int rc = idm_typeid_check_prefix(a.prefix, a.prefix_len, &err);
        if (rc != IDM_OK) {
            return cli_bad_prefix(c, a.prefix, &err, rc);
        }
    } else {
        a.prefix = "";
    }
    return cli_for_each_input(c, a.ids, a.n_ids, convert_one, &a);
}
