/*
 * notify.h - systemd's protocols, written here in a few lines rather than
 * linking libsystemd: socket activation (sd_listen_fds(3): the listening
 * sockets a .socket unit passed, by name) and readiness (sd_notify(3)): one datagram of
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

/* The listening stream socket systemd passed under name (LISTEN_PID this
 * process, LISTEN_FDS, LISTEN_FDNAMES: a .socket unit's
 * FileDescriptorName=, or its unit name by default) or, when no socket has
 * that name and it is a number, at that place (0 for the first
 * ListenStream= of the unit), made close-on-exec;
 * or -1 with msg saying why (none passed, passed to another process, no
 * such name, not a listening stream socket). */
int idms_sd_listen_fd(const char *name, char *msg, size_t cap);

/* fd's local address as a listen address: "ADDR:PORT", "[V6]:PORT" or
 * "unix:PATH" ("unix:@NAME" for an abstract one); 0, or -1. */
int idms_sd_describe(int fd, char *out, size_t cap);

#endif
