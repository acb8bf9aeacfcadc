/*
 * keyed.c - idmintd's key ring and its two operations (keyed.h). The key
 * file is read before anything is bound, and again on SIGHUP, by
 * common/keyfile.c, which refuses a file others may read, a link or a file
 * of another user; the log names the file and the keys' fingerprints only.
 * Obfuscate uses the current (first) key; reveal accepts any key, so that
 * a rotation (idmint keygen --rotate, then SIGHUP) breaks no public ID.
 */
#include "keyed.h"
#include "log.h"

#include <stdio.h>
#include <string.h>

/* "key FP from FILE" and, when the ring has more, the previous keys'
 * fingerprints (reveal only). */
static void log_ring(const idmx_keyring *ring, const char *path, const char *verb)
{
    char fp[IDM_KEY_FINGERPRINT_LEN + 1];
    char prev[IDMX_KEYRING_MAX * (IDM_KEY_FINGERPRINT_LEN + 2) + 64] = "";
    size_t used = 0;
    for (size_t i = 1; i < ring->n; i++) {
        if (idm_key_fingerprint(ring->keys[i], fp, sizeof fp) != IDM_OK)
            snprintf(fp, sizeof fp, "?");
        int w = snprintf(prev + used, sizeof prev - used, "%s%s",
                         i == 1 ? "; previous keys (reveal only): " : ", ", fp);
        if (w > 0 && (size_t)w < sizeof prev - used)
            used += (size_t)w;
    }
    if (idm_key_fingerprint(ring->keys[0], fp, sizeof fp) != IDM_OK)
        snprintf(fp, sizeof fp, "?");
    idms_log(IDMS_LOG_INFO, "key %s from %s%s: /v1/obfuscate and /v1/reveal are served%s", fp, path,
             verb, prev);
}

int idms_keyed_setup(idms_keyed *k)
{
    memset(&k->keys, 0, sizeof k->keys);
    if (k->file[0] == '\0')
        return 0;
    char msg[IDMX_KEYFILE_MSG_CAP];
    if (idmx_keyring_load(k->file, &k->keys, msg, sizeof msg) != 0) {
        fprintf(stderr, "idmintd: --key-file %s\n", msg);
        return 2;
    }
    log_ring(&k->keys, k->file, "");
    return 0;
}

int idms_keyed_reload(idms_keyed *k)
{
    if (k->file[0] == '\0')
        return 0;
    idmx_keyring ring;
    char msg[IDMX_KEYFILE_MSG_CAP];
    if (idmx_keyring_load(k->file, &ring, msg, sizeof msg) != 0) {
        idms_log(IDMS_LOG_ERROR, "cannot reload --key-file %s; keeping the keys in service", msg);
        return -1;
    }
    /* One loop thread serves every request: no request holds the old ring. */
    idmx_keyring_free(&k->keys);
    k->keys = ring;
    log_ring(&k->keys, k->file, " (reloaded)");
    return 0;
}

void idms_keyed_free(idms_keyed *k)
{
    idmx_keyring_free(&k->keys);
}

static const char no_key[] = "idmintd was started without --key-file: no obfuscated IDs";

static int refuse(int status, char *msg, size_t cap, const char *text)
{
    snprintf(msg, cap, "%s", text);
    return status;
}

int idms_keyed_obfuscate(const idms_keyed *k, const char *id, size_t id_len, const char *prefix,
                         size_t prefix_len, char *out, size_t cap, char *msg, size_t msg_cap)
{
    if (k->keys.n == 0)
        return refuse(404, msg, msg_cap, no_key);
    uint64_t v = 0;
    if (id_len == 0 || id_len > 20)
        return refuse(400, msg, msg_cap, "the ID must be a decimal 64-bit number");
    for (size_t i = 0; i < id_len; i++) {
        unsigned d = (unsigned)(id[i] - '0');
        if (id[i] < '0' || id[i] > '9')
            return refuse(400, msg, msg_cap, "the ID must be a decimal 64-bit number");
        if (v > (UINT64_MAX - d) / 10)
            return refuse(400, msg, msg_cap, "the ID exceeds 64 bits");
        v = v * 10 + d;
    }
    idm_error err = {0};
    int rc = idm_obfuscate(k->keys.keys[0], v, prefix, prefix_len, out, cap, &err);
    if (rc != IDM_OK)
        return refuse(rc == IDM_EINVAL ? 400 : 500, msg, msg_cap,
                      err.msg[0] ? err.msg : idm_strerror(rc));
    return 200;
}

int idms_keyed_reveal(const idms_keyed *k, const char *text, size_t len, uint64_t *id, char *msg,
                      size_t msg_cap)
{
    if (k->keys.n == 0)
        return refuse(404, msg, msg_cap, no_key);
    idm_error err = {0};
    int rc = idmx_keyring_reveal(&k->keys, text, len, id, NULL, &err);
    if (rc == IDM_OK)
        return 200;
    return refuse(rc == IDM_EPARSE    ? 400
                  : rc == IDM_EFORGED ? 422
                                      : 500,
                  msg, msg_cap, err.msg[0] ? err.msg : idm_strerror(rc));
}
