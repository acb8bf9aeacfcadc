/*
 * benchkeys.h - the keys of `idmint bench btree` (bench.c): one minter per
 * ID format, writing each key as the big-endian bytes the database's
 * B-tree orders (dbbench/idmint_dbbench.h):
 *
 *   bigint             1, 2, 3, ... as 8-byte big-endian signed integers
 *   snowflake          libidmint's twitter layout, node 1 (8 bytes)
 *   uuidv4, uuidv7, ulid  libidmint's generators (16 bytes)
 *   uuidv7-unordered   48-bit Unix ms from the clock, then random bits
 *                      from the generator's CSPRNG (idm_gen_random), with
 *                      version 7 and the RFC 9562 variant set and no
 *                      counter: UUIDv7 as most libraries mint it, in
 *                      random order within a millisecond (16 bytes)
 *   ksuid              libidmint's generator (20 bytes)
 *
 * keys_per_ms > 0 puts an injected clock under the generators whose time
 * advances exactly 1 ms per keys_per_ms keys, whatever the machine's
 * speed: keys are minted in groups that end on a millisecond's boundary,
 * one bulk call per group (a bulk call reads the clock once). A snowflake
 * generator that runs out of its 4096 sequence values in a millisecond
 * sleeps (idm_clock.sleep_ns), and this clock then moves on by the time
 * asked: such a millisecond holds fewer keys. The clock starts at the real
 * time. keys_per_ms 0 is the system clock.
 */
#ifndef IDM_CLI_BENCHKEYS_H
#define IDM_CLI_BENCHKEYS_H

#include <idmint/idmint.h>

#include <stddef.h>
#include <stdint.h>

typedef enum bk_format {
    BK_BIGINT = 0,
    BK_UUIDV4,
    BK_UUIDV7,
    BK_UUIDV7_UNORDERED,
    BK_ULID,
    BK_KSUID,
    BK_SNOWFLAKE,
    BK_N_FORMATS
} bk_format;

#define BK_KEY_MAX 20 /* bytes of the widest key (ksuid) */

/* The format named by len bytes of name, or -1. */
int bk_format_parse(const char *name, size_t len);

/* "bigint", "uuidv7-unordered", ... */
const char *bk_format_name(int format);

/* 8, 16 or 20. */
int bk_key_bytes(int format);

/* The list of format names for messages: "bigint, uuidv4, ...". */
const char *bk_format_list(void);

typedef struct bk_minter bk_minter;

/* A minter of format keys; keys_per_ms 0: the system clock. Returns IDM_OK
 * or the library's code with err set. */
int bk_minter_new(bk_minter **out, int format, uint64_t keys_per_ms, idm_error *err);

/* Writes the next n keys into dst (n * bk_key_bytes bytes). Returns IDM_OK
 * or the library's code with err set. */
int bk_mint(bk_minter *m, uint8_t *dst, size_t n, idm_error *err);

void bk_minter_free(bk_minter *m);

#endif
