/*
 * mint.h - the mint service both protocol adapters call (mint.c).
 *
 * Minting never waits on the loop: where the generators would (a
 * snowflake unit's sequence used up, a small clock rewind, the ceiling of
 * the durable mark), the request is parked with what it has minted so far
 * in its connection's job, and the adapter leaves the request in the
 * input buffer. conn.c resumes the connection when the time comes (a
 * timer) or the mark is durable (hwm.c); the adapter parses the same
 * request again and idms_mint continues the job. Replies on a connection
 * therefore stay in request order. Not installed.
 */
#ifndef IDMS_MINT_H
#define IDMS_MINT_H

#include "buf.h"

#include <idmint/idmint.h>
#include <stdbool.h>
#include <stdint.h>

struct idms_conn;
struct idms_server;

/* A request being minted, kept across parks. */
typedef struct idms_mint_job {
    bool active;
    int format;
    uint64_t count, done;
    unsigned parked_for; /* 1 << IDMS_PARK_*: why it has parked, counted once each */
    idms_buf text; /* the IDs minted so far, one per line */
} idms_mint_job;

void idms_mint_job_free(idms_mint_job *j);

/* status of a parked request: no reply yet. */
#define IDMS_MINT_PARKED 0

typedef struct idms_mint_result {
    int status; /* 200, 400, 500, 503, or IDMS_MINT_PARKED */
    int64_t retry_after_s;
    char message[IDM_ERROR_MSG_CAP + 64];
} idms_mint_result;

enum { IDMS_OUT_LINES, IDMS_OUT_JSON, IDMS_OUT_RESP };

/* Mints count IDs of format (IDMX_FMT_*) for connection c into out, one
 * per line, as a JSON array of strings, or as a RESP reply (a bulk string
 * for count 1, an array otherwise). prefix may be NULL. On failure nothing
 * is appended and r->status/message say why; IDMS_MINT_PARKED means the
 * request must be offered again when c is resumed. */
void idms_mint(struct idms_conn *c, int format, const char *prefix, uint64_t count, int style,
               idms_buf *out, idms_mint_result *r);

/* The checks idms_mint makes before minting (count, prefix), without
 * minting: true, or false with r->status 400 and the message idms_mint
 * would give (HEAD answers a GET's status without minting). */
bool idms_mint_check(const struct idms_server *s, int format, const char *prefix, uint64_t count,
                     idms_mint_result *r);

/* Whether the service can mint right now; why says why not (or "ready"). */
bool idms_ready(struct idms_server *s, char *why, size_t cap);

#endif
