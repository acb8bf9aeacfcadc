/*
 * udf_config.c - the reader of idmint_udf.cnf (udf_config.h).
 */
#include "udf_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Trims spaces at both ends of s, in place. */
static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* One line (NUL-terminated, no newline): 0, 1 with the reason, and
 * *have_node set when it names the node. */
static int parse_line(char *line, int lineno, idm_sfhost_config *cfg, int *have_node,
                      char *message)
{
    char *s = trim(line);
    if (*s == '\0' || *s == '#')
        return 0;
    char *eq = strchr(s, '=');
    if (eq == NULL) {
        snprintf(message, UDF_CONFIG_MSG_CAP, UDF_CONFIG_FILE ":%d: expected key = value", lineno);
        return 1;
    }
    *eq = '\0';
    char *key = trim(s);
    char *value = trim(eq + 1);
    if (strcmp(key, "snowflake_node") == 0) {
        char *end;
        errno = 0;
        unsigned long long node = strtoull(value, &end, 10);
        if (!isdigit((unsigned char)*value) || *end != '\0' || errno != 0) {
            snprintf(message, UDF_CONFIG_MSG_CAP,
                     UDF_CONFIG_FILE ":%d: snowflake_node must be a number", lineno);
            return 1;
        }
        cfg->node = node;
        *have_node = 1;
        return 0;
    }
    if (strcmp(key, "snowflake_layout") == 0) {
        idm_error err = {0};
        if (idm_sf_layout_parse(&cfg->layout, value, strlen(value), &err) != IDM_OK) {
            snprintf(message, UDF_CONFIG_MSG_CAP, UDF_CONFIG_FILE ":%d: %.200s", lineno, err.msg);
            return 1;
        }
        if (cfg->layout.bits[IDM_SF_TIME] + cfg->layout.bits[IDM_SF_NODE] +
                cfg->layout.bits[IDM_SF_SEQ] >
            63) {
            snprintf(message, UDF_CONFIG_MSG_CAP,
                     UDF_CONFIG_FILE ":%d: the layout needs 63 bits or fewer", lineno);
            return 1;
        }
        return 0;
    }
    snprintf(message, UDF_CONFIG_MSG_CAP, UDF_CONFIG_FILE ":%d: unknown setting %.30s", lineno,
             key);
    return 1;
}

int udf_config_parse(const char *text, size_t len, idm_sfhost_config *cfg, char *message)
{
    int have_node = 0;
    int lineno = 0;
    size_t pos = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl != NULL ? (size_t)(nl - (text + pos)) : len - pos;
        lineno++;
        char line[UDF_CONFIG_LINE_CAP];
        if (n >= sizeof line || memchr(text + pos, '\0', n) != NULL) {
            snprintf(message, UDF_CONFIG_MSG_CAP,
                     UDF_CONFIG_FILE ":%d: a line longer than %d bytes, or a NUL byte", lineno,
                     UDF_CONFIG_LINE_CAP - 1);
            return 1;
        }
        memcpy(line, text + pos, n);
        line[n] = '\0';
        if (parse_line(line, lineno, cfg, &have_node, message) != 0)
            return 1;
        pos += n + 1;
    }
    if (!have_node) {
        snprintf(message, UDF_CONFIG_MSG_CAP, UDF_CONFIG_FILE " sets no snowflake_node");
        return 1;
    }
    return 0;
}
