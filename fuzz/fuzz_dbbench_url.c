/*
 * fuzz/fuzz_dbbench_url.c - what idmint_dbbench reads from the user
 * before any database is involved: a mysql:// URL (idmb_mysql_url_parse,
 * a pure parser over len bytes, no NUL needed), and the display form of
 * any URL (idmb_url_redact). A URL comes from the command line and holds
 * a password: nothing may overrun, and the password must not leak.
 *
 * Properties:
 *  - the parser returns IDMB_OK or IDMB_EUSAGE; on IDMB_EUSAGE the
 *    message is a NUL-terminated sentence and the result is all zero (no
 *    half-parsed password is kept);
 *  - on IDMB_OK every field is NUL-terminated, the user and database are
 *    not empty, the port is at most 65535, and the host is empty exactly
 *    when a socket is given; the fields %-encoded into a new URL parse
 *    back to the same fields;
 *  - a URL with a non-empty password is shown with "***" and without the
 *    password's text as written; the display form is NUL-terminated
 *    within any capacity, down to 1 byte.
 */
#include "harness.h"

#include "idmint_dbbench.h"

static bool terminated(const char *s, size_t cap)
{
    return memchr(s, '\0', cap) != NULL;
}

/* Appends s %-encoded (every byte but unreserved ones). */
static void encode(char *dst, size_t cap, size_t *n, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '-' || c == '.' || c == '_' || c == '~';
        FUZZ_CHECK(*n + 4 < cap);
        if (plain) {
            dst[(*n)++] = (char)c;
        } else {
            dst[(*n)++] = '%';
            dst[(*n)++] = hex[c >> 4];
            dst[(*n)++] = hex[c & 15];
        }
    }
    dst[*n] = '\0';
}

static void append(char *dst, size_t cap, size_t *n, const char *s)
{
    size_t len = strlen(s);
    FUZZ_CHECK(*n + len < cap);
    memcpy(dst + *n, s, len + 1);
    *n += len;
}

static void round_trip(const idmb_mysql_url *u)
{
    static char url[4096];
    size_t n = 0;
    append(url, sizeof url, &n, "mysql://");
    encode(url, sizeof url, &n, u->user);
    append(url, sizeof url, &n, ":");
    encode(url, sizeof url, &n, u->password);
    append(url, sizeof url, &n, "@");
    if (u->socket[0] == '\0') {
        bool v6 = strchr(u->host, ':') != NULL;
        append(url, sizeof url, &n, v6 ? "[" : "");
        append(url, sizeof url, &n, u->host);
        append(url, sizeof url, &n, v6 ? "]" : "");
        if (u->port != 0) {
            char port[16];
            snprintf(port, sizeof port, ":%u", u->port);
            append(url, sizeof url, &n, port);
        }
    }
    append(url, sizeof url, &n, "/");
    encode(url, sizeof url, &n, u->db);
    if (u->socket[0] != '\0') {
        append(url, sizeof url, &n, "?socket=");
        encode(url, sizeof url, &n, u->socket);
    }
    idmb_mysql_url again;
    idmb_error err;
    int rc = idmb_mysql_url_parse(url, n, &again, &err);
    if (rc != IDMB_OK)
        fprintf(stderr, "re-encoded '%s': %s\n", url, err.msg);
    FUZZ_CHECK(rc == IDMB_OK);
    FUZZ_CHECK(strcmp(again.user, u->user) == 0);
    FUZZ_CHECK(strcmp(again.password, u->password) == 0);
    FUZZ_CHECK(strcmp(again.host, u->host) == 0);
    FUZZ_CHECK(again.port == u->port);
    FUZZ_CHECK(strcmp(again.db, u->db) == 0);
    FUZZ_CHECK(strcmp(again.socket, u->socket) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_new(&in, data, size);
    idmb_mysql_url u;
    idmb_error err;
    memset(&u, 0xA5, sizeof u);
    memset(&err, 'x', sizeof err);
    int rc = idmb_mysql_url_parse(in.text, in.len, &u, &err);
    if (rc == IDMB_OK) {
        FUZZ_CHECK(terminated(u.user, sizeof u.user) && u.user[0] != '\0');
        FUZZ_CHECK(terminated(u.password, sizeof u.password));
        FUZZ_CHECK(terminated(u.host, sizeof u.host));
        FUZZ_CHECK(terminated(u.db, sizeof u.db) && u.db[0] != '\0');
        FUZZ_CHECK(terminated(u.socket, sizeof u.socket));
        FUZZ_CHECK(u.port <= 65535);
        FUZZ_CHECK((u.host[0] == '\0') == (u.socket[0] != '\0'));
        round_trip(&u);
    } else {
        FUZZ_CHECK(rc == IDMB_EUSAGE);
        FUZZ_CHECK(err.code == IDMB_EUSAGE);
        FUZZ_CHECK(terminated(err.msg, sizeof err.msg) && err.msg[0] != '\0');
        static const idmb_mysql_url zero;
        FUZZ_CHECK(memcmp(&u, &zero, sizeof u) == 0);
    }

    /* The display form of the input as a C string (up to its first NUL). */
    char *text = malloc(size + 1);
    FUZZ_CHECK(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    char shown[600];
    idmb_url_redact(text, shown, sizeof shown);
    FUZZ_CHECK(terminated(shown, sizeof shown));
    if (rc == IDMB_OK && u.password[0] != '\0' && strlen(text) == size && size + 8 < sizeof shown) {
        FUZZ_CHECK(strstr(shown, "***") != NULL);
        /* The password as written: between the user's ':' and the last
         * '@' before the query. */
        const char *start = strstr(text, "://") + 3;
        const char *colon = strchr(start, ':');
        size_t q = strcspn(text, "?");
        const char *at = NULL;
        for (const char *p = start; p < text + q; p++)
            if (*p == '@')
                at = p;
        FUZZ_CHECK(colon != NULL && at != NULL && colon < at);
        size_t plen = (size_t)(at - colon - 1);
        /* Written text of 4 bytes or more never shows; shorter could
         * match the rest of the URL by chance. */
        if (plen >= 4) {
            char *pw = malloc(plen + 1);
            FUZZ_CHECK(pw != NULL);
            memcpy(pw, colon + 1, plen);
            pw[plen] = '\0';
            /* Judged only where it appears nowhere else in the URL, and
             * not in the URL with the password replaced by "***" either
             * (a password "l://u:*" is the tail of "mysql://u:***": what
             * the display form must show anyway). */
            char *masked = malloc(size + 4);
            FUZZ_CHECK(masked != NULL);
            size_t head = (size_t)(colon + 1 - text);
            memcpy(masked, text, head);
            memcpy(masked + head, "***", 3);
            strcpy(masked + head + 3, at);
            if (strstr(text, pw) == colon + 1 && strstr(colon + 2, pw) == NULL &&
                strstr(masked, pw) == NULL)
                FUZZ_CHECK(strstr(shown, pw) == NULL);
            free(masked);
            free(pw);
        }
    }
    for (size_t cap = 1; cap < 24; cap += 5) {
        char small[24];
        memset(small, 'x', sizeof small);
        idmb_url_redact(text, small, cap);
        FUZZ_CHECK(terminated(small, cap));
    }
    free(text);
    fuzz_input_free(&in);
    return 0;
}
