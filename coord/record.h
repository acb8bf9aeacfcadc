/*
 * record.h - the error record a public call of coord/ fills (coord.c,
 * local.c: idmint_coord.h's idmc_error). Not installed.
 */
#ifndef IDMC_RECORD_H
#define IDMC_RECORD_H

#include "idmint_coord.h"

/* The record to fill: the caller's, or scratch when it gave none; its
 * message emptied. */
static inline idmc_error *idmc__record(idmc_error *err, idmc_error *scratch)
{
    idmc_error *e = err != NULL ? err : scratch;
    e->msg[0] = '\0';
    return e;
}

#endif
