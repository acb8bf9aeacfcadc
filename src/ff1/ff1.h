/*
 * ff1/ff1.h - FF1 format-preserving encryption (NIST SP 800-38G) over AES,
 * the cipher under ID obfuscation. Not installed, not API: names here are
 * idm__ (libuv's uv__ convention).
 */
#ifndef IDM_FF1_H
#define IDM_FF1_H

#include "base.h"

#include <stddef.h>
#include <stdint.h>

/* The radix range of SP 800-38G: 2..2^16. */
#define IDM_FF1_RADIX_MIN 2u
#define IDM_FF1_RADIX_MAX 65536u

/* The least number of numerals FF1 accepts for radix: the smallest minlen
 * >= 2 with radix^minlen >= 1,000,000 (SP 800-38G rev 1, 5.2). 0 for a
 * radix outside 2..65536. */
size_t idm__ff1_minlen(unsigned radix);

/* FF1.Encrypt / FF1.Decrypt of SP 800-38G (6.1, Algorithms 7 and 8).
 * key is an AES key of 16, 24 or 32 bytes; tweak[0..tweak_len-1] may be
 * empty (tweak NULL when tweak_len is 0). in[0..n-1] are numerals, each
 * below radix; out[0..n-1] receives the result and may be in itself.
 * Needs idm__ff1_minlen(radix) <= n < 2^32 and tweak_len < 2^32.
 * Returns IDM_OK; IDM_EINVAL via err for a bad key length, radix, length or
 * numeral (offset = the numeral's index; messages never show the key);
 * IDM_ENOMEM; IDM_EUNSUPPORTED if OpenSSL refuses AES (out is then
 * unspecified). Key schedules and intermediate values are wiped.
 * Thread-safe: yes (no shared state). */
int idm__ff1_encrypt(const uint8_t *key, size_t key_len, const uint8_t *tweak, size_t tweak_len,
                     unsigned radix, const uint16_t *in, size_t n, uint16_t *out, idm_error *err);
int idm__ff1_decrypt(const uint8_t *key, size_t key_len, const uint8_t *tweak, size_t tweak_len,
                     unsigned radix, const uint16_t *in, size_t n, uint16_t *out, idm_error *err);

#endif
