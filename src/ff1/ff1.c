/*
 * ff1.c - FF1 format-preserving encryption, written from NIST SP 800-38G
 * (rev 1) section 6: a ten-round Feistel network whose round function is
 * AES-CBC-MAC (the spec's PRF) stretched by AES-ECB of counter blocks, with
 * numerals read as integers in the given radix.
 *
 * The halves are kept as OpenSSL BIGNUMs between rounds: NUM_radix of a
 * half is taken once at the start and STR_radix once at the end, since
 * STR_radix^m(c) then NUM_radix gives c back for every c < radix^m. AES runs
 * in ECB mode with no padding; CBC-MAC chains the blocks by hand.
 */
#include "ff1/ff1.h"

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <limits.h>
#include <stdlib.h>

#define FF1_ROUNDS 10
#define FF1_BLOCK  16

size_t idm__ff1_minlen(unsigned radix)
{
    if (radix < IDM_FF1_RADIX_MIN || radix > IDM_FF1_RADIX_MAX)
        return 0;
    size_t len = 0;
    uint64_t domain = 1;
    while (domain < 1000000u || len < 2) {
        domain *= radix;
        len++;
    }
    return len;
}

/* One AES block: out = CIPH_K(in). */
static int aes_block(EVP_CIPHER_CTX *ctx, const uint8_t in[FF1_BLOCK], uint8_t out[FF1_BLOCK])
{
    int len = 0;
    return EVP_EncryptUpdate(ctx, out, &len, in, FF1_BLOCK) == 1 && len == FF1_BLOCK;
}

/* PRF of SP 800-38G 4.3 (Algorithm 6): CBC-MAC with a zero IV over
 * msg[0..len-1], len a multiple of 16, into r. */
static int prf(EVP_CIPHER_CTX *ctx, const uint8_t *msg, size_t len, uint8_t r[FF1_BLOCK])
{
    uint8_t x[FF1_BLOCK];
    memset(r, 0, FF1_BLOCK);
    for (size_t off = 0; off < len; off += FF1_BLOCK) {
        for (size_t j = 0; j < FF1_BLOCK; j++)
            x[j] = (uint8_t)(r[j] ^ msg[off + j]);
        if (!aes_block(ctx, x, r))
            return 0;
    }
    OPENSSL_cleanse(x, sizeof x);
    return 1;
}

static const EVP_CIPHER *aes_ecb(size_t key_len)
{
    switch (key_len) {
    case 16:
        return EVP_aes_128_ecb();
    case 24:
        return EVP_aes_192_ecb();
    case 32:
        return EVP_aes_256_ecb();
    default:
        return NULL;
    }
}

static int check_args(const uint8_t *key, size_t key_len, const uint8_t *tweak, size_t tweak_len,
                      unsigned radix, const uint16_t *in, size_t n, const uint16_t *out,
                      idm_error *err)
{
    if (key == NULL || aes_ecb(key_len) == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "FF1 key must be 16, 24 or 32 bytes, got %zu",
                         key == NULL ? (size_t)0 : key_len);
    if (tweak == NULL && tweak_len != 0)
        return idm__fail(err, IDM_EINVAL, 0, "FF1 tweak is NULL with a length of %zu", tweak_len);
    if ((uint64_t)tweak_len > UINT32_MAX)
        return idm__fail(err, IDM_EINVAL, 0, "FF1 tweak must be below 2^32 bytes, got %zu",
                         tweak_len);
    if (radix < IDM_FF1_RADIX_MIN || radix > IDM_FF1_RADIX_MAX)
        return idm__fail(err, IDM_EINVAL, 0, "FF1 radix must be 2..65536, got %u", radix);
    size_t minlen = idm__ff1_minlen(radix);
    if (n < minlen)
        return idm__fail(err, IDM_EINVAL, 0,
                         "FF1 needs at least %zu numerals in radix %u (radix^len >= 1000000), "
                         "got %zu",
                         minlen, radix, n);
    if ((uint64_t)n > UINT32_MAX)
        return idm__fail(err, IDM_EINVAL, 0, "FF1 takes fewer than 2^32 numerals, got %zu", n);
    if (in == NULL || out == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "FF1 input or output is NULL");
    for (size_t i = 0; i < n; i++)
        if (in[i] >= radix)
            return idm__fail(err, IDM_EINVAL, i, "FF1 numeral %zu is %u, not below the radix %u", i,
                             (unsigned)in[i], radix);
    return IDM_OK;
}

/* x = NUM_radix(digits[0..len-1]), most significant first. */
static int num_radix(BIGNUM *x, const uint16_t *digits, size_t len, unsigned radix)
{
    BN_zero(x);
    for (size_t i = 0; i < len; i++)
        if (!BN_mul_word(x, radix) || !BN_add_word(x, digits[i]))
            return 0;
    return 1;
}

/* digits[0..len-1] = STR_radix^len(x), x < radix^len; x is consumed. */
static int str_radix(BIGNUM *x, uint16_t *digits, size_t len, unsigned radix)
{
    for (size_t i = len; i-- > 0;) {
        BN_ULONG rem = BN_div_word(x, radix);
        if (rem == (BN_ULONG)-1)
            return 0;
        digits[i] = (uint16_t)rem;
    }
    return 1;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static int ff1_crypt(bool encrypt, const uint8_t *key, size_t key_len, const uint8_t *tweak,
                     size_t tweak_len, unsigned radix, const uint16_t *in, size_t n, uint16_t *out,
                     idm_error *err)
{
    int rc = check_args(key, key_len, tweak, tweak_len, radix, in, n, out, err);
    if (rc != IDM_OK)
        return rc;

    /* Steps 1-4: the split and the byte lengths b (of NUM_radix(B)) and d
     * (of the round's output). b = ceil(ceil(v * log2(radix)) / 8) is the
     * byte length of radix^v - 1, which has exactly ceil(v * log2(radix))
     * bits; this avoids floating point. */
    size_t u = n / 2, v = n - u;
    const size_t t = tweak_len;

    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    BN_CTX *bnctx = BN_CTX_new();
    BIGNUM *a = BN_new(), *b_num = BN_new(), *y = BN_new(), *c = BN_new();
    BIGNUM *mod_u = BN_new(), *mod_v = BN_new(), *base = BN_new();
    uint8_t *pq = NULL, *s = NULL;
    size_t pq_len = 0, s_len = 0;
    rc = IDM_ENOMEM;
    if (ctx == NULL || bnctx == NULL || a == NULL || b_num == NULL || y == NULL || c == NULL ||
        mod_u == NULL || mod_v == NULL || base == NULL)
        goto done;
    if (!BN_set_word(base, radix) || !BN_set_word(c, u) || !BN_exp(mod_u, base, c, bnctx) ||
        !BN_set_word(c, v) || !BN_exp(mod_v, base, c, bnctx) || !BN_sub(c, mod_v, BN_value_one()))
        goto done;
    const size_t b = (size_t)BN_num_bytes(c);
    const size_t d = 4 * ((b + 3) / 4) + 4;
    if (d > INT_MAX / 2) {
        rc = idm__fail(err, IDM_EINVAL, 0, "FF1 input of %zu numerals is too long", n);
        goto done;
    }

    /* Steps 5-6's P || Q, with Q = T || [0]^((-t-b-1) mod 16) || [i] ||
     * [NUM_radix(B)]^b; only the last b + 1 bytes change between rounds. */
    const size_t pad = (FF1_BLOCK - (t + b + 1) % FF1_BLOCK) % FF1_BLOCK;
    pq_len = FF1_BLOCK + t + pad + 1 + b;
    s_len = (d + FF1_BLOCK - 1) / FF1_BLOCK * FF1_BLOCK;
    pq = calloc(1, pq_len);
    s = malloc(s_len);
    if (pq == NULL || s == NULL)
        goto done;
    pq[0] = 1;
    pq[1] = 2;
    pq[2] = 1;
    pq[3] = (uint8_t)(radix >> 16);
    pq[4] = (uint8_t)(radix >> 8);
    pq[5] = (uint8_t)radix;
    pq[6] = 10;
    pq[7] = (uint8_t)(u % 256);
    put_be32(pq + 8, (uint32_t)n);
    put_be32(pq + 12, (uint32_t)t);
    if (t != 0)
        memcpy(pq + FF1_BLOCK, tweak, t);
    uint8_t *round_byte = pq + FF1_BLOCK + t + pad;
    uint8_t *num_bytes = round_byte + 1;

    rc = IDM_EUNSUPPORTED;
    if (EVP_EncryptInit_ex(ctx, aes_ecb(key_len), NULL, key, NULL) != 1 ||
        EVP_CIPHER_CTX_set_padding(ctx, 0) != 1)
        goto done;
    rc = IDM_ENOMEM;
    if (!num_radix(a, in, u, radix) || !num_radix(b_num, in + u, v, radix))
        goto done;

    /* Step 6, ten times. Encryption: Q carries B, C = A + y mod radix^m,
     * then A = B and B = C. Decryption runs the rounds backwards: Q
     * carries A, C = B - y mod radix^m, then B = A and A = C. */
    for (int r = 0; r < FF1_ROUNDS; r++) {
        const int i = encrypt ? r : FF1_ROUNDS - 1 - r;
        BIGNUM *into_q = encrypt ? b_num : a;
        BIGNUM *other = encrypt ? a : b_num;
        const BIGNUM *modulus = (i % 2 == 0) ? mod_u : mod_v;

        *round_byte = (uint8_t)i;
        rc = IDM_ENOMEM;
        if (BN_bn2binpad(into_q, num_bytes, (int)b) < 0)
            goto done;
        /* Steps 6.ii-6.iv: R = PRF(P || Q), S = the first d bytes of
         * R || CIPH(R xor [1]^16) || CIPH(R xor [2]^16) ... */
        rc = IDM_EUNSUPPORTED;
        if (!prf(ctx, pq, pq_len, s))
            goto done;
        for (size_t j = 1; j * FF1_BLOCK < d; j++) {
            uint8_t x[FF1_BLOCK];
            memcpy(x, s, FF1_BLOCK);
            uint64_t jj = j;
            for (int k = FF1_BLOCK - 1; k >= FF1_BLOCK - 8; k--, jj >>= 8)
                x[k] = (uint8_t)(x[k] ^ (uint8_t)jj);
            int ok = aes_block(ctx, x, s + j * FF1_BLOCK);
            OPENSSL_cleanse(x, sizeof x);
            if (!ok)
                goto done;
        }
        /* Steps 6.v-6.ix. */
        rc = IDM_ENOMEM;
        if (BN_bin2bn(s, (int)d, y) == NULL)
            goto done;
        if (encrypt ? !BN_mod_add(c, other, y, modulus, bnctx)
                    : !BN_mod_sub(c, other, y, modulus, bnctx))
            goto done;
        if (encrypt) {
            BIGNUM *old_a = a;
            a = b_num;
            b_num = c;
            c = old_a;
        } else {
            BIGNUM *old_b = b_num;
            b_num = a;
            a = c;
            c = old_b;
        }
    }

    /* Step 7: the result A || B, as numerals. */
    rc = IDM_ENOMEM;
    if (!str_radix(a, out, u, radix) || !str_radix(b_num, out + u, v, radix))
        goto done;
    rc = IDM_OK;

done:
    if (rc == IDM_ENOMEM)
        idm__fail(err, rc, 0, "FF1 ran out of memory");
    else if (rc == IDM_EUNSUPPORTED)
        idm__fail(err, rc, 0, "FF1 could not run AES-%zu through OpenSSL", key_len * 8);
    EVP_CIPHER_CTX_free(ctx); /* cleanses the key schedule */
    BN_clear_free(a);
    BN_clear_free(b_num);
    BN_clear_free(y);
    BN_clear_free(c);
    BN_free(mod_u);
    BN_free(mod_v);
    BN_free(base);
    BN_CTX_free(bnctx);
    if (pq != NULL) {
        OPENSSL_cleanse(pq, pq_len);
        free(pq);
    }
    if (s != NULL) {
        OPENSSL_cleanse(s, s_len);
        free(s);
    }
    return rc;
}

int idm__ff1_encrypt(const uint8_t *key, size_t key_len, const uint8_t *tweak, size_t tweak_len,
                     unsigned radix, const uint16_t *in, size_t n, uint16_t *out, idm_error *err)
{
    return ff1_crypt(true, key, key_len, tweak, tweak_len, radix, in, n, out, err);
}

int idm__ff1_decrypt(const uint8_t *key, size_t key_len, const uint8_t *tweak, size_t tweak_len,
                     unsigned radix, const uint16_t *in, size_t n, uint16_t *out, idm_error *err)
{
    return ff1_crypt(false, key, key_len, tweak, tweak_len, radix, in, n, out, err);
}
