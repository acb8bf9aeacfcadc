/*
 * text.c - bulk minting straight into text (idm_gen_next_text_n).
 *
 * Mints in chunks of CHUNK binary IDs on the stack (one clock read and one
 * state reservation per chunk), then formats each into dst with the
 * codecs. Used by the CLI's gen path and the coming server.
 */
#include "internal.h"

#include "format/format_row.h"

#include <string.h>

#define CHUNK 512

static size_t text_len(int format)
{
    switch (format) {
    case IDM_FORMAT_UUIDV4:
    case IDM_FORMAT_UUIDV7:
        return IDM_UUID_STRLEN;
    case IDM_FORMAT_ULID:
        return IDM_ULID_STRLEN;
    case IDM_FORMAT_KSUID:
        return IDM_KSUID_STRLEN;
    default:
        return 0;
    }
}

/* Two output characters per table lookup: the hot loops of the CLI and
 * the server spend most of their time here. */
static const char hex_pairs[512 + 1] =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
    "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
    "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
    "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
    "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
    "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
    "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* Crockford base32, uppercase, for each 10-bit value. */
static const char base32_pairs[2048 + 1] =
    "000102030405060708090A0B0C0D0E0F0G0H0J0K0M0N0P0Q0R0S0T0V0W0X0Y0Z"
    "101112131415161718191A1B1C1D1E1F1G1H1J1K1M1N1P1Q1R1S1T1V1W1X1Y1Z"
    "202122232425262728292A2B2C2D2E2F2G2H2J2K2M2N2P2Q2R2S2T2V2W2X2Y2Z"
    "303132333435363738393A3B3C3D3E3F3G3H3J3K3M3N3P3Q3R3S3T3V3W3X3Y3Z"
    "404142434445464748494A4B4C4D4E4F4G4H4J4K4M4N4P4Q4R4S4T4V4W4X4Y4Z"
    "505152535455565758595A5B5C5D5E5F5G5H5J5K5M5N5P5Q5R5S5T5V5W5X5Y5Z"
    "606162636465666768696A6B6C6D6E6F6G6H6J6K6M6N6P6Q6R6S6T6V6W6X6Y6Z"
    "707172737475767778797A7B7C7D7E7F7G7H7J7K7M7N7P7Q7R7S7T7V7W7X7Y7Z"
    "808182838485868788898A8B8C8D8E8F8G8H8J8K8M8N8P8Q8R8S8T8V8W8X8Y8Z"
    "909192939495969798999A9B9C9D9E9F9G9H9J9K9M9N9P9Q9R9S9T9V9W9X9Y9Z"
    "A0A1A2A3A4A5A6A7A8A9AAABACADAEAFAGAHAJAKAMANAPAQARASATAVAWAXAYAZ"
    "B0B1B2B3B4B5B6B7B8B9BABBBCBDBEBFBGBHBJBKBMBNBPBQBRBSBTBVBWBXBYBZ"
    "C0C1C2C3C4C5C6C7C8C9CACBCCCDCECFCGCHCJCKCMCNCPCQCRCSCTCVCWCXCYCZ"
    "D0D1D2D3D4D5D6D7D8D9DADBDCDDDEDFDGDHDJDKDMDNDPDQDRDSDTDVDWDXDYDZ"
    "E0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFEGEHEJEKEMENEPEQERESETEVEWEXEYEZ"
    "F0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFFFGFHFJFKFMFNFPFQFRFSFTFVFWFXFYFZ"
    "G0G1G2G3G4G5G6G7G8G9GAGBGCGDGEGFGGGHGJGKGMGNGPGQGRGSGTGVGWGXGYGZ"
    "H0H1H2H3H4H5H6H7H8H9HAHBHCHDHEHFHGHHHJHKHMHNHPHQHRHSHTHVHWHXHYHZ"
    "J0J1J2J3J4J5J6J7J8J9JAJBJCJDJEJFJGJHJJJKJMJNJPJQJRJSJTJVJWJXJYJZ"
    "K0K1K2K3K4K5K6K7K8K9KAKBKCKDKEKFKGKHKJKKKMKNKPKQKRKSKTKVKWKXKYKZ"
    "M0M1M2M3M4M5M6M7M8M9MAMBMCMDMEMFMGMHMJMKMMMNMPMQMRMSMTMVMWMXMYMZ"
    "N0N1N2N3N4N5N6N7N8N9NANBNCNDNENFNGNHNJNKNMNNNPNQNRNSNTNVNWNXNYNZ"
    "P0P1P2P3P4P5P6P7P8P9PAPBPCPDPEPFPGPHPJPKPMPNPPPQPRPSPTPVPWPXPYPZ"
    "Q0Q1Q2Q3Q4Q5Q6Q7Q8Q9QAQBQCQDQEQFQGQHQJQKQMQNQPQQQRQSQTQVQWQXQYQZ"
    "R0R1R2R3R4R5R6R7R8R9RARBRCRDRERFRGRHRJRKRMRNRPRQRRRSRTRVRWRXRYRZ"
    "S0S1S2S3S4S5S6S7S8S9SASBSCSDSESFSGSHSJSKSMSNSPSQSRSSSTSVSWSXSYSZ"
    "T0T1T2T3T4T5T6T7T8T9TATBTCTDTETFTGTHTJTKTMTNTPTQTRTSTTTVTWTXTYTZ"
    "V0V1V2V3V4V5V6V7V8V9VAVBVCVDVEVFVGVHVJVKVMVNVPVQVRVSVTVVVWVXVYVZ"
    "W0W1W2W3W4W5W6W7W8W9WAWBWCWDWEWFWGWHWJWKWMWNWPWQWRWSWTWVWWWXWYWZ"
    "X0X1X2X3X4X5X6X7X8X9XAXBXCXDXEXFXGXHXJXKXMXNXPXQXRXSXTXVXWXXXYXZ"
    "Y0Y1Y2Y3Y4Y5Y6Y7Y8Y9YAYBYCYDYEYFYGYHYJYKYMYNYPYQYRYSYTYVYWYXYYYZ"
    "Z0Z1Z2Z3Z4Z5Z6Z7Z8Z9ZAZBZCZDZEZFZGZHZJZKZMZNZPZQZRZSZTZVZWZXZYZZ";

static inline void hex2(char *p, uint8_t byte)
{
    memcpy(p, hex_pairs + 2 * byte, 2);
}

/* 8-4-4-4-12, unrolled: no loop, no branch. */
static void uuid_text(const uint8_t *b, char *p)
{
    hex2(p + 0, b[0]);
    hex2(p + 2, b[1]);
    hex2(p + 4, b[2]);
    hex2(p + 6, b[3]);
    p[8] = '-';
    hex2(p + 9, b[4]);
    hex2(p + 11, b[5]);
    p[13] = '-';
    hex2(p + 14, b[6]);
    hex2(p + 16, b[7]);
    p[18] = '-';
    hex2(p + 19, b[8]);
    hex2(p + 21, b[9]);
    p[23] = '-';
    hex2(p + 24, b[10]);
    hex2(p + 26, b[11]);
    hex2(p + 28, b[12]);
    hex2(p + 30, b[13]);
    hex2(p + 32, b[14]);
    hex2(p + 34, b[15]);
}

static inline void b32pair(char *p, uint64_t v)
{
    memcpy(p, base32_pairs + 2 * (v & 1023), 2);
}

/* 26 characters for 130 bits (the top two always zero): the first
 * character alone, then twelve pairs of ten bits, then the last five bits.
 * Unrolled, with constant shifts. */
static void ulid_text(const uint8_t *b, char *p)
{
    const uint64_t hi = idm__get_be64(b), lo = idm__get_be64(b + 8);
    p[0] = base32_pairs[2 * (hi >> 61) + 1];
    b32pair(p + 1, hi >> 51);  /* bits 124..115 */
    b32pair(p + 3, hi >> 41);
    b32pair(p + 5, hi >> 31);
    b32pair(p + 7, hi >> 21);
    b32pair(p + 9, hi >> 11);
    b32pair(p + 11, hi >> 1);                /* bits 74..65 */
    b32pair(p + 13, hi << 9 | lo >> 55);     /* bits 64..55 */
    b32pair(p + 15, lo >> 45);
    b32pair(p + 17, lo >> 35);
    b32pair(p + 19, lo >> 25);
    b32pair(p + 21, lo >> 15);
    b32pair(p + 23, lo >> 5);                /* bits 14..5 */
    p[25] = base32_pairs[2 * (lo & 31) + 1];
}

int idm_gen_next_text_n(idm_gen *g, int format, char *dst, size_t cap, size_t n, uint32_t flags,
                        size_t *len, idm_error *err)
{
    if (len != NULL)
        *len = 0;
    size_t one = text_len(format);
    if (one == 0)
        return idm__fail(err, IDM_EINVAL, 0, "unknown format %d", format);
    if (flags & ~(uint32_t)IDM_TEXT_NEWLINE)
        return idm__fail(err, IDM_EINVAL, 0, "unknown flags 0x%x", (unsigned)flags);
    if (g == NULL || (dst == NULL && n > 0))
        return idm__fail(err, IDM_EINVAL, 0, "generator and output must not be NULL");
    size_t stride = one + ((flags & IDM_TEXT_NEWLINE) ? 1 : 0);
    if (n > cap / stride)
        return idm__fail(err, IDM_ENOSPC, 0, "%zu IDs need %zu bytes, the buffer has %zu", n, n * stride, cap);

    union {
        idm_uuid uuid[CHUNK];
        idm_ulid ulid[CHUNK];
        idm_ksuid ksuid[CHUNK];
    } bin;
    char *p = dst;
    for (size_t done = 0; done < n;) {
        size_t k = n - done < CHUNK ? n - done : CHUNK;
        int rc;
        switch (format) {
        case IDM_FORMAT_UUIDV4:
            rc = idm_uuidv4_next_n(g, bin.uuid, k, err);
            break;
        case IDM_FORMAT_UUIDV7:
            rc = idm_uuidv7_next_n(g, bin.uuid, k, err);
            break;
        case IDM_FORMAT_ULID:
            rc = idm_ulid_next_n(g, bin.ulid, k, err);
            break;
        default:
            rc = idm_ksuid_next_n(g, bin.ksuid, k, err);
            break;
        }
        if (rc != IDM_OK) {
            if (len != NULL)
                *len = (size_t)(p - dst);
            return rc;
        }
        /* One loop per format, so the format is not tested per ID. */
        bool nl = (flags & IDM_TEXT_NEWLINE) != 0;
        switch (format) {
        case IDM_FORMAT_UUIDV4:
        case IDM_FORMAT_UUIDV7:
            for (size_t i = 0; i < k; i++, p += stride) {
                uuid_text(bin.uuid[i].bytes, p);
                if (nl)
                    p[IDM_UUID_STRLEN] = '\n';
            }
            break;
        case IDM_FORMAT_ULID:
            for (size_t i = 0; i < k; i++, p += stride) {
                ulid_text(bin.ulid[i].bytes, p);
                if (nl)
                    p[IDM_ULID_STRLEN] = '\n';
            }
            break;
        default:
            for (size_t i = 0; i < k; i++, p += stride) {
                idm__base62_encode(bin.ksuid[i].bytes, sizeof bin.ksuid[i].bytes, p, IDM_KSUID_STRLEN);
                if (nl)
                    p[IDM_KSUID_STRLEN] = '\n';
            }
            break;
        }
        done += k;
    }
    if (len != NULL)
        *len = (size_t)(p - dst);
    return IDM_OK;
}

int idm__format_gen_mint(const idm_format *f, idm_gen *g, const char *prefix, size_t prefix_len,
                         char *dst, size_t n, bool nl, size_t *len, idm_error *err)
{
    (void)prefix;
    (void)prefix_len;
    size_t cap = n * (f->text_len + (nl ? 1 : 0));
    return idm_gen_next_text_n(g, f->id, dst, cap, n, nl ? IDM_TEXT_NEWLINE : 0, len, err);
}
