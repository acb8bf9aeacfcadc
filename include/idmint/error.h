/*
 * idmint/error.h - error codes and the caller-owned error record.
 *
 * The code list is append-only: a code is never renumbered or reused.
 * idm_strerror() gives fixed text for a code; the detail of one failure
 * (which input, which character, how far the clock moved back) goes into
 * the caller's idm_error. Messages give the reason only, without the input:
 * front ends prefix the input themselves ("idmint: INPUT: reason").
 */
#ifndef IDMINT_ERROR_H
#define IDMINT_ERROR_H

#include "common.h"

IDM_BEGIN_DECLS

enum {
    IDM_OK = 0,
    IDM_EINVAL = 1,        /* an argument or option value is not acceptable */
    IDM_EPARSE = 2,        /* text is not a valid ID / spec / time */
    IDM_ENOMEM = 3,        /* allocation failed */
    IDM_ENOENTROPY = 4,    /* the randomness source failed */
    IDM_ECLOCK = 5,        /* the clock could not be read */
    IDM_ECLOCK_REWIND = 6, /* the clock moved back beyond the tolerance */
    IDM_ETIME_RANGE = 7,   /* the time is outside what the format can hold */
    IDM_ENOSPC = 8,        /* the output buffer is too small */
    IDM_EFORKED = 9,       /* the generator was inherited across fork() */
    IDM_EUNSUPPORTED = 10, /* the operation does not apply to this kind */
    IDM_ESTATE = 11,       /* a host-wide state file is unusable, foreign or damaged */
    IDM_EAGAIN = 12,       /* a non-blocking call would have to wait (see *retry_unix_ns) */
    IDM_ECEILING = 13,     /* the generator's ceiling is reached: its owner must raise it */
    IDM_EOFFSET = 14, /* a remote clock (or an observed ID) is too far ahead of the local one */
    IDM_EFORGED = 15, /* a keyed value fails its check: another key, or altered (keyed.h) */
    IDM_EEXPIRED = 16 /* a signed token's expiry has passed (keyed.h) */
};

#define IDM_ERROR_MSG_CAP 256

/* Filled by failing calls when the caller passes one; never by successful
 * calls. offset is the 0-based byte offset (from the start of the whole
 * input) of the offending character for parse errors, 0 otherwise;
 * messages that mention a "position" count from 1; rewind_ms is how far the clock moved back for
 * IDM_ECLOCK_REWIND (0 otherwise). msg is always NUL-terminated. */
typedef struct idm_error {
    int code;
    size_t offset;
    int64_t rewind_ms;
    char msg[IDM_ERROR_MSG_CAP];
} idm_error;

/* Fixed English text for a code ("unknown error" for unknown codes).
 * The string is static. Thread-safe: yes (pure function). */
IDM_API const char *idm_strerror(int code);

IDM_END_DECLS

#endif
