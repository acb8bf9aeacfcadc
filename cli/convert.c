/*
 * convert.c - `idmint convert --to uuid|ulid|typeid [--prefix P] [ID ...]`
 * (CONTRACT.md, "convert").
 *
 * The 128 bits are kept as they are; only the text form changes. The input
 * may be any 128-bit form idm_parse_128 accepts (UUID forms, ULID, TypeID);
 * KSUIDs (160 bits) and snowflakes (64 bits) are refused by the library
 * with a message saying why, and make the exit status 1.
 */
#include "cli.h"

#include <string.h>

enum { OPT_HELP = 1, OPT_TO, OPT_PREFIX };

/* One option per line. */
/* clang-format off */
static const idmx_option convert_options[] = {
    {"help", 'h', IDMX_NO_ARG, OPT_HELP},
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

int cli_convert(cli *c, int argc, char **argv)
{
    const char *to_text = NULL;
    const char *prefix = NULL;
    idmx_optparse p;
    /* Operands are collected in place at the front of argv[1..]: the
     * parser has already passed every slot it overwrites. */
    char **ids = argv + 1;
    int n_ids = 0;

    idmx_opt_init(&p, argc, argv, 1);
    for (;;) {
        int id = idmx_opt_next(&p, convert_options);
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
            return cli_help(c, cli_convert_help);
        case OPT_TO:
            to_text = p.arg;
            break;
        case OPT_PREFIX:
            prefix = p.arg;
            break;
        default:
            return cli_usage(c, "unhandled option '%s'", p.name != NULL ? p.name : "?");
        }
    }

    int to;
    if (to_text == NULL) {
        return cli_usage(c, "convert needs --to uuid, --to ulid or --to typeid");
    } else if (strcmp(to_text, "uuid") == 0) {
        to = TO_UUID;
    } else if (strcmp(to_text, "ulid") == 0) {
        to = TO_ULID;
    } else if (strcmp(to_text, "typeid") == 0) {
        to = TO_TYPEID;
    } else {
        return cli_usage(c, "invalid --to '%s' (expected uuid, ulid or typeid)", to_text);
    }
    size_t prefix_len = 0;
    if (prefix != NULL) {
        if (to != TO_TYPEID) {
            return cli_usage(c, "option '--prefix' applies only to --to typeid");
        }
        idm_error err = {0};
        prefix_len = strlen(prefix);
        int rc = idm_typeid_check_prefix(prefix, prefix_len, &err);
        if (rc != IDM_OK) {
            return cli_usage(c, "invalid prefix '%s': %s", prefix, cli_reason(&err, rc));
        }
    } else {
        prefix = "";
    }

    cli_inputs in;
    const char *text;
    size_t len;
    int any_invalid = 0;
    cli_inputs_init(&in, ids, n_ids);
    while (c->out.err == 0 && cli_inputs_next(&in, &text, &len)) {
        idm_uuid u;
        idm_error err = {0};
        int rc = idm_parse_128(text, len, &u, NULL, &err);
        if (rc == IDM_OK) {
            rc = emit(c, to, &u, prefix, prefix_len, &err);
        }
        if (rc != IDM_OK) {
            any_invalid = 1;
            cli_diag_input(c, text, len, cli_reason(&err, rc));
            continue;
        }
        if (c->out_is_tty) {
            idmx_outbuf_flush(&c->out);
        }
    }
    int st = cli_inputs_close(c, &in);
    int out_st = cli_out_flush(c);
    if (out_st != CLI_EXIT_OK) {
        return out_st;
    }
    if (st != CLI_EXIT_OK || any_invalid) {
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}
