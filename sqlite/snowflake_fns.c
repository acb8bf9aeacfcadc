#include "ext.h"
const idmsq_fn idmsq_snowflake_fns[] = {
    {NULL, 0, 0, NULL},
};
void idmsq_snowflake_close(idmsq_conn *c)
{
    (void)c;
}
