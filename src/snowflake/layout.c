/*
 * layout.c - snowflake layouts: the presets, the spec parser and printer,
 * decoding an ID into its fields, and strict decimal text for IDs.
 *
 * A layout is three fields (time, node, seq) stacked from the most
 * significant bit down; their widths add up to at most 64 and the bits
 * above them are unused (zero in a valid ID). With order = {A, B, C}:
 *
 *   63 ........... shift[A]+bits[A] | A | B | C | bit 0
 *   shift[C] = 0, shift[B] = bits[C], shift[A] = bits[B] + bits[C]
 *
 * The presets and the spec syntax are those of idmint(1), LAYOUTS. A spec
 * without unit or epoch means 1 ms from the Unix epoch.
 *
 * Left out on purpose: field aliases ("sequence", "worker"), whitespace in
 * specs, and explicit "unused" fields (unused bits are implied by a sum
 * below 64).
 */
#include "sf_layout.h"

#include "codec/charname.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Spec keys; the first three are the field ids IDM_SF_TIME/NODE/SEQ. */
static const char *const key_names[5] = {"time", "node", "seq", "unit", "epoch"};

struct preset {
    const char *name;
    int64_t epoch_ms;
    int64_t unit_ms;
    uint8_t order[3];
    uint8_t bits[3]; /* time, node, seq */
};

/* idmint(1), LAYOUTS. Sonyflake puts the sequence
 * above the machine id (sonyflake.go: time << 24 | seq << 16 | machine);
 * baidu is uid-generator's default (delta seconds << 35 | worker << 13 |
 * seq) with its 2016-05-20 UTC+8 epoch kept so that existing IDs decode. */
static const struct preset presets[] = {
    {"twitter", 1288834974657, 1, {IDM_SF_TIME, IDM_SF_NODE, IDM_SF_SEQ}, {41, 10, 12}},
    {"discord", 1420070400000, 1, {IDM_SF_TIME, IDM_SF_NODE, IDM_SF_SEQ}, {42, 10, 12}},
    {"instagram", 1314220021721, 1, {IDM_SF_TIME, IDM_SF_NODE, IDM_SF_SEQ}, {41, 13, 10}},
    {"sonyflake", 1409529600000, 10, {IDM_SF_TIME, IDM_SF_SEQ, IDM_SF_NODE}, {39, 16, 8}},
    {"sonyflake2", 1735689600000, 10, {IDM_SF_TIME, IDM_SF_SEQ, IDM_SF_NODE}, {39, 16, 8}},
    {"baidu", 1463673600000, 1000, {IDM_SF_TIME, IDM_SF_NODE, IDM_SF_SEQ}, {28, 22, 13}},
    {"safe53", 1735689600000, 1, {IDM_SF_TIME, IDM_SF_NODE, IDM_SF_SEQ}, {41, 6, 6}},
};
#define PRESET_COUNT (sizeof presets / sizeof presets[0])
#define PRESET_LIST  "twitter, discord, instagram, sonyflake, sonyflake2, baidu, safe53"

static const struct preset *find_preset(const char *name, size_t len)
{
    for (size_t i = 0; i < PRESET_COUNT; i++) {
        if (strlen(presets[i].name) == len && memcmp(presets[i].name, name, len) == 0)
            return &presets[i];
    }
    return NULL;
}

static void derive_shifts(idm_sf_layout *l)
{
    unsigned below = 0;
    for (int i = 2; i >= 0; i--) {
        uint8_t f = l->order[i];
        l->shift[f] = (uint8_t)below;
        below += l->bits[f];
    }
}

/* The last representable Unix ms, epoch + (2^time_bits - 1) * unit, or
 * false when it does not fit in int64. time_bits is 1..63, unit >= 1. */
static bool last_ms_of(int64_t epoch_ms, int64_t unit_ms, unsigned time_bits, int64_t *out)
{
    uint64_t units = ((uint64_t)1 << time_bits) - 1;
    if (units > (uint64_t)INT64_MAX / (uint64_t)unit_ms)
        return false;
    int64_t span = (int64_t)(units * (uint64_t)unit_ms);
    if (epoch_ms > 0 && span > INT64_MAX - epoch_ms)
        return false;
    *out = epoch_ms + span;
    return true;
}

int idm__sf_layout_check(const idm_sf_layout *l, idm_error *err)
{
    if (l == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no layout given");
    if (memchr(l->name, '\0', sizeof l->name) == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "layout name is not NUL-terminated");
    if (l->unit_ms < 1)
        return idm__fail(err, IDM_EINVAL, 0, "layout unit must be at least 1 ms");
    unsigned seen = 0, total = 0;
    for (int i = 0; i < 3; i++) {
        if (l->order[i] > 2 || (seen & 1u << l->order[i]))
            return idm__fail(err, IDM_EINVAL, 0,
                             "layout order must name time, node and seq once each");
        seen |= 1u << l->order[i];
        if (l->bits[i] < 1 || l->bits[i] > 63)
            return idm__fail(err, IDM_EINVAL, 0, "layout field %s must have 1 to 63 bits, has %u",
                             key_names[i], (unsigned)l->bits[i]);
        total += l->bits[i];
    }
    if (total > 64)
        return idm__fail(err, IDM_EINVAL, 0, "layout fields take %u bits; at most 64 fit", total);
    idm_sf_layout d = *l;
    derive_shifts(&d);
    if (memcmp(d.shift, l->shift, sizeof d.shift) != 0)
        return idm__fail(err, IDM_EINVAL, 0, "layout shifts do not match its order and bits");
    int64_t last;
    if (!last_ms_of(l->epoch_ms, l->unit_ms, l->bits[IDM_SF_TIME], &last))
        return idm__fail(err, IDM_EINVAL, 0,
                         "layout's time range ends beyond the largest 64-bit millisecond time");
    return IDM_OK;
}

int64_t idm__sf_layout_end_ms(const idm_sf_layout *l)
{
    int64_t last = idm_sf_layout_max_unix_ms(l);
    if (last > INT64_MAX - l->unit_ms)
        return INT64_MAX;
    return last + l->unit_ms;
}

static void fill_preset(idm_sf_layout *out, const struct preset *p)
{
    memset(out, 0, sizeof *out);
    memcpy(out->name, p->name, strlen(p->name) + 1);
    out->epoch_ms = p->epoch_ms;
    out->unit_ms = p->unit_ms;
    memcpy(out->order, p->order, sizeof out->order);
    memcpy(out->bits, p->bits, sizeof out->bits);
    derive_shifts(out);
}

int idm_sf_layout_preset(idm_sf_layout *out, const char *name, size_t len, idm_error *err)
{
    if (out == NULL || (name == NULL && len > 0))
        return idm__fail(err, IDM_EINVAL, 0, "no layout name given");
    const struct preset *p = find_preset(name, len);
    if (p == NULL)
        return idm__fail(err, IDM_EINVAL, 0,
                         "unknown layout; the presets are " PRESET_LIST
                         ", or give a spec like time=41,node=10,seq=12");
    fill_preset(out, p);
    return IDM_OK;
}

/* ---- spec parsing ------------------------------------------------------- */

enum { KEY_UNIT = 3, KEY_EPOCH = 4 };

static int key_of(const char *s, size_t n)
{
    for (int i = 0; i < 5; i++) {
        if (strlen(key_names[i]) == n && memcmp(key_names[i], s, n) == 0)
            return i;
    }
    return -1;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* How many bytes of a piece of the input a message may quote: at most 20,
 * and none unless all are printable ASCII (no control bytes or broken
 * UTF-8 reach a terminal raw). */
static int quote_len(const char *s, size_t n)
{
    if (n > 20)
        n = 20;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < 0x20 || s[i] > 0x7e)
            return 0;
    }
    return (int)n;
}

/* A field width: 1 to 63, decimal digits only. */
static int parse_bits(const char *s, size_t n, size_t off, int field, unsigned *out, idm_error *err)
{
    if (n == 0)
        return idm__fail(err, IDM_EPARSE, off, "field %s needs a number of bits", key_names[field]);
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i])) {
            char name[IDM__CHARNAME_CAP];
            return idm__fail(err, IDM_EPARSE, off + i, "field %s needs a number of bits, found %s",
                             key_names[field], idm__char_name((unsigned char)s[i], name));
        }
        if (v <= 64)
            v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v < 1 || v > 63)
        return idm__fail(err, IDM_EPARSE, off, "field %s must have 1 to 63 bits, got %.*s",
                         key_names[field], quote_len(s, n), s);
    *out = v;
    return IDM_OK;
}

/* A unit: a whole number followed by "ms" or "s". */
static int parse_unit(const char *s, size_t n, size_t off, int64_t *out, idm_error *err)
{
    static const char what[] = "unit must be a whole number of ms or s, like 10ms or 1s";
    size_t i = 0;
    int64_t v = 0;
    while (i < n && is_digit(s[i])) {
        int d = s[i] - '0';
        if (v > (INT64_MAX - d) / 10)
            return idm__fail(err, IDM_EPARSE, off, "unit is too large");
        v = v * 10 + d;
        i++;
    }
    if (i == 0)
        return idm__fail(err, IDM_EPARSE, off + i, what);
    int64_t scale;
    if (n - i == 2 && s[i] == 'm' && s[i + 1] == 's')
        scale = 1;
    else if (n - i == 1 && s[i] == 's')
        scale = 1000;
    else
        return idm__fail(err, IDM_EPARSE, off + i, what);
    if (v == 0)
        return idm__fail(err, IDM_EPARSE, off, "unit must be at least 1ms");
    if (v > INT64_MAX / scale)
        return idm__fail(err, IDM_EPARSE, off, "unit is too large");
    *out = v * scale;
    return IDM_OK;
}

/* An epoch: Unix milliseconds (optionally negative) or an RFC 3339 time. */
static int parse_epoch(const char *s, size_t n, size_t off, int64_t *out, idm_error *err)
{
    if (n == 0)
        return idm__fail(err, IDM_EPARSE, off, "epoch needs Unix milliseconds or an RFC 3339 time");
    size_t i = s[0] == '-' ? 1 : 0;
    bool all_digits = i < n;
    for (size_t j = i; j < n; j++) {
        if (!is_digit(s[j])) {
            all_digits = false;
            break;
        }
    }
    if (all_digits) {
        /* Accumulate toward the sign so that INT64_MIN parses too. */
        bool neg = i == 1;
        int64_t v = 0;
        for (; i < n; i++) {
            int d = s[i] - '0';
            if (neg ? v < (INT64_MIN + d) / 10 : v > (INT64_MAX - d) / 10)
                return idm__fail(err, IDM_EPARSE, off,
                                 "epoch is out of the 64-bit millisecond range");
            v = neg ? v * 10 - d : v * 10 + d;
        }
        *out = v;
        return IDM_OK;
    }
    idm_error terr = {0};
    if (idm_time_parse(s, n, out, &terr) != IDM_OK)
        return idm__fail(err, IDM_EPARSE, off + terr.offset,
                         "epoch is neither Unix milliseconds nor an RFC 3339 time: in the epoch "
                         "value, %s",
                         terr.msg);
    return IDM_OK;
}

static int parse_spec(idm_sf_layout *out, const char *text, size_t len, idm_error *err)
{
    idm_sf_layout l;
    memset(&l, 0, sizeof l);
    l.unit_ms = 1;
    l.epoch_ms = 0;
    unsigned seen = 0, nfields = 0, total = 0;
    size_t time_off = 0;
    size_t pos = 0;
    for (;;) {
        const char *comma = memchr(text + pos, ',', len - pos);
        size_t end = comma ? (size_t)(comma - text) : len;
        const char *item = text + pos;
        size_t item_len = end - pos;
        if (item_len == 0)
            return idm__fail(err, IDM_EPARSE, pos, "empty item in layout spec; expected key=value");
        const char *eq = memchr(item, '=', item_len);
        if (eq == NULL)
            return idm__fail(err, IDM_EPARSE, pos, "item has no '=' (expected key=value)");
        size_t key_len = (size_t)(eq - item);
        size_t voff = pos + key_len + 1;
        const char *val = text + voff;
        size_t val_len = end - voff;
        int key = key_of(item, key_len);
        if (key < 0) {
            int q = quote_len(item, key_len);
            if (q == 0 && key_len > 0)
                return idm__fail(err, IDM_EPARSE, pos,
                                 "unknown key (expected time, node, seq, unit or epoch)");
            return idm__fail(err, IDM_EPARSE, pos,
                             "unknown key \"%.*s%s\" (expected time, node, seq, unit or epoch)", q,
                             item, key_len > (size_t)q ? "..." : "");
        }
        if (seen & 1u << key)
            return idm__fail(err, IDM_EPARSE, pos, "duplicate %s \"%s\"",
                             key < KEY_UNIT ? "field" : "key", key_names[key]);
        seen |= 1u << key;
        int rc;
        if (key == KEY_UNIT) {
            rc = parse_unit(val, val_len, voff, &l.unit_ms, err);
        } else if (key == KEY_EPOCH) {
            rc = parse_epoch(val, val_len, voff, &l.epoch_ms, err);
        } else {
            unsigned b = 0;
            rc = parse_bits(val, val_len, voff, key, &b, err);
            if (rc == IDM_OK) {
                total += b;
                if (total > 64)
                    return idm__fail(err, IDM_EPARSE, voff, "fields take %u bits; at most 64 fit",
                                     total);
                l.bits[key] = (uint8_t)b;
                l.order[nfields++] = (uint8_t)key;
                if (key == IDM_SF_TIME)
                    time_off = voff;
            }
        }
        if (rc != IDM_OK)
            return rc;
        if (comma == NULL)
            break;
        pos = end + 1;
    }
    for (int f = 0; f < 3; f++) {
        if (!(seen & 1u << f))
            return idm__fail(err, IDM_EPARSE, len, "missing field \"%s\"", key_names[f]);
    }
    derive_shifts(&l);
    int64_t last;
    if (!last_ms_of(l.epoch_ms, l.unit_ms, l.bits[IDM_SF_TIME], &last))
        return idm__fail(err, IDM_EPARSE, time_off,
                         "a %u-bit time field in units of %" PRId64 " ms from this epoch runs past "
                         "the largest 64-bit millisecond time",
                         (unsigned)l.bits[IDM_SF_TIME], l.unit_ms);
    *out = l;
    return IDM_OK;
}

int idm_sf_layout_parse(idm_sf_layout *out, const char *text, size_t len, idm_error *err)
{
    if (out == NULL || (text == NULL && len > 0))
        return idm__fail(err, IDM_EINVAL, 0, "no layout given");
    /* Preset names contain no '=', and every spec item does. */
    if (len == 0 || memchr(text, '=', len) == NULL)
        return idm_sf_layout_preset(out, text, len, err);
    return parse_spec(out, text, len, err);
}

int idm_sf_layout_set_epoch(idm_sf_layout *l, int64_t epoch_ms, idm_error *err)
{
    int rc = idm__sf_layout_check(l, err);
    if (rc != IDM_OK)
        return rc;
    int64_t last;
    if (!last_ms_of(epoch_ms, l->unit_ms, l->bits[IDM_SF_TIME], &last))
        return idm__fail(err, IDM_EINVAL, 0,
                         "with epoch %" PRId64 " the layout's time range runs past the largest "
                         "64-bit millisecond time",
                         epoch_ms);
    l->epoch_ms = epoch_ms;
    const struct preset *p = find_preset(l->name, strlen(l->name));
    if (p == NULL || p->epoch_ms != epoch_ms)
        memset(l->name, 0, sizeof l->name);
    return IDM_OK;
}

int idm_sf_layout_format(const idm_sf_layout *l, char *dst, size_t cap)
{
    if (dst == NULL || cap == 0)
        return IDM_ENOSPC;
    dst[0] = '\0';
    if (l == NULL)
        return IDM_EINVAL;
    size_t name_len = strnlen(l->name, sizeof l->name);
    if (name_len > 0 && name_len < sizeof l->name) {
        if (name_len >= cap)
            return IDM_ENOSPC;
        memcpy(dst, l->name, name_len + 1);
        return IDM_OK;
    }
    char fields[48];
    size_t used = 0;
    for (int i = 0; i < 3; i++) {
        uint8_t f = l->order[i] <= 2 ? l->order[i] : 0;
        int n = snprintf(fields + used, sizeof fields - used, "%s=%u,", key_names[f],
                         (unsigned)l->bits[f]);
        if (n < 0 || (size_t)n >= sizeof fields - used)
            return IDM_EINVAL;
        used += (size_t)n;
    }
    /* Whole seconds print as s, so "unit=1000ms" reads back as "unit=1s". */
    bool secs = l->unit_ms % 1000 == 0;
    int n = snprintf(dst, cap, "%sunit=%" PRId64 "%s,epoch=%" PRId64, fields,
                     secs ? l->unit_ms / 1000 : l->unit_ms, secs ? "s" : "ms", l->epoch_ms);
    if (n < 0 || (size_t)n >= cap) {
        dst[0] = '\0';
        return IDM_ENOSPC;
    }
    return IDM_OK;
}

bool idm_sf_layout_equal(const idm_sf_layout *a, const idm_sf_layout *b)
{
    return a->epoch_ms == b->epoch_ms && a->unit_ms == b->unit_ms &&
           memcmp(a->order, b->order, sizeof a->order) == 0 &&
           memcmp(a->bits, b->bits, sizeof a->bits) == 0;
}

uint64_t idm_sf_layout_max_node(const idm_sf_layout *l)
{
    unsigned b = l->bits[IDM_SF_NODE];
    return b >= 64 ? UINT64_MAX : ((uint64_t)1 << b) - 1;
}

int64_t idm_sf_layout_max_unix_ms(const idm_sf_layout *l)
{
    unsigned b = l->bits[IDM_SF_TIME];
    int64_t last;
    if (b < 1 || b > 63 || l->unit_ms < 1 || !last_ms_of(l->epoch_ms, l->unit_ms, b, &last))
        return INT64_MAX;
    return last;
}

int idm_sf_decode(const idm_sf_layout *l, uint64_t id, idm_sf_parts *out, idm_error *err)
{
    int rc = idm__sf_layout_check(l, err);
    if (rc != IDM_OK)
        return rc;
    unsigned total = (unsigned)l->bits[0] + l->bits[1] + l->bits[2];
    if (total < 64 && id >> total != 0)
        return idm__fail(err, IDM_EPARSE, 0,
                         "bits above the layout's %u field bits are set (the largest valid ID is "
                         "%" PRIu64 ")",
                         total, ((uint64_t)1 << total) - 1);
    uint64_t v[3];
    for (int f = 0; f < 3; f++)
        v[f] = id >> l->shift[f] & (((uint64_t)1 << l->bits[f]) - 1);
    idm_sf_parts p;
    p.time_units = v[IDM_SF_TIME];
    /* Cannot wrap: the layout check proved epoch + (2^bits - 1) * unit fits. */
    p.unix_ms = l->epoch_ms + (int64_t)(v[IDM_SF_TIME] * (uint64_t)l->unit_ms);
    p.node = v[IDM_SF_NODE];
    p.sequence = v[IDM_SF_SEQ];
    if (out != NULL)
        *out = p;
    return IDM_OK;
}

/* ---- decimal text ------------------------------------------------------- */

int idm_sf_parse_decimal(const char *text, size_t len, uint64_t *out, idm_error *err)
{
    if (text == NULL || len == 0)
        return idm__fail(err, IDM_EPARSE, 0, "empty snowflake; expected decimal digits");
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c < '0' || c > '9') {
            if (c == ' ' || c == '-' || c == '+')
                return idm__fail(err, IDM_EPARSE, i,
                                 "snowflake must be decimal digits only, found %s",
                                 c == ' ' ? "a space" : "a sign");
            char name[IDM__CHARNAME_CAP];
            return idm__fail(err, IDM_EPARSE, i, "snowflake must be decimal digits only, found %s",
                             idm__char_name(c, name));
        }
        unsigned d = c - '0';
        if (v > (UINT64_MAX - d) / 10)
            return idm__fail(err, IDM_EPARSE, i,
                             "snowflake exceeds 64 bits (the largest is 18446744073709551615)");
        v = v * 10 + d;
    }
    if (out != NULL)
        *out = v;
    return IDM_OK;
}

size_t idm_sf_format_decimal(uint64_t id, char *dst, size_t cap)
{
    /* Two digits per division: half the divisions of the digit-by-digit
     * loop, which matters when printing millions of IDs. */
    static const char pairs[201] = "00010203040506070809"
                                   "10111213141516171819"
                                   "20212223242526272829"
                                   "30313233343536373839"
                                   "40414243444546474849"
                                   "50515253545556575859"
                                   "60616263646566676869"
                                   "70717273747576777879"
                                   "80818283848586878889"
                                   "90919293949596979899";
    if (dst == NULL || cap < 21)
        return 0;
    char buf[20];
    size_t pos = sizeof buf;
    while (id >= 100) {
        unsigned r = (unsigned)(id % 100);
        id /= 100;
        pos -= 2;
        buf[pos] = pairs[2 * r];
        buf[pos + 1] = pairs[2 * r + 1];
    }
    if (id >= 10) {
        pos -= 2;
        buf[pos] = pairs[2 * id];
        buf[pos + 1] = pairs[2 * id + 1];
    } else {
        buf[--pos] = (char)('0' + id);
    }
    size_t n = sizeof buf - pos;
    memcpy(dst, buf + pos, n);
    dst[n] = '\0';
    return n;
}
