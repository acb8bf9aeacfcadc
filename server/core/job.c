/*
 * job.c - a request being minted (job.h).
 */
#include "core/job.h"

#include <string.h>

void idms_mint_job_free(idms_mint_job *j)
{
    idms_buf_free(&j->text);
    idms_buf_free(&j->rendered);
    memset(j, 0, sizeof *j);
}
