/*
 * fuzz/replay.c - a main() for the libFuzzer harnesses in builds without
 * libFuzzer: feeds every regular file under the given directories (or the
 * given files) to LLVMFuzzerTestOneInput, once each, in name order, and
 * prints how many it ran. Past crashes kept in fuzz/corpus/<target>/ are
 * thus replayed by every ctest run (SQLite's fuzzcheck does the same).
 *
 * A directory with no files (or a missing one) is not an error: it says
 * so and passes. A file that cannot be read is an error (exit 1). A harness
 * that finds a bug aborts, which fails the test.
 *
 * Left out: libFuzzer's options, mutation, and LLVMFuzzerInitialize (no
 * harness uses it).
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Named limit: corpus entries are small; anything larger is a mistake. */
#define REPLAY_MAX_FILE_BYTES (16u * 1024u * 1024u)
#define REPLAY_MAX_DEPTH      8

static size_t ran;
static int failed;

static void run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        failed = 1;
        return;
    }
    size_t cap = 4096;
    size_t len = 0;
    uint8_t *buf = malloc(cap);
    if (buf == NULL) {
        fprintf(stderr, "replay: out of memory\n");
        exit(1);
    }
    for (;;) {
        if (len == cap) {
            if (cap >= REPLAY_MAX_FILE_BYTES) {
                fprintf(stderr, "replay: %s: larger than %u bytes\n", path, REPLAY_MAX_FILE_BYTES);
                failed = 1;
                free(buf);
                fclose(f);
                return;
            }
            uint8_t *grown = realloc(buf, cap * 2);
            if (grown == NULL) {
                fprintf(stderr, "replay: out of memory\n");
                exit(1);
            }
            buf = grown;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            break;
        }
    }
    int read_error = ferror(f);
    fclose(f);
    if (read_error) {
        fprintf(stderr, "replay: %s: read error\n", path);
        failed = 1;
        free(buf);
        return;
    }
    (void)LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    ran++;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void run_path(const char *path, int depth);

static void run_dir(const char *path, int depth)
{
    DIR *d = opendir(path);
    if (d == NULL) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        failed = 1;
        return;
    }
    char **names = NULL;
    size_t n = 0;
    size_t cap = 0;
    struct dirent *e;
    for (;;) {
        e = readdir(d);
        if (e == NULL) {
            break;
        }
        if (e->d_name[0] == '.') {
            continue; /* ".", ".." and hidden files such as .gitkeep */
        }
        size_t need = strlen(path) + 1 + strlen(e->d_name) + 1;
        char *full = malloc(need);
        if (full == NULL) {
            fprintf(stderr, "replay: out of memory\n");
            exit(1);
        }
        snprintf(full, need, "%s/%s", path, e->d_name);
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **grown = realloc(names, cap * sizeof *names);
            if (grown == NULL) {
                fprintf(stderr, "replay: out of memory\n");
                exit(1);
            }
            names = grown;
        }
        names[n++] = full;
    }
    closedir(d);
    if (n > 0) {
        qsort(names, n, sizeof *names, by_name);
    }
    for (size_t i = 0; i < n; i++) {
        run_path(names[i], depth + 1);
        free(names[i]);
    }
    free(names);
}

static void run_path(const char *path, int depth)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        failed = 1;
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        if (depth >= REPLAY_MAX_DEPTH) {
            fprintf(stderr, "replay: %s: nested too deep, skipped\n", path);
            return;
        }
        run_dir(path, depth);
    } else if (S_ISREG(st.st_mode)) {
        run_file(path);
    }
}

int main(int argc, char **argv)
{
    const char *prog = argc > 0 ? argv[0] : "replay";
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR_OR_FILE...\n", prog);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0 && errno == ENOENT) {
            printf("%s: %s does not exist: nothing to replay there\n", prog, argv[i]);
            continue;
        }
        run_path(argv[i], 0);
    }
    if (ran == 0) {
        printf("%s: no inputs found, nothing replayed (add seeds to fuzz/corpus/)\n", prog);
    } else {
        printf("%s: replayed %zu input%s\n", prog, ran, ran == 1 ? "" : "s");
    }
    return failed ? 1 : 0;
}
