/*
 * udf_common.c - what idmint_udf's functions share: the process's
 * generator and the argument checks of every _init.
 *
 * One generator for the whole server process (not one per connection or
 * statement): libidmint's idm_gen is thread-safe, and one shared state is
 * what makes uuid_v7() strictly increasing across every thread of mysqld,
 * as an AUTO_INCREMENT column is. It is made on the first _init (under a
 * lock; a failure is retried on the next statement) and freed when the
 * server unloads the module (DROP FUNCTION of the last function, or
 * shutdown).
 */
#include "udf.h"

#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t gen_lock = PTHREAD_MUTEX_INITIALIZER;
static idm_gen *gen; /* set once under gen_lock, read after it */

idm_gen *udf_gen(char *message)
{
    pthread_mutex_lock(&gen_lock);
    if (gen == NULL) {
        idm_error err = {0};
        int rc = idm_gen_new(&gen, NULL, &err);
        if (rc != IDM_OK) {
            gen = NULL;
            snprintf(message, UDF_MSG_CAP, "idmint_udf: no generator: %.200s",
                     err.msg[0] ? err.msg : idm_strerror(rc));
        }
    }
    idm_gen *g = gen;
    pthread_mutex_unlock(&gen_lock);
    return g;
}

__attribute__((destructor)) static void udf_unload(void)
{
    idm_gen_free(gen);
    gen = NULL;
}

my_bool udf_init_generator(UDF_INIT *initid, UDF_ARGS *args, char *message, const char *name,
                           unsigned max_length)
{
    if (args->arg_count != 0) {
        snprintf(message, UDF_MSG_CAP, "%s() takes no arguments, got %u", name, args->arg_count);
        return 1;
    }
    initid->max_length = max_length;
    initid->maybe_null = 1; /* NULL (and *error) when minting fails */
    /* Without arguments the server would take the call for a constant and
     * evaluate it once per statement. */
    initid->const_item = 0;
    return 0;
}

my_bool udf_init_decoder(UDF_INIT *initid, UDF_ARGS *args, char *message, const char *name,
                         unsigned max_length)
{
    if (args->arg_count != 1) {
        snprintf(message, UDF_MSG_CAP, "%s(X) takes one argument, got %u", name,
                 args->arg_count);
        return 1;
    }
    if (args->arg_type[0] != STRING_RESULT) {
        snprintf(message, UDF_MSG_CAP, "%s(X): X must be a UUID as text or BINARY(16), not a number",
                 name);
        return 1;
    }
    initid->max_length = max_length;
    initid->maybe_null = 1;
    return 0;
}
