/*
 * base62.c - fixed-width base62 (0-9, A-Z, a-z) of big-endian numbers, as
 * KSUID and idmint's opaque tokens use it.
 *
 * Spec: https://github.com/segmentio/ksuid (27 characters for 160 bits,
 * zero-padded on the left, digits in ASCII order so that text order is
 * numeric order).
 *
 * Numbers are handled as arrays of 32-bit limbs, most significant first,
 * and converted five digits at a time (62^5 < 2^32), so encoding a KSUID
 * takes six passes of long division instead of twenty-seven.
 *
 * Deliberately left out: variable-width output and leading-zero
 * stripping; every caller wants a fixed width.
 */
#include "internal.h"

#include "codec/charname.h"

#include <assert.h>
#include <string.h>

#define BASE62_MAX_BYTES 40 /* up to 37: signed tokens (keyed.c) */
#define BASE62_MAX_LIMBS (BASE62_MAX_BYTES / 4)
#define BASE62_POW5      916132832u /* 62^5 */

static const char base62_digits[62] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/* Digit value + 1; 0 marks an invalid byte. */
static const uint8_t base62_value_plus1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
    ['G'] = 17, ['H'] = 18, ['I'] = 19, ['J'] = 20, ['K'] = 21, ['L'] = 22, ['M'] = 23, ['N'] = 24,
    ['O'] = 25, ['P'] = 26, ['Q'] = 27, ['R'] = 28, ['S'] = 29, ['T'] = 30, ['U'] = 31, ['V'] = 32,
    ['W'] = 33, ['X'] = 34, ['Y'] = 35, ['Z'] = 36, ['a'] = 37, ['b'] = 38, ['c'] = 39, ['d'] = 40,
    ['e'] = 41, ['f'] = 42, ['g'] = 43, ['h'] = 44, ['i'] = 45, ['j'] = 46, ['k'] = 47, ['l'] = 48,
    ['m'] = 49, ['n'] = 50, ['o'] = 51, ['p'] = 52, ['q'] = 53, ['r'] = 54, ['s'] = 55, ['t'] = 56,
    ['u'] = 57, ['v'] = 58, ['w'] = 59, ['x'] = 60, ['y'] = 61, ['z'] = 62,
};

void idm__base62_encode(const uint8_t *src, size_t n, char *dst, size_t out_len)
{
    uint32_t limbs[BASE62_MAX_LIMBS] = {0};
    size_t nlimbs = (n + 3) / 4;
    assert(n <= BASE62_MAX_BYTES);
    if (n > BASE62_MAX_BYTES) {
        /* Cannot happen: every caller passes a fixed 16 or 20. */
        memset(dst, '0', out_len);
        return;
    }

    /* Right-align the bytes in the limb array (byte n-1 is the least
     * significant byte of the last limb). */
    for (size_t i = 0; i < n; i++) {
        size_t from_end = n - 1 - i;
        limbs[nlimbs - 1 - from_end / 4] |= (uint32_t)src[i] << (8 * (from_end % 4));
    }

    size_t first = 0; /* limbs before it are zero */
    while (first < nlimbs && limbs[first] == 0)
        first++;

    size_t out = out_len;
    while (out > 0) {
        uint32_t rem = 0;
        for (size_t i = first; i < nlimbs; i++) {
            uint64_t cur = (uint64_t)rem << 32 | limbs[i];
            limbs[i] = (uint32_t)(cur / BASE62_POW5);
            rem = (uint32_t)(cur % BASE62_POW5);
        }
        while (first < nlimbs && limbs[first] == 0)
            first++;
        for (int k = 0; k < 5 && out > 0; k++) {
            dst[--out] = base62_digits[rem % 62];
            rem /= 62;
        }
        assert(rem == 0 || out > 0);
    }
    /* The caller sized out_len for n bytes, so the quotient is now zero:
     * no copy of the (possibly secret) value is left in limbs. */
    assert(first == nlimbs);
}

int idm__base62_decode(const char *src, size_t len, uint8_t *dst, size_t n, const char *what,
                       idm_error *err)
{
    const unsigned char *s = (const unsigned char *)src;
    uint32_t limbs[BASE62_MAX_LIMBS] = {0};
    size_t nlimbs = (n + 3) / 4;
    assert(n >= 1 && n <= BASE62_MAX_BYTES);
    if (n < 1 || n > BASE62_MAX_BYTES)
        return idm__fail(err, IDM_EINVAL, 0, "%s: %zu bytes is not a supported base62 width", what,
                         n);

    for (size_t i = 0; i < len; i++) {
        if (IDM_UNLIKELY(base62_value_plus1[s[i]] == 0)) {
            char name[IDM__CHARNAME_CAP];
            return idm__fail(err, IDM_EPARSE, i,
                             "%s has an invalid character %s at position %zu (expected 0-9, A-Z "
                             "or a-z)",
                             what, idm__char_name(s[i], name), i + 1);
        }
    }

    /* Horner's rule, five digits per step: limbs = limbs * 62^k + chunk.
     * The first chunk takes the len % 5 leading digits. */
    size_t i = 0;
    size_t chunk = len % 5 ? len % 5 : 5;
    bool overflow = false;
    while (i < len) {
        uint32_t mul = 1;
        uint32_t add = 0;
        for (size_t k = 0; k < chunk; k++) {
            mul *= 62;
            add = add * 62 + (uint32_t)(base62_value_plus1[s[i + k]] - 1);
        }
        uint64_t carry = add;
        for (size_t j = nlimbs; j-- > 0;) {
            uint64_t cur = (uint64_t)limbs[j] * mul + carry;
            limbs[j] = (uint32_t)cur;
            carry = cur >> 32;
        }
        if (carry != 0)
            overflow = true;
        i += chunk;
        chunk = 5;
    }
    /* When n is not a multiple of 4, the top limb has room above n bytes. */
    if (n % 4 != 0 && limbs[0] >> (8 * (n % 4)) != 0)
        overflow = true;
    if (overflow)
        return idm__fail(err, IDM_EPARSE, 0, "%s exceeds %zu bits", what, 8 * n);

    for (size_t k = 0; k < n; k++) {
        size_t from_end = n - 1 - k;
        dst[k] = (uint8_t)(limbs[nlimbs - 1 - from_end / 4] >> (8 * (from_end % 4)));
    }
    return IDM_OK;
}
