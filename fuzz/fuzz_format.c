/*
 * fuzz/fuzz_format.c - the format table's name lookup and every format's
 * parse entry (idmint/format.h) on arbitrary bytes.
 *
 * Properties:
 *  - idm_format_by_name finds a format exactly when the input is one of
 *    the table's names byte for byte, and then the one of that name (a
 *    name written out here independently, so a lookup that matched a
 *    prefix, a case variant or a longer input is caught), and
 *    idm_format_by_id of its number gives it back;
 *  - idm_format_parse returns IDM_OK, IDM_EPARSE or IDM_EUNSUPPORTED for
 *    every format, fills the error record on refusal (an offset within
 *    the input), and on success reports the format and at most
 *    IDM_FORMAT_VALUE_BYTES bytes; a prefix it keeps is NUL-terminated and
 *    passes the format's prefix rule;
 *  - an accepted uuidv4, uuidv7, ulid, ksuid or typeid is decoded by
 *    idm_inspect, forced to the format's kind, to the same bits.
 */
#include "harness.h"

static const char *const names[] = {"uuidv7",    "uuidv4", "ulid",  "ksuid",
                                    "snowflake", "typeid", "token", "traceparent"};

static void check_lookup(const fuzz_input *in)
{
    const idm_format *f = idm_format_by_name(in->text, in->len);
    const char *want = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strlen(names[i]) == in->len && memcmp(names[i], in->text, in->len) == 0) {
            want = names[i];
        }
    }
    FUZZ_CHECK((f != NULL) == (want != NULL));
    if (f != NULL) {
        FUZZ_CHECK(strcmp(f->name, want) == 0);
        FUZZ_CHECK(idm_format_by_id(f->id) == f);
    }
}

static void check_inspect(const fuzz_input *in, const idm_format *f, const idm_format_value *v)
{
    if (f->kind == 0 || f->kind == IDM_KIND_SNOWFLAKE) {
        return; /* no inspect kind; snowflakes: inspect caps the digits at 20 */
    }
    idm_inspection insp;
    FUZZ_CHECK(idm_inspect(in->text, in->len, f->kind, NULL, &insp, NULL) == IDM_OK);
    if (f->kind == IDM_KIND_KSUID) {
        FUZZ_CHECK(memcmp(insp.ksuid.bytes, v->bytes, v->len) == 0);
    } else {
        FUZZ_CHECK(memcmp(insp.uuid.bytes, v->bytes, v->len) == 0);
    }
}

static void check_parse(const fuzz_input *in, const idm_format *f)
{
    idm_format_value v;
    idm_error err;
    fuzz_error_init(&err);
    int rc = idm_format_parse(f, in->text, in->len, &v, &err);
    FUZZ_CHECK(rc == IDM_OK || rc == IDM_EPARSE || rc == IDM_EUNSUPPORTED);
    if (rc != IDM_OK) {
        fuzz_check_error(rc, &err, in->len);
        return;
    }
    FUZZ_CHECK(v.format == f->id);
    FUZZ_CHECK(v.len <= IDM_FORMAT_VALUE_BYTES);
    FUZZ_CHECK(v.prefix_len < sizeof v.prefix && v.prefix[v.prefix_len] == '\0');
    FUZZ_CHECK(strlen(v.prefix) == v.prefix_len);
    if (v.prefix_len > 0) {
        FUZZ_CHECK(idm_format_check_prefix(f, v.prefix, v.prefix_len, NULL) == IDM_OK);
    }
    check_inspect(in, f, &v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_new(&in, data, size);
    check_lookup(&in);
    for (size_t i = 0; i < idm_format_count(); i++) {
        check_parse(&in, idm_format_at(i));
    }
    fuzz_input_free(&in);
    return 0;
}
