/*
 * fuzz/fuzz_dbbench_ident.c - the table and column names that `idmint
 * audit --db` splices into SQL (idmb_ident_check, dbbench/dbbench.c): the
 * one check between a command line and a SELECT, so it must take exactly
 * the documented names and nothing that could end a quoted name.
 *
 * Properties, for any bytes (NUL-terminated copy; an embedded NUL ends
 * the name as it would on a command line):
 *  - the result is IDMB_OK or IDMB_EUSAGE, and it is IDMB_OK exactly when
 *    the reference below says the name is 1 to IDMB_TABLE_MAX bytes of
 *    [A-Za-z0-9_$] not starting with a digit or '$' (dotted: also two
 *    such parts joined by one '.');
 *  - a name it takes holds no quote of either kind, backslash, space,
 *    control byte or second '.';
 *  - a refusal's message is a NUL-terminated sentence.
 */
#include "harness.h"

#include "idmint_dbbench.h"

static bool part_ok(const char *s, size_t len)
{
    if (len == 0 || len > IDMB_TABLE_MAX || (s[0] >= '0' && s[0] <= '9') || s[0] == '$') {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '$')) {
            return false;
        }
    }
    return true;
}

static bool reference(const char *name, bool dotted)
{
    size_t len = strlen(name);
    const char *dot = dotted ? strchr(name, '.') : NULL;
    if (dot == NULL) {
        return part_ok(name, len);
    }
    size_t left = (size_t)(dot - name);
    return part_ok(name, left) && part_ok(dot + 1, len - left - 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name = malloc(size + 1);
    FUZZ_CHECK(name != NULL);
    memcpy(name, data, size);
    name[size] = '\0';
    for (int dotted = 0; dotted <= 1; dotted++) {
        idmb_error err = {0};
        int rc = idmb_ident_check("table", name, dotted != 0, &err);
        FUZZ_CHECK(rc == IDMB_OK || rc == IDMB_EUSAGE);
        FUZZ_CHECK((rc == IDMB_OK) == reference(name, dotted != 0));
        if (rc == IDMB_OK) {
            FUZZ_CHECK(strpbrk(name, "\"'`\\ \t\n;") == NULL);
            const char *dot = strchr(name, '.');
            FUZZ_CHECK(dot == NULL || (dotted && strchr(dot + 1, '.') == NULL));
        } else {
            FUZZ_CHECK(memchr(err.msg, '\0', sizeof err.msg) != NULL && err.msg[0] != '\0');
        }
    }
    free(name);
    return 0;
}
