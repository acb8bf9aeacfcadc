/*
 * idmint/hlc.h - hybrid logical clocks (Kulkarni, Demirbas, Madappa, Avva
 * and Leone, "Logical Physical Clocks", OPODIS 2014).
 *
 * An idm_hlc hands out 64-bit timestamps that follow causality like a
 * Lamport clock (a message's receive stamp is greater than its send stamp)
 * while staying close to the wall clock:
 *
 *   stamp = wall_ms << 16 | logical
 *
 * wall_ms (48 bits, Unix milliseconds) is the greatest physical time this
 * clock has seen, its own or in a received stamp; logical (16 bits) orders
 * the events that share it. Numeric order of stamps is (wall_ms, logical)
 * order. The state is that one word, advanced by compare-and-swap.
 *
 * Properties: each handle's stamps strictly increase, across threads and
 * through backward steps of the wall clock (wall_ms never goes back, the
 * logical part counts instead). wall_ms runs ahead of the local wall clock
 * only by what a remote clock is ahead (at most max_offset_ms, see
 * idm_hlc_update) and by logical overflow: when a 65537th event would
 * share one wall_ms, wall_ms moves on by 1 ms and logical restarts at 0
 * (it never wraps), so a clock minting more than 65536 stamps per
 * millisecond runs ahead of the wall clock by as much as it needs.
 *
 * Stamps are not unique IDs: two nodes (or two processes after fork) can
 * produce the same stamp. Break ties with a node ID where that matters.
 */
#ifndef IDMINT_HLC_H
#define IDMINT_HLC_H

#include "common.h"
#include "error.h"
#include "gen.h"

IDM_BEGIN_DECLS

/* The default refusal threshold for remote stamps from the future. */
#define IDM_HLC_DEFAULT_MAX_OFFSET_MS 500

/* The greatest wall_ms a stamp can hold (2^48 - 1, in the year 10889). */
#define IDM_HLC_MAX_WALL_MS ((int64_t)0xFFFFFFFFFFFF)

/* The text form's length: 16 lowercase hex digits of the stamp. */
#define IDM_HLC_STRLEN 16

/* Configuration: start from idm_hlc_config_init, then set what you need.
 * clock: zeroed = the OS clock (CLOCK_REALTIME); allocator: zeroed =
 * posix_memalign/free. max_offset_ms (0 or more): how far ahead of the
 * local wall clock a remote stamp's wall_ms may be before idm_hlc_update
 * refuses it (INT64_MAX: never). flags must be 0. */
typedef struct idm_hlc_config {
    idm_clock clock;
    idm_allocator allocator;
    int64_t max_offset_ms;
    uint32_t flags;
} idm_hlc_config;

typedef struct idm_hlc idm_hlc;

/* Zeroes cfg and sets max_offset_ms to IDM_HLC_DEFAULT_MAX_OFFSET_MS.
 * Thread-safe: yes (touches only cfg). */
IDM_API void idm_hlc_config_init(idm_hlc_config *cfg);

/* Creates a clock whose state is 0 (the first stamp takes the wall clock).
 * cfg NULL means idm_hlc_config_init's defaults. Returns IDM_OK, IDM_EINVAL
 * (negative max_offset_ms, flags, a clock or allocator with one function
 * of its pair missing), IDM_ENOMEM.
 * Thread-safe: yes (creates a new object). */
IDM_API IDM_NODISCARD int idm_hlc_new(idm_hlc **out, const idm_hlc_config *cfg, idm_error *err);

/* Releases a clock. NULL is a no-op.
 * Thread-safe: no (no other call may use h concurrently). */
IDM_API void idm_hlc_free(idm_hlc *h);

/* A local or send event: wall_ms' = max(wall_ms, now); logical = logical + 1
 * if wall_ms' == wall_ms, else 0 (with the overflow rule above). *stamp
 * receives the new stamp, greater than every stamp h gave before.
 * Returns IDM_OK, IDM_ECLOCK, IDM_ETIME_RANGE (the clock reads before 1970
 * or after IDM_HLC_MAX_WALL_MS, or the state is at the last stamp).
 * Thread-safe: yes (the clock may be shared). */
IDM_API IDM_NODISCARD int idm_hlc_now(idm_hlc *h, uint64_t *stamp, idm_error *err);

/* A receive event for a message stamped remote: wall_ms' = max(wall_ms,
 * remote's, now), and logical is max(logical, remote's) + 1 when all three
 * of wall_ms, remote's and wall_ms' are equal, logical + 1 when only the
 * local one equals wall_ms', remote's + 1 when only the remote one does, and
 * 0 otherwise (with the overflow rule above). *stamp receives the new
 * stamp, greater than remote and than every stamp h gave before. A remote
 * stamp from the past changes nothing but the count, as a local event does.
 * A remote whose wall_ms is more than max_offset_ms ahead of the local wall
 * clock is refused with IDM_EOFFSET (the message says how far ahead, and
 * the limit), leaving the state unchanged: one bad peer must not drag every
 * clock it talks to into the future.
 * Returns IDM_OK, IDM_EOFFSET, IDM_ECLOCK, IDM_ETIME_RANGE.
 * Thread-safe: yes (the clock may be shared). */
IDM_API IDM_NODISCARD int idm_hlc_update(idm_hlc *h, uint64_t remote, uint64_t *stamp,
                                         idm_error *err);

/* The last stamp h gave (0 before any), without advancing it.
 * Thread-safe: yes. */
IDM_API uint64_t idm_hlc_last(const idm_hlc *h);

/* Splits a stamp. Either pointer may be NULL. Thread-safe: yes (pure). */
IDM_API void idm_hlc_decode(uint64_t stamp, int64_t *wall_ms, uint16_t *logical);

/* Joins wall_ms (0 .. IDM_HLC_MAX_WALL_MS, else IDM_ETIME_RANGE) and
 * logical into a stamp. Thread-safe: yes (pure). */
IDM_API IDM_NODISCARD int idm_hlc_encode(int64_t wall_ms, uint16_t logical, uint64_t *stamp,
                                         idm_error *err);

/* Writes the text form: IDM_HLC_STRLEN lowercase hex digits of the stamp,
 * zero-padded, and a NUL, so cap must be at least IDM_HLC_STRLEN + 1
 * (else IDM_ENOSPC). Byte order of the texts equals numeric order of the
 * stamps. Thread-safe: yes (pure). */
IDM_API IDM_NODISCARD int idm_hlc_format(uint64_t stamp, char *dst, size_t cap);

/* Parses text[0..len-1]: exactly IDM_HLC_STRLEN lowercase hex digits (no
 * uppercase, no prefix or spaces, so each stamp has one text). IDM_EPARSE
 * with err->offset at the first offending byte (len or IDM_HLC_STRLEN for a
 * wrong length). Thread-safe: yes (pure). */
IDM_API IDM_NODISCARD int idm_hlc_parse(const char *text, size_t len, uint64_t *stamp,
                                        idm_error *err);

/* Resumes above a time: every stamp h gives afterwards has a wall_ms later
 * than after_ms, however the clock reads (the state moves up to
 * after_ms << 16 | 0xFFFF, never down). A process that restarts sets it to
 * its durable high-water mark, so that its stamps keep their order across
 * the restart even when the clock stepped back or its last stamps ran
 * ahead of the wall clock (a remote's lead, logical overflow). It is not a
 * remote stamp: max_offset_ms does not apply. Returns IDM_OK or
 * IDM_ETIME_RANGE (after_ms outside 0 .. IDM_HLC_MAX_WALL_MS - 1).
 * Thread-safe: yes (the clock may be shared). */
IDM_API IDM_NODISCARD int idm_hlc_resume_after(idm_hlc *h, int64_t after_ms, idm_error *err);

/* The ceiling: from the moment this returns, no stamp whose wall_ms is
 * later than ceiling_unix_ms is handed out; idm_hlc_now and idm_hlc_update
 * fail with IDM_ECEILING instead, the state unchanged (a remote stamp
 * beyond it is refused too, even within max_offset_ms). The owner sets it
 * to what it can promise, a durable time mark (mark.h). INT64_MAX (the
 * default): none. Thread-safe: yes. */
IDM_API void idm_hlc_set_ceiling(idm_hlc *h, int64_t ceiling_unix_ms);

/* The ceiling in force (INT64_MAX when none). Thread-safe: yes. */
IDM_API int64_t idm_hlc_ceiling(const idm_hlc *h);

/* Installs (fn non-NULL) or removes the ceiling handler (gen.h's
 * idm_ceiling_fn): idm_hlc_now and idm_hlc_update that reach the ceiling
 * call it and go on once it has raised the ceiling. Thread-safe: no (set it
 * before the clock is shared). */
IDM_API void idm_hlc_set_ceiling_handler(idm_hlc *h, idm_ceiling_fn fn, void *ctx);

IDM_END_DECLS

#endif
