/*
 * host.c - the host's name and addresses (host.h).
 */
#include "host.h"

#include <idmint/idmint.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

void idmx_host_addresses(char *dst, size_t cap)
{
    if (cap == 0) {
        return;
    }
    dst[0] = '\0';
    struct ifaddrs *list = NULL;
    if (getifaddrs(&list) != 0) {
        return;
    }
    size_t len = 0;
    for (struct ifaddrs *i = list; i != NULL; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET) {
            continue;
        }
        const struct in_addr *a = &((const struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr;
        if ((ntohl(a->s_addr) >> 24) == 127) {
            continue;
        }
        char text[INET_ADDRSTRLEN];
        if (inet_ntop(AF_INET, a, text, sizeof text) == NULL) {
            continue;
        }
        int n = snprintf(dst + len, cap - len, "%s%s", len > 0 ? "," : "", text);
        if (n < 0 || (size_t)n >= cap - len) {
            /* The address that did not fit is cut off whole. */
            dst[len] = '\0';
            break;
        }
        len += (size_t)n;
    }
    freeifaddrs(list);
}

void idmx_host_name(char *dst, size_t cap)
{
    if (cap == 0) {
        return;
    }
    if (gethostname(dst, cap) != 0) {
        snprintf(dst, cap, "?");
    }
    dst[cap - 1] = '\0';
}

void idmx_host_holder(char *dst, size_t cap, const char *program)
{
    char host[128];
    idmx_host_name(host, sizeof host);
    char addrs[96];
    idmx_host_addresses(addrs, sizeof addrs);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char since[IDM_RFC3339_CAP];
    if (idm_time_format((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, since, sizeof since) !=
        IDM_OK)
        snprintf(since, sizeof since, "?");
    snprintf(dst, cap, "pid=%d host=%s addrs=%s since=%s program=%s", (int)getpid(), host,
             addrs[0] != '\0' ? addrs : "-", since, program);
}
