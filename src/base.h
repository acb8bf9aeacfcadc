/*
 * base.h - what every component of libidmint shares: compiler hints, idm__fail.
 * Not installed, not API: names here are idm__ (libuv's uv__ convention).
 */
#ifndef IDM_BASE_H
#define IDM_BASE_H

#include <idmint/idmint.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#if defined(__GNUC__)
#define IDM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define IDM_LIKELY(x) __builtin_expect(!!(x), 1)
#define IDM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define IDM_NOINLINE __attribute__((noinline))
#else
#define IDM_PRINTF(a, b)
#define IDM_LIKELY(x) (x)
#define IDM_UNLIKELY(x) (x)
#define IDM_NOINLINE
#endif

/* ---- errors (src/error.c) ------------------------------------------------ */

/* Fills err (if not NULL) with code, offset and a formatted reason, and
 * returns code, so that callers can write `return idm__fail(...)`. */
int idm__fail(idm_error *err, int code, size_t offset, const char *fmt, ...) IDM_PRINTF(4, 5);

#endif
