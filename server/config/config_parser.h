/*
 * server/config/config_parser.h - the syntax of idmintd's config file.
 *
 * The file is a list of entries, one per line, read in order:
 *
 *     # idmintd.conf
 *     http = 127.0.0.1:8080
 *     resp 127.0.0.1:6380          # the "=" is optional
 *     prefix = "a \"quoted\" # value"
 *
 *  - A line is "key = value" or "key value": the key, optional blanks (SP,
 *    HTAB), an optional '=', optional blanks, the value. Blanks around the
 *    line and the value are trimmed. "key =" gives an empty value; a key with
 *    neither '=' nor a value is an error.
 *  - Keys are [a-z0-9-]+: the long flag names without "--".
 *  - A value that starts with '"' is quoted: it ends at the next unescaped
 *    '"', "\"" and "\\" are its only escapes, and only blanks and a comment
 *    may follow it. Other values are taken as they are.
 *  - '#' starts a comment at the start of a line (after blanks) and, in an
 *    unquoted value, when it starts the value or follows a blank: "a = b#c"
 *    has the value "b#c", "a = b #c" the value "b". Quote a value to keep a
 *    " #" in it.
 *  - Lines end with LF or CRLF; the last one needs no line end (a CR at the
 *    very end of the file is dropped as well). A UTF-8 byte
 *    order mark at the start of the file is skipped. Control characters
 *    (other than HTAB, and CR before LF) are errors anywhere; other bytes,
 *    UTF-8 included, are allowed in values and comments.
 *
 * Limits: a line is at most IDMS_CONFIG_MAX_LINE bytes without its line end,
 * the file at most IDMS_CONFIG_MAX_FILE bytes. What keys exist, what their
 * values mean and whether a key may repeat are the callback's business.
 */
#ifndef IDMS_CONFIG_PARSER_H
#define IDMS_CONFIG_PARSER_H

#include <stddef.h>

#define IDMS_CONFIG_MAX_LINE 4096
#define IDMS_CONFIG_MAX_FILE (1024 * 1024)

/*
 * Called once per entry. key[0..key_len) points into the parsed text (not
 * NUL-terminated); value[0..value_len) is the decoded value in the parser's
 * scratch buffer, NUL-terminated, valid only during the call (it may hold no
 * NUL byte, so C string functions see all of it). line is the entry's line
 * number, from 1. Returns 0 to go on; any other value stops the parse and
 * is returned by idms_config_parse (use positive values to tell them from
 * its -1).
 */
typedef int (*idms_config_cb)(void *ctx, const char *key, size_t key_len, const char *value,
                              size_t value_len, unsigned line);

/*
 * Parses text[0..len) and calls cb for each entry in order.
 *
 * Returns 0 when every entry was passed on; the callback's value when it
 * stopped the parse; or -1 for a syntax error (or a file above
 * IDMS_CONFIG_MAX_FILE), with a reason written to err (NUL-terminated,
 * truncated to err_cap bytes; err may be NULL when err_cap is 0). Entries
 * before a syntax error have already been passed to cb.
 *
 * *line (line may be NULL) is set on every return: the number of lines read
 * on 0, the line of the error or of the entry whose callback stopped the
 * parse otherwise, and 0 for a file that is too large. err is "" unless -1
 * is returned (when err_cap > 0).
 *
 * Allocates nothing: values are decoded into a buffer of
 * IDMS_CONFIG_MAX_LINE + 1 bytes on the stack. Never reads text[len] or
 * beyond. Thread-safe: yes (no shared state).
 */
int idms_config_parse(const char *text, size_t len, idms_config_cb cb, void *ctx, unsigned *line,
                      char *err, size_t err_cap);

#endif
