/*
 * keyed.h - idmintd's public IDs under --key-file (keyed.h of libidmint):
 * the key ring, loaded at start with the CLI's key-file reader
 * (common/keyfile.c) and again on SIGHUP, and the protocol-neutral halves of GET
 * /v1/obfuscate/{id} and GET /v1/reveal/{token} (http_server.c) and of
 * RESP's OBFUSCATE and REVEAL (resp_server.c). Not installed.
 */
#ifndef IDMS_KEYED_H
#define IDMS_KEYED_H

#include <stddef.h>
#include <stdint.h>

#include "keyfile.h"

/* The key ring of --key-file (file: "" without; main.c sets it). */
typedef struct idms_keyed {
    const char *file;
    idmx_keyring keys; /* keys[0] current; n 0 without a file */
} idms_keyed;

/* Statuses of the calls below, as HTTP gives them: 200; 400 (the input is
 * not an ID, a token or a prefix); 404 (idmintd has no key); 422 (a
 * well-formed token that fails its check: another key or prefix, or
 * altered). */
enum { IDMS_KEYED_MSG_CAP = 320 };

/* Loads k->file into k->keys (nothing without one) and logs the
 * fingerprints, never the bytes. 0, or 2 after saying why on stderr. */
int idms_keyed_setup(idms_keyed *k);
/* SIGHUP: loads --key-file again and puts the new ring in service; a file
 * that fails to load leaves the old ring in service, and the log says why.
 * 0 (also without --key-file), or -1 when the old ring was kept. */
int idms_keyed_reload(idms_keyed *k);
void idms_keyed_free(idms_keyed *k);

/* The obfuscated form of the decimal ID id[0..id_len) under prefix (may be
 * empty), under the current key, into out (IDM_OBF_STRLEN_MAX + 1 bytes). Returns a status above;
 * msg holds the reason of a refusal. */
int idms_keyed_obfuscate(const idms_keyed *k, const char *id, size_t id_len, const char *prefix,
                         size_t prefix_len, char *out, size_t cap, char *msg, size_t msg_cap);

/* The ID an obfuscated text[0..len) stands for, under any key of the ring
 * (keyfile.h: the false-accept bound). Returns a status above. */
int idms_keyed_reveal(const idms_keyed *k, const char *text, size_t len, uint64_t *id, char *msg,
                      size_t msg_cap);

#endif
