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

static int check_key(const uint8_t *key, size_t key_len, idm_error *err)
{
    if (key == NULL || aes_ecb(key_len) == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "FF1 key must be 16, 24 or 32 bytes, got %zu",
                         key == NULL ? (size_t)0 : key_len);
    return IDM_OK;
}

static int check_args(const uint8_t *tweak, size_t tweak_len, unsigned radix, const uint16_t *in,
                      size_t n, const uint16_t *out, idm_error *err)
{
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

/* FF1 with BIGNUM halves, any radix and length, on ctx (AES set up). */
static int ff1_bignum(bool encrypt, EVP_CIPHER_CTX *ctx, const uint8_t *tweak, size_t tweak_len,
                      unsigned radix, const uint16_t *in, size_t n, uint16_t *out, idm_error *err)
{
    int rc;
    /* Steps 1-4: the split and the byte lengths b (of NUM_radix(B)) and d
     * (of the round's output). b = ceil(ceil(v * log2(radix)) / 8) is the
     * byte length of radix^v - 1, which has exactly ceil(v * log2(radix))
     * bits; this avoids floating point. */
    size_t u = n / 2, v = n - u;
    const size_t t = tweak_len;

    BN_CTX *bnctx = BN_CTX_new();
    BIGNUM *a = BN_new(), *b_num = BN_new(), *y = BN_new(), *c = BN_new();
    BIGNUM *mod_u = BN_new(), *mod_v = BN_new(), *base = BN_new();
    uint8_t *pq = NULL, *s = NULL;
    size_t pq_len = 0, s_len = 0;
    rc = IDM_ENOMEM;
    if (bnctx == NULL || a == NULL || b_num == NULL || y == NULL || c == NULL || mod_u == NULL ||
        mod_v == NULL || base == NULL)
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
        idm__fail(err, rc, 0, "FF1 could not run AES through OpenSSL");
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

/* FF1 with uint64_t halves, when radix^v <= 2^56 (v = ceil(n/2)): then b
 * <= 7 and d <= 12, so S is R itself (one block, no counter blocks), and
 * y mod radix^m can be taken by Horner's rule a byte at a time without
 * overflow. Only the last block of P || Q changes between rounds (it holds
 * [i] and the b bytes of NUM(B), b + 1 <= 8), so the CBC-MAC of the blocks
 * before it is computed once. */
static int ff1_u64(bool encrypt, EVP_CIPHER_CTX *ctx, const uint8_t *tweak, size_t t,
                   unsigned radix, const uint16_t *in, size_t n, uint16_t *out, uint64_t mod_v)
{
    const size_t u = n / 2, v = n - u;
    uint64_t mod_u = 1;
    for (size_t i = 0; i < u; i++)
        mod_u *= radix;
    size_t bits = 0;
    for (uint64_t x = mod_v - 1; x != 0; x >>= 1)
        bits++;
    const size_t b = (bits + 7) / 8;
    const size_t d = 4 * ((b + 3) / 4) + 4;
    const size_t pad = (FF1_BLOCK - (t + b + 1) % FF1_BLOCK) % FF1_BLOCK;
    const size_t pq_len = FF1_BLOCK + t + pad + 1 + b;
    const size_t fixed_len = pq_len - FF1_BLOCK; /* whole blocks before the last */
    /* Powers of two reduce with a mask (radix 2^16 in ID obfuscation). */
    const bool pow2_u = (mod_u & (mod_u - 1)) == 0, pow2_v = (mod_v & (mod_v - 1)) == 0;

    uint8_t p[FF1_BLOCK];
    p[0] = 1;
    p[1] = 2;
    p[2] = 1;
    p[3] = (uint8_t)(radix >> 16);
    p[4] = (uint8_t)(radix >> 8);
    p[5] = (uint8_t)radix;
    p[6] = 10;
    p[7] = (uint8_t)(u % 256);
    put_be32(p + 8, (uint32_t)n);
    put_be32(p + 12, (uint32_t)t);

    /* h = CBC-MAC state after the fixed blocks of P || T || 0^pad; last
     * holds the fixed head of the last block. */
    uint8_t h[FF1_BLOCK] = {0}, x[FF1_BLOCK], last[FF1_BLOCK] = {0}, r[FF1_BLOCK];
    int ok = 1;
    for (size_t off = 0; off < fixed_len + FF1_BLOCK - (b + 1); off++) {
        uint8_t byte = off < FF1_BLOCK ? p[off] : off - FF1_BLOCK < t ? tweak[off - FF1_BLOCK] : 0;
        if (off >= fixed_len) {
            last[off - fixed_len] = byte;
            continue;
        }
        x[off % FF1_BLOCK] = (uint8_t)(h[off % FF1_BLOCK] ^ byte);
        if (off % FF1_BLOCK == FF1_BLOCK - 1 && ok)
            ok = aes_block(ctx, x, h);
    }

    uint64_t a = 0, bn = 0;
    for (size_t i = 0; i < u; i++)
        a = a * radix + in[i];
    for (size_t i = u; i < n; i++)
        bn = bn * radix + in[i];

    for (int round = 0; round < FF1_ROUNDS && ok; round++) {
        const int i = encrypt ? round : FF1_ROUNDS - 1 - round;
        const uint64_t into_q = encrypt ? bn : a;
        const uint64_t other = encrypt ? a : bn;
        const bool even = i % 2 == 0;
        const uint64_t modulus = even ? mod_u : mod_v;

        last[FF1_BLOCK - b - 1] = (uint8_t)i;
        for (size_t k = 0; k < b; k++)
            last[FF1_BLOCK - 1 - k] = (uint8_t)(into_q >> (8 * k));
        for (size_t k = 0; k < FF1_BLOCK; k++)
            x[k] = (uint8_t)(h[k] ^ last[k]);
        ok = aes_block(ctx, x, r);
        /* y = NUM(S[0..d-1]) mod radix^m. */
        uint64_t y = 0;
        if (even ? pow2_u : pow2_v) {
            for (size_t k = d > 8 ? d - 8 : 0; k < d; k++)
                y = y << 8 | r[k];
            y &= modulus - 1;
        } else {
            for (size_t k = 0; k < d; k++)
                y = (y << 8 | r[k]) % modulus;
        }
        uint64_t c = encrypt ? (other + y) % modulus : (other + modulus - y) % modulus;
        if (encrypt) {
            a = bn;
            bn = c;
        } else {
            bn = a;
            a = c;
        }
    }
    for (size_t i = u; i-- > 0; a /= radix)
        out[i] = (uint16_t)(a % radix);
    for (size_t i = n; i-- > u; bn /= radix)
        out[i] = (uint16_t)(bn % radix);
    (void)v;
    OPENSSL_cleanse(h, sizeof h);
    OPENSSL_cleanse(x, sizeof x);
    OPENSSL_cleanse(r, sizeof r);
    OPENSSL_cleanse(last, sizeof last);
    OPENSSL_cleanse(&a, sizeof a);
    OPENSSL_cleanse(&bn, sizeof bn);
    return ok;
}

/* radix^ceil(n/2) when it is at most 2^56 (the uint64_t path), else 0. */
static uint64_t u64_domain(unsigned radix, size_t n)
{
    uint64_t m = 1;
    for (size_t i = 0; i < n - n / 2; i++) {
        if (m > ((uint64_t)1 << 56) / radix)
            return 0;
        m *= radix;
    }
    return m;
}

static int ff1_run(unsigned flags, EVP_CIPHER_CTX *ctx, const uint8_t *tweak, size_t tweak_len,
                   unsigned radix, const uint16_t *in, size_t n, uint16_t *out, idm_error *err)
{
    int rc = check_args(tweak, tweak_len, radix, in, n, out, err);
    if (rc != IDM_OK)
        return rc;
    bool encrypt = (flags & IDM__FF1_DECRYPT) == 0;
    uint64_t mod_v = (flags & IDM__FF1_BIGNUM) ? 0 : u64_domain(radix, n);
    if (mod_v == 0)
        return ff1_bignum(encrypt, ctx, tweak, tweak_len, radix, in, n, out, err);
    if (!ff1_u64(encrypt, ctx, tweak, tweak_len, radix, in, n, out, mod_v))
        return idm__fail(err, IDM_EUNSUPPORTED, 0, "FF1 could not run AES through OpenSSL");
    return IDM_OK;
}

static int aes_setup(EVP_CIPHER_CTX **out, const uint8_t *key, size_t key_len, idm_error *err)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    *out = NULL;
    if (ctx == NULL)
        return idm__fail(err, IDM_ENOMEM, 0, "FF1 ran out of memory");
    if (EVP_EncryptInit_ex(ctx, aes_ecb(key_len), NULL, key, NULL) != 1 ||
        EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return idm__fail(err, IDM_EUNSUPPORTED, 0, "FF1 could not run AES-%zu through OpenSSL",
                         key_len * 8);
    }
    *out = ctx;
    return IDM_OK;
}

static int ff1_oneshot(unsigned flags, const uint8_t *key, size_t key_len, const uint8_t *tweak,
                       size_t tweak_len, unsigned radix, const uint16_t *in, size_t n,
                       uint16_t *out, idm_error *err)
{
    int rc = check_key(key, key_len, err);
    if (rc != IDM_OK)
        return rc;
    rc = check_args(tweak, tweak_len, radix, in, n, out, err);
    if (rc != IDM_OK)
        return rc;
    EVP_CIPHER_CTX *ctx;
    rc = aes_setup(&ctx, key, key_len, err);
    if (rc != IDM_OK)
        return rc;
    rc = ff1_run(flags, ctx, tweak, tweak_len, radix, in, n, out, err);
    EVP_CIPHER_CTX_free(ctx); /* cleanses the key schedule */
    return rc;
}

int idm__ff1_encrypt(const uint8_t *key, size_t key_len, const uint8_t *tweak, size_t tweak_len,
                     unsigned radix, const uint16_t *in, size_t n, uint16_t *out, idm_error *err)
{
    return ff1_oneshot(0, key, key_len, tweak, tweak_len, radix, in, n, out, err);
}

int idm__ff1_decrypt(const uint8_t *key, size_t key_len, const uint8_t *tweak, size_t tweak_len,
                     unsigned radix, const uint16_t *in, size_t n, uint16_t *out, idm_error *err)
{
    return ff1_oneshot(IDM__FF1_DECRYPT, key, key_len, tweak, tweak_len, radix, in, n, out, err);
}

int idm__ff1_init(idm__ff1 *f, const uint8_t *key, size_t key_len, idm_error *err)
{
    memset(f, 0, sizeof *f);
    int rc = check_key(key, key_len, err);
    if (rc != IDM_OK)
        return rc;
    for (size_t i = 0; i < IDM_FF1_SLOTS; i++) {
        rc = aes_setup(&f->aes[i], key, key_len, err);
        if (rc != IDM_OK) {
            idm__ff1_clear(f);
            return rc;
        }
        atomic_flag_clear(&f->busy[i]);
    }
    memcpy(f->key, key, key_len);
    f->key_len = key_len;
    return IDM_OK;
}

void idm__ff1_clear(idm__ff1 *f)
{
    if (f == NULL)
        return;
    for (size_t i = 0; i < IDM_FF1_SLOTS; i++) {
        EVP_CIPHER_CTX_free(f->aes[i]);
        f->aes[i] = NULL;
    }
    OPENSSL_cleanse(f->key, sizeof f->key);
    f->key_len = 0;
}

int idm__ff1_crypt(idm__ff1 *f, unsigned flags, const uint8_t *tweak, size_t tweak_len,
                   unsigned radix, const uint16_t *in, size_t n, uint16_t *out, idm_error *err)
{
    if (f == NULL || f->key_len == 0)
        return idm__fail(err, IDM_EINVAL, 0, "FF1 context is not set up");
    for (size_t i = 0; i < IDM_FF1_SLOTS; i++) {
        if (!atomic_flag_test_and_set_explicit(&f->busy[i], memory_order_acquire)) {
            int rc = ff1_run(flags, f->aes[i], tweak, tweak_len, radix, in, n, out, err);
            atomic_flag_clear_explicit(&f->busy[i], memory_order_release);
            return rc;
        }
    }
    /* Every slot is in use by another thread: a temporary context. */
    EVP_CIPHER_CTX *ctx;
    int rc = aes_setup(&ctx, f->key, f->key_len, err);
    if (rc != IDM_OK)
        return rc;
    rc = ff1_run(flags, ctx, tweak, tweak_len, radix, in, n, out, err);
    EVP_CIPHER_CTX_free(ctx);
    return rc;
}
