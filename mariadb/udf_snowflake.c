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
#include "udf_config.h"

#include <limits.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CONFIG_BYTES_MAX 65536
_Static_assert(UDF_CONFIG_MSG_CAP <= UDF_MSG_CAP, "the reader's messages fit the server's");

static pthread_mutex_t sf_lock = PTHREAD_MUTEX_INITIALIZER;
static idm_sfhost *sf; /* set once under sf_lock */

/* Reads UDF_CONFIG_FILE (in the working directory, the data directory)
 * into cfg: 0, or 1 with the reason. */
static int read_config(idm_sfhost_config *cfg, char *message)
{
    FILE *f = fopen(UDF_CONFIG_FILE, "re");
    if (f == NULL) {
        snprintf(message, UDF_MSG_CAP, "snowflake(): no node: put snowflake_node = N in "
                                       "DATADIR/" UDF_CONFIG_FILE);
        return 1;
    }
    static char text[CONFIG_BYTES_MAX]; /* under sf_lock */
    size_t len = fread(text, 1, sizeof text, f);
    int too_long = len == sizeof text;
    int failed = ferror(f);
    fclose(f);
    if (failed || too_long) {
        snprintf(message, UDF_MSG_CAP, "snowflake(): cannot read DATADIR/" UDF_CONFIG_FILE "%s",
                 too_long ? " (64 KiB or more)" : "");
        return 1;
    }
    return udf_config_parse(text, len, cfg, message);
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
