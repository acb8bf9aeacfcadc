/*
 * hex.c - lowercase hex encoding and a table-driven hex digit lookup.
 *
 * Used by UUID text forms, traceparent values and inspect output. Decoding
 * of whole strings lives with each format, which knows its own layout
 * (hyphens, braces) and error messages; this file only maps digits.
 */
#include "internal.h"

static const char hex_digits[16] = "0123456789abcdef";

/* Digit value + 1 for every hex digit; 0 marks "not a hex digit", so the
 * table needs no initialiser for the other 234 bytes. */
static const uint8_t hex_value_plus1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

void idm__hex_encode(const uint8_t *src, size_t n, char *dst)
{
    for (size_t i = 0; i < n; i++) {
        dst[2 * i] = hex_digits[src[i] >> 4];
        dst[2 * i + 1] = hex_digits[src[i] & 15];
    }
}

int idm__hex_value(unsigned char c)
{
    return (int)hex_value_plus1[c] - 1;
}
