/*
 * keyfile.c - key files (keyfile.h): the checks a secret file needs before
 * its bytes are trusted, and a creation that never follows a link or
 * leaves the key readable by others for a moment.
 */
#include "keyfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

/* A key file is one line; anything much longer is not one. */
#define KEYFILE_READ_CAP 256

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

int idmx_keyfile_read(const char *path, uint8_t master[IDM_KEY_BYTES], char *msg, size_t cap)
{
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
        ssize_t n = read(fd, text + len, sizeof text - len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            set_msg(msg, cap, "%s: cannot read the key file: %s", path, strerror(errno));
            goto done;
        }
        if (n == 0) {
            break;
        }
        len += (size_t)n;
        if (len == sizeof text) {
            set_msg(msg, cap, "%s: is too long for a key file", path);
            goto done;
        }
    }
    idm_error err = {0};
    int prc = idm_key_parse(text, len, master, &err);
    if (prc != IDM_OK) {
        set_msg(msg, cap, "%s: not an idmint key file: %s", path,
                err.msg[0] ? err.msg : idm_strerror(prc));
        goto done;
    }
    rc = 0;
done:
    OPENSSL_cleanse(text, sizeof text);
    close(fd);
    return rc;
}

int idmx_keyfile_load(const char *path, idm_key **out, char *msg, size_t cap)
{
    uint8_t master[IDM_KEY_BYTES];
    *out = NULL;
    if (idmx_keyfile_read(path, master, msg, cap) != 0) {
        return -1;
    }
    idm_error err = {0};
    int rc = idm_key_new(out, master, NULL, &err);
    OPENSSL_cleanse(master, sizeof master);
    if (rc != IDM_OK) {
        set_msg(msg, cap, "%s: cannot use the key: %s", path,
                err.msg[0] ? err.msg : idm_strerror(rc));
        return -1;
    }
    return 0;
}

int idmx_keyfile_write(const char *path, const uint8_t master[IDM_KEY_BYTES], bool force, char *msg,
                       size_t cap)
{
    char text[IDM_KEY_TEXT_LEN + 1];
    if (idm_key_format(master, text, sizeof text) != IDM_OK) {
        set_msg(msg, cap, "%s: cannot format the key", path);
        return -1;
    }
    if (force && unlink(path) != 0 && errno != ENOENT) {
        set_msg(msg, cap, "%s: cannot replace it: %s", path, strerror(errno));
        OPENSSL_cleanse(text, sizeof text);
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
    if (fd < 0) {
        if (errno == EEXIST) {
            set_msg(msg, cap, "%s: already exists; not overwriting a key (--force replaces it)",
                    path);
        } else {
            set_msg(msg, cap, "%s: cannot create the key file: %s", path, strerror(errno));
        }
        OPENSSL_cleanse(text, sizeof text);
        return -1;
    }
    /* The umask may only take bits away; make sure of 0600 exactly. */
    int rc = fchmod(fd, 0600);
    size_t off = 0;
    while (rc == 0 && off < IDM_KEY_TEXT_LEN) {
        ssize_t n = write(fd, text + off, IDM_KEY_TEXT_LEN - off);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            rc = -1;
            break;
        }
        off += (size_t)n;
    }
    if (rc == 0) {
        rc = fsync(fd);
    }
    int saved = errno;
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    OPENSSL_cleanse(text, sizeof text);
    if (rc != 0) {
        unlink(path);
        set_msg(msg, cap, "%s: cannot write the key file: %s", path, strerror(saved));
        return -1;
    }
    return 0;
}
