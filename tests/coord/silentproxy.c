/*
 * silentproxy.c - a TCP proxy for the coordinator tests' fault injection:
 * a silent network cut, which a real server cannot produce (a stopped
 * server resets or refuses; a cut network just stops answering).
 *
 *   silentproxy LISTEN_PORT TARGET_HOST TARGET_PORT
 *
 * Listens on 127.0.0.1:LISTEN_PORT (0: a port of the kernel's choosing)
 * and forwards every connection to TARGET_HOST:TARGET_PORT, both ways,
 * half-closes included, many connections at once (one poll(2) loop).
 * Prints "ready PORT" on stdout once listening.
 *
 *   SIGUSR1  goes silent: every connection stays open, but nothing is
 *            forwarded in either direction any more, and no connection is
 *            accepted: new ones are left pending in the listen queue (its
 *            backlog shrunk to the minimum, so that beyond the first the
 *            kernel drops their SYNs and connect(2) hangs); nothing is
 *            refused or reset. Bytes sent meanwhile sit unread in the
 *            proxy's socket buffers: to the sender, they vanish.
 *   SIGUSR2  reopens: the connections that were cut (open ones and those
 *            left pending) are reset, as a NAT that timed them out would
 *            on their next packet, and new connections flow again.
 *   SIGTERM, SIGINT  exit.
 *
 * Left out: IPv6, more than one target, any protocol knowledge.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF_BYTES 65536
#define BACKLOG   128

/* One direction of a connection: bytes read from src, not yet written to dst. */
struct half {
    char buf[BUF_BYTES];
    size_t len;
    bool eof;  /* src reached end of file */
    bool shut; /* dst was shut down for writing after eof */
};

struct conn {
    int fd[2];          /* 0: the client, 1: the target */
    bool connecting;    /* the connect to the target is in progress */
    struct half dir[2]; /* dir[0]: client to target, dir[1]: target to client */
    bool dead;
};

static int sig_pipe[2] = {-1, -1};
static struct conn **conns;
static size_t nconns, capconns;

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    ssize_t n = write(sig_pipe[1], &b, 1);
    (void)n;
    errno = saved;
}

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Closes fd with a reset (SO_LINGER 0), as a timed-out NAT answers. */
static void close_reset(int fd)
{
    if (fd < 0)
        return;
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(fd);
}

static void conn_free(struct conn *c, bool reset)
{
    for (int i = 0; i < 2; i++) {
        if (reset)
            close_reset(c->fd[i]);
        else if (c->fd[i] >= 0)
            close(c->fd[i]);
    }
    free(c);
}

static struct sockaddr_storage target;
static socklen_t target_len;

static void accept_one(int lfd)
{
    int cfd = accept(lfd, NULL, NULL);
    if (cfd < 0)
        return;
    if (set_nonblock(cfd) != 0) {
        close(cfd);
        return;
    }
    int tfd = socket(target.ss_family, SOCK_STREAM, 0);
    if (tfd < 0 || set_nonblock(tfd) != 0) {
        if (tfd >= 0)
            close(tfd);
        close_reset(cfd);
        return;
    }
    int one = 1;
    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(tfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    bool connecting = false;
    if (connect(tfd, (struct sockaddr *)&target, target_len) != 0) {
        if (errno != EINPROGRESS) {
            close(tfd);
            close_reset(cfd);
            return;
        }
        connecting = true;
    }
    struct conn *c = calloc(1, sizeof *c);
    if (c == NULL || (nconns == capconns && capconns > SIZE_MAX / 2 / sizeof *conns)) {
        free(c);
        close(tfd);
        close_reset(cfd);
        return;
    }
    if (nconns == capconns) {
        size_t ncap = capconns ? capconns * 2 : 16;
        struct conn **n = realloc(conns, ncap * sizeof *conns);
        if (n == NULL) {
            free(c);
            close(tfd);
            close_reset(cfd);
            return;
        }
        conns = n;
        capconns = ncap;
    }
    c->fd[0] = cfd;
    c->fd[1] = tfd;
    c->connecting = connecting;
    conns[nconns++] = c;
}

/* Moves bytes in direction d of c as far as the sockets allow. */
static void pump(struct conn *c, int d)
{
    struct half *h = &c->dir[d];
    int src = c->fd[d], dst = c->fd[1 - d];
    if (!h->eof && h->len < sizeof h->buf) {
        ssize_t n = read(src, h->buf + h->len, sizeof h->buf - h->len);
        if (n > 0)
            h->len += (size_t)n;
        else if (n == 0)
            h->eof = true;
        else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            c->dead = true;
    }
    if (h->len > 0) {
        ssize_t n = send(dst, h->buf, h->len, MSG_NOSIGNAL);
        if (n > 0) {
            memmove(h->buf, h->buf + n, h->len - (size_t)n);
            h->len -= (size_t)n;
        } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            c->dead = true;
        }
    }
    if (h->eof && h->len == 0 && !h->shut) {
        shutdown(dst, SHUT_WR);
        h->shut = true;
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: silentproxy LISTEN_PORT TARGET_HOST TARGET_PORT\n");
        return 2;
    }
    char *end;
    errno = 0;
    unsigned long lport = strtoul(argv[1], &end, 10);
    if (errno != 0 || *end != '\0' || lport > 65535) {
        fprintf(stderr, "silentproxy: bad port '%s'\n", argv[1]);
        return 2;
    }
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
    int gai = getaddrinfo(argv[2], argv[3], &hints, &ai);
    if (gai != 0) {
        fprintf(stderr, "silentproxy: %s:%s: %s\n", argv[2], argv[3], gai_strerror(gai));
        return 2;
    }
    memcpy(&target, ai->ai_addr, ai->ai_addrlen);
    target_len = ai->ai_addrlen;
    freeaddrinfo(ai);

    if (pipe(sig_pipe) != 0 || set_nonblock(sig_pipe[0]) != 0 || set_nonblock(sig_pipe[1]) != 0) {
        perror("silentproxy: pipe");
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)lport)};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(lfd, (struct sockaddr *)&sin, sizeof sin) != 0 || listen(lfd, BACKLOG) != 0 ||
        set_nonblock(lfd) != 0) {
        fprintf(stderr, "silentproxy: cannot listen on 127.0.0.1:%lu: %s\n", lport,
                strerror(errno));
        return 1;
    }
    socklen_t slen = sizeof sin;
    getsockname(lfd, (struct sockaddr *)&sin, &slen);
    printf("ready %u\n", (unsigned)ntohs(sin.sin_port));
    fflush(stdout);

    bool silent = false;
    struct pollfd *pfds = NULL;
    size_t cappfds = 0;
    for (;;) {
        size_t want = 2 + 2 * nconns;
        if (want > cappfds) {
            struct pollfd *n = realloc(pfds, want * sizeof *pfds);
            if (n == NULL) {
                fprintf(stderr, "silentproxy: out of memory\n");
                return 1;
            }
            pfds = n;
            cappfds = want;
        }
        pfds[0] = (struct pollfd){.fd = sig_pipe[0], .events = POLLIN};
        /* Silent: the listener is not polled (connections wait in its queue). */
        pfds[1] = (struct pollfd){.fd = silent ? -1 : lfd, .events = POLLIN};
        for (size_t i = 0; i < nconns; i++) {
            struct conn *c = conns[i];
            for (int s = 0; s < 2; s++) {
                short ev = 0;
                if (c->connecting) {
                    if (s == 1)
                        ev = POLLOUT;
                } else {
                    /* fd s reads for direction s and writes for direction 1 - s. */
                    if (!c->dir[s].eof && c->dir[s].len < BUF_BYTES)
                        ev |= POLLIN;
                    if (c->dir[1 - s].len > 0)
                        ev |= POLLOUT;
                }
                /* Silent: nothing is polled, so nothing is read or written;
                 * a negative fd makes poll skip the entry. */
                pfds[2 + 2 * i + (size_t)s] =
                    (struct pollfd){.fd = silent || ev == 0 ? -1 : c->fd[s], .events = ev};
            }
        }
        int n = poll(pfds, (nfds_t)want, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            perror("silentproxy: poll");
            return 1;
        }
        if (pfds[0].revents & POLLIN) {
            unsigned char sigs[64];
            ssize_t k = read(sig_pipe[0], sigs, sizeof sigs);
            for (ssize_t j = 0; j < k; j++) {
                if (sigs[j] == SIGTERM || sigs[j] == SIGINT)
                    return 0;
                if (sigs[j] == SIGUSR1 && !silent) {
                    silent = true;
                    /* The smallest accept queue: one connection waits in it,
                     * the SYNs of the next are dropped (connect hangs). */
                    listen(lfd, 0);
                    fprintf(stderr, "silentproxy: silent (%zu connections held)\n", nconns);
                } else if (sigs[j] == SIGUSR2 && silent) {
                    silent = false;
                    size_t cut = nconns, pending = 0;
                    for (size_t i = 0; i < nconns; i++)
                        conn_free(conns[i], true);
                    nconns = 0;
                    for (;;) {
                        int fd = accept(lfd, NULL, NULL);
                        if (fd < 0)
                            break;
                        close_reset(fd);
                        pending++;
                    }
                    listen(lfd, BACKLOG);
                    fprintf(stderr, "silentproxy: open again (%zu cut, %zu pending reset)\n", cut,
                            pending);
                }
            }
            /* The poll entries no longer match the connections: poll again. */
            continue;
        }
        for (size_t i = 0; i < nconns; i++) {
            struct conn *c = conns[i];
            short r0 = pfds[2 + 2 * i].revents, r1 = pfds[3 + 2 * i].revents;
            if (c->connecting) {
                if (r1 == 0)
                    continue;
                int err = 0;
                socklen_t elen = sizeof err;
                if (getsockopt(c->fd[1], SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err != 0) {
                    /* The target refused: the client sees a reset, as it would
                     * connecting to the target itself. */
                    c->dead = true;
                    continue;
                }
                c->connecting = false;
                continue;
            }
            if (r0 == 0 && r1 == 0)
                continue;
            pump(c, 0);
            pump(c, 1);
            if ((r0 | r1) & POLLNVAL)
                c->dead = true;
            if (c->dir[0].shut && c->dir[1].shut)
                c->dead = true;
        }
        if (pfds[1].revents & POLLIN)
            accept_one(lfd);
        size_t w = 0;
        for (size_t i = 0; i < nconns; i++) {
            if (conns[i]->dead) {
                bool clean = conns[i]->dir[0].shut && conns[i]->dir[1].shut;
                conn_free(conns[i], !clean);
            } else {
                conns[w++] = conns[i];
            }
        }
        nconns = w;
    }
}
