/*
 * json.c - JSON string escaping (RFC 8259 section 7) with UTF-8 validation
 * (RFC 3629 section 4: no overlongs, no surrogates, nothing above U+10FFFF).
 *
 * Inputs echoed back ("input" members) come from users and may hold any
 * bytes; a JSON document must be UTF-8, so invalid bytes are replaced with
 * U+FFFD rather than copied. U+2028/U+2029 are valid JSON and left alone.
 */
#include "json.h"

#include <string.h>

/* Length of the well-formed UTF-8 sequence at s[0..len-1] that starts with
 * a byte >= 0x80, or 0 if it is not well formed. */
static size_t utf8_seq_len(const unsigned char *s, size_t len)
{
    unsigned char c = s[0];
    size_t n;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) {
            lo = 0xA0; /* overlong below U+0800 */
        } else if (c == 0xED) {
            hi = 0x9F; /* UTF-16 surrogates */
        }
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) {
            lo = 0x90; /* overlong below U+10000 */
        } else if (c == 0xF4) {
            hi = 0x8F; /* above U+10FFFF */
        }
    } else {
        return 0; /* continuation byte, C0/C1 overlong lead, F5-FF */
    }
    if (len < n) {
        return 0;
    }
    if (s[1] < lo || s[1] > hi) {
        return 0;
    }
    for (size_t i = 2; i < n; i++) {
        if (s[i] < 0x80 || s[i] > 0xBF) {
            return 0;
        }
    }
    return n;
}

/* Writes the escaped body (no quotes) of s through emit. */
typedef int (*emit_fn)(void *ctx, const char *p, size_t n);

static int escape_body(const char *s, size_t len, emit_fn emit, void *ctx)
{
    static const char hexd[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    size_t run = 0; /* start of the pending run of bytes copied as is */
    size_t i = 0;
    while (i < len) {
        unsigned char c = u[i];
        char esc[6];
        size_t esc_len = 0;
        size_t adv = 1;
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            esc_len = 2;
        } else if (c < 0x20) {
            esc[0] = '\\';
            esc_len = 2;
            switch (c) {
            case '\n':
                esc[1] = 'n';
                break;
            case '\r':
                esc[1] = 'r';
                break;
            case '\t':
                esc[1] = 't';
                break;
            case '\b':
                esc[1] = 'b';
                break;
            case '\f':
                esc[1] = 'f';
                break;
            default:
                memcpy(esc, "\\u00", 4);
                esc[4] = hexd[c >> 4];
                esc[5] = hexd[c & 15];
                esc_len = 6;
                break;
            }
        } else if (c >= 0x80) {
            adv = utf8_seq_len(u + i, len - i);
            if (adv == 0) {
                memcpy(esc, "\\ufffd", 6);
                esc_len = 6;
                adv = 1;
            }
        }
        if (esc_len == 0) {
            i += adv;
            continue;
        }
        if (i > run && emit(ctx, s + run, i - run) != 0) {
            return -1;
        }
        if (emit(ctx, esc, esc_len) != 0) {
            return -1;
        }
        i += adv;
        run = i;
    }
    if (len > run && emit(ctx, s + run, len - run) != 0) {
        return -1;
    }
    return 0;
}

static int emit_outbuf(void *ctx, const char *p, size_t n)
{
    return idmx_outbuf_append(ctx, p, n);
}

int idmx_json_string(idmx_outbuf *b, const char *s, size_t len)
{
    idmx_outbuf_putc(b, '"');
    escape_body(s, len, emit_outbuf, b);
    return idmx_outbuf_putc(b, '"');
}

size_t idmx_json_escape(const char *s, size_t len, char *dst, size_t cap)
{
    if (cap == 0) {
        return (size_t)-1;
    }
    idmx_outbuf b;
    idmx_outbuf_init(&b, dst, cap - 1, NULL, NULL);
    if (idmx_json_string(&b, s, len) != 0) {
        dst[0] = '\0';
        return (size_t)-1;
    }
    dst[b.len] = '\0';
    return b.len;
}
