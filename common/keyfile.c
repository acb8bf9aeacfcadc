/*
 * keyfile.c - key files (keyfile.h): the checks a secret file needs before
 * its bytes are trusted, and a creation that never follows a link or
 * leaves the key readable by others for a moment, the ring of a file of
 * several keys (rotation), and a replacement by rename that never leaves
 * the file missing or half-written.
 */
#include "keyfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

/* A key file is at most IDMX_KEYRING_MAX lines of IDM_KEY_TEXT_LEN bytes
 * (one more with "\r\n"); the cap leaves room to see a ninth key and say
 * so, rather than "too long". */
#define KEYFILE_READ_CAP 1024

#if defined(__GNUC__)
static void set_msg(char *msg, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#endif

static void set_msg(char *msg, size_t cap, const char *fmt, ...)
{
    if (msg == NULL || cap == 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
}

/* Splits text into lines, each parsed with its "\n" (idm_key_parse takes
 * "\n" and "\r\n"); the last line may lack it. An empty line is an error
 * like any other bad line: a key file is written by keygen, not by hand. */
static int parse_lines(const char *path, const char *text, size_t len,
                       uint8_t masters[IDMX_KEYRING_MAX][IDM_KEY_BYTES], size_t *n, char *msg,
                       size_t cap)
{
    size_t count = 0;
    size_t pos = 0;
    if (len == 0) {
        set_msg(msg, cap, "%s: not an idmint key file: it is empty", path);
        return -1;
    }
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl != NULL ? (size_t)(nl - text) + 1 : len;
        if (count == IDMX_KEYRING_MAX) {
            set_msg(msg, cap,
                    "%s: holds more than %d keys (the limit: the current key and %d previous); "
                    "remove the oldest",
                    path, IDMX_KEYRING_MAX, IDMX_KEYRING_MAX - 1);
            return -1;
        }
        idm_error err = {0};
        int prc = idm_key_parse(text + pos, end - pos, masters[count], &err);
        if (prc != IDM_OK) {
            set_msg(msg, cap, "%s: not an idmint key file: line %zu: %s", path, count + 1,
                    err.msg[0] ? err.msg : idm_strerror(prc));
            return -1;
        }
        count++;
        pos = end;
    }
    *n = count;
    return 0;
}

int idmx_keyfile_read_all(const char *path, uint8_t masters[IDMX_KEYRING_MAX][IDM_KEY_BYTES],
                          size_t *n, char *msg, size_t cap)
{
    *n = 0;
    /* O_NONBLOCK: opening a FIFO must not hang before fstat refuses it. */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ELOOP) {
            set_msg(msg, cap, "%s: is a symbolic link; a key file must be the file itself", path);
        } else {
            set_msg(msg, cap, "%s: cannot open the key file: %s", path, strerror(errno));
        }
        return -1;
    }
    struct stat st;
    int rc = -1;
    char text[KEYFILE_READ_CAP];
    size_t len = 0;
    if (fstat(fd, &st) != 0) {
        set_msg(msg, cap, "%s: cannot stat the key file: %s", path, strerror(errno));
        goto done;
    }
    if (!S_ISREG(st.st_mode)) {
        set_msg(msg, cap, "%s: is not a regular file", path);
        goto done;
    }
    if (st.st_uid != geteuid()) {
        set_msg(msg, cap, "%s: is owned by uid %u, not by this user (uid %u)", path,
                (unsigned)st.st_uid, (unsigned)geteuid());
        goto done;
    }
    if ((st.st_mode & 077) != 0) {
        set_msg(msg, cap,
                "%s: is readable or writable by group or others (mode %04o); a key file must "
                "be private: chmod 600 it",
                path, (unsigned)(st.st_mode & 07777));
        goto done;
    }
    for (;;) {
        ssize_t got = read(fd, text + len, sizeof text - len);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            set_msg(msg, cap, "%s: cannot read the key file: %s", path, strerror(errno));
            goto done;
        }
        if (got == 0) {
            break;
        }
        len += (size_t)got;
        if (len == sizeof text) {
            set_msg(msg, cap, "%s: is too long for a key file (at most %d keys)", path,
                    IDMX_KEYRING_MAX);
            goto done;
        }
    }
    rc = parse_lines(path, text, len, masters, n, msg, cap);
    if (rc != 0) {
        OPENSSL_cleanse(masters, IDMX_KEYRING_MAX * IDM_KEY_BYTES);
    }
done:
    OPENSSL_cleanse(text, sizeof text);
    close(fd);
    return rc;
}

int idmx_keyfile_read(const char *path, uint8_t master[IDM_KEY_BYTES], char *msg, size_t cap)
{
    uint8_t masters[IDMX_KEYRING_MAX][IDM_KEY_BYTES];
    size_t n;
    int rc = idmx_keyfile_read_all(path, masters, &n, msg, cap);
    if (rc == 0) {
        memcpy(master, masters[0], IDM_KEY_BYTES);
    }
    OPENSSL_cleanse(masters, sizeof masters);
    return rc;
}

int idmx_keyring_load(const char *path, idmx_keyring *ring, char *msg, size_t cap)
{
    uint8_t masters[IDMX_KEYRING_MAX][IDM_KEY_BYTES];
    size_t n;
    memset(ring, 0, sizeof *ring);
    if (idmx_keyfile_read_all(path, masters, &n, msg, cap) != 0) {
        return -1;
    }
    int rc = IDM_OK;
    idm_error err = {0};
    for (size_t i = 0; i < n && rc == IDM_OK; i++) {
        rc = idm_key_new(&ring->keys[i], masters[i], NULL, &err);
        if (rc == IDM_OK) {
            ring->n = i + 1;
        }
    }
    OPENSSL_cleanse(masters, sizeof masters);
    if (rc != IDM_OK) {
        idmx_keyring_free(ring);
        set_msg(msg, cap, "%s: cannot use the key: %s", path,
                err.msg[0] ? err.msg : idm_strerror(rc));
        return -1;
    }
    return 0;
}

void idmx_keyring_free(idmx_keyring *ring)
{
    if (ring == NULL) {
        return;
    }
    for (size_t i = 0; i < ring->n; i++) {
        idm_key_free(ring->keys[i]);
        ring->keys[i] = NULL;
    }
    ring->n = 0;
}

int idmx_keyring_reveal(const idmx_keyring *ring, const char *text, size_t len, uint64_t *id,
                        size_t *which, idm_error *err)
{
    int rc = IDM_EINVAL;
    for (size_t i = 0; i < ring->n; i++) {
        if (err != NULL) {
            memset(err, 0, sizeof *err);
        }
        rc = idm_reveal(ring->keys[i], text, len, id, err);
        if (rc != IDM_EFORGED) {
            /* IDM_OK, or an error no other key would change. */
            if (rc == IDM_OK && which != NULL) {
                *which = i;
            }
            return rc;
        }
    }
    return rc;
}

int idmx_keyring_verify(const idmx_keyring *ring, const char *text, size_t len, int64_t now_unix_s,
                        int64_t *expires_unix_s, size_t *which, idm_error *err)
{
    int rc = IDM_EINVAL;
    for (size_t i = 0; i < ring->n; i++) {
        if (err != NULL) {
            memset(err, 0, sizeof *err);
        }
        rc = idm_stoken_verify(ring->keys[i], text, len, now_unix_s, expires_unix_s, err);
        if (rc != IDM_EFORGED) {
            /* The tag checked (valid or expired: this key decides), or the
             * text is not a token at all. */
            if ((rc == IDM_OK || rc == IDM_EEXPIRED) && which != NULL) {
                *which = i;
            }
            return rc;
        }
    }
    return rc;
}

/* Writes all of buf to fd, retrying on EINTR: 0, or -1 with errno set. */
static int write_all(int fd, const char *buf, size_t len)
{
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, buf + off, len - off);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            return -1;
        }
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        off += (size_t)w;
    }
    return 0;
}

/* Writes the key text into fd (mode forced to 0600) and fsyncs: 0, or -1
 * with errno set. */
/* Writes text into the new file fd (mode 0600 exactly: the umask may only
 * take bits away), syncs and closes it. 0, or -1 with *saved the errno of
 * the first failure; fd is closed either way. */
static int fill_and_close(int fd, const char *text, size_t len, int *saved)
{
    int rc = fchmod(fd, 0600) != 0 || write_all(fd, text, len) != 0 || fsync(fd) != 0 ? -1 : 0;
    *saved = errno;
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        *saved = errno;
    }
    return rc;
}

/* The directory part of path ("." without a slash, "/" for "/x"). */
static int dir_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        return snprintf(dir, cap, ".") >= (int)cap ? -1 : 0;
    }
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= cap) {
        return -1;
    }
    memcpy(dir, path, n);
    dir[n] = '\0';
    return 0;
}

static int replace_file(const char *path, const char *text, size_t len, char *msg, size_t cap)
{
    char dir[PATH_MAX];
    char tmp[PATH_MAX];
    if (dir_of(path, dir, sizeof dir) != 0 ||
        snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", path) >= (int)sizeof tmp) {
        set_msg(msg, cap, "%s: the path is too long", path);
        return -1;
    }
    /* mkostemp opens with O_CREAT|O_EXCL and mode 0600; O_NOFOLLOW too. */
    int fd = mkostemp(tmp, O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        set_msg(msg, cap, "%s: cannot create a temporary file beside it: %s", path,
                strerror(errno));
        return -1;
    }
    int saved = 0;
    int rc = fill_and_close(fd, text, len, &saved);
    if (rc != 0) {
        unlink(tmp);
        set_msg(msg, cap, "%s: cannot write the key file (it is unchanged): %s", path,
                strerror(saved));
        return -1;
    }
    /* rename replaces path itself, a symbolic link included, never its
     * target; readers see the old file or the new one. */
    if (rename(tmp, path) != 0) {
        saved = errno;
        unlink(tmp);
        set_msg(msg, cap, "%s: cannot replace it (it is unchanged): %s", path, strerror(saved));
        return -1;
    }
    /* The rename is durable once the directory is. */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || fsync(dfd) != 0) {
        saved = errno;
        if (dfd >= 0) {
            close(dfd);
        }
        set_msg(msg, cap, "%s: written, but cannot sync its directory %s: %s", path, dir,
                strerror(saved));
        return -1;
    }
    close(dfd);
    return 0;
}

static int create_file(const char *path, const char *text, size_t len, char *msg, size_t cap)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
    if (fd < 0) {
        if (errno == EEXIST) {
            set_msg(msg, cap, "%s: already exists; not overwriting a key (--force replaces it)",
                    path);
        } else {
            set_msg(msg, cap, "%s: cannot create the key file: %s", path, strerror(errno));
        }
        return -1;
    }
    int saved = 0;
    int rc = fill_and_close(fd, text, len, &saved);
    if (rc != 0) {
        unlink(path);
        set_msg(msg, cap, "%s: cannot write the key file: %s", path, strerror(saved));
        return -1;
    }
    return 0;
}

int idmx_keyfile_write(const char *path, const uint8_t *masters, size_t n, idmx_keyfile_mode mode,
                       char *msg, size_t cap)
{
    char text[IDMX_KEYRING_MAX * IDM_KEY_TEXT_LEN + 1];
    size_t len = 0;
    if (n == 0 || n > IDMX_KEYRING_MAX) {
        set_msg(msg, cap, "%s: a key file holds 1 to %d keys", path, IDMX_KEYRING_MAX);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (idm_key_format(masters + i * IDM_KEY_BYTES, text + len, sizeof text - len) != IDM_OK) {
            OPENSSL_cleanse(text, sizeof text);
            set_msg(msg, cap, "%s: cannot format the key", path);
            return -1;
        }
        len += IDM_KEY_TEXT_LEN;
    }
    int rc = mode == IDMX_KEYFILE_REPLACE ? replace_file(path, text, len, msg, cap)
                                          : create_file(path, text, len, msg, cap);
    OPENSSL_cleanse(text, sizeof text);
    return rc;
}
