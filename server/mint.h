/*
 * mint.h - the mint service the protocol adapters call (mint.c).
 *
 * Minting never waits on the loop: where the generators would (a
 * snowflake unit's sequence used up, a small clock rewind, the ceiling of
 * the durable mark), the service answers "parked" (r->park: until a time,
 * or on the ceiling's wait list) with what it has minted so far in the
 * request's job (idms_req), and the adapter leaves the request in the
 * input buffer and hands the park to the connection (idms_conn_park).
 * conn.c resumes it when the time comes (a timer) or the ceiling rises
 * (the list is woken); the adapter parses the same request again and
 * idms_mint continues the job. Replies on a connection
 * therefore stay in request order. Not installed.
 */
#ifndef IDMS_MINT_H
#define IDMS_MINT_H

#include "buf.h"
#include "core/job.h"

#include <idmint/idmint.h>
#include <stdbool.h>
#include <stdint.h>

struct idms_server;

/* Statuses without a complete reply. PARKED: the request waits on
 * r->park (the adapter hands it to idms_conn_park; conn.c resumes it).
 * PART: a part of the reply was appended and the rest follows once it is
 * written (the adapter sets c->more). In both cases the
 * request must be offered again when c is resumed. CUT: the request was
 * refused after a part of its reply had gone out (the clock stepped back
 * past --max-rewind, the mark cannot be written): the connection must be
 * closed after what out holds, so that the client sees a reply cut short,
 * not a wrong one. */
#define IDMS_MINT_PARKED 0
#define IDMS_MINT_PART 1
#define IDMS_MINT_CUT 2

typedef struct idms_mint_result {
    int status;     /* 200, 400, 422, 500, 503, or IDMS_MINT_PARKED, _PART, _CUT */
    bool in_parts;  /* the reply is sent in parts: its length must be announced whole */
    bool continued; /* what was appended continues a reply begun by an earlier call */
    int64_t retry_after_s;
    idms_park park; /* IDMS_MINT_PARKED: what it waits for */
    char message[IDM_ERROR_MSG_CAP + 64];
} idms_mint_result;

/* How an adapter frames the IDs of one reply: the service hands them
 * over as they are minted (a reply in parts, a part at a time), and the
 * adapter's sink writes its protocol's framing around them, so that no
 * protocol's framing lives here. begin comes before the first ID of the
 * reply (count: all of its IDs), end after the last; either may be NULL.
 * id gets one ID's text (no line end), index counted from 0 across the
 * parts; NULL takes the service's own text as it is, one ID per line
 * ending in '\n' (idms_sink_lines). */
typedef struct idms_sink {
    void (*begin)(idms_buf *out, uint64_t count);
    void (*id)(idms_buf *out, const char *text, size_t len, uint64_t index);
    void (*end)(idms_buf *out, uint64_t count);
} idms_sink;

/* One ID per line, each ending in '\n': the text as minted. */
extern const idms_sink idms_sink_lines;

/* Mints count IDs of format (IDMX_FMT_*) for request q into out, framed
 * by sink (the job is q's). prefix may be NULL. part > 0 lets a reply larger than part
 * bytes go out in parts of about that size, each minted when the one
 * before has been written (bounded memory for large replies to clients
 * that read slowly); 0 keeps the reply whole (its length is not known in
 * advance: HTTP snowflakes). Whatever is appended to out must be sent,
 * whatever the status. On failure nothing is appended for this request and
 * r->status/message say why. */
void idms_mint(const idms_req *q, int format, const char *prefix, uint64_t count,
               const idms_sink *sink, size_t part, idms_buf *out, idms_mint_result *r);

/* idms_mint with causal minting: after, when not NULL, is the text of an
 * ID of format seen elsewhere (GET ?after=, RESP NEXT ... AFTER id), and
 * every ID of the reply sorts after it. It is parsed with the library's
 * parser of format (typeid: any prefix; the order is the UUIDv7 suffix's,
 * and string order where the prefixes are equal) and observed
 * (idm_*_observe, limit --max-offset) once, when the request starts, not
 * again when a parked request resumes. Refusals: 400 for a format without
 * time or an ID that does not parse (r->message gives the parser's
 * reason), 422 for an ID further ahead of the clock than --max-offset
 * (the library's message), or one this node cannot follow (a snowflake
 * layout with the node above the time), 503 as idms_mint. */
void idms_mint_after(const idms_req *q, int format, const char *prefix, const char *after,
                     uint64_t count, const idms_sink *sink, size_t part, idms_buf *out,
                     idms_mint_result *r);

/* The checks of idms_mint_after's after without observing it (HEAD): true,
 * or false with r->status 400 and the message. */
bool idms_mint_check_after(const struct idms_server *s, int format, const char *after,
                           idms_mint_result *r);

/* The checks idms_mint makes before minting (count, prefix), without
 * minting: true, or false with r->status 400 and the message idms_mint
 * would give (HEAD answers a GET's status without minting). */
bool idms_mint_check(const struct idms_server *s, int format, const char *prefix, uint64_t count,
                     idms_mint_result *r);

/* The latest time handed out: the generators' high water (hwm.h) and the
 * hybrid logical clock's last stamp (hlc.h), or the mark resumed above
 * when later; what a graceful stop leaves as the mark. */
int64_t idms_mint_used_ms(struct idms_server *s);

/* Whether the service can mint right now; why says why not (or "ready"),
 * with the details an operator needs (holders, paths, the coordinator). */
bool idms_ready(struct idms_server *s, char *why, size_t cap);
/* The same, with *cls set to a short class of the reason that names no
 * process, host, address or path ("no snowflake node", "the time
 * high-water mark is not durable", "a segment tag cannot be served", "the
 * clock is behind the time used", "the clock cannot be read"; "ready"):
 * what /readyz tells a client without the token. */
bool idms_readiness(struct idms_server *s, const char **cls, char *why, size_t cap);

#endif
