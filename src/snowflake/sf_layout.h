/*
 * sf_layout.h - what the snowflake generator needs from layout.c beyond the
 * public API. Private to src/snowflake/.
 */
#ifndef IDM_SF_LAYOUT_H
#define IDM_SF_LAYOUT_H

#include "internal.h"

/* Checks that l is a layout the library could have produced: a unit of at
 * least 1 ms, order a permutation of the three fields, 1 to 63 bits each
 * and at most 64 in all, shifts that match order and bits, a NUL-terminated
 * name, and a last representable time that fits in int64 Unix ms.
 * IDM_OK or IDM_EINVAL with a reason. */
int idm__sf_layout_check(const idm_sf_layout *l, idm_error *err);

/* The first Unix millisecond the layout cannot represent (the moment its
 * time field runs out), or INT64_MAX when that is beyond int64. */
int64_t idm__sf_layout_end_ms(const idm_sf_layout *l);

#endif
