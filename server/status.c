/*
 * status.c - the server's used time and readiness (status.h).
 */
#include "status.h"
#include "hlc.h"
#include "hwm.h"
#include "mint.h"
#include "node.h"
#include "segments.h"

#include <stdio.h>

int64_t idms_used_ms(const idms_status *s)
{
    int64_t used = idms_hwm_used_ms(s->hwm);
    int64_t hlc_used = idms_hlc_used_ms(s->hlc); /* stamps count too (hlc.h) */
    return hlc_used > used ? hlc_used : used;
}

bool idms_readiness(const idms_status *s, const char **cls, char *why, size_t cap)
{
    *cls = "no snowflake node";
    if (!idms_node_ready(s->node, why, cap))
        return false;
    *cls = "the time high-water mark is not durable";
    if (!idms_hwm_ready(s->hwm, why, cap))
        return false;
    *cls = "a segment tag cannot be served";
    if (!idms_segments_ready(s->segments, why, cap))
        return false;
    *cls = "the clock cannot be read";
    int64_t now = idms_clock_ms(); /* 0: unreadable */
    if (now == 0) {
        snprintf(why, cap, "the clock cannot be read");
        return false;
    }
    *cls = "the clock is behind the time used";
    if (!idms_mint_clock_ready(s->mint, now, why, cap))
        return false;
    *cls = "ready";
    snprintf(why, cap, "ready");
    return true;
}

bool idms_ready(const idms_status *s, char *why, size_t cap)
{
    const char *cls;
    return idms_readiness(s, &cls, why, cap);
}
