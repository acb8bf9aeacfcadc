/*
 * ff1/ff1.h - FF1 format-preserving encryption (NIST SP 800-38G) over AES,
 * the cipher under ID obfuscation. Not installed, not API: names here are
 * idm__ (libuv's uv__ convention).
 */
#ifndef IDM_FF1_H
#define IDM_FF1_H

#include "base.h"

#include <stdatomic.h>
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

/* ---- a keyed FF1 context ---------------------------------------------------
 *
 * The calls above set up AES and BIGNUMs on every call (some microseconds).
 * A context keeps the key schedule: it holds IDM_FF1_SLOTS ready AES
 * contexts, each taken by one call at a time through an atomic flag, so
 * that a context may be shared by threads; a call that finds every slot
 * busy sets up a temporary one from the key. When radix^ceil(n/2) is at
 * most 2^56 (radix 2^16 and 6 numerals, or radix 10 and up to 32), the
 * halves are plain uint64_t instead of BIGNUMs; the result is the same. */
#define IDM_FF1_SLOTS 4

struct evp_cipher_ctx_st; /* OpenSSL's EVP_CIPHER_CTX */

typedef struct idm__ff1 {
    size_t key_len;
    uint8_t key[32];
    struct evp_cipher_ctx_st *aes[IDM_FF1_SLOTS];
    atomic_flag busy[IDM_FF1_SLOTS];
} idm__ff1;

/* Flags of idm__ff1_crypt. */
enum {
    IDM__FF1_DECRYPT = 1u << 0, /* FF1.Decrypt instead of FF1.Encrypt */
    IDM__FF1_BIGNUM = 1u << 1   /* always take the BIGNUM path (tests compare both) */
};

/* Sets up f for key (16, 24 or 32 bytes). IDM_OK, IDM_EINVAL (key length),
 * IDM_ENOMEM, IDM_EUNSUPPORTED (OpenSSL refuses AES); on failure f holds
 * nothing to clear. Thread-safe: yes (f is the caller's). */
int idm__ff1_init(idm__ff1 *f, const uint8_t *key, size_t key_len, idm_error *err);
/* Frees f's AES contexts and wipes the key. Thread-safe: no. */
void idm__ff1_clear(idm__ff1 *f);
/* FF1 under f, with the arguments and results of idm__ff1_encrypt (flags:
 * IDM__FF1_*). Thread-safe: yes (f may be shared between threads). */
int idm__ff1_crypt(idm__ff1 *f, unsigned flags, const uint8_t *tweak, size_t tweak_len,
                   unsigned radix, const uint16_t *in, size_t n, uint16_t *out, idm_error *err);

#endif
