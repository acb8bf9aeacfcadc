/*
 * gen/atomic128.h - 128-bit compare-and-swap on a 16-byte aligned word.
 * Not installed, not API: names here are idm__ (libuv's uv__ convention).
 */
#ifndef IDM_GEN_ATOMIC128_H
#define IDM_GEN_ATOMIC128_H

#include "base.h"

/* ---- 128-bit atomics (compare-and-swap on a 16-byte aligned word) ------- */

__extension__ typedef unsigned __int128 idm_u128;

static inline idm_u128 idm__cas128(idm_u128 *p, idm_u128 expected, idm_u128 desired)
{
    /* With -mcx16 (x86-64) this is an inline lock cmpxchg16b: lock-free and
     * address-based, so it also works across processes on shared memory. */
    return __sync_val_compare_and_swap(p, expected, desired);
}

#endif
