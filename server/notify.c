/*
 * notify.c - sd_notify's datagram (notify.h).
 */
#include "notify.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int idms_notify(const char *msg)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (path == NULL || path[0] == '\0')
        return 0;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    size_t n = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || n >= sizeof sa.sun_path) {
        errno = EINVAL;
        return -1;
    }
    memcpy(sa.sun_path, path, n);
    if (path[0] == '@')
        sa.sun_path[0] = '\0'; /* the abstract namespace */
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    ssize_t w = sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (const struct sockaddr *)&sa, len);
    int e = errno;
    close(fd);
    errno = e;
    return w < 0 ? -1 : 1;
}

#define SD_LISTEN_FDS_START 3

int idms_sd_listen_fd(const char *name, char *msg, size_t cap)
{
    const char *pid = getenv("LISTEN_PID");
    const char *fds = getenv("LISTEN_FDS");
    const char *names = getenv("LISTEN_FDNAMES");
    char *end = NULL;
    if (pid == NULL || fds == NULL) {
        snprintf(msg, cap,
                 "systemd:%s: no sockets were passed (LISTEN_PID and LISTEN_FDS are not set: "
                 "start idmintd through its .socket unit)",
                 name);
        return -1;
    }
    errno = 0;
    long p = strtol(pid, &end, 10);
    if (errno != 0 || end == pid || *end != '\0' || p != (long)getpid()) {
        snprintf(msg, cap, "systemd:%s: the sockets were passed to process %.20s, not this one",
                 name, pid);
        return -1;
    }
    long n = strtol(fds, &end, 10);
    if (end == fds || *end != '\0' || n < 1 || n > 64) {
        snprintf(msg, cap, "systemd:%s: LISTEN_FDS is '%.20s', not a count of 1 to 64", name, fds);
        return -1;
    }
    /* The name's place in LISTEN_FDNAMES (names separated by ':'). */
    long at = -1;
    size_t len = strlen(name);
    const char *q = names != NULL ? names : "";
    for (long i = 0; i < n && at < 0; i++) {
        const char *colon = strchr(q, ':');
        size_t l = colon != NULL ? (size_t)(colon - q) : strlen(q);
        if (l == len && memcmp(q, name, len) == 0)
            at = i;
        if (colon == NULL)
            break;
        q = colon + 1;
    }
    /* Not a name: a number is the socket's place, in the order of the
     * .socket unit's ListenStream= lines (one unit for several ports). */
    if (at < 0 && len > 0 && strspn(name, "0123456789") == len && len < 3 && atol(name) < n)
        at = atol(name);
    if (at < 0) {
        snprintf(msg, cap,
                 "systemd:%s: no socket of that name was passed (LISTEN_FDNAMES '%.200s', "
                 "LISTEN_FDS %ld: name the socket with FileDescriptorName=%s, or give its place, "
                 "systemd:0 for the first ListenStream=)",
                 name, names != NULL ? names : "", n, name);
        return -1;
    }
    int fd = SD_LISTEN_FDS_START + (int)at;
    int type = 0, listening = 0;
    socklen_t tl = sizeof type, ll = sizeof listening;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 ||
        getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &ll) != 0 || type != SOCK_STREAM ||
        !listening) {
        snprintf(msg, cap, "systemd:%s: file descriptor %d is not a listening stream socket", name,
                 fd);
        return -1;
    }
    int flags = fcntl(fd, F_GETFD);
    if (flags >= 0)
        (void)fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    return fd;
}

int idms_sd_describe(int fd, char *out, size_t cap)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    memset(&ss, 0, sizeof ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
        return -1;
    char host[INET6_ADDRSTRLEN];
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
        if (inet_ntop(AF_INET, &a->sin_addr, host, sizeof host) == NULL)
            return -1;
        snprintf(out, cap, "%s:%u", host, (unsigned)ntohs(a->sin_port));
        return 0;
    }
    if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;
        if (inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host) == NULL)
            return -1;
        snprintf(out, cap, "[%s]:%u", host, (unsigned)ntohs(a->sin6_port));
        return 0;
    }
    if (ss.ss_family == AF_UNIX) {
        const struct sockaddr_un *a = (const struct sockaddr_un *)&ss;
        size_t n = sl > offsetof(struct sockaddr_un, sun_path)
                       ? sl - offsetof(struct sockaddr_un, sun_path)
                       : 0;
        if (n > 0 && a->sun_path[0] == '\0')
            snprintf(out, cap, "unix:@%.*s", (int)(n - 1), a->sun_path + 1);
        else
            snprintf(out, cap, "unix:%.*s", (int)strnlen(a->sun_path, n), a->sun_path);
        return 0;
    }
    return -1;
}

void idms_notify_status(char *out, size_t cap, const char *text)
{
    if (cap == 0)
        return;
    int n = snprintf(out, cap, "STATUS=");
    if (n < 0 || (size_t)n >= cap)
        return;
    size_t i = (size_t)n;
    for (const char *p = text; *p != '\0' && i + 1 < cap; p++)
        out[i++] = (unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p;
    out[i] = '\0';
}
