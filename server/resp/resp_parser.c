/*
 * server/resp/resp_parser.c - the RESP2 request parser declared in
 * resp_parser.h (multibulk and inline commands).
 *
 * Like the HTTP parser it keeps no state between calls: the caller appends
 * input and parses again from the start of the command. A command is small
 * next to the cost of a read, and this keeps the parser a pure function that
 * fuzzing can check against itself.
 *
 * Left out (see the header): RESP3 request types, quoting in inline
 * commands.
 */
#include "resp/resp_parser.h"

#include <stdint.h>
#include <string.h>

/* IDMS_RESP_MAX_COMMAND counts two digits for the count and four for each
 * length, and must cover the other shapes a command can take: an inline
 * line with its CRLF, and a negative count ("*-9223372036854775808\r\n"). */
_Static_assert(IDMS_RESP_MAX_ARGS >= 10 && IDMS_RESP_MAX_ARGS <= 99, "count digits");
_Static_assert(IDMS_RESP_MAX_BULK >= 1000 && IDMS_RESP_MAX_BULK <= 9999, "length digits");
_Static_assert(IDMS_RESP_MAX_COMMAND >= IDMS_RESP_MAX_INLINE + 2, "inline fits");
_Static_assert(IDMS_RESP_MAX_COMMAND >= 23, "negative count fits");

enum { STEP_OK = 0, STEP_BAD = -1, STEP_MORE = -2 };

#define REASON_MULTIBULK "Protocol error: invalid multibulk length"
#define REASON_BULK      "Protocol error: invalid bulk length"
#define REASON_CRLF      "Protocol error: expected CRLF after bulk argument"
#define REASON_INLINE    "Protocol error: too big inline request"
#define REASON_ARGS      "Protocol error: too many arguments in inline request"

/* Redis says "expected '$', got '%c'"; the reasons are static strings, so
 * here is one per printable byte. */
#define G(c) "Protocol error: expected '$', got '" c "'"
static const char *const expected_dollar[0x7F - 0x20] = {
    G(" "), G("!"), G("\""), G("#"), G("$"), G("%"),  G("&"), G("'"), G("("), G(")"), G("*"),
    G("+"), G(","), G("-"),  G("."), G("/"), G("0"),  G("1"), G("2"), G("3"), G("4"), G("5"),
    G("6"), G("7"), G("8"),  G("9"), G(":"), G(";"),  G("<"), G("="), G(">"), G("?"), G("@"),
    G("A"), G("B"), G("C"),  G("D"), G("E"), G("F"),  G("G"), G("H"), G("I"), G("J"), G("K"),
    G("L"), G("M"), G("N"),  G("O"), G("P"), G("Q"),  G("R"), G("S"), G("T"), G("U"), G("V"),
    G("W"), G("X"), G("Y"),  G("Z"), G("["), G("\\"), G("]"), G("^"), G("_"), G("`"), G("a"),
    G("b"), G("c"), G("d"),  G("e"), G("f"), G("g"),  G("h"), G("i"), G("j"), G("k"), G("l"),
    G("m"), G("n"), G("o"),  G("p"), G("q"), G("r"),  G("s"), G("t"), G("u"), G("v"), G("w"),
    G("x"), G("y"), G("z"),  G("{"), G("|"), G("}"),  G("~"),
};
#undef G

static const char *expected_dollar_reason(unsigned char ch)
{
    if (ch >= 0x20 && ch < 0x7F) {
        return expected_dollar[ch - 0x20];
    }
    return "Protocol error: expected '$', got something else";
}

/* Reads a count or length line, [-]DIGITS CRLF, at buf[*pos..len) the way
 * Redis's string2ll reads it: no sign but '-', no leading zeros, "-0"
 * refused. A '-' is refused unless neg_ok; a positive value above max and a
 * negative one below INT64_MIN are refused at the digit that crosses the
 * bound. On STEP_OK, *pos is past the CRLF. */
static int read_number(const char *buf, size_t len, size_t *pos, int neg_ok, uint64_t max,
                       int *negative, uint64_t *magnitude)
{
    size_t i = *pos;
    int neg = 0;
    if (i == len) {
        return STEP_MORE;
    }
    if (buf[i] == '-') {
        if (!neg_ok) {
            return STEP_BAD;
        }
        neg = 1;
        i++;
    }
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : max;
    size_t first = i;
    uint64_t v = 0;
    for (;;) {
        if (i == len) {
            return STEP_MORE;
        }
        unsigned char ch = (unsigned char)buf[i];
        if (ch == '\r') {
            break;
        }
        if (ch < '0' || ch > '9') {
            return STEP_BAD;
        }
        if (i > first && buf[first] == '0') {
            return STEP_BAD; /* a leading zero */
        }
        if (i == first && neg && ch == '0') {
            return STEP_BAD; /* "-0" */
        }
        unsigned d = (unsigned)(ch - '0');
        if (v > (limit - d) / 10) {
            return STEP_BAD;
        }
        v = v * 10 + d;
        i++;
    }
    if (i == first) {
        return STEP_BAD; /* no digits */
    }
    i++; /* the CR */
    if (i == len) {
        return STEP_MORE;
    }
    if (buf[i] != '\n') {
        return STEP_BAD;
    }
    *pos = i + 1;
    *negative = neg;
    *magnitude = v;
    return STEP_OK;
}

static ptrdiff_t multibulk(const char *buf, size_t len, idms_resp_command *cmd, const char **why)
{
    size_t pos = 1; /* past the '*' */
    int neg = 0;
    uint64_t n = 0;
    int rc = read_number(buf, len, &pos, 1, IDMS_RESP_MAX_ARGS, &neg, &n);
    if (rc == STEP_MORE) {
        return IDMS_RESP_INCOMPLETE;
    }
    if (rc == STEP_BAD) {
        *why = REASON_MULTIBULK;
        return IDMS_RESP_INVALID;
    }
    if (neg || n == 0) {
        return (ptrdiff_t)pos; /* Redis: an empty command */
    }
    for (size_t k = 0; k < n; k++) {
        if (pos == len) {
            return IDMS_RESP_INCOMPLETE;
        }
        unsigned char ch = (unsigned char)buf[pos];
        if (ch != '$') {
            *why = expected_dollar_reason(ch);
            return IDMS_RESP_INVALID;
        }
        pos++;
        uint64_t blen = 0;
        rc = read_number(buf, len, &pos, 0, IDMS_RESP_MAX_BULK, &neg, &blen);
        if (rc == STEP_MORE) {
            return IDMS_RESP_INCOMPLETE;
        }
        if (rc == STEP_BAD) {
            *why = REASON_BULK;
            return IDMS_RESP_INVALID;
        }
        /* blen <= IDMS_RESP_MAX_BULK and pos <= len: nothing here wraps. */
        size_t n_bytes = (size_t)blen;
        if (len - pos < n_bytes + 1) {
            return IDMS_RESP_INCOMPLETE;
        }
        if (buf[pos + n_bytes] != '\r') {
            *why = REASON_CRLF;
            return IDMS_RESP_INVALID;
        }
        if (len - pos < n_bytes + 2) {
            return IDMS_RESP_INCOMPLETE;
        }
        if (buf[pos + n_bytes + 1] != '\n') {
            *why = REASON_CRLF;
            return IDMS_RESP_INVALID;
        }
        cmd->argv[k].ptr = buf + pos;
        cmd->argv[k].len = n_bytes;
        cmd->argc = k + 1;
        pos += n_bytes + 2;
    }
    return (ptrdiff_t)pos;
}

/* Inline separators: isspace() in the C locale, less the LF that ends the
 * line (Redis splits with sdssplitargs, which uses isspace). */
static int is_blank(unsigned char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

static ptrdiff_t inline_command(const char *buf, size_t len, idms_resp_command *cmd,
                                const char **why)
{
    /* The line end is within the first MAX_INLINE + 2 bytes ("\r\n" after
     * the longest line) or the line is too big. */
    size_t scan = len < IDMS_RESP_MAX_INLINE + 2 ? len : IDMS_RESP_MAX_INLINE + 2;
    const char *nl = memchr(buf, '\n', scan);
    if (nl == NULL) {
        if (len >= IDMS_RESP_MAX_INLINE + 2) {
            *why = REASON_INLINE;
            return IDMS_RESP_INVALID;
        }
        return IDMS_RESP_INCOMPLETE;
    }
    size_t end = (size_t)(nl - buf);
    size_t content = end;
    if (content > 0 && buf[content - 1] == '\r') {
        content--;
    }
    if (content > IDMS_RESP_MAX_INLINE) {
        *why = REASON_INLINE;
        return IDMS_RESP_INVALID;
    }
    size_t i = 0;
    size_t argc = 0;
    for (;;) {
        while (i < content && is_blank((unsigned char)buf[i])) {
            i++;
        }
        if (i == content) {
            break;
        }
        if (argc == IDMS_RESP_MAX_ARGS) {
            *why = REASON_ARGS;
            return IDMS_RESP_INVALID;
        }
        size_t start = i;
        while (i < content && !is_blank((unsigned char)buf[i])) {
            i++;
        }
        cmd->argv[argc].ptr = buf + start;
        cmd->argv[argc].len = i - start;
        argc++;
    }
    cmd->argc = argc;
    return (ptrdiff_t)(end + 1);
}

ptrdiff_t idms_resp_parse(const char *buf, size_t len, idms_resp_command *cmd, const char **reason)
{
    const char *why = NULL;
    ptrdiff_t r;
    cmd->argc = 0;
    if (len == 0) {
        r = IDMS_RESP_INCOMPLETE;
    } else if (buf[0] == '*') {
        r = multibulk(buf, len, cmd, &why);
    } else {
        r = inline_command(buf, len, cmd, &why);
    }
    if (r < 0) {
        cmd->argc = 0;
    }
    if (reason != NULL) {
        *reason = r == IDMS_RESP_INVALID ? why : NULL;
    }
    return r;
}
