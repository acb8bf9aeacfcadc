/*
 * timecmd: runs a command with its stdout sent to a file (normally
 * /dev/null) and prints "ELAPSED_NS MAXRSS_KIB" on stdout: the wall time
 * from just before fork to the child's exit on CLOCK_MONOTONIC, and the
 * child's peak resident set size from wait4(2).
 *
 *   timecmd OUTFILE PROG [ARG...]
 *
 * Exit status: 0 if the command exited 0; 1 if it failed (its status is
 * reported on stderr); 2 on a usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: timecmd OUTFILE PROG [ARG...]\n");
        return 2;
    }
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "timecmd: %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    long long t0 = now_ns();
    pid_t pid = fork();
    if (pid < 0) {
        perror("timecmd: fork");
        return 1;
    }
    if (pid == 0) {
        if (dup2(fd, STDOUT_FILENO) < 0) {
            _exit(127);
        }
        execvp(argv[2], argv + 2);
        fprintf(stderr, "timecmd: %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("timecmd: wait4");
            return 1;
        }
    }
    long long t1 = now_ns();
    close(fd);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFSIGNALED(status)) {
            fprintf(stderr, "timecmd: %s killed by signal %d\n", argv[2], WTERMSIG(status));
        } else {
            fprintf(stderr, "timecmd: %s exited %d\n", argv[2], WEXITSTATUS(status));
        }
        return 1;
    }
    printf("%lld %ld\n", t1 - t0, ru.ru_maxrss);
    return 0;
}
