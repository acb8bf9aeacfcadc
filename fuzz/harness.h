/*
 * fuzz/harness.h - helpers shared by the fuzz harnesses (fuzz_*.c).
 *
 * Each harness copies libFuzzer's input into a buffer of exactly its size
 * (fuzz_input_new), so that a read past the end is caught: by ASan's
 * redzone in sanitizer builds, and in plain builds (the replay programs)
 * by placing the input against a PROT_NONE guard page, as picohttpparser's
 * test.c does. Properties are checked with FUZZ_CHECK, which prints the
 * failed condition and aborts: libFuzzer then saves the input.
 */
#ifndef IDM_FUZZ_HARNESS_H
#define IDM_FUZZ_HARNESS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <idmint/idmint.h>

#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_HAVE_ASAN 1
#endif
#endif

#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #cond);          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* The input as text: exactly len bytes at text, nothing readable after. */
typedef struct fuzz_input {
    char *text;
    size_t len;
    void *map; /* the mapping, in guard-page mode */
    size_t map_len;
} fuzz_input;

static inline void fuzz_input_new(fuzz_input *in, const uint8_t *data, size_t size)
{
    in->len = size;
    in->map = NULL;
    in->map_len = 0;
#ifdef FUZZ_HAVE_ASAN
    /* ASan's malloc(0) returns a unique pointer with no readable bytes. */
    in->text = malloc(size);
    FUZZ_CHECK(in->text != NULL || size == 0);
    if (size > 0) {
        memcpy(in->text, data, size);
    }
#else
    long page_l = sysconf(_SC_PAGESIZE);
    size_t page = page_l > 0 ? (size_t)page_l : 4096;
    size_t body = (size + page - 1) / page * page;
    in->map_len = body + page;
    in->map = mmap(NULL, in->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    FUZZ_CHECK(in->map != MAP_FAILED);
    FUZZ_CHECK(mprotect((char *)in->map + body, page, PROT_NONE) == 0);
    in->text = (char *)in->map + body - size;
    if (size > 0) {
        memcpy(in->text, data, size);
    }
#endif
}

static inline void fuzz_input_free(fuzz_input *in)
{
    if (in->map != NULL) {
        munmap(in->map, in->map_len);
    } else {
        free(in->text);
    }
    in->text = NULL;
}

/* An error record full of junk, so that a failing call that forgets to
 * fill it (or to NUL-terminate msg) is noticed. */
static inline void fuzz_error_init(idm_error *err)
{
    memset(err, 0xA5, sizeof *err);
}

/* What every failing call promises about its idm_error (error.h): the code
 * is the returned one, msg is NUL-terminated, and a parse error gives a
 * reason and an offset within the input (len: "ended too early"). */
static inline void fuzz_check_error(int rc, const idm_error *err, size_t len)
{
    FUZZ_CHECK(rc != IDM_OK);
    FUZZ_CHECK(err->code == rc);
    FUZZ_CHECK(memchr(err->msg, '\0', sizeof err->msg) != NULL);
    if (rc == IDM_EPARSE) {
        FUZZ_CHECK(err->msg[0] != '\0');
        FUZZ_CHECK(err->offset <= len);
    }
}

static inline int fuzz_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static inline int fuzz_upper(int c)
{
    return c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c;
}

static inline int fuzz_is_hex(int c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

#endif
