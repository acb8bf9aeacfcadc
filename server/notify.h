/*
 * notify.h - systemd's readiness protocol (sd_notify(3)), written here in
 * a few lines rather than linking libsystemd: one datagram of
 * "KEY=VALUE\n" lines to the AF_UNIX socket $NOTIFY_SOCKET names (a path,
 * or an abstract name when it starts with '@'). Without $NOTIFY_SOCKET
 * nothing is sent. Not installed.
 *
 * idmintd sends READY=1 the first time it can mint (what makes /readyz
 * answer 200: status.c's poll), STATUS= lines naming what a pause waits
 * for, "STATUS=ready" when it ends, and STOPPING=1 when it starts to
 * drain (main.c). docs/idmintd.md, "systemd".
 */
#ifndef IDMS_NOTIFY_H
#define IDMS_NOTIFY_H

#include <stddef.h>

/* Sends msg (one or more "KEY=VALUE" lines) to $NOTIFY_SOCKET. Returns 1
 * when sent, 0 when there is no $NOTIFY_SOCKET, -1 on an error (errno
 * set; the caller logs it once). Control characters in msg other than
 * '\n' between lines are sent as they are: the caller keeps STATUS= to one
 * line. */
int idms_notify(const char *msg);

/* Writes "STATUS=" and text (its newlines and other control characters as
 * spaces, at most cap - 8 bytes of it) into out[0..cap). */
void idms_notify_status(char *out, size_t cap, const char *text);

#endif
