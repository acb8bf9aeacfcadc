/*
 * status.h - what the whole server reports of itself (status.c): the
 * latest time handed out by every service, and whether it can mint now,
 * gathered from the node claim, the mark's owner, the segment tags and
 * the mint service. Not installed.
 */
#ifndef IDMS_STATUS_H
#define IDMS_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct idms_hwm;
struct idms_node;
struct idms_minter;
struct idms_hlc;
struct idms_segments;

/* What readiness looks at, set by main.c. */
typedef struct idms_status {
    struct idms_hwm *hwm;
    struct idms_node *node;
    struct idms_minter *mint;
    struct idms_hlc *hlc;
    struct idms_segments *segments;
} idms_status;

/* The latest time handed out: the generators' high water (hwm.h) and the
 * hybrid logical clock's last stamp (hlc.h), or the mark resumed above
 * when later; what a graceful stop leaves as the mark, and what the mark
 * asked for by the mint service must cover. */
int64_t idms_used_ms(const idms_status *s);

/* Whether the server can mint right now; why says why not (or "ready"),
 * with the details an operator needs (holders, paths, the coordinator). */
bool idms_ready(const idms_status *s, char *why, size_t cap);
/* The same, with *cls set to a short class of the reason that names no
 * process, host, address or path ("no snowflake node", "the time
 * high-water mark is not durable", "a segment tag cannot be served", "the
 * clock is behind the time used", "the clock cannot be read"; "ready"):
 * what /readyz tells a client without the token. */
bool idms_readiness(const idms_status *s, const char **cls, char *why, size_t cap);

#endif
