/*
 * pg_idmint.h - what the parts of pg_idmint share (pg/README.md for users).
 *
 *   pg_idmint.c      module magic, GUCs, the allocator over TopMemoryContext,
 *                    the backend's generator, errors
 *   uuid_fns.c       uuidv7(), uuidv7(interval), uuid_extract_timestamp,
 *                    uuid_extract_version
 *   text_fns.c       ulid, typeid, ksuid and their conversions;
 *                    idmint_inspect
 *   snowflake_fns.c  snowflake(), snowflake_nextval(), snowflake_timestamp()
 *   sfshared.c       the server-wide snowflake state and its durable mark
 *
 * Memory: libidmint allocates only through pgi_allocator (TopMemoryContext,
 * failures returned as NULL so the library reports IDM_ENOMEM and we raise
 * an ordinary ERROR); everything per call is palloc'd in the caller's
 * context. Randomness: the library's buffered CSPRNG (OpenSSL's DRBG),
 * created lazily in each backend - never in the postmaster, whose forks
 * would otherwise share a stream (the library also notices a fork itself
 * and discards what it buffered).
 */
#ifndef PG_IDMINT_H
#define PG_IDMINT_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/timestamp.h"

#include <idmint/idmint.h>

/* PostgreSQL 18 replaced the attribute macro. */
#ifndef pg_attribute_noreturn
#define pg_attribute_noreturn() __attribute__((noreturn))
#endif

/* What the parts share is private to pg_idmint.so: hidden, so that calls
 * between them bind inside the module (no PLT or GOT on a per-row path)
 * and no other loaded library can interpose on, or clash with, a pgi_
 * name. Only the fmgr entry points (PG_FUNCTION_INFO_V1), _PG_init and the
 * module magic are exported. */
#pragma GCC visibility push(hidden)

/* GUCs (pg_idmint.c). All PGC_SIGHUP: one node and one layout for the
 * whole server, as the server-wide snowflake state needs. */
extern int pgi_node;          /* pg_idmint.node */
extern char *pgi_layout_text; /* pg_idmint.layout */
extern int pgi_reserve_ms;    /* pg_idmint.reserve */
extern int pgi_max_rewind_ms; /* pg_idmint.max_rewind */

/* Allocates from TopMemoryContext, aligned as asked; NULL when out of
 * memory. */
extern const idm_allocator pgi_allocator;

/* The backend's generator for UUIDv7, ULID, KSUID and TypeID (one thread:
 * IDM_GEN_UNSHARED), made on first use. */
idm_gen *pgi_gen(void);

/* A new IDM_GEN_UNSHARED generator on pgi_allocator, with clock (NULL: the
 * system's); raises an ERROR when it cannot be made. */
idm_gen *pgi_gen_new(const idm_clock *clock);

/* The layout pg_idmint.layout names, parsed once per change. */
const idm_sf_layout *pgi_layout(void);

/* Parses a layout given as an argument; 22023 with the library's reason. */
void pgi_layout_arg(text *t, idm_sf_layout *out);

/* Raises the ERROR a library failure deserves: 22P02 for unparsable
 * input, 22008 for a time out of range, 53200 out of memory, 58000 for the
 * clock or entropy, XX000 otherwise. what is the message's start ("could
 * not mint a UUIDv7"); the library's reason follows it. */
void pgi_raise(int rc, const idm_error *err, const char *what) pg_attribute_noreturn();

/* 22P02: invalid KIND: "INPUT", with the library's reason as the detail. */
void pgi_raise_input(const char *kind, const char *input, size_t len, const idm_error *err)
    pg_attribute_noreturn();

/* Unix milliseconds to timestamptz. */
TimestampTz pgi_timestamptz_from_unix_ms(int64 unix_ms);
TimestampTz pgi_timestamptz_from_unix_us(int64 unix_us);

/* The system clock in Unix nanoseconds (the library's clock). */
int64 pgi_now_ns(void);

/* Sleeps until the system clock reads unix_ns, in steps that wake for
 * interrupts: query cancel and statement_timeout end the wait with their
 * usual ERROR, postmaster death ends the backend. */
void pgi_wait_until(int64 unix_ns);

/* Makes *e ready to pass to a library call: what pg_idmint reads of an
 * idm_error is msg (as a string, through pgi_raise) and rewind_ms, and a
 * failing call sets every field while a successful one sets none. Cheaper
 * on a per-row path than `idm_error e = {0}`, which clears all its 280
 * bytes on every call; what is read afterwards is the same. */
static inline void pgi_error_init(idm_error *e)
{
    e->code = 0;
    e->offset = 0;
    e->rewind_ms = 0;
    e->msg[0] = '\0';
}

/* sfshared.c: the next snowflake of the server-wide generator for the
 * current node and layout. Waits (pgi_wait_until) where the generator
 * would: an exhausted unit, a clock behind by up to pg_idmint.max_rewind. */
uint64 pgi_sf_next(void);

#pragma GCC visibility pop

#endif
