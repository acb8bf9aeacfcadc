/*
 * keyed.c - public forms under a secret key (include/idmint/keyed.h):
 * obfuscated 64-bit IDs and expiring signed tokens.
 *
 * Keys. The master key (32 bytes) is never used directly: HKDF-SHA-256
 * (RFC 5869, no salt: the master key is already uniform) derives an
 * AES-256 key under the info label "idmint obfuscate v1" and an HMAC key
 * under "idmint token v1". The fingerprint is the first 8 bytes of
 * HMAC(token key, "idmint fingerprint v1"): it names the key and reveals
 * nothing of it.
 *
 * Obfuscated IDs. The plaintext is the ID's 64 bits followed by 32 zero
 * check bits, as six big-endian 16-bit numerals; FF1 (SP 800-38G) radix
 * 2^16 encrypts it with the prefix bytes as the tweak, and the 96-bit
 * ciphertext is written as 17 fixed-width base62 characters (62^17 >
 * 2^96). Revealing decrypts and demands the check bits be zero: text made
 * under another key or prefix, or altered, decrypts to a random-looking
 * block whose check bits are zero with probability 2^-32.
 *
 * Signed tokens. 16 random bytes, the expiry as 5 big-endian bytes (Unix
 * seconds) and a 16-byte tag: HMAC-SHA-256(token key, "idmint-stoken-v1"
 * || [prefix_len] || prefix || random || expiry) truncated to 128 bits, 37
 * bytes as 50 fixed-width base62 characters. The tag is compared with
 * CRYPTO_memcmp.
 *
 * All cryptography is OpenSSL's. Scratch buffers holding key material or
 * token bytes are wiped with OPENSSL_cleanse; no message contains a key.
 *
 * Deliberately left out: key rotation (a deployment changes keys by
 * accepting both for a while, which is the caller's loop), revocation of
 * signed tokens before their expiry (the issuer's store), and token expiry
 * finer than a second.
 */
#include "internal.h"

#include "ff1/ff1.h"
#include "keyed/keyed_internal.h"
#include "typeid/prefix.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/opensslv.h>
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#else
#include <openssl/kdf.h>
#endif

#include <inttypes.h>
#include <string.h>

#define KEY_TEXT_HEAD     "idmint-key-v1 "
#define KEY_TEXT_HEAD_LEN 14
#define OBF_INFO          "idmint obfuscate v1"
#define TOKEN_INFO        "idmint token v1"
#define FINGERPRINT_LABEL "idmint fingerprint v1"
#define STOKEN_LABEL      "idmint-stoken-v1"
#define STOKEN_LABEL_LEN  16
#define OBF_BYTES         12 /* 96 bits: the ID and 32 check bits */
#define OBF_NUMERALS      6
#define OBF_RADIX         65536u
#define STOKEN_RANDOM     16
#define STOKEN_EXPIRY     5
#define STOKEN_TAG        16
#define STOKEN_BYTES      (STOKEN_RANDOM + STOKEN_EXPIRY + STOKEN_TAG) /* 37 */
#define PREFIX_MAX        63

struct idm_key {
    idm__ff1 ff1;
    idm__hmac mac;
    idm_allocator allocator;
    char fingerprint[IDM_KEY_FINGERPRINT_LEN + 1];
};

/* ---- OpenSSL primitives ----------------------------------------------------- */

int idm__hkdf_sha256(const uint8_t *ikm, size_t ikm_len, const uint8_t *salt, size_t salt_len,
                     const uint8_t *info, size_t info_len, uint8_t *out, size_t out_len)
{
    int ok = 0;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    EVP_KDF_CTX *kctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
    if (kctx != NULL) {
        OSSL_PARAM params[5];
        size_t p = 0;
        params[p++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
        params[p++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, ikm_len);
        if (salt_len > 0)
            params[p++] =
                OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, salt_len);
        params[p++] =
            OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, info_len);
        params[p] = OSSL_PARAM_construct_end();
        ok = EVP_KDF_derive(kctx, out, out_len, params) == 1;
    }
    EVP_KDF_CTX_free(kctx);
    EVP_KDF_free(kdf);
#else
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
    size_t len = out_len;
    ok = pctx != NULL && EVP_PKEY_derive_init(pctx) == 1 &&
         EVP_PKEY_CTX_set_hkdf_md(pctx, EVP_sha256()) == 1 &&
         (salt_len == 0 || EVP_PKEY_CTX_set1_hkdf_salt(pctx, salt, (int)salt_len) == 1) &&
         EVP_PKEY_CTX_set1_hkdf_key(pctx, ikm, (int)ikm_len) == 1 &&
         EVP_PKEY_CTX_add1_hkdf_info(pctx, info, (int)info_len) == 1 &&
         EVP_PKEY_derive(pctx, out, &len) == 1 && len == out_len;
    EVP_PKEY_CTX_free(pctx);
#endif
    if (!ok)
        OPENSSL_cleanse(out, out_len);
    return ok ? IDM_OK : IDM_EUNSUPPORTED;
}

#if OPENSSL_VERSION_NUMBER >= 0x30000000L
int idm__hmac_init(idm__hmac *h, const uint8_t *key, size_t key_len)
{
    h->tmpl = NULL;
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (mac == NULL)
        return IDM_EUNSUPPORTED;
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(mac);
    EVP_MAC_free(mac); /* the context holds its own reference */
    if (ctx == NULL)
        return IDM_ENOMEM;
    OSSL_PARAM params[2];
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0);
    params[1] = OSSL_PARAM_construct_end();
    if (EVP_MAC_init(ctx, key, key_len, params) != 1) {
        EVP_MAC_CTX_free(ctx);
        return IDM_EUNSUPPORTED;
    }
    h->tmpl = ctx;
    return IDM_OK;
}

int idm__hmac_run(const idm__hmac *h, const uint8_t *msg, size_t len, uint8_t out[32])
{
    /* A copy of the keyed template: the template itself is never updated,
     * so threads may share it. */
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_dup((EVP_MAC_CTX *)h->tmpl);
    if (ctx == NULL)
        return IDM_ENOMEM;
    size_t out_len = 0;
    int ok = EVP_MAC_update(ctx, msg, len) == 1 && EVP_MAC_final(ctx, out, &out_len, 32) == 1 &&
             out_len == 32;
    EVP_MAC_CTX_free(ctx);
    return ok ? IDM_OK : IDM_EUNSUPPORTED;
}

void idm__hmac_clear(idm__hmac *h)
{
    EVP_MAC_CTX_free((EVP_MAC_CTX *)h->tmpl); /* cleanses the key */
    h->tmpl = NULL;
}
#else
int idm__hmac_init(idm__hmac *h, const uint8_t *key, size_t key_len)
{
    h->tmpl = NULL;
    HMAC_CTX *ctx = HMAC_CTX_new();
    if (ctx == NULL)
        return IDM_ENOMEM;
    if (HMAC_Init_ex(ctx, key, (int)key_len, EVP_sha256(), NULL) != 1) {
        HMAC_CTX_free(ctx);
        return IDM_EUNSUPPORTED;
    }
    h->tmpl = ctx;
    return IDM_OK;
}

int idm__hmac_run(const idm__hmac *h, const uint8_t *msg, size_t len, uint8_t out[32])
{
    HMAC_CTX *ctx = HMAC_CTX_new();
    if (ctx == NULL)
        return IDM_ENOMEM;
    unsigned out_len = 0;
    int ok = HMAC_CTX_copy(ctx, (HMAC_CTX *)h->tmpl) == 1 && HMAC_Update(ctx, msg, len) == 1 &&
             HMAC_Final(ctx, out, &out_len) == 1 && out_len == 32;
    HMAC_CTX_free(ctx);
    return ok ? IDM_OK : IDM_EUNSUPPORTED;
}

void idm__hmac_clear(idm__hmac *h)
{
    HMAC_CTX_free((HMAC_CTX *)h->tmpl);
    h->tmpl = NULL;
}
#endif

/* ---- keys ------------------------------------------------------------------- */

int idm_key_generate(uint8_t master[IDM_KEY_BYTES], const idm_entropy *entropy, idm_error *err)
{
    if (master == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no place to store the key");
    idm_entropy src = entropy != NULL && entropy->fill != NULL ? *entropy : idm_entropy_system();
    int rc = src.fill(src.ctx, master, IDM_KEY_BYTES);
    if (rc != IDM_OK) {
        OPENSSL_cleanse(master, IDM_KEY_BYTES);
        return idm__fail(err, IDM_ENOENTROPY, 0, "the randomness source failed to make a key");
    }
    return IDM_OK;
}

int idm_key_format(const uint8_t master[IDM_KEY_BYTES], char *dst, size_t cap)
{
    if (master == NULL || dst == NULL)
        return IDM_EINVAL;
    if (cap < IDM_KEY_TEXT_LEN + 1)
        return IDM_ENOSPC;
    memcpy(dst, KEY_TEXT_HEAD, KEY_TEXT_HEAD_LEN);
    idm__hex_encode(master, IDM_KEY_BYTES, dst + KEY_TEXT_HEAD_LEN);
    dst[IDM_KEY_TEXT_LEN - 1] = '\n';
    dst[IDM_KEY_TEXT_LEN] = '\0';
    return IDM_OK;
}

int idm_key_parse(const char *text, size_t len, uint8_t master[IDM_KEY_BYTES], idm_error *err)
{
    if (text == NULL || master == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no key text or no place to store the key");
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < KEY_TEXT_HEAD_LEN; i++) {
        if (i >= len)
            return idm__fail(
                err, IDM_EPARSE, len,
                "key text ends after %zu bytes; it must begin with \"" KEY_TEXT_HEAD "\"", len);
        if (s[i] != (unsigned char)KEY_TEXT_HEAD[i])
            return idm__fail(err, IDM_EPARSE, i,
                             "key text must begin with \"" KEY_TEXT_HEAD
                             "\" (byte %zu differs): not an idmint key",
                             i + 1);
    }
    uint8_t key[IDM_KEY_BYTES];
    for (size_t k = 0; k < 2 * IDM_KEY_BYTES; k++) {
        size_t i = KEY_TEXT_HEAD_LEN + k;
        if (i >= len) {
            OPENSSL_cleanse(key, sizeof key);
            return idm__fail(err, IDM_EPARSE, len, "key text has %zu hex digits, it needs %d", k,
                             2 * IDM_KEY_BYTES);
        }
        int v = idm__hex_value(s[i]);
        if (v < 0) {
            OPENSSL_cleanse(key, sizeof key);
            return idm__fail(err, IDM_EPARSE, i,
                             "key text has a byte that is not a hex digit at position %zu", i + 1);
        }
        if (k % 2 == 0)
            key[k / 2] = (uint8_t)(v << 4);
        else
            key[k / 2] |= (uint8_t)v;
    }
    size_t end = KEY_TEXT_HEAD_LEN + 2 * IDM_KEY_BYTES;
    if (end < len && s[end] == '\r' && end + 1 < len && s[end + 1] == '\n')
        end += 2;
    else if (end < len && s[end] == '\n')
        end += 1;
    if (end != len) {
        OPENSSL_cleanse(key, sizeof key);
        return idm__fail(err, IDM_EPARSE, end,
                         "key text goes on after the key at position %zu (one line only: "
                         "\"" KEY_TEXT_HEAD "\" and %d hex digits)",
                         end + 1, 2 * IDM_KEY_BYTES);
    }
    memcpy(master, key, sizeof key);
    OPENSSL_cleanse(key, sizeof key);
    return IDM_OK;
}

int idm_key_new(idm_key **out, const uint8_t master[IDM_KEY_BYTES], const idm_allocator *allocator,
                idm_error *err)
{
    if (out == NULL || master == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no key or no place to store the handle");
    *out = NULL;
    idm_gen_config gc;
    memset(&gc, 0, sizeof gc);
    if (allocator != NULL)
        gc.allocator = *allocator;
    struct idm_env env;
    int rc = idm__env_init(&env, &gc, err);
    if (rc != IDM_OK)
        return rc;
    idm_key *k = idm__env_alloc(&env, sizeof *k, _Alignof(idm_key));
    if (k == NULL)
        return idm__fail(err, IDM_ENOMEM, 0, "out of memory for a key");
    memset(k, 0, sizeof *k);
    k->allocator = env.allocator;

    uint8_t obf_key[32], token_key[32], fp[32];
    rc = idm__hkdf_sha256(master, IDM_KEY_BYTES, NULL, 0, (const uint8_t *)OBF_INFO,
                          sizeof OBF_INFO - 1, obf_key, sizeof obf_key);
    if (rc == IDM_OK)
        rc = idm__hkdf_sha256(master, IDM_KEY_BYTES, NULL, 0, (const uint8_t *)TOKEN_INFO,
                              sizeof TOKEN_INFO - 1, token_key, sizeof token_key);
    if (rc != IDM_OK) {
        idm__fail(err, rc, 0, "OpenSSL refused HKDF-SHA-256");
        goto fail;
    }
    rc = idm__ff1_init(&k->ff1, obf_key, sizeof obf_key, err);
    if (rc != IDM_OK)
        goto fail;
    rc = idm__hmac_init(&k->mac, token_key, sizeof token_key);
    if (rc == IDM_OK)
        rc = idm__hmac_run(&k->mac, (const uint8_t *)FINGERPRINT_LABEL,
                           sizeof FINGERPRINT_LABEL - 1, fp);
    if (rc != IDM_OK) {
        idm__fail(err, rc, 0,
                  rc == IDM_ENOMEM ? "out of memory for HMAC-SHA-256"
                                   : "OpenSSL refused HMAC-SHA-256");
        goto fail;
    }
    idm__hex_encode(fp, IDM_KEY_FINGERPRINT_LEN / 2, k->fingerprint);
    k->fingerprint[IDM_KEY_FINGERPRINT_LEN] = '\0';
    OPENSSL_cleanse(obf_key, sizeof obf_key);
    OPENSSL_cleanse(token_key, sizeof token_key);
    OPENSSL_cleanse(fp, sizeof fp);
    *out = k;
    return IDM_OK;

fail:
    OPENSSL_cleanse(obf_key, sizeof obf_key);
    OPENSSL_cleanse(token_key, sizeof token_key);
    OPENSSL_cleanse(fp, sizeof fp);
    idm_key_free(k);
    return rc;
}

void idm_key_free(idm_key *k)
{
    if (k == NULL)
        return;
    idm__ff1_clear(&k->ff1);
    idm__hmac_clear(&k->mac);
    struct idm_env env;
    memset(&env, 0, sizeof env);
    env.allocator = k->allocator;
    OPENSSL_cleanse(k, sizeof *k);
    idm__env_free(&env, k);
}

int idm_key_fingerprint(const idm_key *k, char *dst, size_t cap)
{
    if (k == NULL || dst == NULL)
        return IDM_EINVAL;
    if (cap < IDM_KEY_FINGERPRINT_LEN + 1)
        return IDM_ENOSPC;
    memcpy(dst, k->fingerprint, IDM_KEY_FINGERPRINT_LEN + 1);
    return IDM_OK;
}

/* ---- shared text handling --------------------------------------------------- */

/* Splits text at its last '_' into prefix and body, checking the prefix
 * (IDM_EPARSE) and the body's length. */
static int split_text(const char *text, size_t len, size_t body_len, const char *what,
                      size_t *prefix_len, idm_error *err)
{
    size_t sep = len;
    for (size_t i = len; i-- > 0;) {
        if (text[i] == '_') {
            sep = i;
            break;
        }
    }
    size_t plen = sep == len ? 0 : sep;
    size_t body = sep == len ? 0 : sep + 1;
    if (sep == 0 && len > 0)
        return idm__fail(err, IDM_EPARSE, 0, "%s has an empty prefix before '_'", what);
    if (plen > 0) {
        char label[48];
        snprintf(label, sizeof label, "%s prefix", what);
        int rc = idm__prefix_check(text, plen, IDM_EPARSE, label, err);
        if (rc != IDM_OK)
            return rc;
    }
    if (len - body != body_len)
        return idm__fail(err, IDM_EPARSE, len - body < body_len ? len : body + body_len,
                         "%s must be %zu characters after the prefix, got %zu", what, body_len,
                         len - body);
    *prefix_len = plen;
    return IDM_OK;
}

static int check_out(const char *prefix, size_t prefix_len, size_t body_len, size_t cap,
                     const char *what, idm_error *err)
{
    if (prefix_len > 0 && prefix == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "%s prefix is NULL with a length of %zu", what,
                         prefix_len);
    char label[48];
    snprintf(label, sizeof label, "%s prefix", what);
    int rc = idm__prefix_check(prefix, prefix_len, IDM_EINVAL, label, err);
    if (rc != IDM_OK)
        return rc;
    size_t need = prefix_len + (prefix_len > 0 ? 1 : 0) + body_len + 1;
    if (cap < need)
        return idm__fail(err, IDM_ENOSPC, 0, "a %zu-byte buffer cannot hold this %s (%zu bytes)",
                         cap, what, need);
    return IDM_OK;
}

/* ---- obfuscated IDs --------------------------------------------------------- */

static void to_numerals(const uint8_t bytes[OBF_BYTES], uint16_t numerals[OBF_NUMERALS])
{
    for (size_t i = 0; i < OBF_NUMERALS; i++)
        numerals[i] = (uint16_t)(bytes[2 * i] << 8 | bytes[2 * i + 1]);
}

static void from_numerals(const uint16_t numerals[OBF_NUMERALS], uint8_t bytes[OBF_BYTES])
{
    for (size_t i = 0; i < OBF_NUMERALS; i++) {
        bytes[2 * i] = (uint8_t)(numerals[i] >> 8);
        bytes[2 * i + 1] = (uint8_t)numerals[i];
    }
}

/* The text of both forms: prefix and "_" when there is one, then n bytes
 * as body_len base62 characters, and a NUL (the caller checked the room). */
static void write_text(const char *prefix, size_t prefix_len, const uint8_t *bytes, size_t n,
                       size_t body_len, char *dst)
{
    size_t at = 0;
    if (prefix_len > 0) {
        memcpy(dst, prefix, prefix_len);
        dst[prefix_len] = '_';
        at = prefix_len + 1;
    }
    idm__base62_encode(bytes, n, dst + at, body_len);
    dst[at + body_len] = '\0';
}

int idm_obfuscate(const idm_key *k, uint64_t id, const char *prefix, size_t prefix_len, char *dst,
                  size_t cap, idm_error *err)
{
    if (k == NULL || dst == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no key or no output buffer");
    int rc = check_out(prefix, prefix_len, IDM_OBF_BODY_LEN, cap, "obfuscated ID", err);
    if (rc != IDM_OK)
        return rc;
    uint8_t block[OBF_BYTES] = {0};
    uint16_t numerals[OBF_NUMERALS];
    idm__put_be64(block, id); /* then 32 zero check bits */
    to_numerals(block, numerals);
    /* The context's slots are the only mutable part of a key, and atomic. */
    rc = idm__ff1_crypt((idm__ff1 *)&k->ff1, 0, (const uint8_t *)prefix, prefix_len, OBF_RADIX,
                        numerals, OBF_NUMERALS, numerals, err);
    if (rc != IDM_OK)
        return rc;
    from_numerals(numerals, block);
    write_text(prefix, prefix_len, block, sizeof block, IDM_OBF_BODY_LEN, dst);
    return IDM_OK;
}

int idm_reveal(const idm_key *k, const char *text, size_t len, uint64_t *id, idm_error *err)
{
    if (k == NULL || (text == NULL && len > 0) || id == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no key, text or place to store the ID");
    size_t prefix_len;
    int rc = split_text(text, len, IDM_OBF_BODY_LEN, "obfuscated ID", &prefix_len, err);
    if (rc != IDM_OK)
        return rc;
    size_t body = prefix_len > 0 ? prefix_len + 1 : 0;
    uint8_t block[OBF_BYTES];
    rc = idm__base62_decode(text + body, IDM_OBF_BODY_LEN, block, sizeof block, "obfuscated ID",
                            err);
    if (rc != IDM_OK) {
        if (err != NULL && rc == IDM_EPARSE && err->offset != 0)
            err->offset += body;
        return rc;
    }
    uint16_t numerals[OBF_NUMERALS];
    to_numerals(block, numerals);
    rc = idm__ff1_crypt((idm__ff1 *)&k->ff1, IDM__FF1_DECRYPT, (const uint8_t *)text, prefix_len,
                        OBF_RADIX, numerals, OBF_NUMERALS, numerals, err);
    if (rc != IDM_OK)
        return rc;
    if ((numerals[4] | numerals[5]) != 0)
        return idm__fail(err, IDM_EFORGED, 0,
                         "not an ID obfuscated under this key and prefix: another key, or altered");
    from_numerals(numerals, block);
    *id = idm__get_be64(block);
    return IDM_OK;
}

/* ---- signed tokens ---------------------------------------------------------- */

/* The 16-byte tag of a token's first 21 bytes under prefix. */
static int stoken_tag(const idm_key *k, const char *prefix, size_t prefix_len,
                      const uint8_t body[STOKEN_RANDOM + STOKEN_EXPIRY], uint8_t tag[STOKEN_TAG])
{
    uint8_t msg[STOKEN_LABEL_LEN + 1 + PREFIX_MAX + STOKEN_RANDOM + STOKEN_EXPIRY];
    uint8_t mac[32];
    size_t n = 0;
    memcpy(msg, STOKEN_LABEL, STOKEN_LABEL_LEN);
    n += STOKEN_LABEL_LEN;
    msg[n++] = (uint8_t)prefix_len;
    if (prefix_len > 0)
        memcpy(msg + n, prefix, prefix_len);
    n += prefix_len;
    memcpy(msg + n, body, STOKEN_RANDOM + STOKEN_EXPIRY);
    n += STOKEN_RANDOM + STOKEN_EXPIRY;
    int rc = idm__hmac_run(&k->mac, msg, n, mac);
    memcpy(tag, mac, STOKEN_TAG);
    OPENSSL_cleanse(msg, sizeof msg);
    OPENSSL_cleanse(mac, sizeof mac);
    return rc;
}

static int tag_failure(int rc, idm_error *err)
{
    return idm__fail(err, rc, 0,
                     rc == IDM_ENOMEM ? "out of memory for HMAC-SHA-256"
                                      : "OpenSSL refused HMAC-SHA-256");
}

/* RFC 3339 of whole Unix seconds, without the ".000" milliseconds. */
static void format_seconds(int64_t unix_s, char dst[IDM_RFC3339_CAP])
{
    if (idm_time_format(unix_s * 1000, dst, IDM_RFC3339_CAP) != IDM_OK) {
        snprintf(dst, IDM_RFC3339_CAP, "%" PRId64 " s", unix_s);
        return;
    }
    size_t n = strlen(dst);
    if (n >= 5 && memcmp(dst + n - 5, ".000Z", 5) == 0)
        memcpy(dst + n - 5, "Z", 2);
}

int idm_stoken_next(idm_gen *g, const idm_key *k, const char *prefix, size_t prefix_len,
                    int64_t expires_unix_s, char *dst, size_t cap, idm_error *err)
{
    if (g == NULL || k == NULL || dst == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no generator, key or output buffer");
    int rc = check_out(prefix, prefix_len, IDM_STOKEN_BODY_LEN, cap, "signed token", err);
    if (rc != IDM_OK)
        return rc;
    if (expires_unix_s < 1 || expires_unix_s > IDM_STOKEN_MAX_EXPIRY)
        return idm__fail(err, IDM_EINVAL, 0,
                         "a signed token's expiry must be 1 .. %" PRId64
                         " Unix seconds, got %" PRId64,
                         IDM_STOKEN_MAX_EXPIRY, expires_unix_s);
    uint8_t raw[STOKEN_BYTES];
    rc = idm_gen_random(g, raw, STOKEN_RANDOM, err);
    if (rc != IDM_OK) {
        OPENSSL_cleanse(raw, sizeof raw);
        return rc;
    }
    uint64_t e = (uint64_t)expires_unix_s;
    for (int i = STOKEN_EXPIRY - 1; i >= 0; i--, e >>= 8)
        raw[STOKEN_RANDOM + i] = (uint8_t)e;
    rc = stoken_tag(k, prefix, prefix_len, raw, raw + STOKEN_RANDOM + STOKEN_EXPIRY);
    if (rc != IDM_OK) {
        OPENSSL_cleanse(raw, sizeof raw);
        return tag_failure(rc, err);
    }
    write_text(prefix, prefix_len, raw, sizeof raw, IDM_STOKEN_BODY_LEN, dst);
    OPENSSL_cleanse(raw, sizeof raw);
    return IDM_OK;
}

int idm_stoken_verify(const idm_key *k, const char *text, size_t len, int64_t now_unix_s,
                      int64_t *expires_unix_s, idm_error *err)
{
    if (k == NULL || (text == NULL && len > 0))
        return idm__fail(err, IDM_EINVAL, 0, "no key or no text");
    size_t prefix_len;
    int rc = split_text(text, len, IDM_STOKEN_BODY_LEN, "signed token", &prefix_len, err);
    if (rc != IDM_OK)
        return rc;
    size_t body = prefix_len > 0 ? prefix_len + 1 : 0;
    uint8_t raw[STOKEN_BYTES], tag[STOKEN_TAG];
    rc = idm__base62_decode(text + body, IDM_STOKEN_BODY_LEN, raw, sizeof raw, "signed token", err);
    if (rc != IDM_OK) {
        if (err != NULL && rc == IDM_EPARSE && err->offset != 0)
            err->offset += body;
        return rc;
    }
    rc = stoken_tag(k, text, prefix_len, raw, tag);
    if (rc != IDM_OK) {
        OPENSSL_cleanse(raw, sizeof raw);
        return tag_failure(rc, err);
    }
    int same = CRYPTO_memcmp(tag, raw + STOKEN_RANDOM + STOKEN_EXPIRY, STOKEN_TAG) == 0;
    int64_t expiry = 0;
    for (int i = 0; i < STOKEN_EXPIRY; i++)
        expiry = expiry << 8 | raw[STOKEN_RANDOM + i];
    OPENSSL_cleanse(raw, sizeof raw);
    OPENSSL_cleanse(tag, sizeof tag);
    if (!same)
        return idm__fail(err, IDM_EFORGED, 0,
                         "not a token signed under this key and prefix: another key, or altered");
    if (expires_unix_s != NULL)
        *expires_unix_s = expiry;
    if (now_unix_s >= expiry) {
        char when[IDM_RFC3339_CAP];
        format_seconds(expiry, when);
        return idm__fail(err, IDM_EEXPIRED, 0, "expired at %s", when);
    }
    return IDM_OK;
}
