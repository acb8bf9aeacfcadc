/*
 * host.h - what the front ends say about the host they run on, for the
 * holder line of a leased snowflake node (`idmint lease list`, refusal
 * messages). Not library API.
 */
#ifndef IDMX_HOST_H
#define IDMX_HOST_H

#include <stddef.h>

/* The host's IPv4 addresses other than loopback, comma-separated, into
 * dst[0..cap-1] (NUL-terminated; "" when there are none or they cannot be
 * listed; as many whole addresses as fit). */
void idmx_host_addresses(char *dst, size_t cap);

/* The host name into dst[0..cap-1] ("?" when it cannot be read). */
void idmx_host_name(char *dst, size_t cap);

/* The holder line a process keeps in a node slot (`idmint lease list`,
 * refusal messages): "pid=P host=H addrs=A since=T program=PROGRAM", T the
 * time of the call (RFC 3339, or "?"), A "-" without addresses. */
void idmx_host_holder(char *dst, size_t cap, const char *program);

#endif
