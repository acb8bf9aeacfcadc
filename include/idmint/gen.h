/*
 * idmint/gen.h - generator handles, and the clock, randomness and memory
 * they run on.
 *
 * An idm_gen mints the random and time-ordered 128/160-bit formats (UUIDv4,
 * UUIDv7, ULID, KSUID, and everything built on them: TypeID, tokens,
 * traceparent). Each time-ordered format keeps its own monotonic state in
 * the generator, so every ID a generator returns for a format is strictly
 * greater than the one before it, across calls and across threads.
 * Snowflakes have their own handle (snowflake.h), because they need a
 * layout and a node number.
 *
 * Time and randomness come through function pointers with a user pointer
 * (idm_clock, idm_entropy) so that tests, embedders and later components
 * (hybrid logical clocks, leases) can supply their own. Zeroed members mean
 * the operating system's: CLOCK_REALTIME, and OpenSSL's DRBG (seeded from
 * the OS CSPRNG, reseeded after fork) read 4 KiB at a time.
 *
 * fork(): a generator notices that it runs in a child process (through a
 * pthread_atfork generation counter, read with one plain load per call, not
 * a getpid() system call) and throws away its buffered random bytes, so the
 * child never repeats the parent's random stream. ULID and KSUID, whose
 * monotonic mode increments the previous value, also draw a fresh random
 * part and move one tick ahead in the child. Snowflake generators refuse
 * to mint in a child (IDM_EFORKED): parent and child would share a node.
 */
#ifndef IDMINT_GEN_H
#define IDMINT_GEN_H

#include "common.h"
#include "error.h"

IDM_BEGIN_DECLS

/* A source of Unix time. now_ns writes nanoseconds since 1970-01-01T00:00Z
 * (a signed 64-bit count, so clocks end in 2262) and returns IDM_OK or an IDM_E* code (IDM_ECLOCK). sleep_ns blocks for
 * about ns nanoseconds; generators call it to wait out a small clock rewind
 * or an exhausted sequence, and a fake clock may simply advance itself.
 * Both must be safe to call from any thread that uses the generator. */
typedef struct idm_clock {
    int (*now_ns)(void *ctx, int64_t *unix_ns);
    void (*sleep_ns)(void *ctx, int64_t ns);
    void *ctx;
} idm_clock;

/* A source of cryptographically secure random bytes. fill must fill all
 * len bytes and return IDM_OK, or return an IDM_E* code
 * (IDM_ENOENTROPY). Generators call it with len up to IDM_ENTROPY_POOL_BYTES. */
typedef struct idm_entropy {
    int (*fill)(void *ctx, void *buf, size_t len);
    void *ctx;
} idm_entropy;

#define IDM_ENTROPY_POOL_BYTES 4096

/* An allocator pair (realloc-free). Zeroed means malloc/free. */
typedef struct idm_allocator {
    void *(*alloc)(void *ctx, size_t size);
    void (*free)(void *ctx, void *ptr);
    void *ctx;
} idm_allocator;

/* Generator configuration. Zero-initialise it, then set what you need:
 * a zeroed member selects the OS default. flags must be 0. */
typedef struct idm_gen_config {
    idm_clock clock;
    idm_entropy entropy;
    idm_allocator allocator;
    uint32_t flags;
} idm_gen_config;

typedef struct idm_gen idm_gen;

/* The OS clock (CLOCK_REALTIME, nanosleep) and the OS-seeded CSPRNG, as
 * values, for wrappers that want to delegate to them.
 * Thread-safe: yes (pure functions). */
IDM_API idm_clock idm_clock_system(void);
IDM_API idm_entropy idm_entropy_system(void);

/* Creates a generator. cfg may be NULL (all defaults). On success *out owns
 * a generator to release with idm_gen_free. Returns IDM_OK, IDM_EINVAL
 * (flags not 0, a clock with now_ns but no sleep_ns), IDM_ENOMEM.
 * Thread-safe: yes (creates a new object). */
IDM_API IDM_NODISCARD int idm_gen_new(idm_gen **out, const idm_gen_config *cfg, idm_error *err);

/* Releases a generator and wipes its buffered random bytes. NULL is a no-op.
 * Thread-safe: no (no other call may use g concurrently). */
IDM_API void idm_gen_free(idm_gen *g);

/* Fills buf with len random bytes from the generator's buffered CSPRNG
 * stream (the bytes the formats are made of). Returns IDM_OK or
 * IDM_ENOENTROPY. Thread-safe: yes (the generator may be shared). */
IDM_API IDM_NODISCARD int idm_gen_random(idm_gen *g, void *buf, size_t len, idm_error *err);

IDM_END_DECLS

#endif
