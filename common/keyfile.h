/*
 * keyfile.h - reading and writing idmint key files (keyed.h's key text),
 * for idmint (keygen, obfuscate, reveal, verify, gen token --expires) and
 * idmintd (--key-file) alike. Not library API.
 *
 * A key file is a secret: it is read only when it is a regular file (not a
 * symbolic link: O_NOFOLLOW), owned by the effective uid, and neither
 * readable nor writable by group or others; it is created with
 * O_EXCL|O_NOFOLLOW and mode 0600, and replaced by rename only. Messages
 * name the file and the reason, never its contents, without a prefix
 * ("FILE: is readable by group or others (mode 0644); chmod 600 it"); the
 * front end adds "idmint: " or "idmintd: ".
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

/* The most keys a key file holds: the current one and seven previous. */
#define IDMX_KEYRING_MAX 8

/*
 * Key rotation. A key file holds one to IDMX_KEYRING_MAX key lines (each
 * keyed.h's key text, parsed by idm_key_parse): the FIRST is the current
 * key, the only one that obfuscates and signs; the lines after it are
 * previous keys, newest first, kept so that what they made still reveals
 * and verifies. libidmint stays one key per handle: the ring is the front
 * ends' business.
 *
 * False accepts: reveal tries each key's 32 check bits in turn, so a token
 * that no key made (forged, altered, another deployment's) passes one of
 * them with a chance of at most n * 2^-32 for a ring of n keys, not 2^-32;
 * and a token of a previous key j reveals to a wrong ID under an earlier
 * key with a chance of at most j * 2^-32. Keep the ring short: drop a
 * previous key once what it made has gone out of use. Signed tokens carry
 * 128-bit tags: n * 2^-128, nothing to plan for.
 */
typedef struct idmx_keyring {
    idm_key *keys[IDMX_KEYRING_MAX]; /* keys[0] is the current key */
    size_t n;                        /* 1 .. IDMX_KEYRING_MAX once loaded */
} idmx_keyring;

/* Reads every key of path into masters[0 .. *n): 0, or -1 with msg set
 * (a bad line is named by its number, never quoted; more than
 * IDMX_KEYRING_MAX keys are refused, naming the limit). The buffers that
 * held the text are wiped; the caller wipes masters. */
int idmx_keyfile_read_all(const char *path, uint8_t masters[IDMX_KEYRING_MAX][IDM_KEY_BYTES],
                          size_t *n, char *msg, size_t cap);

/* Reads path's current (first) key into master: 0, or -1 with msg set.
 * The other lines are checked too. */
int idmx_keyfile_read(const char *path, uint8_t master[IDM_KEY_BYTES], char *msg, size_t cap);

/* Reads path and makes key handles of all its keys into *ring (left
 * empty on failure): 0, or -1 with msg set. Release with
 * idmx_keyring_free. */
int idmx_keyring_load(const char *path, idmx_keyring *ring, char *msg, size_t cap);

/* Frees the keys and empties the ring. NULL or empty is a no-op. */
void idmx_keyring_free(idmx_keyring *ring);

/* idm_reveal under each key in order: IDM_OK from the first that accepts
 * (*which, may be NULL, receives its index), IDM_EPARSE at once (the shape
 * does not depend on the key), IDM_EFORGED only when every key refuses
 * (err from the last), or the first other error. See the false-accept
 * bound above. */
int idmx_keyring_reveal(const idmx_keyring *ring, const char *text, size_t len, uint64_t *id,
                        size_t *which, idm_error *err);

/* idm_stoken_verify under each key in order: the first key whose tag
 * checks decides (IDM_OK or IDM_EEXPIRED, *which set); IDM_EPARSE at once;
 * IDM_EFORGED only when no key's tag checks. */
int idmx_keyring_verify(const idmx_keyring *ring, const char *text, size_t len, int64_t now_unix_s,
                        int64_t *expires_unix_s, size_t *which, idm_error *err);

/* How idmx_keyfile_write treats an existing path. */
typedef enum idmx_keyfile_mode {
    IDMX_KEYFILE_CREATE,  /* O_EXCL at path: an existing file is refused */
    IDMX_KEYFILE_REPLACE, /* atomically replace (or create) path */
} idmx_keyfile_mode;

/* Writes the key text of n keys (1 .. IDMX_KEYRING_MAX) of IDM_KEY_BYTES
 * each, contiguous at masters, one line each, mode 0600, never through a symbolic link. CREATE
 * opens path with O_EXCL (a file left half-written is removed). REPLACE writes a temporary file in
 * path's directory (O_EXCL|O_NOFOLLOW, 0600), fsyncs it, renames it over path and fsyncs the
 * directory: path holds the old keys or the new, never nothing, whatever fails. 0, or -1 with msg
 * set. */
int idmx_keyfile_write(const char *path, const uint8_t *masters, size_t n, idmx_keyfile_mode mode,
                       char *msg, size_t cap);

#endif
