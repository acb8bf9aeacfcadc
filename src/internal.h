/*
 * internal.h - every private header of libidmint at once, for the files
 * that use several components. Each component's declarations live in its
 * own header (base.h, codec/codec.h, os/os.h, gen/env.h, gen/randsrc.h,
 * gen/statefile.h, gen/atomic128.h, gen/gen_core.h); include the narrowest
 * one that serves. Not installed, not API.
 */
#ifndef IDM_INTERNAL_H
#define IDM_INTERNAL_H

#include "base.h"
#include "codec/codec.h"
#include "gen/atomic128.h"
#include "gen/env.h"
#include "gen/gen_core.h"
#include "gen/randsrc.h"
#include "gen/statefile.h"
#include "os/os.h"

#endif
