/*
 * keyed/keyed_internal.h - the OpenSSL calls under keyed.c (HKDF-SHA-256,
 * a keyed HMAC-SHA-256), reachable by tests/unit/test_keyed.c so that the
 * RFC 5869 and RFC 4231 vectors run through the very calls keyed.c makes.
 * Not installed, not API.
 */
#ifndef IDM_KEYED_INTERNAL_H
#define IDM_KEYED_INTERNAL_H

#include "base.h"

#include <stddef.h>
#include <stdint.h>

/* HKDF-SHA-256 (RFC 5869) of ikm with salt (NULL and 0: none, which HKDF
 * treats as HashLen zero bytes) and info into out_len bytes. IDM_OK or
 * IDM_EUNSUPPORTED (OpenSSL refuses HKDF). Thread-safe: yes. */
int idm__hkdf_sha256(const uint8_t *ikm, size_t ikm_len, const uint8_t *salt, size_t salt_len,
                     const uint8_t *info, size_t info_len, uint8_t *out, size_t out_len);

/* HMAC-SHA-256 under a key set up once: init keeps a keyed template that
 * every run copies, so the key schedule (the two hashed pads) is computed
 * once. */
typedef struct idm__hmac {
    void *tmpl; /* EVP_MAC_CTX (OpenSSL 3) or HMAC_CTX (1.1) */
} idm__hmac;

/* IDM_OK, IDM_ENOMEM or IDM_EUNSUPPORTED; on failure h holds nothing to
 * clear. Thread-safe: yes (h is the caller's). */
int idm__hmac_init(idm__hmac *h, const uint8_t *key, size_t key_len);
/* out = HMAC(key, msg). IDM_OK, IDM_ENOMEM or IDM_EUNSUPPORTED.
 * Thread-safe: yes (h is read only). */
int idm__hmac_run(const idm__hmac *h, const uint8_t *msg, size_t len, uint8_t out[32]);
/* Frees and wipes. Thread-safe: no. */
void idm__hmac_clear(idm__hmac *h);

#endif
