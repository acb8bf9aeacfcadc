/*
 * layout.c - the snowflake layout options shared by gen and inspect:
 * --layout (a preset name or a spec) and --epoch (Unix milliseconds, or an
 * RFC 3339 time). Parsing is common/optvalue.c's, the one that idmintd
 * uses too; this file only turns its failures into usage errors.
 */
#include "cli.h"

int cli_layout_from_options(cli *c, const char *layout_text, const char *epoch_text,
                            idm_sf_layout *out)
{
    char msg[IDMX_OPT_MSG_CAP];
    if (idmx_layout_resolve(layout_text, epoch_text, out, msg, sizeof msg) != 0) {
        return cli_usage(c, "%s", msg);
    }
    return CLI_EXIT_OK;
}

void cli_layout_name(const idm_sf_layout *l, char *dst, size_t cap)
{
    idmx_layout_name(l, dst, cap);
}
