/*
 * layout.c - the snowflake layout options shared by gen and inspect:
 * --layout (a preset name or a spec) and --epoch (Unix milliseconds, or an
 * RFC 3339 time). Parsing and validation are the library's; this file only
 * turns their failures into usage errors.
 */
#include "cli.h"

#include <string.h>

int cli_layout_from_options(cli *c, const char *layout_text, const char *epoch_text,
                            idm_sf_layout *out)
{
    idm_error err = {0};
    const char *text = layout_text != NULL ? layout_text : "twitter";
    int rc = idm_sf_layout_parse(out, text, strlen(text), &err);
    if (rc != IDM_OK) {
        return cli_usage(c, "invalid layout '%s': %s", text, cli_reason(&err, rc));
    }
    if (epoch_text == NULL) {
        return CLI_EXIT_OK;
    }
    int64_t epoch_ms;
    if (idmx_parse_i64(epoch_text, &epoch_ms) != 0) {
        rc = idm_time_parse(epoch_text, strlen(epoch_text), &epoch_ms, &err);
        if (rc != IDM_OK) {
            return cli_usage(
                c, "invalid epoch '%s' (expected Unix milliseconds or an RFC 3339 time): %s",
                epoch_text, cli_reason(&err, rc));
        }
    }
    rc = idm_sf_layout_set_epoch(out, epoch_ms, &err);
    if (rc != IDM_OK) {
        return cli_usage(c, "invalid epoch '%s': %s", epoch_text, cli_reason(&err, rc));
    }
    return CLI_EXIT_OK;
}

void cli_layout_name(const idm_sf_layout *l, char *dst, size_t cap)
{
    if (idm_sf_layout_format(l, dst, cap) != IDM_OK && cap > 0) {
        snprintf(dst, cap, "%s", "(unprintable layout)");
    }
}
