/*
 * job.h - a request being minted, kept across parks and across the parts
 * of a reply sent in parts (core/job.c). The mint and segment services
 * fill it (mint.h, segments.h); the connection carrying the request holds
 * it (conn.h) and frees it when it closes. Not installed.
 */
#ifndef IDMS_JOB_H
#define IDMS_JOB_H

#include "buf.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct idms_mint_job {
    bool active;
    bool in_parts; /* the reply is larger than a part: sent as it is minted */
    int format;
    uint64_t count, done;
    uint64_t sent; /* IDs already rendered into replies (in_parts) */
    unsigned parked_for; /* 1 << IDMS_PARK_*: why it has parked, counted once each */
    idms_buf text; /* the IDs minted and not rendered yet, one per line */
} idms_mint_job;

/* Frees what j holds and leaves it inactive. */
void idms_mint_job_free(idms_mint_job *j);

#endif
