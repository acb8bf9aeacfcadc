/*
 * benchkeys.c - the keys of `idmint bench btree`, per format (benchkeys.h
 * says which and how). The IDs come from libidmint; only bigint and
 * uuidv7-unordered are put together here, the latter on purpose without
 * libidmint's monotonic counter (RFC 9562 §6.2 method 1 is what makes
 * UUIDv7 ordered within a millisecond; most libraries leave it out).
 */
#include "benchkeys.h"

#include <stdlib.h>
#include <string.h>

static const char *const format_names[BK_N_FORMATS] = {
    "bigint", "uuidv4", "uuidv7", "uuidv7-unordered", "ulid", "ksuid", "snowflake",
};
static const int key_bytes[BK_N_FORMATS] = {8, 16, 16, 16, 16, 20, 8};

#define NS_PER_MS INT64_C(1000000)
/* Keys minted per bulk call: a batch of the benchmark is cut into chunks
 * of this many, so that with the system clock a large --batch does not
 * stamp every key of it with one clock reading (under the injected clock
 * the time stands still within a group, so chunks change nothing). */
#define REAL_CHUNK 64

int bk_format_parse(const char *name, size_t len)
{
    for (int f = 0; f < BK_N_FORMATS; f++) {
        if (strlen(format_names[f]) == len && memcmp(format_names[f], name, len) == 0) {
            return f;
        }
    }
    return -1;
}

const char *bk_format_name(int format)
{
    return format >= 0 && format < BK_N_FORMATS ? format_names[format] : "?";
}

int bk_key_bytes(int format)
{
    return format >= 0 && format < BK_N_FORMATS ? key_bytes[format] : 0;
}

const char *bk_format_list(void)
{
    return "bigint, uuidv4, uuidv7, uuidv7-unordered, ulid, ksuid, snowflake";
}

/* The injected clock: reads now_ns; sleeping moves it on. One thread. */
typedef struct fake_clock {
    int64_t now_ns;
} fake_clock;

static int fake_now(void *ctx, int64_t *unix_ns)
{
    const fake_clock *k = ctx;
    *unix_ns = k->now_ns;
    return IDM_OK;
}

static void fake_sleep(void *ctx, int64_t ns)
{
    fake_clock *k = ctx;
    k->now_ns += ns > 0 ? ns : 1;
}

struct bk_minter {
    int format;
    uint64_t keys_per_ms; /* 0: the system clock */
    idm_clock clock;      /* what the generators and uuidv7-unordered read */
    fake_clock fake;
    int64_t group_ms;  /* the injected clock's millisecond of this group */
    uint64_t in_group; /* keys minted in it so far */
    idm_gen *gen;
    idm_snowflake *sf;
    int64_t next_bigint;
    union {
        idm_uuid uuid[REAL_CHUNK];
        idm_ulid ulid[REAL_CHUNK];
        idm_ksuid ksuid[REAL_CHUNK];
        uint64_t sf[REAL_CHUNK];
    } tmp;
};

int bk_minter_new(bk_minter **out, int format, uint64_t keys_per_ms, idm_error *err)
{
    *out = NULL;
    if (format < 0 || format >= BK_N_FORMATS) {
        return IDM_EINVAL;
    }
    bk_minter *m = calloc(1, sizeof *m);
    if (m == NULL) {
        return IDM_ENOMEM;
    }
    m->format = format;
    m->keys_per_ms = keys_per_ms;
    m->next_bigint = 1;
    m->clock = idm_clock_system();
    if (keys_per_ms > 0) {
        int64_t now = 0;
        int rc = m->clock.now_ns(m->clock.ctx, &now);
        if (rc != IDM_OK) {
            free(m);
            return rc;
        }
        m->group_ms = now / NS_PER_MS;
        m->fake.now_ns = m->group_ms * NS_PER_MS;
        m->clock.now_ns = fake_now;
        m->clock.sleep_ns = fake_sleep;
        m->clock.ctx = &m->fake;
    }
    int rc = IDM_OK;
    if (format == BK_SNOWFLAKE) {
        idm_snowflake_config cfg;
        idm_snowflake_config_init(&cfg);
        cfg.node = 1;
        cfg.gen.clock = m->clock;
        rc = idm_snowflake_new(&m->sf, &cfg, err);
    } else if (format != BK_BIGINT) {
        idm_gen_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.clock = m->clock;
        cfg.flags = IDM_GEN_UNSHARED;
        rc = idm_gen_new(&m->gen, &cfg, err);
    }
    if (rc != IDM_OK) {
        bk_minter_free(m);
        return rc;
    }
    *out = m;
    return IDM_OK;
}

void bk_minter_free(bk_minter *m)
{
    if (m == NULL) {
        return;
    }
    idm_gen_free(m->gen);
    idm_snowflake_free(m->sf);
    free(m);
}

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)(v & 0xff);
        v >>= 8;
    }
}

/* n (at most REAL_CHUNK) UUIDv7 without a counter: each reads the clock
 * (once for all of them under the injected clock, whose time stands still
 * within a group), then 74 random bits around the version and variant. */
static int mint_unordered(bk_minter *m, uint8_t *dst, size_t n, idm_error *err)
{
    int rc = idm_gen_random(m->gen, dst, n * 16, err);
    if (rc != IDM_OK) {
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t ns = 0;
        rc = m->clock.now_ns(m->clock.ctx, &ns);
        if (rc != IDM_OK) {
            return rc;
        }
        uint64_t ms = (uint64_t)(ns / NS_PER_MS);
        uint8_t *u = dst + i * 16;
        for (int b = 5; b >= 0; b--) {
            u[b] = (uint8_t)(ms & 0xff);
            ms >>= 8;
        }
        u[6] = (uint8_t)(0x70 | (u[6] & 0x0f)); /* version 7 */
        u[8] = (uint8_t)(0x80 | (u[8] & 0x3f)); /* variant 10 */
    }
    return IDM_OK;
}

/* One bulk call of n (at most REAL_CHUNK) keys. */
static int mint_chunk(bk_minter *m, uint8_t *dst, size_t n, idm_error *err)
{
    int rc = IDM_OK;
    switch (m->format) {
    case BK_BIGINT:
        for (size_t i = 0; i < n; i++) {
            put_be64(dst + i * 8, (uint64_t)m->next_bigint++);
        }
        return IDM_OK;
    case BK_UUIDV4:
        rc = idm_uuidv4_next_n(m->gen, m->tmp.uuid, n, err);
        break;
    case BK_UUIDV7:
        rc = idm_uuidv7_next_n(m->gen, m->tmp.uuid, n, err);
        break;
    case BK_UUIDV7_UNORDERED:
        return mint_unordered(m, dst, n, err);
    case BK_ULID:
        rc = idm_ulid_next_n(m->gen, m->tmp.ulid, n, err);
        break;
    case BK_KSUID:
        rc = idm_ksuid_next_n(m->gen, m->tmp.ksuid, n, err);
        break;
    default: {
        size_t done = 0;
        rc = idm_snowflake_next_n(m->sf, m->tmp.sf, n, &done, err);
        if (rc == IDM_OK) {
            for (size_t i = 0; i < n; i++) {
                put_be64(dst + i * 8, m->tmp.sf[i]); /* below 2^63: twitter's top bit is 0 */
            }
        }
        return rc;
    }
    }
    if (rc == IDM_OK) {
        /* The ID structs are their bytes (BearSSL's "no interior
         * pointers"), in a row. */
        memcpy(dst, &m->tmp, n * (size_t)key_bytes[m->format]);
    }
    return rc;
}

int bk_mint(bk_minter *m, uint8_t *dst, size_t n, idm_error *err)
{
    size_t width = (size_t)key_bytes[m->format];
    while (n > 0) {
        size_t take = n < REAL_CHUNK ? n : REAL_CHUNK;
        if (m->keys_per_ms > 0) {
            uint64_t left = m->keys_per_ms - m->in_group;
            if (left < take) {
                take = (size_t)left;
            }
            /* A group starts at its millisecond, or later when a
             * snowflake generator slept past it. */
            if (m->fake.now_ns < m->group_ms * NS_PER_MS) {
                m->fake.now_ns = m->group_ms * NS_PER_MS;
            }
        }
        int rc = mint_chunk(m, dst, take, err);
        if (rc != IDM_OK) {
            return rc;
        }
        dst += take * width;
        n -= take;
        if (m->keys_per_ms > 0) {
            m->in_group += take;
            if (m->in_group == m->keys_per_ms) {
                m->in_group = 0;
                m->group_ms++;
                int64_t at_ms = m->fake.now_ns / NS_PER_MS;
                if (at_ms >= m->group_ms) {
                    m->group_ms = at_ms + 1; /* slept into a later one */
                }
                m->fake.now_ns = m->group_ms * NS_PER_MS;
            }
        }
    }
    return IDM_OK;
}
