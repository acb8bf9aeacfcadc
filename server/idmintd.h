/*
 * idmintd.h - every header of idmintd at once, for the files that use
 * several components (not installed).
 *
 * idmintd is a thin layer over libidmint: one libuv event loop thread owns
 * the generators, two protocol adapters (HTTP/1.1 in http/, RESP2 in
 * resp/) turn requests into calls of the mint service (mint.h), conn.h
 * carries bytes between sockets and adapters with bounded buffers, and
 * hwm.h keeps the durable time high-water mark off the loop. See
 * docs/idmintd.md for the design.
 */
#ifndef IDMINTD_H
#define IDMINTD_H

#include "auth.h"
#include "buf.h"
#include "conn.h"
#include "formats.h"
#include "hlc.h"
#include "hwm.h"
#include "keyed.h"
#include "log.h"
#include "metrics.h"
#include "mint.h"
#include "node.h"
#include "segments.h"
#include "optparse.h"
#include "options.h"
#include "server.h"
#include "tls.h"

#endif
