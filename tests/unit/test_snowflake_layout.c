/*
 * test_snowflake_layout.c - snowflake layouts: presets, spec parsing and
 * its errors, formatting, decoding, and decimal text.
 *
 * Preset field placement is checked against published IDs (Twitter,
 * Discord) and against IDs composed by each system's own formula
 * (Instagram's blog post, sonyflake.go, uid-generator's BitsAllocator).
 */
#include "testlib.h"

#include <idmint/idmint.h>

static idm_sf_layout preset(const char *name)
{
    idm_sf_layout l;
    idm_error err = {0};
    memset(&l, 0, sizeof l);
    if (idm_sf_layout_preset(&l, name, strlen(name), &err) != IDM_OK)
        fprintf(stderr, "preset %s: %s\n", name, err.msg);
    return l;
}

/* ---- errors first ------------------------------------------------------- */

struct spec_error {
    const char *spec;
    int code;
    size_t offset;
    const char *reason; /* a substring of the message */
};

static void test_snowflake_layout_spec_errors(void)
{
    static const struct spec_error cases[] = {
        {"time=41,node=10,sq=12", IDM_EPARSE, 16, "unknown key \"sq\""},
        {"time=41,node=10,seq=12,bits=3", IDM_EPARSE, 23, "unknown key \"bits\""},
        {"time=41,node=10,time=12", IDM_EPARSE, 16, "duplicate field \"time\""},
        {"time=41,node=10,seq=12,unit=1ms,unit=2ms", IDM_EPARSE, 32, "duplicate key \"unit\""},
        {"time=41,node=10,seq=12,epoch=0,epoch=1", IDM_EPARSE, 31, "duplicate key \"epoch\""},
        {"time=41,node=10", IDM_EPARSE, 15, "missing field \"seq\""},
        {"node=10,seq=12,unit=1ms", IDM_EPARSE, 23, "missing field \"time\""},
        {"time=0,node=10,seq=12", IDM_EPARSE, 5, "1 to 63 bits, got 0"},
        {"time=41,node=0,seq=12", IDM_EPARSE, 13, "node must have 1 to 63 bits"},
        {"time=64,node=1,seq=1", IDM_EPARSE, 5, "1 to 63 bits, got 64"},
        {"time=99999999999999999999999,node=1,seq=1", IDM_EPARSE, 5, "1 to 63 bits"},
        {"time=4x,node=1,seq=1", IDM_EPARSE, 6, "number of bits"},
        {"time=,node=1,seq=1", IDM_EPARSE, 5, "number of bits"},
        {"time=41,node=10,seq=14", IDM_EPARSE, 20, "fields take 65 bits"},
        {"time=41,node=10,seq=12,unit=10", IDM_EPARSE, 30, "whole number of ms or s"},
        {"time=41,node=10,seq=12,unit=10h", IDM_EPARSE, 30, "whole number of ms or s"},
        {"time=41,node=10,seq=12,unit=ms", IDM_EPARSE, 28, "whole number of ms or s"},
        {"time=41,node=10,seq=12,unit=1.5s", IDM_EPARSE, 29, "whole number of ms or s"},
        {"time=41,node=10,seq=12,unit=0ms", IDM_EPARSE, 28, "at least 1ms"},
        {"time=41,node=10,seq=12,unit=99999999999999999999ms", IDM_EPARSE, 28, "too large"},
        {"time=41,node=10,seq=12,unit=9223372036854776s", IDM_EPARSE, 28, "too large"},
        {"time=41,node=10,seq=12,epoch=", IDM_EPARSE, 29, "epoch"},
        {"time=41,node=10,seq=12,epoch=99999999999999999999", IDM_EPARSE, 29, "epoch is out of"},
        {"time=41,node=10,seq=12,", IDM_EPARSE, 23, "empty item"},
        {",time=41,node=10,seq=12", IDM_EPARSE, 0, "empty item"},
        {"time=41,,node=10,seq=12", IDM_EPARSE, 8, "empty item"},
        {"time41,node=10,seq=12", IDM_EPARSE, 0, "expected key=value"},
        {"=5,time=41,node=10,seq=12", IDM_EPARSE, 0, "unknown key \"\""},
        {"time=41,node=10,seq=12,\x1b[31m=1", IDM_EPARSE, 23, "unknown key (expected"},
        {"time=41,node=10,seq=12,abcdefghijklmnopqrstuvwxyz=1", IDM_EPARSE, 23,
         "unknown key \"abcdefghijklmnopqrst...\""},
        {"time=4\x01,node=1,seq=1", IDM_EPARSE, 6, "found byte 0x01"},
        {"time=41, node=10,seq=12", IDM_EPARSE, 8, "unknown key \" node\""},
        /* (2^62 - 1) units of 3 ms do not fit in int64 milliseconds; of
         * 2 ms they end at INT64_MAX - 1, so epoch 2 overflows. */
        {"time=62,node=1,seq=1,unit=3ms", IDM_EPARSE, 5, "runs past"},
        {"time=62,node=1,seq=1,unit=2ms,epoch=2", IDM_EPARSE, 5, "runs past"},
        {"twiter", IDM_EINVAL, 0,
         "twitter, discord, instagram, sonyflake, sonyflake2, baidu, safe53"},
        {"Twitter", IDM_EINVAL, 0, "unknown layout"},
        {"", IDM_EINVAL, 0, "unknown layout"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct spec_error *c = &cases[i];
        idm_sf_layout l;
        idm_error err = {0};
        int rc = idm_sf_layout_parse(&l, c->spec, strlen(c->spec), &err);
        if (rc != c->code || err.offset != c->offset || strstr(err.msg, c->reason) == NULL) {
            TEST_FAIL_(
                "%s: got code %d offset %zu \"%s\"; want code %d offset %zu containing \"%s\"",
                c->spec, rc, err.offset, err.msg, c->code, c->offset, c->reason);
        }
        ASSERT_EQ_INT(err.code, c->code);
    }
}

static void test_snowflake_layout_epoch_rfc3339_error_offset(void)
{
    /* Non-numeric epochs go to the RFC 3339 parser; where exactly it
     * stops is its business, but the offset must point into the epoch
     * value (which starts at 29), not into the spec before it. */
    static const char *const specs[] = {
        "time=41,node=10,seq=12,epoch=2025-13-01T00:00:00Z",
        "time=41,node=10,seq=12,epoch=yesterday",
        "time=41,node=10,seq=12,epoch=-",
        "time=41,node=10,seq=12,epoch=2025-01-01",
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        idm_sf_layout l;
        idm_error err = {0};
        ASSERT_EQ_INT(idm_sf_layout_parse(&l, specs[i], strlen(specs[i]), &err), IDM_EPARSE);
        if (err.offset < 29 || err.offset > strlen(specs[i]))
            TEST_FAIL_("%s: offset %zu outside the epoch value", specs[i], err.offset);
        ASSERT_TRUE(strstr(err.msg, "epoch is neither") != NULL);
    }
}

static void test_snowflake_layout_parse_reads_only_len(void)
{
    /* Bytes past len are not part of the spec. */
    const char *text = "time=41,node=10,seq=12XYZ";
    idm_sf_layout l;
    idm_error err = {0};
    ASSERT_OK(idm_sf_layout_parse(&l, text, 22, &err), &err);
    ASSERT_EQ_INT(l.bits[IDM_SF_SEQ], 12);
    ASSERT_OK(idm_sf_layout_parse(&l, "twitterX", 7, &err), &err);
    ASSERT_EQ_STR(l.name, "twitter");
}

static void test_snowflake_layout_decode_rejects_high_bits(void)
{
    idm_sf_layout tw = preset("twitter");
    idm_sf_parts p;
    idm_error err = {0};
    ASSERT_EQ_INT(idm_sf_decode(&tw, (uint64_t)1 << 63, &p, &err), IDM_EPARSE);
    ASSERT_TRUE(strstr(err.msg, "9223372036854775807") != NULL);
    ASSERT_OK(idm_sf_decode(&tw, INT64_MAX, &p, &err), &err);

    idm_sf_layout s53 = preset("safe53");
    ASSERT_EQ_INT(idm_sf_decode(&s53, (uint64_t)1 << 53, &p, &err), IDM_EPARSE);
    ASSERT_OK(idm_sf_decode(&s53, ((uint64_t)1 << 53) - 1, &p, &err), &err);

    /* Discord uses all 64 bits: nothing is above its fields. */
    idm_sf_layout dc = preset("discord");
    ASSERT_OK(idm_sf_decode(&dc, UINT64_MAX, &p, &err), &err);
    ASSERT_EQ_U64(p.time_units, ((uint64_t)1 << 42) - 1);
    ASSERT_EQ_U64(p.node, 1023);
    ASSERT_EQ_U64(p.sequence, 4095);
}

static void test_snowflake_layout_decode_rejects_bad_layout(void)
{
    idm_sf_layout l;
    memset(&l, 0, sizeof l);
    idm_sf_parts p;
    idm_error err = {0};
    ASSERT_EQ_INT(idm_sf_decode(&l, 1, &p, &err), IDM_EINVAL);
    l = preset("twitter");
    l.shift[IDM_SF_TIME] = 21; /* does not match order and bits */
    ASSERT_EQ_INT(idm_sf_decode(&l, 1, &p, &err), IDM_EINVAL);
    l = preset("twitter");
    l.order[2] = IDM_SF_TIME;
    ASSERT_EQ_INT(idm_sf_decode(&l, 1, &p, &err), IDM_EINVAL);
}

static void test_snowflake_layout_parse_decimal_errors(void)
{
    static const struct {
        const char *text;
        size_t offset;
        const char *reason;
    } cases[] = {
        {"", 0, "empty"},
        {"-1", 0, "a sign"},
        {"+1", 0, "a sign"},
        {" 1", 0, "a space"},
        {"1 ", 1, "a space"},
        {"12a4", 2, "decimal digits only, found 'a'"},
        {"12\x7f", 2, "found byte 0x7f"},
        {"0x10", 1, "decimal digits only"},
        {"18446744073709551616", 19, "exceeds 64 bits"},
        {"99999999999999999999", 19, "exceeds 64 bits"},
        {"184467440737095516150", 20, "exceeds 64 bits"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t v = 7;
        idm_error err = {0};
        int rc = idm_sf_parse_decimal(cases[i].text, strlen(cases[i].text), &v, &err);
        if (rc != IDM_EPARSE || err.offset != cases[i].offset ||
            strstr(err.msg, cases[i].reason) == NULL)
            TEST_FAIL_("\"%s\": got %d offset %zu \"%s\"", cases[i].text, rc, err.offset, err.msg);
        ASSERT_EQ_U64(v, 7); /* untouched on failure */
    }
}

/* ---- presets ------------------------------------------------------------- */

struct preset_expect {
    const char *name;
    int64_t epoch_ms, unit_ms;
    uint8_t order[3];
    uint8_t bits[3];  /* time, node, seq */
    uint8_t shift[3]; /* time, node, seq */
};

static void test_snowflake_layout_presets_match_contract(void)
{
    static const struct preset_expect want[] = {
        {"twitter", 1288834974657, 1, {0, 1, 2}, {41, 10, 12}, {22, 12, 0}},
        {"discord", 1420070400000, 1, {0, 1, 2}, {42, 10, 12}, {22, 12, 0}},
        {"instagram", 1314220021721, 1, {0, 1, 2}, {41, 13, 10}, {23, 10, 0}},
        {"sonyflake", 1409529600000, 10, {0, 2, 1}, {39, 16, 8}, {24, 0, 16}},
        {"sonyflake2", 1735689600000, 10, {0, 2, 1}, {39, 16, 8}, {24, 0, 16}},
        {"baidu", 1463673600000, 1000, {0, 1, 2}, {28, 22, 13}, {35, 13, 0}},
        {"safe53", 1735689600000, 1, {0, 1, 2}, {41, 6, 6}, {12, 6, 0}},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct preset_expect *w = &want[i];
        idm_sf_layout l;
        idm_error err = {0};
        ASSERT_OK(idm_sf_layout_parse(&l, w->name, strlen(w->name), &err), &err);
        ASSERT_EQ_STR(l.name, w->name);
        ASSERT_EQ_INT(l.epoch_ms, w->epoch_ms);
        ASSERT_EQ_INT(l.unit_ms, w->unit_ms);
        ASSERT_EQ_MEM(l.order, w->order, 3);
        ASSERT_EQ_MEM(l.bits, w->bits, 3);
        if (memcmp(l.shift, w->shift, 3) != 0)
            TEST_FAIL_("%s shifts %u/%u/%u, want %u/%u/%u", w->name, l.shift[0], l.shift[1],
                       l.shift[2], w->shift[0], w->shift[1], w->shift[2]);
        char buf[IDM_SF_SPEC_CAP];
        ASSERT_EQ_INT(idm_sf_layout_format(&l, buf, sizeof buf), IDM_OK);
        ASSERT_EQ_STR(buf, w->name);
    }
}

static void test_snowflake_layout_twitter_published_id(void)
{
    /* A tweet ID from 2019-12-31: 1212161070186418176 >> 22 = 289001719996
     * ms after 1288834974657, i.e. 1577836694653 = 2020-01-01T00:00:00Z
     * (1577836800000) minus 105347 ms = 2019-12-31T23:58:14.653Z; bits
     * 21..12 (the worker) hold 77, bits 11..0 hold 0. */
    idm_sf_layout tw = preset("twitter");
    idm_sf_parts p;
    idm_error err = {0};
    ASSERT_OK(idm_sf_decode(&tw, 1212161070186418176u, &p, &err), &err);
    ASSERT_EQ_U64(p.time_units, 289001719996u);
    ASSERT_EQ_INT(p.unix_ms, 1577836694653);
    ASSERT_EQ_U64(p.node, 77);
    ASSERT_EQ_U64(p.sequence, 0);
}

static void test_snowflake_layout_discord_docs_example(void)
{
    /* Discord's reference docs: 175928847299117063 has timestamp
     * 41944705796 + 1420070400000 = 1462015105796 (2016-04-30T11:18:25.796Z),
     * internal worker 1, internal process 0, increment 7. Our 10-bit node
     * is worker << 5 | process = 32. */
    idm_sf_layout dc = preset("discord");
    idm_sf_parts p;
    idm_error err = {0};
    ASSERT_OK(idm_sf_decode(&dc, 175928847299117063u, &p, &err), &err);
    ASSERT_EQ_U64(p.time_units, 41944705796u);
    ASSERT_EQ_INT(p.unix_ms, 1462015105796);
    ASSERT_EQ_U64(p.node, 32);
    ASSERT_EQ_U64(p.node >> 5, 1);
    ASSERT_EQ_U64(p.node & 31, 0);
    ASSERT_EQ_U64(p.sequence, 7);
}

static void test_snowflake_layout_instagram_blog_formula(void)
{
    /* Instagram's 2011 post: 1387263000 ms since its epoch << (64 - 41),
     * shard 1341 << (64 - 41 - 13), sequence 5001 % 1024 = 905. */
    uint64_t id = (uint64_t)1387263000 << 23 | (uint64_t)1341 << 10 | 905;
    ASSERT_EQ_U64(id, 11637205501278089u);
    idm_sf_layout ig = preset("instagram");
    idm_sf_parts p;
    idm_error err = {0};
    ASSERT_OK(idm_sf_decode(&ig, id, &p, &err), &err);
    ASSERT_EQ_U64(p.time_units, 1387263000);
    ASSERT_EQ_INT(p.unix_ms, 1314220021721 + 1387263000);
    ASSERT_EQ_U64(p.node, 1341);
    ASSERT_EQ_U64(p.sequence, 905);
}

static void test_snowflake_layout_sonyflake_seq_above_machine(void)
{
    /* sonyflake.go: elapsed << (BitLenSequence + BitLenMachineID) |
     * sequence << BitLenMachineID | machineID, elapsed in 10 ms units. */
    uint64_t id = (uint64_t)123456789 << 24 | (uint64_t)0xAB << 16 | 0x1234;
    const char *names[] = {"sonyflake", "sonyflake2"};
    const int64_t epochs[] = {1409529600000, 1735689600000};
    for (int i = 0; i < 2; i++) {
        idm_sf_layout l = preset(names[i]);
        idm_sf_parts p;
        idm_error err = {0};
        ASSERT_OK(idm_sf_decode(&l, id, &p, &err), &err);
        ASSERT_EQ_U64(p.time_units, 123456789);
        ASSERT_EQ_INT(p.unix_ms, epochs[i] + 1234567890);
        ASSERT_EQ_U64(p.sequence, 0xAB);
        ASSERT_EQ_U64(p.node, 0x1234);
        ASSERT_EQ_U64(idm_sf_layout_max_node(&l), 65535);
    }
}

static void test_snowflake_layout_baidu_fields_and_end(void)
{
    /* uid-generator: deltaSeconds << 35 | workerId << 13 | sequence. */
    uint64_t id = (uint64_t)100000000 << 35 | (uint64_t)3000000 << 13 | 8000;
    idm_sf_layout b = preset("baidu");
    idm_sf_parts p;
    idm_error err = {0};
    ASSERT_OK(idm_sf_decode(&b, id, &p, &err), &err);
    ASSERT_EQ_U64(p.time_units, 100000000);
    ASSERT_EQ_INT(p.unix_ms, 1463673600000 + 100000000000);
    ASSERT_EQ_U64(p.node, 3000000);
    ASSERT_EQ_U64(p.sequence, 8000);
    /* 2^28 seconds after 2016-05-19T16:00:00Z is 2024-11-20T13:24:16Z; the
     * last representable second is one before. */
    ASSERT_EQ_INT(idm_sf_layout_max_unix_ms(&b), 1732109056000 - 1000);
    ASSERT_EQ_U64(idm_sf_layout_max_node(&b), (1u << 22) - 1);
}

static void test_snowflake_layout_safe53_fits_a_double(void)
{
    idm_sf_layout l = preset("safe53");
    uint64_t max_id = (((uint64_t)1 << 41) - 1) << 12 | 63u << 6 | 63u;
    ASSERT_EQ_U64(max_id, ((uint64_t)1 << 53) - 1);
    idm_sf_parts p;
    idm_error err = {0};
    ASSERT_OK(idm_sf_decode(&l, max_id, &p, &err), &err);
    ASSERT_EQ_U64(p.node, 63);
    ASSERT_EQ_U64(p.sequence, 63);
    ASSERT_EQ_U64(idm_sf_layout_max_node(&l), 63);
}

static void test_snowflake_layout_max_values(void)
{
    idm_sf_layout tw = preset("twitter");
    ASSERT_EQ_U64(idm_sf_layout_max_node(&tw), 1023);
    ASSERT_EQ_INT(idm_sf_layout_max_unix_ms(&tw), 1288834974657 + (((int64_t)1 << 41) - 1));
    idm_sf_layout sf = preset("sonyflake");
    ASSERT_EQ_INT(idm_sf_layout_max_unix_ms(&sf), 1409529600000 + (((int64_t)1 << 39) - 1) * 10);
}

/* ---- specs ---------------------------------------------------------------- */

static void test_snowflake_layout_spec_defaults_and_shifts(void)
{
    const char *spec = "node=10,time=41,seq=12";
    idm_sf_layout l;
    idm_error err = {0};
    ASSERT_OK(idm_sf_layout_parse(&l, spec, strlen(spec), &err), &err);
    ASSERT_EQ_STR(l.name, "");
    ASSERT_EQ_INT(l.unit_ms, 1);
    ASSERT_EQ_INT(l.epoch_ms, 0);
    ASSERT_EQ_INT(l.order[0], IDM_SF_NODE);
    ASSERT_EQ_INT(l.order[1], IDM_SF_TIME);
    ASSERT_EQ_INT(l.order[2], IDM_SF_SEQ);
    ASSERT_EQ_INT(l.shift[IDM_SF_NODE], 53);
    ASSERT_EQ_INT(l.shift[IDM_SF_TIME], 12);
    ASSERT_EQ_INT(l.shift[IDM_SF_SEQ], 0);
    idm_sf_parts p;
    ASSERT_OK(idm_sf_decode(&l, (uint64_t)5 << 53 | (uint64_t)1000 << 12 | 9, &p, &err), &err);
    ASSERT_EQ_U64(p.node, 5);
    ASSERT_EQ_U64(p.time_units, 1000);
    ASSERT_EQ_INT(p.unix_ms, 1000);
    ASSERT_EQ_U64(p.sequence, 9);
}

static void test_snowflake_layout_spec_units_and_epochs(void)
{
    static const struct {
        const char *spec;
        int64_t unit_ms, epoch_ms;
        const char *canonical;
    } cases[] = {
        {"time=41,node=10,seq=12,unit=1ms,epoch=1735689600000", 1, 1735689600000,
         "time=41,node=10,seq=12,unit=1ms,epoch=1735689600000"},
        {"time=39,seq=8,node=16,unit=10ms,epoch=1409529600000", 10, 1409529600000,
         "time=39,seq=8,node=16,unit=10ms,epoch=1409529600000"},
        {"time=28,node=22,seq=13,unit=1s", 1000, 0, "time=28,node=22,seq=13,unit=1s,epoch=0"},
        {"time=28,node=22,seq=13,unit=2000ms", 2000, 0, "time=28,node=22,seq=13,unit=2s,epoch=0"},
        {"unit=1500ms,epoch=-1000,time=30,node=10,seq=10", 1500, -1000,
         "time=30,node=10,seq=10,unit=1500ms,epoch=-1000"},
        {"time=41,node=10,seq=12,epoch=2025-01-01T00:00:00Z", 1, 1735689600000,
         "time=41,node=10,seq=12,unit=1ms,epoch=1735689600000"},
        {"time=41,node=10,seq=12,epoch=2016-05-20T00:00:00+08:00", 1, 1463673600000,
         "time=41,node=10,seq=12,unit=1ms,epoch=1463673600000"},
        /* The extremes: all 64 bits used, a time range ending exactly at
         * INT64_MAX, and the widest numbers a spec can hold. */
        {"time=62,node=1,seq=1", 1, 0, "time=62,node=1,seq=1,unit=1ms,epoch=0"},
        {"time=62,node=1,seq=1,unit=2ms,epoch=1", 2, 1, "time=62,node=1,seq=1,unit=2ms,epoch=1"},
        {"time=1,node=62,seq=1,unit=9223372036854775807ms,epoch=-9223372036854775808", INT64_MAX,
         INT64_MIN, "time=1,node=62,seq=1,unit=9223372036854775807ms,epoch=-9223372036854775808"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        idm_sf_layout l, again;
        idm_error err = {0};
        ASSERT_OK(idm_sf_layout_parse(&l, cases[i].spec, strlen(cases[i].spec), &err), &err);
        ASSERT_EQ_INT(l.unit_ms, cases[i].unit_ms);
        ASSERT_EQ_INT(l.epoch_ms, cases[i].epoch_ms);
        char buf[IDM_SF_SPEC_CAP];
        ASSERT_EQ_INT(idm_sf_layout_format(&l, buf, sizeof buf), IDM_OK);
        ASSERT_EQ_STR(buf, cases[i].canonical);
        /* Round trip: parse(format(l)) == l, field for field. */
        ASSERT_OK(idm_sf_layout_parse(&again, buf, strlen(buf), &err), &err);
        ASSERT_EQ_MEM(&again, &l, sizeof l);
    }
    idm_sf_layout l;
    idm_error err = {0};
    const char *edge = "time=62,node=1,seq=1,unit=2ms,epoch=1";
    ASSERT_OK(idm_sf_layout_parse(&l, edge, strlen(edge), &err), &err);
    ASSERT_EQ_INT(idm_sf_layout_max_unix_ms(&l), INT64_MAX);
}

static void test_snowflake_layout_format_nospc(void)
{
    idm_sf_layout l = preset("twitter");
    char buf[IDM_SF_SPEC_CAP];
    ASSERT_EQ_INT(idm_sf_layout_format(&l, buf, 7), IDM_ENOSPC);
    ASSERT_EQ_STR(buf, "");
    ASSERT_EQ_INT(idm_sf_layout_format(&l, buf, 8), IDM_OK);
    ASSERT_EQ_STR(buf, "twitter");
    ASSERT_EQ_INT(idm_sf_layout_format(&l, buf, 0), IDM_ENOSPC);

    const char *spec = "time=41,node=10,seq=12,unit=1ms,epoch=1735689600000";
    idm_error err = {0};
    ASSERT_OK(idm_sf_layout_parse(&l, spec, strlen(spec), &err), &err);
    ASSERT_EQ_INT(idm_sf_layout_format(&l, buf, strlen(spec)), IDM_ENOSPC);
    ASSERT_EQ_STR(buf, "");
    ASSERT_EQ_INT(idm_sf_layout_format(&l, buf, strlen(spec) + 1), IDM_OK);
    ASSERT_EQ_STR(buf, spec);
}

static void test_snowflake_layout_set_epoch(void)
{
    idm_sf_layout l = preset("twitter");
    idm_error err = {0};
    char buf[IDM_SF_SPEC_CAP];
    /* The preset's own epoch keeps the name. */
    ASSERT_OK(idm_sf_layout_set_epoch(&l, 1288834974657, &err), &err);
    ASSERT_EQ_STR(l.name, "twitter");
    ASSERT_OK(idm_sf_layout_set_epoch(&l, 1735689600000, &err), &err);
    ASSERT_EQ_STR(l.name, "");
    ASSERT_EQ_INT(l.epoch_ms, 1735689600000);
    ASSERT_EQ_INT(idm_sf_layout_format(&l, buf, sizeof buf), IDM_OK);
    ASSERT_EQ_STR(buf, "time=41,node=10,seq=12,unit=1ms,epoch=1735689600000");

    /* 62 bits of 2 ms from epoch 1 end at INT64_MAX: any later epoch overflows. */
    const char *edge = "time=62,node=1,seq=1,unit=2ms,epoch=1";
    ASSERT_OK(idm_sf_layout_parse(&l, edge, strlen(edge), &err), &err);
    ASSERT_EQ_INT(idm_sf_layout_set_epoch(&l, 2, &err), IDM_EINVAL);
    ASSERT_EQ_INT(l.epoch_ms, 1);
    ASSERT_OK(idm_sf_layout_set_epoch(&l, -5, &err), &err);
    ASSERT_EQ_INT(l.epoch_ms, -5);
}

/* ---- decimal text --------------------------------------------------------- */

static void test_snowflake_layout_decimal_known(void)
{
    static const struct {
        uint64_t v;
        const char *text;
    } cases[] = {
        {0, "0"},
        {9, "9"},
        {10, "10"},
        {99, "99"},
        {100, "100"},
        {101, "101"},
        {1212161070186418176u, "1212161070186418176"},
        {10000000000000000000u, "10000000000000000000"},
        {UINT64_MAX, "18446744073709551615"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[21];
        size_t n = idm_sf_format_decimal(cases[i].v, buf, sizeof buf);
        ASSERT_EQ_INT(n, strlen(cases[i].text));
        ASSERT_EQ_STR(buf, cases[i].text);
        uint64_t back = 0;
        idm_error err = {0};
        ASSERT_OK(idm_sf_parse_decimal(cases[i].text, strlen(cases[i].text), &back, &err), &err);
        ASSERT_EQ_U64(back, cases[i].v);
    }
    char small[20];
    ASSERT_EQ_INT(idm_sf_format_decimal(1, small, sizeof small), 0);
    /* Leading zeros are digits too. */
    uint64_t v = 0;
    idm_error err = {0};
    ASSERT_OK(idm_sf_parse_decimal("007", 3, &v, &err), &err);
    ASSERT_EQ_U64(v, 7);
    ASSERT_OK(idm_sf_parse_decimal("00000000000000000000018446744073709551615", 41, &v, &err),
              &err);
    ASSERT_EQ_U64(v, UINT64_MAX);
}

static void test_snowflake_layout_decimal_roundtrip(void)
{
    /* Every power of ten and its neighbours, then a spread of values from a
     * fixed-seed xorshift, compared with printf's rendering. */
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 200000; i++) {
        uint64_t v;
        if (i < 60) {
            uint64_t p = 1;
            for (int k = 0; k < i / 3; k++)
                p *= 10;
            v = p + (uint64_t)(i % 3) - 1;
        } else {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v = x >> (i % 64);
        }
        char buf[32], ref[32];
        size_t n = idm_sf_format_decimal(v, buf, sizeof buf);
        snprintf(ref, sizeof ref, "%" PRIu64, v);
        if (n != strlen(ref) || strcmp(buf, ref) != 0)
            TEST_FAIL_("%" PRIu64 ": got \"%s\" (%zu)", v, buf, n);
        uint64_t back = 0;
        idm_error err = {0};
        if (idm_sf_parse_decimal(buf, n, &back, &err) != IDM_OK || back != v)
            TEST_FAIL_("%s: parsed back as %" PRIu64 " (%s)", buf, back, err.msg);
    }
}

static const struct test_case tests[] = {
    TEST(test_snowflake_layout_spec_errors),
    TEST(test_snowflake_layout_epoch_rfc3339_error_offset),
    TEST(test_snowflake_layout_parse_reads_only_len),
    TEST(test_snowflake_layout_decode_rejects_high_bits),
    TEST(test_snowflake_layout_decode_rejects_bad_layout),
    TEST(test_snowflake_layout_parse_decimal_errors),
    TEST(test_snowflake_layout_presets_match_contract),
    TEST(test_snowflake_layout_twitter_published_id),
    TEST(test_snowflake_layout_discord_docs_example),
    TEST(test_snowflake_layout_instagram_blog_formula),
    TEST(test_snowflake_layout_sonyflake_seq_above_machine),
    TEST(test_snowflake_layout_baidu_fields_and_end),
    TEST(test_snowflake_layout_safe53_fits_a_double),
    TEST(test_snowflake_layout_max_values),
    TEST(test_snowflake_layout_spec_defaults_and_shifts),
    TEST(test_snowflake_layout_spec_units_and_epochs),
    TEST(test_snowflake_layout_format_nospc),
    TEST(test_snowflake_layout_set_epoch),
    TEST(test_snowflake_layout_decimal_known),
    TEST(test_snowflake_layout_decimal_roundtrip),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
