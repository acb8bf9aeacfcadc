/*
 * charname.h - how parse errors name the byte they stopped at.
 *
 * Private to the text codecs and parsers (codec/, uuid/, ulid/, ksuid/,
 * typeid/, token/, time/, inspect/). Error messages never repeat the input,
 * but naming the one offending byte makes them actionable: "'U'" for
 * printable ASCII, "byte 0xc3" for anything else (so that control bytes and
 * broken UTF-8 never reach a terminal raw).
 */
#ifndef IDM_CODEC_CHARNAME_H
#define IDM_CODEC_CHARNAME_H

#include <stddef.h>

#define IDM__CHARNAME_CAP 12

/* Writes the name of byte c into buf and returns buf. */
static inline const char *idm__char_name(unsigned char c, char buf[IDM__CHARNAME_CAP])
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    if (c >= 0x20 && c < 0x7f) {
        buf[n++] = '\'';
        buf[n++] = (char)c;
        buf[n++] = '\'';
    } else {
        const char *prefix = "byte 0x";
        while (*prefix)
            buf[n++] = *prefix++;
        buf[n++] = hex[c >> 4];
        buf[n++] = hex[c & 15];
    }
    buf[n] = '\0';
    return buf;
}

#endif
