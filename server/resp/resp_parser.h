/*
 * server/resp/resp_parser.h - idmintd's parser for RESP2 requests, as
 * redis-cli, redis-benchmark and Redis client libraries send them.
 *
 * Specification: the Redis serialization protocol (RESP2), "Sending commands
 * to a Redis server": a request is either
 *  - a multibulk: "*" N CRLF, then N times "$" LEN CRLF <LEN bytes> CRLF;
 *    or
 *  - an inline command (telnet, nc): one line of arguments separated by
 *    spaces, ended by LF or CRLF; it is any request whose first byte is not
 *    '*'.
 *
 * Behaviour follows Redis's own reading of requests where it is defined:
 *  - lengths are read as Redis's string2ll does: an optional '-' and decimal
 *    digits, no '+', no spaces, no leading zeros ("0" itself is fine, "-0"
 *    is not);
 *  - a multibulk count of 0 or less ("*0", "*-1") is an empty command: its
 *    line is consumed and argc is 0, as is an empty (or all-blank) inline
 *    line; the server ignores such commands;
 *  - inline arguments are separated by runs of SP, HTAB, VT, FF and CR (a CR
 *    just before the LF belongs to the line end).
 * and is stricter where Redis is lax: the CRLF after a count, a length and
 * a bulk argument is checked (Redis skips two bytes unchecked).
 *
 * Limits (exceeding one is IDMS_RESP_INVALID, never INCOMPLETE, so memory
 * stays bounded): at most IDMS_RESP_MAX_ARGS arguments, each at most
 * IDMS_RESP_MAX_BULK bytes, an inline line at most IDMS_RESP_MAX_INLINE
 * bytes before its line end. A whole command is then at most
 * IDMS_RESP_MAX_COMMAND bytes: INCOMPLETE is returned only while
 * len < IDMS_RESP_MAX_COMMAND. Every decision is taken at a fixed byte of
 * the input, so a prefix of the input gives INCOMPLETE or the same answer as
 * the whole input. A complete command ends with LF, so after INCOMPLETE a
 * caller may wait for new input holding an LF before parsing again (an
 * inline line is otherwise rescanned on every read).
 *
 * Left out: RESP3 request types (clients send RESP2 arrays of bulk strings
 * even after HELLO 3), quoting in inline commands (Redis's "..." and '...'
 * with escapes: inline arguments here are taken literally, quotes included,
 * so they can point into the input).
 */
#ifndef IDMS_RESP_PARSER_H
#define IDMS_RESP_PARSER_H

#include <stddef.h>

/* Sized for the commands served, whose arguments are under 100 bytes
 * (HELLO with AUTH and SETNAME has 6; a token, a client name or a library
 * version is short): a client cannot make idmintd buffer more than
 * IDMS_RESP_MAX_COMMAND bytes for one request. */
#define IDMS_RESP_MAX_ARGS   32
#define IDMS_RESP_MAX_BULK   1024 /* one argument */
#define IDMS_RESP_MAX_INLINE 4096 /* one inline command line, without its line end */
/* The longest command: "*32\r\n" and 32 times "$1024\r\n" <1024 bytes> "\r\n"
 * (the count and lengths have no leading zeros). Checked in resp_parser.c. */
#define IDMS_RESP_MAX_COMMAND (5 + IDMS_RESP_MAX_ARGS * (IDMS_RESP_MAX_BULK + 9))

#define IDMS_RESP_INVALID    (-1)
#define IDMS_RESP_INCOMPLETE (-2)

/* One argument; ptr points into the parsed buffer (not NUL-terminated, may
 * hold any byte in a multibulk). */
typedef struct idms_resp_arg {
    const char *ptr;
    size_t len;
} idms_resp_arg;

typedef struct idms_resp_command {
    idms_resp_arg argv[IDMS_RESP_MAX_ARGS];
    size_t argc; /* 0..IDMS_RESP_MAX_ARGS */
} idms_resp_command;

/*
 * Parses one command at buf[0..len).
 *
 * Returns the bytes it consumed (> 0) with cmd filled (argc may be 0: an
 * empty command to skip), IDMS_RESP_INCOMPLETE when more input is needed, or
 * IDMS_RESP_INVALID with *reason set to a static string in Redis's wording
 * where Redis has one:
 *   "Protocol error: invalid multibulk length"   count not a number, or above
 *                                                IDMS_RESP_MAX_ARGS
 *   "Protocol error: expected '$', got 'X'"      (X the byte found, when
 *                                                printable; "got something
 *                                                else" otherwise)
 *   "Protocol error: invalid bulk length"        length not a number, negative
 *                                                or above IDMS_RESP_MAX_BULK
 *   "Protocol error: expected CRLF after bulk argument"
 *   "Protocol error: too big inline request"     line above IDMS_RESP_MAX_INLINE
 *   "Protocol error: too many arguments in inline request"
 * The server should then reply "-ERR <reason>" and close the connection.
 *
 * *reason is set on every call (NULL unless INVALID); reason may be NULL.
 * cmd->argc is 0 unless the result is > 0. Never reads buf[len] or beyond;
 * allocates nothing. Thread-safe: yes (no shared state).
 */
ptrdiff_t idms_resp_parse(const char *buf, size_t len, idms_resp_command *cmd, const char **reason);

#endif
