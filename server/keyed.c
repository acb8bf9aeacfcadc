/*
 * keyed.c - idmintd's key and its two operations (keyed.h). The key file
 * is read once, before anything is bound, by common/keyfile.c, which
 * refuses a file others may read, a link or a file of another user; the
 * log names the file and the key's fingerprint only.
 */
#include "idmintd.h"

#include "keyfile.h"

#include <stdio.h>
#include <string.h>

int idms_keyed_setup(idms_server *s)
{
    s->key = NULL;
    if (s->opt.key_file[0] == '\0')
        return 0;
    char msg[IDMX_KEYFILE_MSG_CAP];
    if (idmx_keyfile_load(s->opt.key_file, &s->key, msg, sizeof msg) != 0) {
        fprintf(stderr, "idmintd: --key-file %s\n", msg);
        return 2;
    }
    char fp[IDM_KEY_FINGERPRINT_LEN + 1];
    if (idm_key_fingerprint(s->key, fp, sizeof fp) != IDM_OK)
        snprintf(fp, sizeof fp, "?");
    idms_log(IDMS_LOG_INFO, "key %s from %s: /v1/obfuscate and /v1/reveal are served", fp,
             s->opt.key_file);
    return 0;
}

void idms_keyed_free(idms_server *s)
{
    idm_key_free(s->key);
    s->key = NULL;
}

static const char no_key[] = "idmintd was started without --key-file: no obfuscated IDs";

static int refuse(int status, char *msg, size_t cap, const char *text)
{
    snprintf(msg, cap, "%s", text);
    return status;
}

int idms_keyed_obfuscate(const idms_server *s, const char *id, size_t id_len, const char *prefix,
                         size_t prefix_len, char *out, size_t cap, char *msg, size_t msg_cap)
{
    if (s->key == NULL)
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
    int rc = idm_obfuscate(s->key, v, prefix, prefix_len, out, cap, &err);
    if (rc != IDM_OK)
        return refuse(rc == IDM_EINVAL ? 400 : 500, msg, msg_cap,
                      err.msg[0] ? err.msg : idm_strerror(rc));
    return 200;
}

int idms_keyed_reveal(const idms_server *s, const char *text, size_t len, uint64_t *id, char *msg,
                      size_t msg_cap)
{
    if (s->key == NULL)
        return refuse(404, msg, msg_cap, no_key);
    idm_error err = {0};
    int rc = idm_reveal(s->key, text, len, id, &err);
    if (rc == IDM_OK)
        return 200;
    return refuse(rc == IDM_EPARSE    ? 400
                  : rc == IDM_EFORGED ? 422
                                      : 500,
                  msg, msg_cap, err.msg[0] ? err.msg : idm_strerror(rc));
}
