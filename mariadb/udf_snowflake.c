/*
 * udf_snowflake.c - snowflake(), a 64-bit Snowflake ID (INTEGER) of the
 * node the operator set for this server, unique across every thread of
 * mysqld and across crashes (kill -9 at any instant) and restarts.
 *
 * The node is the operator's, never an SQL user's: it is read from the
 * file idmint_udf.cnf in the server's data directory (mysqld's working
 * directory), which only the account the server runs as (and root) may
 * write:
 *
 *   # idmint_udf: the snowflake() node of this server
 *   snowflake_node = 5
 *   snowflake_layout = twitter      (optional; a preset or a layout spec)
 *
 * A setting from the server's configuration would be the idiom, but a UDF
 * cannot add system variables (only a plugin can), and an environment
 * variable is lost by the next service manager or wrapper script that does
 * not pass it on; a file beside the data survives both, and moves with it
 * (so a copy of the data directory for another server needs its own node).
 *
 * The sequence is libidmint's host-wide snowflake (sfhost.h) with its two
 * files (snowflake-NODE-HASH.state and .idmark) in the data directory
 * itself: MariaDB lists every directory there as a database (a '#' or '.'
 * in front does not hide it), but ignores files. One idm_sfhost per process,
 * opened on the first snowflake() statement and shared by every thread
 * (the library makes it thread-safe and crash-safe through its durable
 * mark). The file is read once per process: a changed node takes effect at
 * the next restart.
 */
#include "udf.h"

#include <ctype.h>
#include <limits.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CONFIG_FILE "idmint_udf.cnf"
#define LINE_CAP 256

static pthread_mutex_t sf_lock = PTHREAD_MUTEX_INITIALIZER;
static idm_sfhost *sf; /* set once under sf_lock */

/* Trims spaces at both ends of s, in place. */
static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) {
        s++;
    }
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) {
        s[--n] = '\0';
    }
    return s;
}

/* Reads CONFIG_FILE into cfg (node, layout): 0, or 1 with the reason. */
static int read_config(idm_sfhost_config *cfg, char *message)
{
    FILE *f = fopen(CONFIG_FILE, "re");
    if (f == NULL) {
        snprintf(message, UDF_MSG_CAP, "snowflake(): no node: put snowflake_node = N in "
                                       "DATADIR/" CONFIG_FILE);
        return 1;
    }
    char line[LINE_CAP];
    int have_node = 0;
    int lineno = 0;
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
        lineno++;
        char *s = trim(line);
        if (*s == '\0' || *s == '#') {
            continue;
        }
        char *eq = strchr(s, '=');
        if (eq == NULL) {
            snprintf(message, UDF_MSG_CAP, CONFIG_FILE ":%d: expected key = value", lineno);
            rc = 1;
            break;
        }
        *eq = '\0';
        char *key = trim(s);
        char *value = trim(eq + 1);
        if (strcmp(key, "snowflake_node") == 0) {
            char *end;
            errno = 0;
            unsigned long long node = strtoull(value, &end, 10);
            if (*value == '\0' || *value == '-' || *end != '\0' || errno != 0) {
                snprintf(message, UDF_MSG_CAP, CONFIG_FILE ":%d: snowflake_node must be a number",
                         lineno);
                rc = 1;
            }
            cfg->node = node;
            have_node = 1;
        } else if (strcmp(key, "snowflake_layout") == 0) {
            idm_error err = {0};
            if (idm_sf_layout_parse(&cfg->layout, value, strlen(value), &err) != IDM_OK) {
                snprintf(message, UDF_MSG_CAP, CONFIG_FILE ":%d: %.200s", lineno, err.msg);
                rc = 1;
            } else if (cfg->layout.bits[IDM_SF_TIME] + cfg->layout.bits[IDM_SF_NODE] +
                           cfg->layout.bits[IDM_SF_SEQ] >
                       63) {
                /* snowflake() is a signed BIGINT. */
                snprintf(message, UDF_MSG_CAP, CONFIG_FILE ":%d: the layout needs 63 bits or fewer",
                         lineno);
                rc = 1;
            }
        } else {
            snprintf(message, UDF_MSG_CAP, CONFIG_FILE ":%d: unknown setting %.30s", lineno, key);
            rc = 1;
        }
    }
    fclose(f);
    if (rc == 0 && !have_node) {
        snprintf(message, UDF_MSG_CAP, CONFIG_FILE " sets no snowflake_node");
        rc = 1;
    }
    return rc;
}

/* The process's host-wide snowflake, opened on first use; NULL with the
 * reason in message (tried again by the next statement). */
static idm_sfhost *sf_get(char *message)
{
    pthread_mutex_lock(&sf_lock);
    if (sf == NULL) {
        idm_sfhost_config cfg;
        idm_sfhost_config_init(&cfg);
        char datadir[PATH_MAX];
        if (getcwd(datadir, sizeof datadir) == NULL) {
            snprintf(message, UDF_MSG_CAP, "snowflake(): the data directory: %s", strerror(errno));
        } else if (read_config(&cfg, message) == 0) {
            cfg.dir = datadir;
            idm_error err = {0};
            int rc = idm_sfhost_open(&sf, &cfg, &err);
            if (rc != IDM_OK) {
                sf = NULL;
                snprintf(message, UDF_MSG_CAP, "snowflake(): %.230s",
                         err.msg[0] ? err.msg : idm_strerror(rc));
            }
        }
    }
    idm_sfhost *h = sf;
    pthread_mutex_unlock(&sf_lock);
    return h;
}

__attribute__((destructor)) static void sf_unload(void)
{
    idm_sfhost_close(sf);
    sf = NULL;
}

my_bool snowflake_init(UDF_INIT *initid, UDF_ARGS *args, char *message)
{
    if (udf_init_generator(initid, args, message, "snowflake", 20) != 0) {
        return 1;
    }
    /* The statement keeps the process's sfhost (no lock per row). */
    idm_sfhost *h = sf_get(message);
    initid->ptr = (char *)(void *)h;
    return h == NULL;
}

long long snowflake(UDF_INIT *initid, UDF_ARGS *args, char *is_null, char *error)
{
    (void)args;
    idm_sfhost *h = (idm_sfhost *)(void *)initid->ptr;
    uint64_t id;
    /* idm_sfhost_next sleeps through an exhausted millisecond and a small
     * clock rewind; a larger rewind or a mark that cannot be written
     * gives NULL (and the statement's error flag). */
    if (idm_sfhost_next(h, &id, NULL) != IDM_OK) {
        *is_null = 1;
        *error = 1;
        return 0;
    }
    return (long long)id;
}
