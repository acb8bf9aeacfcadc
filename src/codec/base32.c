/*
 * base32.c - Crockford base32 of 128-bit values, as ULID and TypeID use it.
 *
 * Specs: https://www.crockford.com/base32.html (alphabet),
 * https://github.com/ulid/spec (ULID: 26 characters, uppercase canonical),
 * https://github.com/jetify-com/typeid/blob/main/spec/README.md (TypeID
 * suffix: the same 26 characters, lowercase only).
 *
 * 26 characters carry 130 bits; the 128-bit value is right-aligned, so the
 * first character holds only the top 3 bits and must be 0-7.
 *
 * Deliberately left out: Crockford's decoding aliases (I and L as 1, O as
 * 0), hyphens and check symbols. ULID implementations disagree on aliases
 * and TypeID forbids them, so I, L, O and U are simply invalid: one text,
 * one value.
 */
#include "internal.h"

#include "codec/charname.h"

static const char base32_upper[32] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
static const char base32_lower[32] = "0123456789abcdefghjkmnpqrstvwxyz";

/* Symbol value + 1 for both cases; 0 marks an invalid byte. */
static const uint8_t base32_value_plus1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
    ['G'] = 17, ['H'] = 18, ['J'] = 19, ['K'] = 20, ['M'] = 21, ['N'] = 22, ['P'] = 23, ['Q'] = 24,
    ['R'] = 25, ['S'] = 26, ['T'] = 27, ['V'] = 28, ['W'] = 29, ['X'] = 30, ['Y'] = 31, ['Z'] = 32,
    ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['g'] = 17, ['h'] = 18,
    ['j'] = 19, ['k'] = 20, ['m'] = 21, ['n'] = 22, ['p'] = 23, ['q'] = 24, ['r'] = 25, ['s'] = 26,
    ['t'] = 27, ['v'] = 28, ['w'] = 29, ['x'] = 30, ['y'] = 31, ['z'] = 32,
};

void idm__base32_encode128(const uint8_t src[16], char dst[26], bool lowercase)
{
    const char *alphabet = lowercase ? base32_lower : base32_upper;
    uint64_t hi = idm__get_be64(src);
    uint64_t lo = idm__get_be64(src + 8);

    /* Character i holds bits 125-5i .. 129-5i of the value: characters 0-12
     * come from hi alone, 13 straddles the halves, 14-25 come from lo. */
    dst[0] = alphabet[hi >> 61];
    for (int i = 1; i <= 12; i++)
        dst[i] = alphabet[(hi >> (61 - 5 * i)) & 31];
    dst[13] = alphabet[((hi & 1) << 4) | (lo >> 60)];
    for (int i = 14; i < 26; i++)
        dst[i] = alphabet[(lo >> (125 - 5 * i)) & 31];
}

/* The error for src[i], which the table rejected (or which is uppercase
 * where only lowercase is allowed). */
static int bad_symbol(const char *what, size_t i, unsigned char c, bool lowercase_only,
                      idm_error *err)
{
    char name[IDM__CHARNAME_CAP];
    idm__char_name(c, name);
    if (lowercase_only && base32_value_plus1[c] != 0)
        return idm__fail(err, IDM_EPARSE, i, "%s must be lowercase (%s at position %zu)", what,
                         name, i + 1);
    switch (c | 0x20) {
    case 'i':
    case 'l':
    case 'o':
    case 'u':
        return idm__fail(err, IDM_EPARSE, i,
                         "%s has %s at position %zu, which base32 does not use "
                         "(it has no I, L, O or U)",
                         what, name, i + 1);
    default:
        return idm__fail(err, IDM_EPARSE, i,
                         "%s has an invalid character %s at position %zu (expected 0-9 or a "
                         "base32 letter)",
                         what, name, i + 1);
    }
}

int idm__base32_decode128(const char src[26], uint8_t dst[16], bool lowercase_only,
                          const char *what, idm_error *err)
{
    const unsigned char *s = (const unsigned char *)src;
    uint64_t hi = 0;
    uint64_t lo = 0;

    for (size_t i = 0; i < 26; i++) {
        unsigned v = base32_value_plus1[s[i]];
        if (IDM_UNLIKELY(v == 0 || (lowercase_only && s[i] >= 'A' && s[i] <= 'Z')))
            return bad_symbol(what, i, s[i], lowercase_only, err);
        v -= 1;
        if (IDM_UNLIKELY(i == 0 && v > 7))
            return idm__fail(err, IDM_EPARSE, 0, "%s exceeds 128 bits (first character above 7)",
                             what);
        /* Shift the 128-bit accumulator left by 5; the first symbol is at
         * most 7, so nothing is shifted out of hi. */
        hi = hi << 5 | lo >> 59;
        lo = lo << 5 | v;
    }
    for (int i = 0; i < 8; i++) {
        dst[i] = (uint8_t)(hi >> (56 - 8 * i));
        dst[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
    }
    return IDM_OK;
}
