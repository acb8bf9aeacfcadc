/*
 * fuzz/fuzz_typeid.c - idm_typeid_parse and idm_typeid_check_prefix on
 * arbitrary bytes.
 *
 * Properties, for every input idm_typeid_parse accepts:
 *  - it is PREFIX "_" SUFFIX (or a bare SUFFIX when the prefix is empty),
 *    the prefix passes the prefix rule and the suffix is 26 lowercase
 *    Crockford base32 characters, the first at most '7';
 *  - formatting the parsed prefix and UUID gives the input back byte for
 *    byte (every accepted TypeID is canonical), and parsing that gives the
 *    same prefix and bits.
 * For the input taken as a prefix: idm_typeid_check_prefix accepts exactly
 * the strings of at most 63 characters of [a-z_] that neither start nor
 * end with "_", and an accepted prefix survives format + parse.
 * Refusals fill the error record.
 */
#include "harness.h"

static const char crockford_lower[] = "0123456789abcdefghjkmnpqrstvwxyz";

/* The prefix rule of typeid.h, written out independently. */
static int prefix_rule(const char *p, size_t len)
{
    if (len == 0) {
        return 1;
    }
    if (len > IDM_TYPEID_PREFIX_MAX || p[0] == '_' || p[len - 1] == '_') {
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        if (!((p[i] >= 'a' && p[i] <= 'z') || p[i] == '_')) {
            return 0;
        }
    }
    return 1;
}

static void check_parsed(const fuzz_input *in, const idm_typeid *t)
{
    FUZZ_CHECK(t->prefix_len <= IDM_TYPEID_PREFIX_MAX);
    FUZZ_CHECK(strlen(t->prefix) == t->prefix_len);
    FUZZ_CHECK(prefix_rule(t->prefix, t->prefix_len));
    FUZZ_CHECK(idm_typeid_check_prefix(t->prefix, t->prefix_len, NULL) == IDM_OK);

    size_t want_len = t->prefix_len + (t->prefix_len > 0 ? 1 : 0) + IDM_TYPEID_SUFFIX_LEN;
    FUZZ_CHECK(in->len == want_len);
    FUZZ_CHECK(memcmp(in->text, t->prefix, t->prefix_len) == 0);
    if (t->prefix_len > 0) {
        FUZZ_CHECK(in->text[t->prefix_len] == '_');
    }
    const char *suffix = in->text + in->len - IDM_TYPEID_SUFFIX_LEN;
    FUZZ_CHECK(suffix[0] >= '0' && suffix[0] <= '7');
    for (size_t i = 0; i < IDM_TYPEID_SUFFIX_LEN; i++) {
        FUZZ_CHECK(suffix[i] != 0 && strchr(crockford_lower, suffix[i]) != NULL);
    }

    char text[IDM_TYPEID_STRLEN_MAX + 1];
    FUZZ_CHECK(idm_typeid_format(t->prefix, t->prefix_len, &t->uuid, text, sizeof text, NULL) ==
               IDM_OK);
    FUZZ_CHECK(strlen(text) == in->len);
    FUZZ_CHECK(memcmp(text, in->text, in->len) == 0);

    idm_typeid again;
    FUZZ_CHECK(idm_typeid_parse(text, strlen(text), &again, NULL) == IDM_OK);
    FUZZ_CHECK(again.prefix_len == t->prefix_len);
    FUZZ_CHECK(strcmp(again.prefix, t->prefix) == 0);
    FUZZ_CHECK(memcmp(again.uuid.bytes, t->uuid.bytes, sizeof t->uuid.bytes) == 0);

    /* One byte short of prefix + "_" + 26 + NUL is too small. */
    FUZZ_CHECK(idm_typeid_format(t->prefix, t->prefix_len, &t->uuid, text, in->len, NULL) ==
               IDM_ENOSPC);
}

static void check_prefix(const fuzz_input *in)
{
    idm_error err;
    fuzz_error_init(&err);
    int rc = idm_typeid_check_prefix(in->text, in->len, &err);
    FUZZ_CHECK((rc == IDM_OK) == prefix_rule(in->text, in->len));
    if (rc != IDM_OK) {
        FUZZ_CHECK(rc == IDM_EINVAL);
        FUZZ_CHECK(err.code == rc);
        FUZZ_CHECK(memchr(err.msg, '\0', sizeof err.msg) != NULL);
        FUZZ_CHECK(err.offset <= in->len);
        /* Formatting with a bad prefix is refused the same way. */
        idm_uuid zero;
        memset(&zero, 0, sizeof zero);
        char text[IDM_TYPEID_STRLEN_MAX + 1];
        FUZZ_CHECK(idm_typeid_format(in->text, in->len, &zero, text, sizeof text, NULL) ==
                   IDM_EINVAL);
        return;
    }
    /* An accepted prefix with a fixed UUIDv7 survives format + parse. */
    static const idm_uuid sample = {{0x01, 0x89, 0x0a, 0x5d, 0xac, 0x96, 0x77, 0x4b, 0xbc, 0xce,
                                     0xb3, 0x02, 0x09, 0x9a, 0x80, 0x57}};
    char text[IDM_TYPEID_STRLEN_MAX + 1];
    FUZZ_CHECK(idm_typeid_format(in->text, in->len, &sample, text, sizeof text, NULL) == IDM_OK);
    idm_typeid t;
    FUZZ_CHECK(idm_typeid_parse(text, strlen(text), &t, NULL) == IDM_OK);
    FUZZ_CHECK(t.prefix_len == in->len);
    FUZZ_CHECK(memcmp(t.prefix, in->text, in->len) == 0);
    FUZZ_CHECK(memcmp(t.uuid.bytes, sample.bytes, sizeof sample.bytes) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_new(&in, data, size);
    idm_typeid t;
    idm_error err;
    fuzz_error_init(&err);
    int rc = idm_typeid_parse(in.text, in.len, &t, &err);
    if (rc == IDM_OK) {
        check_parsed(&in, &t);
    } else {
        FUZZ_CHECK(rc == IDM_EPARSE);
        fuzz_check_error(rc, &err, in.len);
        FUZZ_CHECK(idm_typeid_parse(in.text, in.len, &t, NULL) == rc);
    }
    check_prefix(&in);
    fuzz_input_free(&in);
    return 0;
}
