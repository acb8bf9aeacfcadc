/*
 * notify.c - sd_notify's datagram (notify.h).
 */
#include "notify.h"

#include <errno.h>
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
