/*
 * fuzz/fuzz_snowflake_spec.c - snowflake layout specs and decimal IDs.
 *
 * The input is "SPEC\nDECIMAL" (without a newline, the whole input is
 * tried as both). Properties:
 *  - an accepted layout has time, node and seq once each, 1 to 63 bits,
 *    at most 64 in all, unit_ms >= 1, shifts that stack the fields in
 *    order from bit 0 up; it formats, and the formatted spec parses back
 *    to the same layout;
 *  - an accepted decimal formats back to the same text (ignoring leading
 *    zeros) and parses back to the same value;
 *  - with both: decoding succeeds exactly when no bit above the fields is
 *    set, and then the fields reassemble to the ID, each fits its width,
 *    and unix_ms = epoch_ms + time_units * unit_ms.
 * Refusals fill the error record.
 */
#include "harness.h"

static void check_layout(const idm_sf_layout *l)
{
    int seen[3] = {0, 0, 0};
    unsigned total = 0;
    for (int i = 0; i < 3; i++) {
        FUZZ_CHECK(l->order[i] <= IDM_SF_SEQ);
        seen[l->order[i]]++;
        FUZZ_CHECK(l->bits[i] >= 1 && l->bits[i] <= 63);
        total += l->bits[i];
    }
    FUZZ_CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
    FUZZ_CHECK(total <= 64);
    FUZZ_CHECK(l->unit_ms >= 1);
    /* Least significant field last: shifts stack up from bit 0. */
    unsigned shift = 0;
    for (int i = 2; i >= 0; i--) {
        FUZZ_CHECK(l->shift[l->order[i]] == shift);
        shift += l->bits[l->order[i]];
    }
    FUZZ_CHECK(memchr(l->name, '\0', sizeof l->name) != NULL);
    FUZZ_CHECK(idm_sf_layout_max_node(l) == (UINT64_MAX >> (64 - l->bits[IDM_SF_NODE])));
    (void)idm_sf_layout_max_unix_ms(l);

    char spec[IDM_SF_SPEC_CAP];
    FUZZ_CHECK(idm_sf_layout_format(l, spec, sizeof spec) == IDM_OK);
    size_t spec_len = strlen(spec);
    FUZZ_CHECK(spec_len > 0 && spec_len < sizeof spec);
    idm_sf_layout again;
    idm_error err;
    fuzz_error_init(&err);
    int rc = idm_sf_layout_parse(&again, spec, spec_len, &err);
    if (rc != IDM_OK) {
        fprintf(stderr, "formatted spec \"%s\" does not parse: %s\n", spec, err.msg);
    }
    FUZZ_CHECK(rc == IDM_OK);
    FUZZ_CHECK(again.epoch_ms == l->epoch_ms);
    FUZZ_CHECK(again.unit_ms == l->unit_ms);
    FUZZ_CHECK(memcmp(again.order, l->order, sizeof l->order) == 0);
    FUZZ_CHECK(memcmp(again.bits, l->bits, sizeof l->bits) == 0);
    FUZZ_CHECK(memcmp(again.shift, l->shift, sizeof l->shift) == 0);
    FUZZ_CHECK(strcmp(again.name, l->name) == 0);
}

static void check_decimal(const char *text, size_t len, uint64_t v)
{
    FUZZ_CHECK(len >= 1);
    for (size_t i = 0; i < len; i++) {
        FUZZ_CHECK(text[i] >= '0' && text[i] <= '9');
    }
    char out[21];
    size_t n = idm_sf_format_decimal(v, out, sizeof out);
    FUZZ_CHECK(n >= 1 && n <= 20 && strlen(out) == n);
    size_t skip = 0;
    while (skip + 1 < len && text[skip] == '0') {
        skip++;
    }
    FUZZ_CHECK(len - skip == n && memcmp(text + skip, out, n) == 0);
    uint64_t again = 0;
    FUZZ_CHECK(idm_sf_parse_decimal(out, n, &again, NULL) == IDM_OK);
    FUZZ_CHECK(again == v);
    FUZZ_CHECK(idm_sf_format_decimal(v, out, 20) == 0);
}

static void check_decode(const idm_sf_layout *l, uint64_t id)
{
    unsigned total = (unsigned)l->bits[0] + l->bits[1] + l->bits[2];
    int has_extra = total < 64 && (id >> total) != 0;
    idm_sf_parts p;
    idm_error err;
    fuzz_error_init(&err);
    int rc = idm_sf_decode(l, id, &p, &err);
    if (has_extra) {
        FUZZ_CHECK(rc == IDM_EPARSE);
        FUZZ_CHECK(err.code == rc);
        FUZZ_CHECK(memchr(err.msg, '\0', sizeof err.msg) != NULL);
        return;
    }
    FUZZ_CHECK(rc == IDM_OK);
    uint64_t parts[3] = {p.time_units, p.node, p.sequence};
    uint64_t rebuilt = 0;
    for (int f = 0; f < 3; f++) {
        FUZZ_CHECK((parts[f] >> l->bits[f]) == 0);
        rebuilt |= parts[f] << l->shift[f];
    }
    FUZZ_CHECK(rebuilt == id);
    /* The true value fits int64 (snowflake.h: the layout's range does), so
     * it equals the sum computed modulo 2^64. */
    uint64_t want = (uint64_t)l->epoch_ms + p.time_units * (uint64_t)l->unit_ms;
    FUZZ_CHECK((uint64_t)p.unix_ms == want);
    FUZZ_CHECK(p.unix_ms <= idm_sf_layout_max_unix_ms(l));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_new(&in, data, size);
    const char *nl = size > 0 ? memchr(in.text, '\n', in.len) : NULL;
    size_t spec_len = nl != NULL ? (size_t)(nl - in.text) : in.len;
    const char *dec = nl != NULL ? nl + 1 : in.text;
    size_t dec_len = nl != NULL ? in.len - spec_len - 1 : in.len;

    idm_sf_layout layout;
    idm_error err;
    fuzz_error_init(&err);
    int lrc = idm_sf_layout_parse(&layout, in.text, spec_len, &err);
    if (lrc == IDM_OK) {
        check_layout(&layout);
    } else {
        FUZZ_CHECK(lrc == IDM_EPARSE || lrc == IDM_EINVAL);
        fuzz_check_error(lrc, &err, spec_len);
    }

    uint64_t id = 0;
    fuzz_error_init(&err);
    int drc = idm_sf_parse_decimal(dec, dec_len, &id, &err);
    if (drc == IDM_OK) {
        check_decimal(dec, dec_len, id);
        if (lrc == IDM_OK) {
            check_decode(&layout, id);
        }
    } else {
        FUZZ_CHECK(drc == IDM_EPARSE);
        fuzz_check_error(drc, &err, dec_len);
    }
    fuzz_input_free(&in);
    return 0;
}
