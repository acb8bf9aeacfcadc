/*
 * server/memcache/memcache_server.h - the memcached-protocol adapter
 * (memcache_server.c), as katsubushi serves IDs over it: `get KEY` answers
 * one fresh ID per key. main.c registers it with a listener (conn.h) for
 * --memcache. Not installed.
 *
 * Text protocol (memcached's doc/protocol.txt):
 *   get K1 K2 ...    VALUE K1 0 <len>\r\n<id>\r\n ... END\r\n: one ID per key,
 *                    in the order of the keys (a key repeated gets two IDs)
 *   gets K1 ...      the same with a CAS of 0: VALUE K1 0 <len> 0\r\n<id>\r\n
 *   stats            katsubushi's members: pid, uptime, time, version,
 *                    curr_connections, total_connections, cmd_get,
 *                    get_hits, get_misses; then END (stats with an argument
 *                    names a group idmintd does not keep: END alone)
 *   version          VERSION <idmint's version>
 *   quit             closes the connection
 * Anything else is ERROR (memcached's answer to an unknown command); a
 * line memcached would refuse gets its CLIENT_ERROR and the connection
 * closes.
 *
 * Which ID a key gets: a key whose name, or its part before the first
 * ':', names a format of the library's table (uuidv7, ulid, ksuid, typeid,
 * token, ...) mints that format, the rest after ':' being its prefix
 * ("typeid:user" mints user_01h...; "token:sk" sk_...); any other key - as
 * in katsubushi, whatever its name - mints a snowflake of the server's
 * layout and node. A key that names a format but breaks its prefix rule
 * ("uuidv7:x", a typeid without a prefix) refuses the whole request with
 * CLIENT_ERROR and the reason, before anything is minted.
 *
 * Binary protocol (a connection whose first byte is 0x80, as memcached
 * decides): GET (0x00) and GETK (0x0c) with one key each, flags 0 and a
 * CAS of 0; VERSION (0x0b), NOOP (0x0a), QUIT (0x07, answered, then the
 * close); any other opcode status 0x0081 (unknown command). A refusal is
 * status 0x0004 (invalid arguments) or, when the server cannot mint now
 * (503), 0x0086 (temporary failure), with the reason as the body.
 *
 * A key that must wait (a sequence used up, a small clock rewind, the
 * durable mark's ceiling) parks the request as the other front ends do;
 * the values already framed are sent, and when it resumes the keys
 * answered are skipped. A failure after some values went out (503, the
 * clock stepped back too far) closes the connection after them, so that a
 * client sees a reply cut short rather than one without its END. With
 * --auth-token-file the listener must be loopback or a Unix socket (the
 * protocol cannot carry a token: auth.c refuses any other at start), and
 * its clients are served without one.
 */
#ifndef IDMS_MEMCACHE_SERVER_H
#define IDMS_MEMCACHE_SERVER_H

#include "conn.h"

extern const idms_proto idms_memcache_proto;

#endif
