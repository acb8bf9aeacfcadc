/*
 * idmint/keyed.h - public forms under a secret key: obfuscated 64-bit IDs
 * and expiring signed tokens.
 *
 * Sortable internal IDs leak volume and growth when they appear in URLs
 * (snowflake 1876... today, 1877... tomorrow: the difference is the day's
 * sign-ups), and Hashids-style encodings hide nothing from someone who
 * decodes them. These forms use a secret key instead:
 *
 * - An obfuscated ID is a format-preserving encryption of the 64-bit ID
 *   and 32 zero check bits: FF1 (NIST SP 800-38G) over AES-256, radix
 *   2^16, six numerals, with the prefix as the tweak. Its 96 bits are
 *   written as IDM_OBF_BODY_LEN base62 characters (0-9A-Za-z, fixed width)
 *   after an optional prefix and "_" (the TypeID prefix rule):
 *   "user_3hK9...". Without the key, tokens of sequential IDs look
 *   unrelated and say nothing about counts; with it, the ID comes back
 *   exactly. A token decrypted under another key, or altered in any
 *   character, or moved to another prefix, fails the check bits (a chance
 *   of 2^-32 that it passes) and is refused with IDM_EFORGED. It is not a
 *   secret and not an access check: anyone who has one can use it.
 *
 * - A signed token is 16 random bytes and an expiry (Unix seconds, 40
 *   bits) under an HMAC-SHA-256 tag truncated to 128 bits, covering the
 *   prefix too: IDM_STOKEN_BODY_LEN base62 characters after an optional
 *   prefix and "_". It names nothing; the holder of a valid one may do
 *   what the issuer stored against it (a share link), until it expires.
 *   The expiry is readable without the key; forging or extending one is
 *   not possible without it.
 *
 * Keys: one master key of IDM_KEY_BYTES random bytes per deployment, kept
 * in a key file (idm_key_format: one line, "idmint-key-v1 " and 64 lowercase
 * hex digits). The obfuscation key and the HMAC key are derived from it
 * with HKDF-SHA-256 (RFC 5869) under distinct labels, so one file serves
 * both and neither use weakens the other. All cryptography is OpenSSL's.
 * No message of these calls contains key material.
 */
#ifndef IDMINT_KEYED_H
#define IDMINT_KEYED_H

#include "common.h"
#include "error.h"
#include "gen.h"

IDM_BEGIN_DECLS

#define IDM_KEY_BYTES 32
/* "idmint-key-v1 " + 64 hex digits + "\n" */
#define IDM_KEY_TEXT_LEN (14 + 2 * IDM_KEY_BYTES + 1)
/* A key's fingerprint: 16 lowercase hex digits that name it in logs and
 * messages without revealing it (a truncated HMAC under the key). */
#define IDM_KEY_FINGERPRINT_LEN 16

#define IDM_OBF_BODY_LEN      17
#define IDM_OBF_STRLEN_MAX    (63 + 1 + IDM_OBF_BODY_LEN)
#define IDM_STOKEN_BODY_LEN   50
#define IDM_STOKEN_STRLEN_MAX (63 + 1 + IDM_STOKEN_BODY_LEN)
/* The latest expiry a signed token can carry (2^40 - 1 Unix seconds). */
#define IDM_STOKEN_MAX_EXPIRY ((int64_t)0xFFFFFFFFFF)

/* Fills master with IDM_KEY_BYTES bytes from entropy (NULL: the OS-seeded
 * CSPRNG). IDM_OK or IDM_ENOENTROPY. Thread-safe: yes. */
IDM_API IDM_NODISCARD int idm_key_generate(uint8_t master[IDM_KEY_BYTES],
                                           const idm_entropy *entropy, idm_error *err);

/* Writes the key file text (IDM_KEY_TEXT_LEN bytes, ending in "\n") and a
 * NUL: cap must be at least IDM_KEY_TEXT_LEN + 1, else IDM_ENOSPC.
 * Thread-safe: yes (pure). */
IDM_API IDM_NODISCARD int idm_key_format(const uint8_t master[IDM_KEY_BYTES], char *dst,
                                         size_t cap);

/* Parses key file text: "idmint-key-v1 ", 64 hex digits (either case) and
 * optionally one "\n" (or "\r\n"), nothing else. IDM_EPARSE with
 * err->offset (the message never quotes the text). Thread-safe: yes
 * (pure). */
IDM_API IDM_NODISCARD int idm_key_parse(const char *text, size_t len, uint8_t master[IDM_KEY_BYTES],
                                        idm_error *err);

typedef struct idm_key idm_key;

/* Derives the working keys from master and keeps them in a new handle
 * (allocator NULL: posix_memalign/free). The caller may wipe master
 * afterwards. IDM_OK, IDM_EINVAL, IDM_ENOMEM, IDM_EUNSUPPORTED (OpenSSL
 * refuses HKDF or AES). Thread-safe: yes (creates a new object). */
IDM_API IDM_NODISCARD int idm_key_new(idm_key **out, const uint8_t master[IDM_KEY_BYTES],
                                      const idm_allocator *allocator, idm_error *err);

/* Wipes and releases. NULL is a no-op. Thread-safe: no. */
IDM_API void idm_key_free(idm_key *k);

/* Writes the fingerprint (IDM_KEY_FINGERPRINT_LEN hex digits) and a NUL;
 * IDM_ENOSPC when cap is too small. Thread-safe: yes. */
IDM_API IDM_NODISCARD int idm_key_fingerprint(const idm_key *k, char *dst, size_t cap);

/* Obfuscates id under k: prefix (prefix_len bytes, the TypeID prefix rule;
 * 0 for none) and "_", then IDM_OBF_BODY_LEN base62 characters, and a
 * NUL. The same id, key and prefix always give the same text; distinct ids
 * give distinct texts. IDM_OK, IDM_EINVAL (bad prefix, with err->offset),
 * IDM_ENOSPC (cap < prefix_len + 19, or 18 without a prefix),
 * IDM_EUNSUPPORTED. Thread-safe: yes (k is read only). */
IDM_API IDM_NODISCARD int idm_obfuscate(const idm_key *k, uint64_t id, const char *prefix,
                                        size_t prefix_len, char *dst, size_t cap, idm_error *err);

/* Reveals exactly len bytes of an obfuscated ID: *id receives the ID.
 * The prefix is whatever precedes the last "_" (none without one); it must
 * be the one the ID was obfuscated under. IDM_EPARSE with err->offset (not
 * of that shape: length, character, prefix), IDM_EFORGED (the check bits
 * fail: another key, another prefix, or altered), IDM_EUNSUPPORTED.
 * Thread-safe: yes (k is read only). */
IDM_API IDM_NODISCARD int idm_reveal(const idm_key *k, const char *text, size_t len, uint64_t *id,
                                     idm_error *err);

/* Mints a signed token into dst (NUL-terminated) that expires at
 * expires_unix_s (1 .. IDM_STOKEN_MAX_EXPIRY, else IDM_EINVAL): the
 * random bytes come from g. IDM_OK, IDM_EINVAL (bad prefix or expiry),
 * IDM_ENOSPC (cap < prefix_len + 52, or 51 without a prefix),
 * IDM_ENOENTROPY, IDM_EUNSUPPORTED. Thread-safe: as the generator (k is
 * read only). */
IDM_API IDM_NODISCARD int idm_stoken_next(idm_gen *g, const idm_key *k, const char *prefix,
                                          size_t prefix_len, int64_t expires_unix_s, char *dst,
                                          size_t cap, idm_error *err);

/* Verifies exactly len bytes of a signed token at time now_unix_s: IDM_OK
 * when its tag is k's and it has not expired (now_unix_s < expiry),
 * IDM_EEXPIRED when the tag is k's and the expiry has passed (the message
 * says when), IDM_EFORGED when the tag is not k's (another key, altered,
 * another prefix), IDM_EPARSE (not of that shape, with err->offset).
 * *expires_unix_s (may be NULL) receives the expiry when the tag checks
 * (IDM_OK, IDM_EEXPIRED). The tag is compared in constant time.
 * Thread-safe: yes (k is read only). */
IDM_API IDM_NODISCARD int idm_stoken_verify(const idm_key *k, const char *text, size_t len,
                                            int64_t now_unix_s, int64_t *expires_unix_s,
                                            idm_error *err);

IDM_END_DECLS

#endif
