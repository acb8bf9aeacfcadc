/*
 * keyfile.h - reading and writing idmint key files (keyed.h's key text),
 * for idmint (keygen, obfuscate, reveal, verify, gen token --expires) and
 * idmintd (--key-file) alike. Not library API.
 *
 * A key file is a secret: it is read only when it is a regular file (not a
 * symbolic link: O_NOFOLLOW), owned by the effective uid, and neither
 * readable nor writable by group or others; it is created with
 * O_EXCL|O_NOFOLLOW and mode 0600. Messages name the file and the reason,
 * never its contents, without a prefix ("FILE: is readable by group or
 * others (mode 0644); chmod 600 it"); the front end adds "idmint: " or
 * "idmintd: ".
 *
 * Thread-safe: yes (no shared state).
 */
#ifndef IDMX_KEYFILE_H
#define IDMX_KEYFILE_H

#include <idmint/idmint.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IDMX_KEYFILE_MSG_CAP 512

/* Reads path into master: 0, or -1 with msg set. The buffers that held the
 * text are wiped. */
int idmx_keyfile_read(const char *path, uint8_t master[IDM_KEY_BYTES], char *msg, size_t cap);

/* Reads path and makes a key handle of it (idm_key_new): 0 with *out
 * owned by the caller, or -1 with msg set. */
int idmx_keyfile_load(const char *path, idm_key **out, char *msg, size_t cap);

/* Writes master's key text to a new file at path, mode 0600 (O_EXCL: an
 * existing file is refused, unless force, which removes it first; a
 * symbolic link is never followed). 0, or -1 with msg set; a file left
 * half-written is removed. */
int idmx_keyfile_write(const char *path, const uint8_t master[IDM_KEY_BYTES], bool force, char *msg,
                       size_t cap);

#endif
