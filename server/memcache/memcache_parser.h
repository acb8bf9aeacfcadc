/*
 * server/memcache/memcache_parser.h - idmintd's parser for memcached
 * requests, as katsubushi serves them and memcached clients send them.
 *
 * Specification: memcached's doc/protocol.txt (the text protocol) and the
 * binary protocol's request header (memcached wiki, "BinaryProtocolRevamped").
 * Only the commands an ID server answers are told apart; the rest are
 * UNKNOWN (text: "ERROR"; binary: status 0x0081, unknown command).
 *
 * Text protocol: one line, ended by LF (a CR before it belongs to the line
 * end, as memcached strips it), of tokens separated by runs of spaces.
 * Commands are case-sensitive, as memcached's:
 *   get <key>+   gets <key>+   stats [<arg>...]   version   quit
 * Keys are 1..250 bytes with no control characters (bytes 0..32 and 127 -
 * space separates tokens anyway), as memcached's KEY_MAX_LENGTH; a longer
 * key is refused with memcached's own "CLIENT_ERROR bad command line
 * format". get/gets without a key is UNKNOWN (memcached: "ERROR").
 *
 * Binary protocol (a connection whose first byte is 0x80): a 24-byte
 * header - magic 0x80, opcode, key length (u16 BE), extras length, data
 * type, vbucket (u16), total body length (u32 BE), opaque (u32), CAS (u64)
 * - and the body. GET (0x00) and GETK (0x0c: the reply carries the key)
 * take a key and no extras, VERSION (0x0b),
 * NOOP (0x0a) and QUIT (0x07) nothing; any other opcode is UNKNOWN with
 * its body consumed. A header that lies (extras + key longer than the
 * body, a GET without a key, a body on VERSION) is INVALID.
 *
 * Limits (exceeding one is INVALID, never INCOMPLETE, so memory stays
 * bounded): a text line of at most IDMS_MC_MAX_LINE bytes before its LF,
 * at most IDMS_MC_MAX_KEYS keys per get; a binary body of at most
 * IDMS_MC_MAX_BODY bytes. INCOMPLETE is returned only while len is below
 * IDMS_MC_MAX_REQUEST. A prefix of an input gives INCOMPLETE or the same
 * answer as the whole input.
 */
#ifndef IDMS_MEMCACHE_PARSER_H
#define IDMS_MEMCACHE_PARSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IDMS_MC_KEY_MAX  250  /* memcached's KEY_MAX_LENGTH */
#define IDMS_MC_MAX_KEYS 100  /* per get / gets: each key is one ID */
#define IDMS_MC_MAX_LINE 8192 /* a text line without its LF */
#define IDMS_MC_MAX_BODY 1024 /* a binary request's body */
#define IDMS_MC_HEADER   24   /* a binary header */
#define IDMS_MC_MAX_REQUEST                                                                        \
    (IDMS_MC_MAX_LINE + 1 > IDMS_MC_HEADER + IDMS_MC_MAX_BODY ? IDMS_MC_MAX_LINE + 1               \
                                                              : IDMS_MC_HEADER + IDMS_MC_MAX_BODY)

#define IDMS_MC_INVALID    (-1)
#define IDMS_MC_INCOMPLETE (-2)

#define IDMS_MC_BIN_REQUEST  0x80 /* a binary request's magic */
#define IDMS_MC_BIN_RESPONSE 0x81

/* Binary opcodes told apart. */
enum {
    IDMS_MC_OP_GET = 0x00,
    IDMS_MC_OP_QUIT = 0x07,
    IDMS_MC_OP_NOOP = 0x0a,
    IDMS_MC_OP_VERSION = 0x0b,
    IDMS_MC_OP_GETK = 0x0c
};

enum {
    IDMS_MC_EMPTY = 0, /* a blank text line: nothing to answer */
    IDMS_MC_GET,
    IDMS_MC_GETS,
    IDMS_MC_STATS,
    IDMS_MC_VERSION,
    IDMS_MC_QUIT,
    IDMS_MC_NOOP,   /* binary only */
    IDMS_MC_UNKNOWN /* any other command */
};

/* A token (a key, or a stats argument); points into the parsed buffer. */
typedef struct idms_mc_token {
    const char *ptr;
    size_t len;
} idms_mc_token;

typedef struct idms_mc_request {
    int cmd; /* IDMS_MC_* */
    bool binary;
    uint8_t opcode;                       /* binary: the request's opcode (for the response) */
    uint32_t opaque;                      /* binary: echoed in the response */
    idms_mc_token keys[IDMS_MC_MAX_KEYS]; /* get/gets keys; stats arguments */
    size_t nkeys;
} idms_mc_request;

/*
 * Parses one request at buf[0..len): a text line, or (binary) a header and
 * its body.
 *
 * Returns the bytes consumed (> 0) with req filled, IDMS_MC_INCOMPLETE when
 * more input is needed, or IDMS_MC_INVALID with *reason (a static string,
 * set on every call: NULL unless INVALID; reason may be NULL):
 *   text, in memcached's words where it has them:
 *     "CLIENT_ERROR bad command line format"   a key over 250 bytes, or
 *                                              with a control character
 *     "CLIENT_ERROR line too long"             no LF in IDMS_MC_MAX_LINE
 *     "CLIENT_ERROR too many keys"             over IDMS_MC_MAX_KEYS
 *   binary:
 *     "bad magic", "body too large", "bad lengths"
 * The server answers a text INVALID with its reason and a CRLF and closes
 * the connection (a binary one is closed at once).
 *
 * Never reads buf[len] or beyond; allocates nothing. Thread-safe: yes.
 */
ptrdiff_t idms_mc_parse(const char *buf, size_t len, bool binary, idms_mc_request *req,
                        const char **reason);

#endif
