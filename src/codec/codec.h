/*
 * codec/codec.h - hex, Crockford base32, base62 and big-endian helpers (src/codec).
 * Not installed, not API: names here are idm__ (libuv's uv__ convention).
 */
#ifndef IDM_CODEC_H
#define IDM_CODEC_H

#include "base.h"

/* ---- codecs (src/codec) -------------------------------------------------- */

/* Lowercase hex of n bytes into dst[0..2n-1]; no NUL. */
void idm__hex_encode(const uint8_t *src, size_t n, char *dst);
/* The value of a hex digit (either case), or -1. */
int idm__hex_value(unsigned char c);

/* Crockford base32 of 128 bits as 26 characters (2 zero pad bits on top),
 * upper or lower case; no NUL. */
void idm__base32_encode128(const uint8_t src[16], char dst[26], bool lowercase);
/* Decodes 26 Crockford base32 characters (case-insensitive unless
 * lowercase_only) into 128 bits. Returns IDM_OK or IDM_EPARSE via err with
 * the offset of the bad character, or offset 0 and an "exceeds 128 bits"
 * reason when the first character is above 7. what names the format in
 * messages ("ULID", "TypeID suffix"). */
int idm__base32_decode128(const char src[26], uint8_t dst[16], bool lowercase_only, const char *what,
                          idm_error *err);

/* Base62 (0-9A-Za-z) of an n-byte big-endian number into exactly out_len
 * characters, zero-padded on the left; no NUL. out_len must be enough. */
void idm__base62_encode(const uint8_t *src, size_t n, char *dst, size_t out_len);
/* Decodes len base62 characters into an n-byte big-endian number. Returns
 * IDM_OK, or IDM_EPARSE via err (bad character with its offset, or a value
 * that does not fit in n bytes). what names the format in messages. */
int idm__base62_decode(const char *src, size_t len, uint8_t *dst, size_t n, const char *what,
                       idm_error *err);

/* Big-endian helpers. */
static inline void idm__put_be48(uint8_t *p, uint64_t v)
{
    for (int i = 5; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}
static inline uint64_t idm__get_be48(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 6; i++)
        v = v << 8 | p[i];
    return v;
}
static inline void idm__put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static inline uint32_t idm__get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t idm__get_be64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return __builtin_bswap64(v);
#else
    const uint8_t *b = p;
    v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | b[i];
    return v;
#endif
}
static inline void idm__put_be64(uint8_t *p, uint64_t v)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
    memcpy(p, &v, 8);
#else
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
#endif
}

/* Adds one to an n-byte big-endian number; returns true on overflow (the
 * number wrapped to zero). */
static inline bool idm__increment_be(uint8_t *p, size_t n)
{
    for (size_t i = n; i-- > 0;) {
        if (++p[i] != 0)
            return false;
    }
    return true;
}

#endif
