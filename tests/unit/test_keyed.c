/*
 * test_keyed.c - public forms under a secret key (src/keyed, keyed.h): the
 * RFC 5869 and RFC 4231 vectors through the OpenSSL calls keyed.c makes,
 * key text, obfuscated IDs (round trips, no collisions, no order, keys and
 * prefixes that matter, tampering), signed tokens (valid, expired at the
 * boundary, forged, malformed) and failing allocators and entropy.
 */
#include "testlib.h"

#include "codec/codec.h"
#include "keyed/keyed_internal.h"

#include <idmint/idmint.h>
#include <stdint.h>
#include <stdlib.h>

static uint64_t rng_state = 0x6b657965u;

static void master_from_seed(uint8_t master[IDM_KEY_BYTES], uint64_t seed)
{
    for (size_t i = 0; i < IDM_KEY_BYTES; i += 8) {
        uint64_t v = test_rng_next(&seed);
        memcpy(master + i, &v, 8);
    }
}

static idm_key *key_from_seed(uint64_t seed)
{
    uint8_t master[IDM_KEY_BYTES];
    master_from_seed(master, seed);
    idm_key *k = NULL;
    idm_error err;
    if (idm_key_new(&k, master, NULL, &err) != IDM_OK) {
        fprintf(stderr, "idm_key_new: %s\n", err.msg);
        exit(1);
    }
    return k;
}

/* ---- primitives --------------------------------------------------------------- */

/* RFC 5869 appendix A, test cases 1 (salt and info) and 3 (neither). */
static void hkdf_matches_rfc5869(void)
{
    uint8_t ikm[22], salt[13], info[10], okm[42], want[42];
    memset(ikm, 0x0b, sizeof ikm);
    for (size_t i = 0; i < sizeof salt; i++)
        salt[i] = (uint8_t)i;
    for (size_t i = 0; i < sizeof info; i++)
        info[i] = (uint8_t)(0xf0 + i);
    ASSERT_EQ_INT(
        idm__hkdf_sha256(ikm, sizeof ikm, salt, sizeof salt, info, sizeof info, okm, sizeof okm),
        IDM_OK);
    test_from_hex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865",
             want);
    ASSERT_EQ_MEM(okm, want, sizeof want);
    ASSERT_EQ_INT(idm__hkdf_sha256(ikm, sizeof ikm, NULL, 0, NULL, 0, okm, sizeof okm), IDM_OK);
    test_from_hex("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8",
             want);
    ASSERT_EQ_MEM(okm, want, sizeof want);
}

/* RFC 4231 section 4, test cases 1, 2 and 6 (a key longer than a block). */
static void hmac_matches_rfc4231(void)
{
    uint8_t key[131], out[32], want[32];
    const char *msg6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    struct {
        size_t key_len;
        int key_byte; /* -1: "Jefe" */
        const char *msg;
        const char *mac;
    } cases[] = {
        {20, 0x0b, "Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
        {4, -1, "what do ya want for nothing?",
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
        {131, 0xaa, msg6, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (cases[c].key_byte < 0)
            memcpy(key, "Jefe", 4);
        else
            memset(key, cases[c].key_byte, cases[c].key_len);
        idm__hmac h;
        ASSERT_EQ_INT(idm__hmac_init(&h, key, cases[c].key_len), IDM_OK);
        /* Twice: the keyed template is not used up by a run. */
        for (int twice = 0; twice < 2; twice++) {
            ASSERT_EQ_INT(
                idm__hmac_run(&h, (const uint8_t *)cases[c].msg, strlen(cases[c].msg), out),
                IDM_OK);
            test_from_hex(cases[c].mac, want);
            ASSERT_EQ_MEM(out, want, 32);
        }
        idm__hmac_clear(&h);
    }
}

/* ---- keys ------------------------------------------------------------------ */

static void key_text_rejects_malformed_input(void)
{
    uint8_t master[IDM_KEY_BYTES];
    char text[IDM_KEY_TEXT_LEN + 8];
    idm_error err;
    master_from_seed(master, 1);
    ASSERT_EQ_INT(idm_key_format(master, text, IDM_KEY_TEXT_LEN), IDM_ENOSPC);
    ASSERT_EQ_INT(idm_key_format(master, text, sizeof text), IDM_OK);
    char hex[65];
    memcpy(hex, text + 14, 64);
    hex[64] = '\0';

    struct {
        const char *edit; /* applied by the loop below */
        size_t len;
        size_t offset;
    } bad[] = {
        {"short", 10, 10}, {"nohex", 14, 14}, {"63", 14 + 63, 77}, {"g", 0, 20},
        {"head", 0, 3},    {"trail", 80, 79}, {"crcr", 80, 78},    {"space", 80, 78},
    };
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        char t[IDM_KEY_TEXT_LEN + 8];
        memcpy(t, text, IDM_KEY_TEXT_LEN + 1);
        size_t len = bad[c].len;
        const char *e = bad[c].edit;
        if (strcmp(e, "g") == 0) {
            t[20] = 'g';
            len = IDM_KEY_TEXT_LEN;
        } else if (strcmp(e, "head") == 0) {
            t[3] = 'K';
            len = IDM_KEY_TEXT_LEN;
        } else if (strcmp(e, "trail") == 0) {
            memcpy(t + 78, "\nx", 2);
        } else if (strcmp(e, "crcr") == 0) {
            memcpy(t + 78, "\r\r", 2);
        } else if (strcmp(e, "space") == 0) {
            memcpy(t + 78, " \n", 2);
        }
        memset(&err, 0, sizeof err);
        ASSERT_EQ_INT(idm_key_parse(t, len, master, &err), IDM_EPARSE);
        if (err.offset != bad[c].offset)
            TEST_FAIL_("case %s: offset %zu, want %zu (%s)", e, err.offset, bad[c].offset, err.msg);
        /* The message never quotes the key's digits. */
        for (size_t i = 0; i + 8 <= 64; i++) {
            char piece[9];
            memcpy(piece, hex + i, 8);
            piece[8] = '\0';
            if (strstr(err.msg, piece) != NULL)
                TEST_FAIL_("case %s: the message quotes key digits: %s", e, err.msg);
        }
    }
}

static void key_text_round_trips(void)
{
    for (uint64_t seed = 0; seed < 200; seed++) {
        uint8_t master[IDM_KEY_BYTES], back[IDM_KEY_BYTES];
        char text[IDM_KEY_TEXT_LEN + 1];
        idm_error err;
        master_from_seed(master, seed);
        ASSERT_EQ_INT(idm_key_format(master, text, sizeof text), IDM_OK);
        ASSERT_EQ_INT(strlen(text), IDM_KEY_TEXT_LEN);
        ASSERT_TRUE(memcmp(text, "idmint-key-v1 ", 14) == 0);
        ASSERT_TRUE(text[IDM_KEY_TEXT_LEN - 1] == '\n');
        ASSERT_OK(idm_key_parse(text, IDM_KEY_TEXT_LEN, back, &err), &err);
        ASSERT_EQ_MEM(back, master, IDM_KEY_BYTES);
        /* Without the newline, with CRLF, in upper case. */
        ASSERT_OK(idm_key_parse(text, IDM_KEY_TEXT_LEN - 1, back, &err), &err);
        ASSERT_EQ_MEM(back, master, IDM_KEY_BYTES);
        char crlf[IDM_KEY_TEXT_LEN + 2];
        memcpy(crlf, text, IDM_KEY_TEXT_LEN - 1);
        memcpy(crlf + IDM_KEY_TEXT_LEN - 1, "\r\n", 2);
        ASSERT_OK(idm_key_parse(crlf, IDM_KEY_TEXT_LEN + 1, back, &err), &err);
        ASSERT_EQ_MEM(back, master, IDM_KEY_BYTES);
        for (size_t i = 14; i < IDM_KEY_TEXT_LEN - 1; i++)
            if (text[i] >= 'a' && text[i] <= 'f')
                text[i] = (char)(text[i] - 'a' + 'A');
        ASSERT_OK(idm_key_parse(text, IDM_KEY_TEXT_LEN, back, &err), &err);
        ASSERT_EQ_MEM(back, master, IDM_KEY_BYTES);
    }
}

static void fault_free(void *ctx, void *p);

static int fixed_fill(void *ctx, void *buf, size_t len)
{
    memset(buf, *(int *)ctx, len);
    return IDM_OK;
}

static int failing_fill(void *ctx, void *buf, size_t len)
{
    (void)ctx;
    memset(buf, 0x5a, len);
    return IDM_ENOENTROPY;
}

static void key_generate_uses_the_entropy_source(void)
{
    uint8_t a[IDM_KEY_BYTES], b[IDM_KEY_BYTES], want[IDM_KEY_BYTES];
    idm_error err;
    int byte = 0x42;
    idm_entropy fixed = {fixed_fill, &byte};
    ASSERT_OK(idm_key_generate(a, &fixed, &err), &err);
    memset(want, 0x42, sizeof want);
    ASSERT_EQ_MEM(a, want, IDM_KEY_BYTES);
    ASSERT_OK(idm_key_generate(a, NULL, &err), &err);
    ASSERT_OK(idm_key_generate(b, NULL, &err), &err);
    ASSERT_TRUE(memcmp(a, b, IDM_KEY_BYTES) != 0);
    idm_entropy failing = {failing_fill, NULL};
    ASSERT_EQ_INT(idm_key_generate(a, &failing, &err), IDM_ENOENTROPY);
    ASSERT_EQ_INT(err.code, IDM_ENOENTROPY);
    memset(want, 0, sizeof want);
    ASSERT_EQ_MEM(a, want, IDM_KEY_BYTES); /* nothing of a failed draw is left */
    ASSERT_EQ_INT(idm_key_generate(NULL, NULL, &err), IDM_EINVAL);
}

static void key_fingerprint_names_the_key(void)
{
    idm_key *k1 = key_from_seed(1), *k1b = key_from_seed(1), *k2 = key_from_seed(2);
    char f1[IDM_KEY_FINGERPRINT_LEN + 1], f1b[sizeof f1], f2[sizeof f1];
    ASSERT_EQ_INT(idm_key_fingerprint(k1, f1, IDM_KEY_FINGERPRINT_LEN), IDM_ENOSPC);
    ASSERT_EQ_INT(idm_key_fingerprint(k1, f1, sizeof f1), IDM_OK);
    ASSERT_EQ_INT(idm_key_fingerprint(k1b, f1b, sizeof f1b), IDM_OK);
    ASSERT_EQ_INT(idm_key_fingerprint(k2, f2, sizeof f2), IDM_OK);
    ASSERT_EQ_INT(strlen(f1), IDM_KEY_FINGERPRINT_LEN);
    ASSERT_EQ_STR(f1, f1b);
    ASSERT_TRUE(strcmp(f1, f2) != 0);
    for (size_t i = 0; i < IDM_KEY_FINGERPRINT_LEN; i++)
        ASSERT_TRUE((f1[i] >= '0' && f1[i] <= '9') || (f1[i] >= 'a' && f1[i] <= 'f'));
    /* Not the key's hex, nor any part of it. */
    uint8_t master[IDM_KEY_BYTES];
    char hex[65];
    master_from_seed(master, 1);
    idm__hex_encode(master, IDM_KEY_BYTES, hex);
    hex[64] = '\0';
    char piece[9];
    memcpy(piece, f1, 8);
    piece[8] = '\0';
    ASSERT_TRUE(strstr(hex, piece) == NULL);
    idm_key_free(k1);
    idm_key_free(k1b);
    idm_key_free(k2);
    idm_key_free(NULL);

    idm_error err;
    idm_key *k = NULL;
    ASSERT_EQ_INT(idm_key_new(NULL, master, NULL, &err), IDM_EINVAL);
    ASSERT_EQ_INT(idm_key_new(&k, NULL, NULL, &err), IDM_EINVAL);
    idm_allocator half = {NULL, fault_free, NULL};
    ASSERT_EQ_INT(idm_key_new(&k, master, &half, &err), IDM_EINVAL);
    ASSERT_TRUE(k == NULL);
}

/* ---- obfuscated IDs --------------------------------------------------------- */

static const char *const prefixes[] = {"", "user", "a_b", "order_line"};
enum { N_PREFIXES = sizeof prefixes / sizeof prefixes[0] };

static int obf(const idm_key *k, uint64_t id, const char *prefix, char *dst)
{
    idm_error err;
    int rc = idm_obfuscate(k, id, prefix, strlen(prefix), dst, IDM_OBF_STRLEN_MAX + 1, &err);
    if (rc != IDM_OK)
        fprintf(stderr, "idm_obfuscate(%llu): %s\n", (unsigned long long)id, err.msg);
    return rc;
}

static void obfuscate_rejects_bad_arguments(void)
{
    idm_key *k = key_from_seed(3);
    char buf[IDM_OBF_STRLEN_MAX + 1];
    idm_error err;
    ASSERT_EQ_INT(idm_obfuscate(k, 1, "User", 4, buf, sizeof buf, &err), IDM_EINVAL);
    ASSERT_EQ_INT(err.offset, 0);
    ASSERT_EQ_INT(idm_obfuscate(k, 1, "us3r", 4, buf, sizeof buf, &err), IDM_EINVAL);
    ASSERT_EQ_INT(err.offset, 2);
    ASSERT_EQ_INT(idm_obfuscate(k, 1, "user_", 5, buf, sizeof buf, &err), IDM_EINVAL);
    ASSERT_EQ_INT(idm_obfuscate(NULL, 1, NULL, 0, buf, sizeof buf, &err), IDM_EINVAL);
    /* Exact room: 18 bytes without a prefix, prefix_len + 19 with one. */
    ASSERT_EQ_INT(idm_obfuscate(k, 1, NULL, 0, buf, 17, &err), IDM_ENOSPC);
    ASSERT_OK(idm_obfuscate(k, 1, NULL, 0, buf, 18, &err), &err);
    ASSERT_EQ_INT(strlen(buf), IDM_OBF_BODY_LEN);
    ASSERT_EQ_INT(idm_obfuscate(k, 1, "user", 4, buf, 22, &err), IDM_ENOSPC);
    ASSERT_OK(idm_obfuscate(k, 1, "user", 4, buf, 23, &err), &err);
    ASSERT_EQ_INT(strlen(buf), 22);
    ASSERT_TRUE(memcmp(buf, "user_", 5) == 0);
    idm_key_free(k);
}

static void reveal_rejects_malformed_text(void)
{
    idm_key *k = key_from_seed(3);
    char good[IDM_OBF_STRLEN_MAX + 1];
    ASSERT_EQ_INT(obf(k, 12345, "user", good), IDM_OK);
    struct {
        const char *text;
        size_t offset;
    } bad[] = {
        {"", 0},
        {"0000000000000000", 16},
        {"000000000000000000", 17},
        {"00000000000000-00", 14},
        {"zzzzzzzzzzzzzzzzz", 0}, /* 62^17 - 1 >= 2^96 */
        {"_00000000000000000", 0},
        {"User_00000000000000000", 0},
        {"us3r_00000000000000000", 2},
        {"user__00000000000000000", 4},
        {"user_0000000000000000", 21},
    };
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        uint64_t id = 7;
        idm_error err;
        int rc = idm_reveal(k, bad[c].text, strlen(bad[c].text), &id, &err);
        if (rc != IDM_EPARSE)
            TEST_FAIL_("%s: %d, want IDM_EPARSE", bad[c].text, rc);
        if (err.offset != bad[c].offset)
            TEST_FAIL_("%s: offset %zu, want %zu (%s)", bad[c].text, err.offset, bad[c].offset,
                       err.msg);
        ASSERT_EQ_U64(id, 7);
    }
    /* The largest 96-bit value parses and is refused by its check bits
     * (or is, with p = 2^-32, some ID). */
    uint64_t id;
    idm_error err;
    uint8_t top[12];
    char text[IDM_OBF_BODY_LEN + 1];
    memset(top, 0xff, sizeof top);
    idm__base62_encode(top, sizeof top, text, IDM_OBF_BODY_LEN);
    int rc = idm_reveal(k, text, IDM_OBF_BODY_LEN, &id, &err);
    ASSERT_TRUE(rc == IDM_EFORGED || rc == IDM_OK);
    idm_key_free(k);
}

static void obfuscate_round_trips(void)
{
    for (uint64_t seed = 10; seed < 13; seed++) {
        idm_key *k = key_from_seed(seed);
        for (size_t p = 0; p < N_PREFIXES; p++) {
            size_t plen = strlen(prefixes[p]);
            for (int run = 0; run < 3; run++) {
                for (uint64_t i = 0; i < 100000 / (N_PREFIXES * 3) + 1; i++) {
                    uint64_t id = run == 0   ? i
                                  : run == 1 ? UINT64_MAX - i
                                             : test_rng_next(&rng_state);
                    char text[IDM_OBF_STRLEN_MAX + 1];
                    uint64_t back = 0;
                    idm_error err;
                    ASSERT_EQ_INT(obf(k, id, prefixes[p], text), IDM_OK);
                    size_t len = strlen(text);
                    ASSERT_EQ_INT(len, plen + (plen ? 1 : 0) + IDM_OBF_BODY_LEN);
                    ASSERT_OK(idm_reveal(k, text, len, &back, &err), &err);
                    if (back != id)
                        TEST_FAIL_("%s revealed %llu, want %llu", text, (unsigned long long)back,
                                   (unsigned long long)id);
                    /* Deterministic. */
                    char again[IDM_OBF_STRLEN_MAX + 1];
                    ASSERT_EQ_INT(obf(k, id, prefixes[p], again), IDM_OK);
                    ASSERT_EQ_STR(again, text);
                }
            }
        }
        idm_key_free(k);
    }
}

static int cmp_body(const void *a, const void *b)
{
    return memcmp(a, b, IDM_OBF_BODY_LEN);
}

static void obfuscate_never_collides(void)
{
    enum { N = 1000000 };
    idm_key *k = key_from_seed(20);
    char(*bodies)[IDM_OBF_BODY_LEN] = malloc((size_t)N * IDM_OBF_BODY_LEN);
    ASSERT_TRUE(bodies != NULL);
    for (uint64_t i = 0; i < N; i++) {
        char text[IDM_OBF_STRLEN_MAX + 1];
        ASSERT_EQ_INT(obf(k, i, "", text), IDM_OK);
        memcpy(bodies[i], text, IDM_OBF_BODY_LEN);
    }
    qsort(bodies, N, IDM_OBF_BODY_LEN, cmp_body);
    size_t dups = 0;
    for (size_t i = 1; i < N; i++)
        if (memcmp(bodies[i - 1], bodies[i], IDM_OBF_BODY_LEN) == 0)
            dups++;
    free(bodies);
    idm_key_free(k);
    ASSERT_EQ_INT(dups, 0);
}

static void decode96(const char *body, uint8_t out[12])
{
    idm_error err;
    if (idm__base62_decode(body, IDM_OBF_BODY_LEN, out, 12, "t", &err) != IDM_OK)
        abort();
}

static void obfuscate_keys_and_prefixes_give_unrelated_texts(void)
{
    enum { N = 100000 };
    idm_key *a = key_from_seed(30), *b = key_from_seed(31);
    uint64_t same_bits_keys = 0, same_bits_prefix = 0;
    for (uint64_t i = 0; i < N; i++) {
        char ta[IDM_OBF_STRLEN_MAX + 1], tb[IDM_OBF_STRLEN_MAX + 1], tp[IDM_OBF_STRLEN_MAX + 1];
        uint8_t va[12], vb[12], vp[12];
        ASSERT_EQ_INT(obf(a, i, "", ta), IDM_OK);
        ASSERT_EQ_INT(obf(b, i, "", tb), IDM_OK);
        ASSERT_EQ_INT(obf(a, i, "user", tp), IDM_OK);
        decode96(ta, va);
        decode96(tb, vb);
        decode96(tp + 5, vp);
        for (int j = 0; j < 12; j++) {
            same_bits_keys += (uint64_t)(8 - __builtin_popcount((unsigned)(va[j] ^ vb[j])));
            same_bits_prefix += (uint64_t)(8 - __builtin_popcount((unsigned)(va[j] ^ vp[j])));
        }
    }
    double fk = (double)same_bits_keys / (96.0 * N), fp = (double)same_bits_prefix / (96.0 * N);
    if (fk < 0.49 || fk > 0.51 || fp < 0.49 || fp > 0.51)
        TEST_FAIL_("bit agreement: %.4f between keys, %.4f between prefixes (want ~0.5)", fk, fp);
    idm_key_free(a);
    idm_key_free(b);
}

static void obfuscate_hides_order(void)
{
    enum { N = 100000 };
    idm_key *k = key_from_seed(40);
    char prev[IDM_OBF_STRLEN_MAX + 1];
    ASSERT_EQ_INT(obf(k, 1000000, "", prev), IDM_OK);
    uint64_t in_order = 0, common = 0;
    for (uint64_t i = 1; i <= N; i++) {
        char cur[IDM_OBF_STRLEN_MAX + 1];
        ASSERT_EQ_INT(obf(k, 1000000 + i, "", cur), IDM_OK);
        if (strcmp(prev, cur) < 0)
            in_order++;
        size_t c = 0;
        while (c < IDM_OBF_BODY_LEN && prev[c] == cur[c])
            c++;
        common += c;
        memcpy(prev, cur, sizeof cur);
    }
    double order = (double)in_order / N, mean_common = (double)common / N;
    if (order < 0.48 || order > 0.52)
        TEST_FAIL_("%.4f of adjacent IDs' texts are in ID order (want ~0.5)", order);
    /* The first character is uniform-ish over 0..1h (62^17 > 2^96): two
     * random bodies share about 1/20 of a character on average. */
    if (mean_common >= 1.5)
        TEST_FAIL_("adjacent IDs' texts share %.3f leading characters on average", mean_common);
    idm_key_free(k);
}

static const char base62_chars[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

static void reveal_detects_tampering_keys_and_prefixes(void)
{
    idm_key *k = key_from_seed(50), *other = key_from_seed(51);
    uint64_t trials = 0, passes = 0;
    for (uint64_t t = 0; t < 100; t++) {
        uint64_t id = t < 50 ? t : test_rng_next(&rng_state);
        const char *prefix = t % 2 ? "user" : "";
        char text[IDM_OBF_STRLEN_MAX + 1];
        ASSERT_EQ_INT(obf(k, id, prefix, text), IDM_OK);
        size_t len = strlen(text);
        for (size_t pos = 0; pos < len; pos++) {
            if (text[pos] == '_')
                continue;
            for (size_t c = 0; c < 62; c++) {
                char copy[IDM_OBF_STRLEN_MAX + 1];
                memcpy(copy, text, len + 1);
                if (copy[pos] == base62_chars[c])
                    continue;
                copy[pos] = base62_chars[c];
                uint64_t back;
                idm_error err;
                int rc = idm_reveal(k, copy, len, &back, &err);
                trials++;
                if (rc == IDM_OK)
                    passes++;
                else if (rc != IDM_EFORGED && rc != IDM_EPARSE)
                    TEST_FAIL_("%s: code %d", copy, rc);
            }
        }
        uint64_t back;
        idm_error err;
        ASSERT_EQ_INT(idm_reveal(other, text, len, &back, &err), IDM_EFORGED);
        ASSERT_TRUE(strstr(err.msg, "another key, or altered") != NULL);
        /* Moved to another prefix (or none). */
        char moved[IDM_OBF_STRLEN_MAX + 1];
        const char *body = strchr(text, '_') ? strchr(text, '_') + 1 : text;
        snprintf(moved, sizeof moved, "%s%s", *prefix ? "" : "item_", body);
        ASSERT_EQ_INT(idm_reveal(k, moved, strlen(moved), &back, &err), IDM_EFORGED);
    }
    ASSERT_TRUE(trials > 100000);
    /* Each would pass with p = 2^-32. */
    ASSERT_EQ_U64(passes, 0);
    idm_key_free(k);
    idm_key_free(other);
}

/* ---- signed tokens ---------------------------------------------------------- */

#define T_EXPIRY INT64_C(1796724000) /* 2026-12-08T10:00:00Z */

static void stoken_rejects_bad_arguments(void)
{
    idm_key *k = key_from_seed(60);
    idm_gen *g = NULL;
    idm_error err;
    ASSERT_OK(idm_gen_new(&g, NULL, &err), &err);
    char buf[IDM_STOKEN_STRLEN_MAX + 1];
    ASSERT_EQ_INT(idm_stoken_next(g, k, NULL, 0, 0, buf, sizeof buf, &err), IDM_EINVAL);
    ASSERT_EQ_INT(idm_stoken_next(g, k, NULL, 0, -5, buf, sizeof buf, &err), IDM_EINVAL);
    ASSERT_EQ_INT(idm_stoken_next(g, k, NULL, 0, IDM_STOKEN_MAX_EXPIRY + 1, buf, sizeof buf, &err),
                  IDM_EINVAL);
    ASSERT_EQ_INT(idm_stoken_next(g, k, "Share", 5, T_EXPIRY, buf, sizeof buf, &err), IDM_EINVAL);
    ASSERT_EQ_INT(idm_stoken_next(g, k, NULL, 0, T_EXPIRY, buf, 50, &err), IDM_ENOSPC);
    ASSERT_OK(idm_stoken_next(g, k, NULL, 0, T_EXPIRY, buf, 51, &err), &err);
    ASSERT_EQ_INT(strlen(buf), IDM_STOKEN_BODY_LEN);
    ASSERT_EQ_INT(idm_stoken_next(g, k, "share", 5, T_EXPIRY, buf, 56, &err), IDM_ENOSPC);
    ASSERT_OK(idm_stoken_next(g, k, "share", 5, T_EXPIRY, buf, 57, &err), &err);
    ASSERT_EQ_INT(strlen(buf), 56);
    ASSERT_OK(idm_stoken_next(g, k, NULL, 0, IDM_STOKEN_MAX_EXPIRY, buf, sizeof buf, &err), &err);
    int64_t exp = 0;
    ASSERT_OK(idm_stoken_verify(k, buf, strlen(buf), 0, &exp, &err), &err);
    ASSERT_TRUE(exp == IDM_STOKEN_MAX_EXPIRY);
    idm_gen_free(g);
    idm_key_free(k);
}

static void stoken_verifies_and_expires(void)
{
    idm_key *k = key_from_seed(61);
    idm_gen *g = NULL;
    idm_error err;
    ASSERT_OK(idm_gen_new(&g, NULL, &err), &err);
    for (size_t p = 0; p < N_PREFIXES; p++) {
        for (int i = 0; i < 200; i++) {
            char buf[IDM_STOKEN_STRLEN_MAX + 1], again[IDM_STOKEN_STRLEN_MAX + 1];
            size_t plen = strlen(prefixes[p]);
            ASSERT_OK(idm_stoken_next(g, k, prefixes[p], plen, T_EXPIRY, buf, sizeof buf, &err),
                      &err);
            ASSERT_OK(idm_stoken_next(g, k, prefixes[p], plen, T_EXPIRY, again, sizeof again, &err),
                      &err);
            ASSERT_TRUE(strcmp(buf, again) != 0); /* random part */
            size_t len = strlen(buf);
            ASSERT_EQ_INT(len, plen + (plen ? 1 : 0) + IDM_STOKEN_BODY_LEN);
            int64_t exp = 0;
            ASSERT_OK(idm_stoken_verify(k, buf, len, T_EXPIRY - 1, &exp, &err), &err);
            ASSERT_TRUE(exp == T_EXPIRY);
            exp = 0;
            ASSERT_EQ_INT(idm_stoken_verify(k, buf, len, T_EXPIRY, &exp, &err), IDM_EEXPIRED);
            ASSERT_TRUE(exp == T_EXPIRY);
            ASSERT_EQ_STR(err.msg, "expired at 2026-12-08T10:00:00Z");
            ASSERT_EQ_INT(idm_stoken_verify(k, buf, len, T_EXPIRY + 86400, NULL, &err),
                          IDM_EEXPIRED);
        }
    }
    idm_gen_free(g);
    idm_key_free(k);
}

static void stoken_detects_forgery(void)
{
    idm_key *k = key_from_seed(62), *other = key_from_seed(63);
    idm_gen *g = NULL;
    idm_error err;
    ASSERT_OK(idm_gen_new(&g, NULL, &err), &err);
    uint64_t passes = 0;
    for (int t = 0; t < 40; t++) {
        const char *prefix = t % 2 ? "share" : "";
        char buf[IDM_STOKEN_STRLEN_MAX + 1];
        ASSERT_OK(idm_stoken_next(g, k, prefix, strlen(prefix), T_EXPIRY, buf, sizeof buf, &err),
                  &err);
        size_t len = strlen(buf);
        for (size_t pos = 0; pos < len; pos++) {
            for (size_t c = 0; c < 62; c++) {
                char copy[IDM_STOKEN_STRLEN_MAX + 1];
                memcpy(copy, buf, len + 1);
                if (copy[pos] == '_' || copy[pos] == base62_chars[c])
                    continue;
                copy[pos] = base62_chars[c];
                int rc = idm_stoken_verify(k, copy, len, 0, NULL, &err);
                if (rc == IDM_OK || rc == IDM_EEXPIRED)
                    passes++;
                else if (rc != IDM_EFORGED && rc != IDM_EPARSE)
                    TEST_FAIL_("%s: code %d", copy, rc);
            }
        }
        int64_t exp = 7;
        ASSERT_EQ_INT(idm_stoken_verify(other, buf, len, 0, &exp, &err), IDM_EFORGED);
        ASSERT_TRUE(exp == 7); /* untouched when the tag fails */
        ASSERT_TRUE(strstr(err.msg, "another key, or altered") != NULL);
        char moved[IDM_STOKEN_STRLEN_MAX + 1];
        const char *body = strchr(buf, '_') ? strchr(buf, '_') + 1 : buf;
        snprintf(moved, sizeof moved, "%s%s", *prefix ? "" : "link_", body);
        ASSERT_EQ_INT(idm_stoken_verify(k, moved, strlen(moved), 0, NULL, &err), IDM_EFORGED);

        /* A later expiry written into the token (the readable field). */
        uint8_t raw[37];
        ASSERT_OK(idm__base62_decode(body, IDM_STOKEN_BODY_LEN, raw, sizeof raw, "t", &err), &err);
        raw[20] ^= 1;
        char forged[IDM_STOKEN_STRLEN_MAX + 1];
        size_t at = (size_t)(body - buf);
        memcpy(forged, buf, at);
        idm__base62_encode(raw, sizeof raw, forged + at, IDM_STOKEN_BODY_LEN);
        forged[at + IDM_STOKEN_BODY_LEN] = '\0';
        ASSERT_EQ_INT(idm_stoken_verify(k, forged, len, 0, NULL, &err), IDM_EFORGED);
    }
    ASSERT_EQ_U64(passes, 0);
    idm_gen_free(g);
    idm_key_free(k);
    idm_key_free(other);
}

static void stoken_rejects_malformed_text(void)
{
    idm_key *k = key_from_seed(64);
    char zs[64], longer[64];
    memset(zs, 'z', IDM_STOKEN_BODY_LEN);
    zs[IDM_STOKEN_BODY_LEN] = '\0';
    memset(longer, '0', IDM_STOKEN_BODY_LEN + 1);
    longer[IDM_STOKEN_BODY_LEN + 1] = '\0';
    const char *bad[] = {"", "abc", zs, longer, "Share_abc", "_0000"};
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        idm_error err;
        int rc = idm_stoken_verify(k, bad[c], strlen(bad[c]), 0, NULL, &err);
        if (rc != IDM_EPARSE)
            TEST_FAIL_("%s: %d, want IDM_EPARSE", bad[c], rc);
    }
    /* Zero is a well-formed body with a wrong tag. */
    char zeros[64];
    memset(zeros, '0', IDM_STOKEN_BODY_LEN);
    zeros[IDM_STOKEN_BODY_LEN] = '\0';
    idm_error err;
    ASSERT_EQ_INT(idm_stoken_verify(k, zeros, IDM_STOKEN_BODY_LEN, 0, NULL, &err), IDM_EFORGED);
    /* An obfuscated ID is not a token, and the other way round. */
    char id[IDM_OBF_STRLEN_MAX + 1];
    ASSERT_EQ_INT(obf(k, 5, "", id), IDM_OK);
    ASSERT_EQ_INT(idm_stoken_verify(k, id, strlen(id), 0, NULL, &err), IDM_EPARSE);
    uint64_t v;
    ASSERT_EQ_INT(idm_reveal(k, zeros, IDM_STOKEN_BODY_LEN, &v, &err), IDM_EPARSE);
    idm_key_free(k);
}

/* ---- fault injection ---------------------------------------------------------- */

struct faults {
    long calls, fail_at, live;
    int sticky;
};

static void *fault_alloc(void *ctx, size_t size, size_t align)
{
    struct faults *f = ctx;
    long n = ++f->calls;
    if (f->fail_at && (n == f->fail_at || (f->sticky && n > f->fail_at)))
        return NULL;
    void *p = NULL;
    if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size) != 0)
        return NULL;
    f->live++;
    return p;
}

static void fault_free(void *ctx, void *p)
{
    struct faults *f = ctx;
    f->live--;
    free(p);
}

static int fault_fill(void *ctx, void *buf, size_t len)
{
    struct faults *f = ctx;
    long n = ++f->calls;
    if (f->fail_at && (n == f->fail_at || (f->sticky && n > f->fail_at)))
        return IDM_ENOENTROPY;
    memset(buf, 0x33, len);
    return IDM_OK;
}

static void faults_in_key_new(void)
{
    uint8_t master[IDM_KEY_BYTES];
    master_from_seed(master, 70);
    for (int sticky = 0; sticky < 2; sticky++) {
        int finished = 0;
        for (long at = 1; at < 20 && !finished; at++) {
            struct faults f = {0, at, 0, sticky};
            idm_allocator a = {fault_alloc, fault_free, &f};
            idm_key *k = (idm_key *)&f;
            idm_error err;
            int rc = idm_key_new(&k, master, &a, &err);
            if (f.calls < at) {
                ASSERT_OK(rc, &err);
                finished = 1;
            } else {
                ASSERT_EQ_INT(rc, IDM_ENOMEM);
                ASSERT_TRUE(k == NULL);
                ASSERT_TRUE(err.msg[0] != '\0');
            }
            idm_key_free(k);
            ASSERT_EQ_INT(f.live, 0);
        }
        ASSERT_TRUE(finished);
    }
}

static void faults_in_stoken_next(void)
{
    idm_key *k = key_from_seed(71);
    for (int sticky = 0; sticky < 2; sticky++) {
        int finished = 0;
        for (long at = 1; at < 20 && !finished; at++) {
            struct faults f = {0, at, 0, sticky};
            idm_gen_config cfg = {0};
            cfg.entropy = (idm_entropy){fault_fill, &f};
            idm_gen *g = NULL;
            idm_error err;
            int rc = idm_gen_new(&g, &cfg, &err);
            char buf[IDM_STOKEN_STRLEN_MAX + 1];
            /* Enough tokens to need more than one refill of the pool. */
            for (int i = 0; rc == IDM_OK && i < 2 * IDM_ENTROPY_POOL_BYTES / 16 + 3; i++)
                rc = idm_stoken_next(g, k, "s", 1, T_EXPIRY, buf, sizeof buf, &err);
            if (f.calls < at) {
                ASSERT_OK(rc, &err);
                finished = 1;
            } else {
                ASSERT_EQ_INT(rc, IDM_ENOENTROPY);
                ASSERT_TRUE(err.msg[0] != '\0');
            }
            idm_gen_free(g);
        }
        ASSERT_TRUE(finished);
    }
    idm_key_free(k);
}

static void strerror_names_the_new_codes(void)
{
    ASSERT_EQ_STR(idm_strerror(IDM_EFORGED), "check failed: another key, or altered");
    ASSERT_EQ_STR(idm_strerror(IDM_EEXPIRED), "expired");
}

static const struct test_case tests[] = {
    TEST(hkdf_matches_rfc5869),
    TEST(hmac_matches_rfc4231),
    TEST(key_text_rejects_malformed_input),
    TEST(key_text_round_trips),
    TEST(key_generate_uses_the_entropy_source),
    TEST(key_fingerprint_names_the_key),
    TEST(obfuscate_rejects_bad_arguments),
    TEST(reveal_rejects_malformed_text),
    TEST(obfuscate_round_trips),
    TEST(obfuscate_never_collides),
    TEST(obfuscate_keys_and_prefixes_give_unrelated_texts),
    TEST(obfuscate_hides_order),
    TEST(reveal_detects_tampering_keys_and_prefixes),
    TEST(stoken_rejects_bad_arguments),
    TEST(stoken_verifies_and_expires),
    TEST(stoken_detects_forgery),
    TEST(stoken_rejects_malformed_text),
    TEST(faults_in_key_new),
    TEST(faults_in_stoken_next),
    TEST(strerror_names_the_new_codes),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
