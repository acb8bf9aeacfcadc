/*
 * markfile.c - the mark file's bytes: CRC-32C, a slot's encoding, and
 * idm_mark_decode (include/idmint/mark.h has the format). Pure functions.
 *
 * A slot: "IDMMARK1", then little-endian seq (u64), mark_ms (i64),
 * written_ms (i64), pid (u32), the owner's 16-byte tag, 4 reserved bytes
 * (zero when written, ignored when read, covered by the CRC), the CRC-32C
 * of bytes 0..55 (u32) and 4 zero bytes.
 */
#include "mark/markfile.h"

#include <inttypes.h>
#include <stdio.h>

enum { OFF_SEQ = 8, OFF_MARK = 16, OFF_WRITTEN = 24, OFF_PID = 32, OFF_TAG = 36, OFF_CRC = 56 };
#define MARK_MAX_MS ((INT64_C(1) << 48) - 1)

uint32_t idm__crc32c(const void *buf, size_t len)
{
    const uint8_t *p = buf;
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void idm__mark_slot_encode(const struct idm_mark_slot *s, uint8_t out[IDM_MARK_SLOT_BYTES])
{
    memset(out, 0, IDM_MARK_SLOT_BYTES);
    memcpy(out, IDM_MARK_MAGIC, 8);
    put64(out + OFF_SEQ, s->seq);
    put64(out + OFF_MARK, (uint64_t)s->mark_ms);
    put64(out + OFF_WRITTEN, (uint64_t)s->written_ms);
    put32(out + OFF_PID, s->pid);
    memcpy(out + OFF_TAG, s->tag, IDM_MARK_TAG_BYTES);
    put32(out + OFF_CRC, idm__crc32c(out, OFF_CRC));
}

/* A valid slot at p (len bytes available) decoded into *s. */
static bool slot_decode(const uint8_t *p, size_t len, struct idm_mark_slot *s)
{
    if (len < IDM_MARK_SLOT_BYTES || memcmp(p, IDM_MARK_MAGIC, 8) != 0 ||
        get32(p + OFF_CRC) != idm__crc32c(p, OFF_CRC))
        return false;
    s->seq = get64(p + OFF_SEQ);
    s->mark_ms = (int64_t)get64(p + OFF_MARK);
    s->written_ms = (int64_t)get64(p + OFF_WRITTEN);
    s->pid = get32(p + OFF_PID);
    memcpy(s->tag, p + OFF_TAG, IDM_MARK_TAG_BYTES);
    return s->seq != 0 && s->mark_ms >= 0 && s->mark_ms <= MARK_MAX_MS;
}

int idm__mark_file_decode(const uint8_t *p, size_t len, struct idm_mark_slot *out, idm_error *err)
{
    struct idm_mark_slot best = {0}, s;
    bool zero = true;
    for (size_t i = 0; i < len && zero; i++)
        zero = p[i] == 0;
    for (unsigned k = 0; k < 2; k++) {
        size_t off = (size_t)k * IDM_MARK_SLOT_STRIDE;
        if (off < len && slot_decode(p + off, len - off, &s) && s.seq > best.seq)
            best = s;
    }
    if (best.seq == 0 && !zero)
        return idm__fail(err, IDM_ESTATE, 0,
                         "holds no valid mark (%zu bytes, neither slot has the magic %s and a "
                         "matching CRC-32C)",
                         len, IDM_MARK_MAGIC);
    *out = best;
    return IDM_OK;
}

int idm_mark_decode(const void *buf, size_t len, int64_t *mark_ms, uint64_t *seq,
                    int64_t *written_ms, idm_error *err)
{
    if (buf == NULL && len > 0)
        return idm__fail(err, IDM_EINVAL, 0, "no buffer");
    struct idm_mark_slot best;
    int rc = idm__mark_file_decode(buf, len, &best, err);
    if (rc != IDM_OK)
        return rc;
    if (mark_ms != NULL)
        *mark_ms = best.mark_ms;
    if (seq != NULL)
        *seq = best.seq;
    if (written_ms != NULL)
        *written_ms = best.written_ms;
    return IDM_OK;
}
