/*
 * test_ff1.c - FF1 format-preserving encryption (src/ff1): the nine sample
 * vectors NIST publishes for SP 800-38G (FF1samples.pdf: AES-128/192/256,
 * radix 10 and 36, with and without a tweak), round trips over many radixes,
 * lengths, keys and tweaks, and the checks on arguments.
 */
#include "testlib.h"

#include "ff1/ff1.h"

#include <ctype.h>
#include <stdbool.h>

/* The seed of this program's test data (test_rng_next). */
static uint64_t rng_state = 0x46463120u;

static const char alphabet36[] = "0123456789abcdefghijklmnopqrstuvwxyz";

static size_t to_numerals(const char *text, uint16_t *out)
{
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i++)
        out[i] = (uint16_t)(strchr(alphabet36, text[i]) - alphabet36);
    return n;
}

static void to_text(const uint16_t *numerals, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = alphabet36[numerals[i]];
    out[n] = '\0';
}

#define K128   "2B7E151628AED2A6ABF7158809CF4F3C"
#define K192   K128 "EF4359D8D580AA4F"
#define K256   K192 "7F036D6F04FC6A94"
#define T_NONE ""
#define T_10   "39383736353433323130"
#define T_11   "3737373770717273373737"
#define PT_10  "0123456789"
#define PT_36  "0123456789abcdefghi"

/* NIST SP 800-38G, FF1samples.pdf, samples 1-9. */
static const struct {
    const char *key, *tweak;
    unsigned radix;
    const char *pt, *ct;
} samples[] = {
    {K128, T_NONE, 10, PT_10, "2433477484"},        {K128, T_10, 10, PT_10, "6124200773"},
    {K128, T_11, 36, PT_36, "a9tv40mll9kdu509eum"}, {K192, T_NONE, 10, PT_10, "2830668132"},
    {K192, T_10, 10, PT_10, "2496655549"},          {K192, T_11, 36, PT_36, "xbj3kv35jrawxv32ysr"},
    {K256, T_NONE, 10, PT_10, "6657667009"},        {K256, T_10, 10, PT_10, "1001623463"},
    {K256, T_11, 36, PT_36, "xs8a0azh2avyalyzuwd"},
};

static void test_nist_samples(void)
{
    for (size_t s = 0; s < sizeof samples / sizeof samples[0]; s++) {
        uint8_t key[32], tweak[16];
        uint16_t pt[32], ct[32], got[32];
        char text[33];
        size_t key_len = test_from_hex(samples[s].key, key);
        size_t tweak_len = test_from_hex(samples[s].tweak, tweak);
        size_t n = to_numerals(samples[s].pt, pt);
        ASSERT_EQ_INT(to_numerals(samples[s].ct, ct), n);
        idm_error err;

        ASSERT_OK(idm__ff1_encrypt(key, key_len, tweak_len ? tweak : NULL, tweak_len,
                                   samples[s].radix, pt, n, got, &err),
                  &err);
        to_text(got, n, text);
        ASSERT_EQ_STR(text, samples[s].ct);

        ASSERT_OK(idm__ff1_decrypt(key, key_len, tweak_len ? tweak : NULL, tweak_len,
                                   samples[s].radix, ct, n, got, &err),
                  &err);
        to_text(got, n, text);
        ASSERT_EQ_STR(text, samples[s].pt);

        /* In place, both ways. */
        memcpy(got, pt, n * sizeof pt[0]);
        ASSERT_OK(
            idm__ff1_encrypt(key, key_len, tweak, tweak_len, samples[s].radix, got, n, got, &err),
            &err);
        ASSERT_EQ_MEM(got, ct, n * sizeof ct[0]);
        ASSERT_OK(
            idm__ff1_decrypt(key, key_len, tweak, tweak_len, samples[s].radix, got, n, got, &err),
            &err);
        ASSERT_EQ_MEM(got, pt, n * sizeof pt[0]);
    }
}

static void test_minlen(void)
{
    ASSERT_EQ_INT(idm__ff1_minlen(1), 0);
    ASSERT_EQ_INT(idm__ff1_minlen(65537), 0);
    ASSERT_EQ_INT(idm__ff1_minlen(2), 20);
    ASSERT_EQ_INT(idm__ff1_minlen(10), 6);
    ASSERT_EQ_INT(idm__ff1_minlen(36), 4);
    ASSERT_EQ_INT(idm__ff1_minlen(62), 4);
    ASSERT_EQ_INT(idm__ff1_minlen(100), 3);
    ASSERT_EQ_INT(idm__ff1_minlen(999), 3);
    ASSERT_EQ_INT(idm__ff1_minlen(1000), 2);
    ASSERT_EQ_INT(idm__ff1_minlen(65536), 2);
}

static unsigned pick_radix(void)
{
    static const unsigned fixed[] = {2,  3,   7,   10,  16,   26,   36,    62,    64,
                                     85, 255, 256, 257, 1000, 4096, 10007, 65535, 65536};
    uint64_t r = test_rng_next(&rng_state);
    if (r % 4 == 0)
        return 2 + (unsigned)(test_rng_next(&rng_state) % 65535);
    return fixed[(r >> 8) % (sizeof fixed / sizeof fixed[0])];
}

static void test_round_trips(void)
{
    enum { MAXN = 300 };
    static uint16_t pt[MAXN], ct[MAXN], back[MAXN];
    for (int iter = 0; iter < 3000; iter++) {
        uint8_t key[32], tweak[40];
        static const size_t key_lens[] = {16, 24, 32};
        size_t key_len = key_lens[test_rng_next(&rng_state) % 3];
        size_t tweak_len = (size_t)(test_rng_next(&rng_state) % sizeof tweak);
        for (size_t i = 0; i < key_len; i++)
            key[i] = (uint8_t)test_rng_next(&rng_state);
        for (size_t i = 0; i < tweak_len; i++)
            tweak[i] = (uint8_t)test_rng_next(&rng_state);
        unsigned radix = pick_radix();
        size_t minlen = idm__ff1_minlen(radix);
        size_t n = minlen + (size_t)(test_rng_next(&rng_state) % 40);
        if (iter % 50 == 0)
            n = MAXN - (size_t)(test_rng_next(&rng_state) % 20);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = test_rng_next(&rng_state);
            pt[i] = (uint16_t)(r % 8 == 0 ? radix - 1 : r % 8 == 1 ? 0 : (r >> 8) % radix);
        }
        idm_error err;
        ASSERT_OK(idm__ff1_encrypt(key, key_len, tweak, tweak_len, radix, pt, n, ct, &err), &err);
        for (size_t i = 0; i < n; i++)
            if (ct[i] >= radix)
                TEST_FAIL_("radix %u n %zu: ciphertext numeral %zu is %u", radix, n, i,
                           (unsigned)ct[i]);
        ASSERT_OK(idm__ff1_decrypt(key, key_len, tweak, tweak_len, radix, ct, n, back, &err), &err);
        if (memcmp(back, pt, n * sizeof pt[0]) != 0)
            TEST_FAIL_("radix %u n %zu key %zu tweak %zu: decrypt(encrypt(x)) != x", radix, n,
                       key_len, tweak_len);
        /* Deterministic. */
        ASSERT_OK(idm__ff1_encrypt(key, key_len, tweak, tweak_len, radix, pt, n, back, &err), &err);
        ASSERT_EQ_MEM(back, ct, n * sizeof ct[0]);
    }
}

/* A one-bit change of key or tweak changes the ciphertext. */
static void test_keys_and_tweaks_matter(void)
{
    uint8_t key[32], tweak[11];
    uint16_t pt[19], ct[19], other[19];
    size_t n = to_numerals(PT_36, pt);
    idm_error err;
    for (size_t key_len = 16; key_len <= 32; key_len += 8) {
        size_t tweak_len = test_from_hex(T_11, tweak);
        test_from_hex(K256, key);
        ASSERT_OK(idm__ff1_encrypt(key, key_len, tweak, tweak_len, 36, pt, n, ct, &err), &err);
        for (size_t bit = 0; bit < key_len * 8; bit += 7) {
            key[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            ASSERT_OK(idm__ff1_encrypt(key, key_len, tweak, tweak_len, 36, pt, n, other, &err),
                      &err);
            ASSERT_TRUE(memcmp(ct, other, sizeof ct) != 0);
            key[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
        for (size_t bit = 0; bit < tweak_len * 8; bit += 5) {
            tweak[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            ASSERT_OK(idm__ff1_encrypt(key, key_len, tweak, tweak_len, 36, pt, n, other, &err),
                      &err);
            ASSERT_TRUE(memcmp(ct, other, sizeof ct) != 0);
            tweak[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
        /* A shorter tweak (a prefix) differs too, as does none at all. */
        ASSERT_OK(idm__ff1_encrypt(key, key_len, tweak, tweak_len - 1, 36, pt, n, other, &err),
                  &err);
        ASSERT_TRUE(memcmp(ct, other, sizeof ct) != 0);
        ASSERT_OK(idm__ff1_encrypt(key, key_len, NULL, 0, 36, pt, n, other, &err), &err);
        ASSERT_TRUE(memcmp(ct, other, sizeof ct) != 0);
    }
}

/* The message names the problem and never shows the key. */
static bool msg_ok(const idm_error *err, const char *needle)
{
    char lower[IDM_ERROR_MSG_CAP];
    size_t i = 0;
    for (; err->msg[i] != '\0' && i + 1 < sizeof lower; i++)
        lower[i] = (char)tolower((unsigned char)err->msg[i]);
    lower[i] = '\0';
    if (strstr(lower, needle) == NULL) {
        TEST_REPORT_("message \"%s\" lacks \"%s\"", err->msg, needle);
        return false;
    }
    if (strstr(lower, "2b7e") != NULL || strstr(lower, "7e15") != NULL) {
        TEST_REPORT_("message \"%s\" shows the key", err->msg);
        return false;
    }
    return true;
}

#define ASSERT_EINVAL(call, needle)                                                                \
    do {                                                                                           \
        memset(&err, 0, sizeof err);                                                               \
        ASSERT_EQ_INT((call), IDM_EINVAL);                                                         \
        ASSERT_EQ_INT(err.code, IDM_EINVAL);                                                       \
        ASSERT_TRUE(msg_ok(&err, (needle)));                                                       \
    } while (0)

static void test_validation(void)
{
    uint8_t key[32];
    uint16_t pt[40], out[40];
    size_t key_len = test_from_hex(K128, key);
    for (size_t i = 0; i < 40; i++)
        pt[i] = (uint16_t)(i % 2);
    idm_error err;

    ASSERT_EINVAL(idm__ff1_encrypt(key, key_len, NULL, 0, 0, pt, 20, out, &err), "radix");
    ASSERT_EINVAL(idm__ff1_encrypt(key, key_len, NULL, 0, 1, pt, 20, out, &err), "radix");
    ASSERT_EINVAL(idm__ff1_decrypt(key, key_len, NULL, 0, 65537, pt, 20, out, &err), "radix");

    /* Too short: radix^n must reach 1,000,000, and n >= 2. */
    ASSERT_EINVAL(idm__ff1_encrypt(key, key_len, NULL, 0, 10, pt, 5, out, &err), "at least 6");
    ASSERT_EINVAL(idm__ff1_encrypt(key, key_len, NULL, 0, 2, pt, 19, out, &err), "at least 20");
    ASSERT_EINVAL(idm__ff1_decrypt(key, key_len, NULL, 0, 65536, pt, 1, out, &err), "at least 2");
    ASSERT_EINVAL(idm__ff1_encrypt(key, key_len, NULL, 0, 36, pt, 0, out, &err), "at least 4");
    ASSERT_OK(idm__ff1_encrypt(key, key_len, NULL, 0, 2, pt, 20, out, &err), &err);
    ASSERT_OK(idm__ff1_encrypt(key, key_len, NULL, 0, 65536, pt, 2, out, &err), &err);

    /* A numeral at or above the radix, with its index as the offset. */
    pt[7] = 10;
    ASSERT_EINVAL(idm__ff1_encrypt(key, key_len, NULL, 0, 10, pt, 10, out, &err), "numeral 7");
    ASSERT_EQ_INT(err.offset, 7);
    ASSERT_TRUE(strstr(err.msg, "radix 10") != NULL);
    ASSERT_EINVAL(idm__ff1_decrypt(key, key_len, NULL, 0, 10, pt, 10, out, &err), "numeral 7");
    pt[7] = 9;
    ASSERT_OK(idm__ff1_encrypt(key, key_len, NULL, 0, 10, pt, 10, out, &err), &err);

    /* Key and tweak. */
    ASSERT_EINVAL(idm__ff1_encrypt(key, 15, NULL, 0, 10, pt, 10, out, &err), "16, 24 or 32");
    ASSERT_EINVAL(idm__ff1_encrypt(key, 0, NULL, 0, 10, pt, 10, out, &err), "got 0");
    ASSERT_EINVAL(idm__ff1_decrypt(key, 64, NULL, 0, 10, pt, 10, out, &err), "got 64");
    ASSERT_EINVAL(idm__ff1_encrypt(NULL, 16, NULL, 0, 10, pt, 10, out, &err), "key");
    ASSERT_EINVAL(idm__ff1_encrypt(key, key_len, NULL, 3, 10, pt, 10, out, &err), "tweak");
    ASSERT_EINVAL(idm__ff1_encrypt(key, key_len, NULL, 0, 10, NULL, 10, out, &err), "null");

    /* err may be NULL. */
    ASSERT_EQ_INT(idm__ff1_encrypt(key, key_len, NULL, 0, 1, pt, 10, out, NULL), IDM_EINVAL);
}

/* The keyed context gives the NIST samples on both paths (uint64_t halves
 * and BIGNUMs), from its slots and from the temporary context it sets up
 * when every slot is busy. */
static void test_context_nist_samples(void)
{
    for (size_t s = 0; s < sizeof samples / sizeof samples[0]; s++) {
        uint8_t key[32], tweak[16];
        uint16_t pt[32], ct[32], got[32];
        char text[33];
        size_t key_len = test_from_hex(samples[s].key, key);
        size_t tweak_len = test_from_hex(samples[s].tweak, tweak);
        size_t n = to_numerals(samples[s].pt, pt);
        ASSERT_EQ_INT(to_numerals(samples[s].ct, ct), n);
        idm_error err;
        idm__ff1 f;
        ASSERT_OK(idm__ff1_init(&f, key, key_len, &err), &err);
        for (int busy = 0; busy < 2; busy++) {
            if (busy)
                for (size_t i = 0; i < IDM_FF1_SLOTS; i++)
                    ASSERT_TRUE(!atomic_flag_test_and_set(&f.busy[i]));
            for (unsigned path = 0; path < 2; path++) {
                unsigned flags = path ? IDM__FF1_BIGNUM : 0;
                ASSERT_OK(
                    idm__ff1_crypt(&f, flags, tweak, tweak_len, samples[s].radix, pt, n, got, &err),
                    &err);
                to_text(got, n, text);
                ASSERT_EQ_STR(text, samples[s].ct);
                ASSERT_OK(idm__ff1_crypt(&f, flags | IDM__FF1_DECRYPT, tweak, tweak_len,
                                         samples[s].radix, ct, n, got, &err),
                          &err);
                to_text(got, n, text);
                ASSERT_EQ_STR(text, samples[s].pt);
            }
        }
        idm__ff1_clear(&f);
        ASSERT_EQ_INT(f.key_len, 0);
    }
}

/* Both paths agree wherever the uint64_t one applies (radix^ceil(n/2) <=
 * 2^56), radix 2^16 with six numerals (ID obfuscation) above all. */
static void test_context_paths_agree(void)
{
    uint16_t pt[64], fast[64], slow[64], back[64];
    for (int iter = 0; iter < 4000; iter++) {
        uint8_t key[32], tweak[64];
        size_t tweak_len = (size_t)(test_rng_next(&rng_state) % sizeof tweak);
        for (size_t i = 0; i < sizeof key; i++)
            key[i] = (uint8_t)test_rng_next(&rng_state);
        for (size_t i = 0; i < tweak_len; i++)
            tweak[i] = (uint8_t)test_rng_next(&rng_state);
        unsigned radix = iter % 2 ? 65536 : pick_radix();
        size_t n = 6;
        if (radix != 65536) {
            size_t minlen = idm__ff1_minlen(radix);
            n = minlen + (size_t)(test_rng_next(&rng_state) % 12);
        }
        for (size_t i = 0; i < n; i++)
            pt[i] = (uint16_t)(test_rng_next(&rng_state) % radix);
        idm_error err;
        idm__ff1 f;
        ASSERT_OK(idm__ff1_init(&f, key, 32, &err), &err);
        ASSERT_OK(idm__ff1_crypt(&f, 0, tweak, tweak_len, radix, pt, n, fast, &err), &err);
        ASSERT_OK(idm__ff1_crypt(&f, IDM__FF1_BIGNUM, tweak, tweak_len, radix, pt, n, slow, &err),
                  &err);
        if (memcmp(fast, slow, n * sizeof fast[0]) != 0)
            TEST_FAIL_("radix %u n %zu tweak %zu: the two paths differ", radix, n, tweak_len);
        ASSERT_OK(idm__ff1_encrypt(key, 32, tweak, tweak_len, radix, pt, n, slow, &err), &err);
        ASSERT_EQ_MEM(fast, slow, n * sizeof fast[0]);
        ASSERT_OK(
            idm__ff1_crypt(&f, IDM__FF1_DECRYPT, tweak, tweak_len, radix, fast, n, back, &err),
            &err);
        ASSERT_EQ_MEM(back, pt, n * sizeof pt[0]);
        idm__ff1_clear(&f);
    }
}

static void test_context_validation(void)
{
    uint8_t key[32] = {0};
    uint16_t in[6] = {0}, out[6];
    idm_error err;
    idm__ff1 f;
    ASSERT_EQ_INT(idm__ff1_init(&f, key, 20, &err), IDM_EINVAL);
    ASSERT_TRUE(strstr(err.msg, "16, 24 or 32") != NULL);
    ASSERT_EQ_INT(idm__ff1_crypt(NULL, 0, NULL, 0, 65536, in, 6, out, &err), IDM_EINVAL);
    ASSERT_OK(idm__ff1_init(&f, key, 32, &err), &err);
    in[2] = 10;
    ASSERT_EQ_INT(idm__ff1_crypt(&f, 0, NULL, 0, 10, in, 6, out, &err), IDM_EINVAL);
    ASSERT_EQ_INT(err.offset, 2);
    ASSERT_EQ_INT(idm__ff1_crypt(&f, 0, NULL, 0, 65536, in, 1, out, &err), IDM_EINVAL);
    idm__ff1_clear(&f);
    idm__ff1_clear(NULL);
}

static const struct test_case tests[] = {
    TEST(test_nist_samples),
    TEST(test_minlen),
    TEST(test_round_trips),
    TEST(test_keys_and_tweaks_matter),
    TEST(test_validation),
    TEST(test_context_nist_samples),
    TEST(test_context_paths_agree),
    TEST(test_context_validation),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
