/*
 * keyed.c - the commands of public IDs under a secret key (keyed.h):
 *
 *   idmint keygen FILE [--force]                          a new key, mode 0600
 *   idmint keygen --rotate FILE                           a new current key, old kept
 *   idmint keygen --list FILE                             fingerprints and roles
 *   idmint obfuscate --key-file F [--prefix P] [ID ...]   64-bit IDs -> tokens
 *   idmint reveal --key-file F [TOKEN ...]                tokens -> IDs
 *   idmint verify --key-file F TOKEN                      a signed token's state
 *   idmint gen token --expires D --key-file F             (gen.c calls cli_gen_stoken)
 *
 * Key files go through common/keyfile.c, the reader idmintd uses too; no
 * output or message of these commands contains key material (keygen -
 * prints the key text on purpose). A key file may hold several keys
 * (rotation): obfuscate and gen token sign with the first, the current
 * key; reveal and verify accept any of them.
 */
#include "cli.h"
#include "keyfile.h"

#include <openssl/crypto.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { OPT_KEY_FILE = CLI_OPT_HELP + 1, OPT_PREFIX, OPT_FORCE, OPT_ROTATE, OPT_LIST };

/* clang-format off */
static const idmx_option keygen_options[] = {
    {"help", 'h', IDMX_NO_ARG, CLI_OPT_HELP},
    {"force", 0, IDMX_NO_ARG, OPT_FORCE},
    {"rotate", 0, IDMX_NO_ARG, OPT_ROTATE},
    {"list", 0, IDMX_NO_ARG, OPT_LIST},
    {NULL, 0, 0, 0},
};
static const idmx_option obfuscate_options[] = {
    {"help", 'h', IDMX_NO_ARG, CLI_OPT_HELP},
    {"key-file", 0, IDMX_REQUIRED_ARG, OPT_KEY_FILE},
    {"prefix", 0, IDMX_REQUIRED_ARG, OPT_PREFIX},
    {NULL, 0, 0, 0},
};
static const idmx_option key_only_options[] = {
    {"help", 'h', IDMX_NO_ARG, CLI_OPT_HELP},
    {"key-file", 0, IDMX_REQUIRED_ARG, OPT_KEY_FILE},
    {NULL, 0, 0, 0},
};
/* clang-format on */

const char cli_keygen_help[] =
    "Usage: idmint keygen [--force] FILE\n"
    "       idmint keygen --rotate FILE\n"
    "       idmint keygen --list FILE\n"
    "\n"
    "Write a new random key to FILE, created with mode 0600 (never through a\n"
    "symbolic link), and print its fingerprint on standard error. FILE '-'\n"
    "prints the key text on standard output instead.\n"
    "\n"
    "A key file holds up to 8 keys, one a line: the first is the current key\n"
    "(obfuscate, gen token --expires), the others previous keys that reveal\n"
    "and verify still accept, so that rotating breaks no public ID.\n"
    "\n"
    "Options:\n"
    "      --force       replace an existing FILE (all its keys are lost); the\n"
    "                    file is replaced atomically, never left missing\n"
    "      --rotate      put a new current key first in the existing FILE and\n"
    "                    keep its keys after it (the oldest beyond 8 dropped)\n"
    "      --list        print each key's fingerprint and role (current or\n"
    "                    previous), never the key\n"
    "  -h, --help        show this help and exit\n";

const char cli_obfuscate_help[] =
    "Usage: idmint obfuscate --key-file F [--prefix P] [ID ...]\n"
    "\n"
    "Encrypt 64-bit decimal IDs into public IDs: [PREFIX_] + 17 base62\n"
    "characters that show nothing of the ID or its order without the key.\n"
    "IDs come from the arguments, or one per line from standard input.\n"
    "\n"
    "Options:\n"
    "      --key-file F  the key (idmint keygen): a private file, mode 0600\n"
    "      --prefix P    [a-z_], at most 63 characters; it is part of the\n"
    "                    encryption: reveal wants the same prefix\n"
    "  -h, --help        show this help and exit\n";

const char cli_reveal_help[] =
    "Usage: idmint reveal --key-file F [TOKEN ...]\n"
    "\n"
    "Decrypt public IDs made by idmint obfuscate under the same key back into\n"
    "decimal IDs. A token made under another key or prefix, or altered, is\n"
    "refused. Tokens come from the arguments, or one per line from standard\n"
    "input.\n"
    "\n"
    "Options:\n"
    "      --key-file F  the key (idmint keygen): a private file, mode 0600\n"
    "  -h, --help        show this help and exit\n";

const char cli_verify_help[] =
    "Usage: idmint verify --key-file F TOKEN\n"
    "\n"
    "Check a signed token (idmint gen token --expires D --key-file F) and\n"
    "print its state: 'valid (expires TIME)' and exit 0, or 'expired (at\n"
    "TIME)' or 'forged: REASON' and exit 1.\n"
    "\n"
    "Options:\n"
    "      --key-file F  the key (idmint keygen): a private file, mode 0600\n"
    "  -h, --help        show this help and exit\n";

typedef struct keyed_args {
    const char *key_file;
    const char *prefix;
    bool force;
    bool rotate;
    bool list;
    char **operands; /* collected at the front of argv[1..] */
    int n_operands;
    idmx_keyring ring;
    idm_key *key; /* ring.keys[0]: the current key */
} keyed_args;

static int take_option(cli *c, void *ctx, int id, const idmx_optparse *p)
{
    keyed_args *a = ctx;
    switch (id) {
    case IDMX_OPT_OPERAND:
        /* The parser has already passed every slot this overwrites. */
        a->operands[a->n_operands++] = (char *)p->arg;
        break;
    case OPT_KEY_FILE:
        a->key_file = p->arg;
        break;
    case OPT_PREFIX:
        a->prefix = p->arg;
        break;
    case OPT_FORCE:
        a->force = true;
        break;
    case OPT_ROTATE:
        a->rotate = true;
        break;
    case OPT_LIST:
        a->list = true;
        break;
    default:
        return cli_usage(c, "unhandled option '%s'", p->name != NULL ? p->name : "?");
    }
    return CLI_CONTINUE;
}

/* Loads the key file's ring (common/keyfile.c) into a->ring and points
 * a->key at its current key: CLI_EXIT_OK, or CLI_EXIT_FAIL after reporting
 * why (the file named, never its bytes). */
static int load_ring(cli *c, const char *path, keyed_args *a)
{
    char msg[IDMX_KEYFILE_MSG_CAP];
    if (idmx_keyring_load(path, &a->ring, msg, sizeof msg) != 0) {
        cli_diag(c, "%s", msg);
        return CLI_EXIT_FAIL;
    }
    a->key = a->ring.keys[0];
    return CLI_EXIT_OK;
}

/* Parses the options and loads --key-file (required). Returns CLI_CONTINUE
 * with a->ring and a->key set, or the exit status. */
static int parse_and_load(cli *c, int argc, char **argv, const idmx_option *opts, const char *help,
                          keyed_args *a)
{
    memset(a, 0, sizeof *a);
    a->operands = argv + 1;
    int st = cli_parse_options(c, argc, argv, opts, help, take_option, a);
    if (st != CLI_CONTINUE) {
        return st;
    }
    if (a->key_file == NULL) {
        return cli_usage(c, "%s needs --key-file F (make one with idmint keygen F)", argv[0]);
    }
    st = load_ring(c, a->key_file, a);
    return st == CLI_EXIT_OK ? CLI_CONTINUE : st;
}

/* "2026-12-08T10:00:00Z": whole seconds, as signed tokens carry them. */
static void format_expiry(int64_t unix_s, char dst[IDM_RFC3339_CAP])
{
    if (idm_time_format(unix_s * 1000, dst, IDM_RFC3339_CAP) != IDM_OK) {
        snprintf(dst, IDM_RFC3339_CAP, "%lld", (long long)unix_s);
        return;
    }
    size_t n = strlen(dst);
    if (n >= 5 && memcmp(dst + n - 5, ".000Z", 5) == 0) {
        memcpy(dst + n - 5, "Z", 2);
    }
}

/* ---- keygen ------------------------------------------------------------------ */

/* The fingerprint of master, or "?" (fp: IDM_KEY_FINGERPRINT_LEN + 1). */
static int fingerprint_of(const uint8_t master[IDM_KEY_BYTES], char *fp, idm_error *err)
{
    idm_key *k = NULL;
    int rc = idm_key_new(&k, master, NULL, err);
    if (rc == IDM_OK && idm_key_fingerprint(k, fp, IDM_KEY_FINGERPRINT_LEN + 1) != IDM_OK) {
        snprintf(fp, IDM_KEY_FINGERPRINT_LEN + 1, "?");
    }
    idm_key_free(k);
    return rc;
}

/* keygen --list FILE: "FINGERPRINT current" then "FINGERPRINT previous"
 * lines, in the file's order. */
static int keygen_list(cli *c, const char *path)
{
    keyed_args a;
    memset(&a, 0, sizeof a);
    int st = load_ring(c, path, &a);
    if (st != CLI_EXIT_OK) {
        return st;
    }
    for (size_t i = 0; i < a.ring.n; i++) {
        char fp[IDM_KEY_FINGERPRINT_LEN + 1];
        if (idm_key_fingerprint(a.ring.keys[i], fp, sizeof fp) != IDM_OK) {
            snprintf(fp, sizeof fp, "?");
        }
        idmx_outbuf_puts(&c->out, fp);
        idmx_outbuf_puts(&c->out, i == 0 ? " current\n" : " previous\n");
    }
    idmx_keyring_free(&a.ring);
    return cli_out_flush(c);
}

/* keygen --rotate FILE: the new key first, then the file's keys, the
 * oldest beyond IDMX_KEYRING_MAX dropped (and named). */
static int keygen_rotate(cli *c, const char *path, const uint8_t master[IDM_KEY_BYTES],
                         const char *fp)
{
    uint8_t masters[IDMX_KEYRING_MAX + 1][IDM_KEY_BYTES];
    size_t n = 0;
    char msg[IDMX_KEYFILE_MSG_CAP];
    int st = CLI_EXIT_OK;
    if (idmx_keyfile_read_all(path, masters + 1, &n, msg, sizeof msg) != 0) {
        cli_diag(c, "%s%s", msg,
                 access(path, F_OK) != 0 ? " (--rotate changes an existing key file; make one "
                                           "with idmint keygen FILE)"
                                         : "");
        st = CLI_EXIT_FAIL;
        goto done;
    }
    memcpy(masters[0], master, IDM_KEY_BYTES);
    n++;
    for (; n > IDMX_KEYRING_MAX; n--) {
        char old[IDM_KEY_FINGERPRINT_LEN + 1] = "?";
        idm_error err = {0};
        (void)fingerprint_of(masters[n - 1], old, &err);
        cli_diag(c, "dropped the oldest key %s from %s (a key file keeps at most %d keys)", old,
                 path, IDMX_KEYRING_MAX);
    }
    if (idmx_keyfile_write(path, &masters[0][0], n, IDMX_KEYFILE_REPLACE, msg, sizeof msg) != 0) {
        cli_diag(c, "%s", msg);
        st = CLI_EXIT_FAIL;
        goto done;
    }
    cli_diag(c, "wrote key %s to %s as the current key (%zu previous kept)", fp, path, n - 1);
done:
    OPENSSL_cleanse(masters, sizeof masters);
    return st;
}

int cli_keygen(cli *c, int argc, char **argv)
{
    keyed_args a;
    memset(&a, 0, sizeof a);
    a.operands = argv + 1;
    int st = cli_parse_options(c, argc, argv, keygen_options, cli_keygen_help, take_option, &a);
    if (st != CLI_CONTINUE) {
        return st;
    }
    if (a.n_operands != 1) {
        return cli_usage(c, "keygen takes one FILE ('-' for standard output)");
    }
    if ((int)a.force + (int)a.rotate + (int)a.list > 1) {
        return cli_usage(c, "keygen takes one of --force, --rotate and --list");
    }
    const char *path = a.operands[0];
    if ((a.rotate || a.list) && strcmp(path, "-") == 0) {
        return cli_usage(c, "keygen %s needs a key FILE, not '-'",
                         a.rotate ? "--rotate" : "--list");
    }
    if (a.list) {
        return keygen_list(c, path);
    }
    uint8_t master[IDM_KEY_BYTES];
    idm_error err = {0};
    char fp[IDM_KEY_FINGERPRINT_LEN + 1] = "?";
    int rc = idm_key_generate(master, NULL, &err);
    if (rc == IDM_OK) {
        rc = fingerprint_of(master, fp, &err);
    }
    if (rc != IDM_OK) {
        OPENSSL_cleanse(master, sizeof master);
        cli_diag(c, "cannot make a key: %s", cli_reason(&err, rc));
        return CLI_EXIT_FAIL;
    }
    st = CLI_EXIT_OK;
    if (a.rotate) {
        st = keygen_rotate(c, path, master, fp);
    } else if (strcmp(path, "-") == 0) {
        char text[IDM_KEY_TEXT_LEN + 1];
        if (idm_key_format(master, text, sizeof text) == IDM_OK) {
            idmx_outbuf_puts(&c->out, text);
        }
        OPENSSL_cleanse(text, sizeof text);
        st = cli_out_flush(c);
        if (st == CLI_EXIT_OK) {
            cli_diag(c, "wrote key %s to standard output", fp);
        }
    } else {
        char msg[IDMX_KEYFILE_MSG_CAP];
        idmx_keyfile_mode mode = a.force ? IDMX_KEYFILE_REPLACE : IDMX_KEYFILE_CREATE;
        if (idmx_keyfile_write(path, master, 1, mode, msg, sizeof msg) != 0) {
            cli_diag(c, "%s", msg);
            st = CLI_EXIT_FAIL;
        } else {
            cli_diag(c, "wrote key %s to %s", fp, path);
        }
    }
    OPENSSL_cleanse(master, sizeof master);
    return st;
}

/* ---- obfuscate and reveal ------------------------------------------------------- */

/* A decimal 64-bit ID: digits only, no sign or space, at most 2^64 - 1. */
static int parse_id(const char *text, size_t len, uint64_t *out, const char **reason)
{
    if (len == 0) {
        *reason = "empty input (expected a decimal 64-bit ID)";
        return -1;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9') {
            *reason = "not a decimal 64-bit ID (digits 0-9 only)";
            return -1;
        }
        unsigned d = (unsigned)(text[i] - '0');
        if (v > (UINT64_MAX - d) / 10) {
            *reason = "exceeds 64 bits (the largest ID is 18446744073709551615)";
            return -1;
        }
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int obfuscate_one(cli *c, void *ctx, const char *text, size_t len)
{
    const keyed_args *a = ctx;
    uint64_t id;
    const char *reason;
    if (parse_id(text, len, &id, &reason) != 0) {
        cli_diag_input(c, text, len, reason);
        return CLI_EXIT_FAIL;
    }
    char out[IDM_OBF_STRLEN_MAX + 1];
    idm_error err = {0};
    size_t plen = a->prefix != NULL ? strlen(a->prefix) : 0;
    int rc = idm_obfuscate(a->key, id, a->prefix, plen, out, sizeof out, &err);
    if (rc != IDM_OK) {
        cli_diag_input(c, text, len, cli_reason(&err, rc));
        return CLI_EXIT_FAIL;
    }
    idmx_outbuf_puts(&c->out, out);
    idmx_outbuf_putc(&c->out, '\n');
    return CLI_EXIT_OK;
}

int cli_obfuscate(cli *c, int argc, char **argv)
{
    keyed_args a;
    int st = parse_and_load(c, argc, argv, obfuscate_options, cli_obfuscate_help, &a);
    if (st != CLI_CONTINUE) {
        return st;
    }
    if (a.prefix != NULL) {
        idm_error err = {0};
        int rc = idm_typeid_check_prefix(a.prefix, strlen(a.prefix), &err);
        if (rc != IDM_OK) {
            idmx_keyring_free(&a.ring);
            return cli_bad_prefix(c, a.prefix, &err, rc);
        }
    }
    st = cli_for_each_input(c, a.operands, a.n_operands, obfuscate_one, &a);
    idmx_keyring_free(&a.ring);
    return st;
}

static int reveal_one(cli *c, void *ctx, const char *text, size_t len)
{
    const keyed_args *a = ctx;
    uint64_t id;
    idm_error err = {0};
    int rc = idmx_keyring_reveal(&a->ring, text, len, &id, NULL, &err);
    if (rc != IDM_OK) {
        cli_diag_input(c, text, len, cli_reason(&err, rc));
        return CLI_EXIT_FAIL;
    }
    char out[24];
    snprintf(out, sizeof out, "%llu\n", (unsigned long long)id);
    idmx_outbuf_puts(&c->out, out);
    return CLI_EXIT_OK;
}

int cli_reveal(cli *c, int argc, char **argv)
{
    keyed_args a;
    int st = parse_and_load(c, argc, argv, key_only_options, cli_reveal_help, &a);
    if (st != CLI_CONTINUE) {
        return st;
    }
    st = cli_for_each_input(c, a.operands, a.n_operands, reveal_one, &a);
    idmx_keyring_free(&a.ring);
    return st;
}

/* ---- signed tokens ----------------------------------------------------------- */

int cli_verify(cli *c, int argc, char **argv)
{
    keyed_args a;
    memset(&a, 0, sizeof a);
    a.operands = argv + 1;
    int st = cli_parse_options(c, argc, argv, key_only_options, cli_verify_help, take_option, &a);
    if (st != CLI_CONTINUE) {
        return st;
    }
    if (a.n_operands != 1) {
        return cli_usage(c, "verify takes one TOKEN");
    }
    if (a.key_file == NULL) {
        return cli_usage(c, "verify needs --key-file F");
    }
    st = load_ring(c, a.key_file, &a);
    if (st != CLI_EXIT_OK) {
        return st;
    }
    const char *token = a.operands[0];
    int64_t expiry = 0;
    idm_error err = {0};
    int rc = idmx_keyring_verify(&a.ring, token, strlen(token), (int64_t)time(NULL), &expiry, NULL,
                                 &err);
    idmx_keyring_free(&a.ring);
    char when[IDM_RFC3339_CAP];
    char line[IDM_ERROR_MSG_CAP + 64];
    if (rc == IDM_OK) {
        format_expiry(expiry, when);
        snprintf(line, sizeof line, "valid (expires %s)\n", when);
        st = CLI_EXIT_OK;
    } else if (rc == IDM_EEXPIRED) {
        format_expiry(expiry, when);
        snprintf(line, sizeof line, "expired (at %s)\n", when);
        st = CLI_EXIT_FAIL;
    } else {
        /* Malformed counts as forged, with its own reason. */
        snprintf(line, sizeof line, "forged: %s\n", cli_reason(&err, rc));
        st = CLI_EXIT_FAIL;
    }
    idmx_outbuf_puts(&c->out, line);
    int out_st = cli_out_flush(c);
    return out_st != CLI_EXIT_OK ? out_st : st;
}

int cli_gen_stoken(cli *c, idm_gen *g, uint64_t count, const char *prefix, const char *expires,
                   const char *key_file)
{
    char msg[IDMX_OPT_MSG_CAP];
    int64_t expiry;
    int64_t now = (int64_t)time(NULL);
    if (strchr(expires, ':') != NULL) {
        /* An RFC 3339 time. */
        int64_t ms;
        idm_error err = {0};
        int rc = idm_time_parse(expires, strlen(expires), &ms, &err);
        if (rc != IDM_OK) {
            return cli_usage(c, "invalid --expires '%.64s': %s", expires, cli_reason(&err, rc));
        }
        expiry = ms / 1000 + (ms % 1000 != 0 && ms > 0 ? 1 : 0);
        if (expiry <= now || expiry > IDM_STOKEN_MAX_EXPIRY) {
            char last[IDM_RFC3339_CAP];
            format_expiry(IDM_STOKEN_MAX_EXPIRY, last);
            return cli_usage(c, "invalid --expires '%.64s': must be in the future, at most %s",
                             expires, last);
        }
    } else {
        int64_t d;
        if (idmx_parse_duration_s("--expires", expires, IDM_STOKEN_MAX_EXPIRY - now, &d, msg,
                                  sizeof msg) != 0) {
            return cli_usage(c, "%s", msg);
        }
        expiry = now + d;
    }
    keyed_args a;
    memset(&a, 0, sizeof a);
    int st = load_ring(c, key_file, &a);
    if (st != CLI_EXIT_OK) {
        return st;
    }
    const idm_key *k = a.key;
    size_t plen = prefix != NULL ? strlen(prefix) : 0;
    for (; count > 0 && c->out.err == 0; count--) {
        char tok[IDM_STOKEN_STRLEN_MAX + 1];
        idm_error err = {0};
        int rc = idm_stoken_next(g, k, prefix, plen, expiry, tok, sizeof tok, &err);
        if (rc != IDM_OK) {
            cli_diag(c, "cannot mint a signed token: %s", cli_reason(&err, rc));
            st = CLI_EXIT_FAIL;
            break;
        }
        idmx_outbuf_puts(&c->out, tok);
        idmx_outbuf_putc(&c->out, '\n');
        OPENSSL_cleanse(tok, sizeof tok);
    }
    idmx_keyring_free(&a.ring);
    return st;
}
