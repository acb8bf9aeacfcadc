/*
 * internal.h - declarations shared across libidmint's components.
 * Not installed, not API: names here are idm__ (libuv's uv__ convention).
 */
#ifndef IDM_INTERNAL_H
#define IDM_INTERNAL_H

#include <idmint/idmint.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#if defined(__GNUC__)
#define IDM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define IDM_LIKELY(x) __builtin_expect(!!(x), 1)
#define IDM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define IDM_PRINTF(a, b)
#define IDM_LIKELY(x) (x)
#define IDM_UNLIKELY(x) (x)
#endif

/* ---- errors (src/error.c) ------------------------------------------------ */

/* Fills err (if not NULL) with code, offset and a formatted reason, and
 * returns code, so that callers can write `return idm__fail(...)`. */
int idm__fail(idm_error *err, int code, size_t offset, const char *fmt, ...) IDM_PRINTF(4, 5);

/* ---- codecs (src/codec) -------------------------------------------------- */

/* Lowercase hex of n bytes into dst[0..2n-1]; no NUL. */
void idm__hex_encode(const uint8_t *src, size_t n, char *dst);
/* The value of a hex digit (either case), or -1. */
int idm__hex_value(unsigned char c);

/* Crockford base32 of 128 bits as 26 characters (2 zero pad bits on top),
 * upper or lower case; no NUL. */
void idm__base32_encode128(const uint8_t src[16], char dst[26], bool lowercase);
/* Decodes 26 Crockford base32 characters (case-insensitive unless
 * lowercase_only) into 128 bits. Returns IDM_OK or IDM_EPARSE via err with
 * the offset of the bad character, or offset 0 and an "exceeds 128 bits"
 * reason when the first character is above 7. what names the format in
 * messages ("ULID", "TypeID suffix"). */
int idm__base32_decode128(const char src[26], uint8_t dst[16], bool lowercase_only, const char *what,
                          idm_error *err);

/* Base62 (0-9A-Za-z) of an n-byte big-endian number into exactly out_len
 * characters, zero-padded on the left; no NUL. out_len must be enough. */
void idm__base62_encode(const uint8_t *src, size_t n, char *dst, size_t out_len);
/* Decodes len base62 characters into an n-byte big-endian number. Returns
 * IDM_OK, or IDM_EPARSE via err (bad character with its offset, or a value
 * that does not fit in n bytes). what names the format in messages. */
int idm__base62_decode(const char *src, size_t len, uint8_t *dst, size_t n, const char *what,
                       idm_error *err);

/* Big-endian helpers. */
static inline void idm__put_be48(uint8_t *p, uint64_t v)
{
    for (int i = 5; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}
static inline uint64_t idm__get_be48(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 6; i++)
        v = v << 8 | p[i];
    return v;
}
static inline void idm__put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static inline uint32_t idm__get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t idm__get_be64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return __builtin_bswap64(v);
#else
    const uint8_t *b = p;
    v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | b[i];
    return v;
#endif
}
static inline void idm__put_be64(uint8_t *p, uint64_t v)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
    memcpy(p, &v, 8);
#else
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
#endif
}

/* Adds one to an n-byte big-endian number; returns true on overflow (the
 * number wrapped to zero). */
static inline bool idm__increment_be(uint8_t *p, size_t n)
{
    for (size_t i = n; i-- > 0;) {
        if (++p[i] != 0)
            return false;
    }
    return true;
}

/* ---- OS boundary (src/os/linux) ------------------------------------------ */

int idm__os_clock_now_ns(void *ctx, int64_t *unix_ns);
void idm__os_sleep_ns(void *ctx, int64_t ns);
/* Wipes memory in a way the compiler may not elide. */
void idm__wipe(void *p, size_t n);
/* Registers (once per process) the pthread_atfork handler behind
 * idm__fork_generation. IDM_OK or IDM_ENOMEM. Every generator's _new calls
 * it before reading the generation. */
int idm__fork_watch(void);
/* A counter that increases in every child process after fork(); one
 * relaxed load. */
uint64_t idm__fork_generation(void);
extern _Atomic uint64_t idm__fork_generation_counter;

/* ---- generator core (src/gen) -------------------------------------------- */

/* What every generator runs on: a resolved clock, entropy and allocator. */
struct idm_env {
    idm_clock clock;
    idm_entropy entropy;
    idm_allocator allocator;
};

/* Resolves defaults and validates cfg (which may be NULL). */
int idm__env_init(struct idm_env *env, const idm_gen_config *cfg, idm_error *err);
void *idm__env_alloc(const struct idm_env *env, size_t size);
void idm__env_free(const struct idm_env *env, void *p);

/* Reads the clock as Unix milliseconds (floor) or nanoseconds. IDM_ECLOCK
 * on failure, IDM_ETIME_RANGE before 1970. */
int idm__env_now_ms(const struct idm_env *env, int64_t *unix_ms, idm_error *err);
int idm__env_now_ns(const struct idm_env *env, int64_t *unix_ns, idm_error *err);

/* A buffer of random bytes refilled IDM_ENTROPY_POOL_BYTES at a time.
 * pos == IDM_ENTROPY_POOL_BYTES means empty. Wiped when discarded. */
struct idm_pool {
    size_t pos;
    uint8_t bytes[IDM_ENTROPY_POOL_BYTES];
};

void idm__pool_init(struct idm_pool *pool);
void idm__pool_discard(struct idm_pool *pool);
/* Copies n random bytes into dst, consuming them; refills from src as
 * needed. wipe: zero the consumed pool bytes at once (for secrets; other
 * consumed bytes are overwritten at the next refill or wiped on discard). */
int idm__pool_take(struct idm_pool *pool, const idm_entropy *src, void *dst, size_t n, bool wipe,
                   idm_error *err);

/* ---- randomness for generators (src/gen/randsrc.c) ---------------------
 *
 * Generators on the system entropy draw from a pool that belongs to the
 * calling thread (no lock, no atomics; discarded in a forked child).
 * Generators with an injected entropy source keep their own pool, under a
 * mutex unless the generator is unshared. */
struct idm_randsrc {
    idm_entropy entropy;
    bool thread_pool; /* system entropy: use the calling thread's pool */
    bool unshared;    /* own pool without a lock */
    uint64_t fork_gen;
    pthread_mutex_t lock;
    struct idm_pool *pool; /* only for an injected source */
    idm_allocator allocator;
};

int idm__randsrc_init(struct idm_randsrc *r, const struct idm_env *env, bool unshared, idm_error *err);
void idm__randsrc_destroy(struct idm_randsrc *r);
int idm__randsrc_take_slow(struct idm_randsrc *r, void *dst, size_t n, bool wipe, idm_error *err);

/* The calling thread's pool (randsrc.c). */
struct idm_thread_pool {
    uint64_t fork_gen;
    bool ready;
    struct idm_pool pool;
};
extern _Thread_local struct idm_thread_pool idm__thread_pool;

/* n random bytes into dst, any n. IDM_ENOENTROPY. The common case - the
 * thread's pool, filled in this process, holding n bytes - is inline. */
static inline int idm__randsrc_take(struct idm_randsrc *r, void *dst, size_t n, idm_error *err)
{
    struct idm_thread_pool *tp = &idm__thread_pool;
    if (IDM_LIKELY(r->thread_pool && tp->ready && n <= IDM_ENTROPY_POOL_BYTES - tp->pool.pos &&
                   tp->fork_gen == atomic_load_explicit(&idm__fork_generation_counter,
                                                        memory_order_relaxed))) {
        memcpy(dst, tp->pool.bytes + tp->pool.pos, n);
        tp->pool.pos += n;
        return IDM_OK;
    }
    return idm__randsrc_take_slow(r, dst, n, false, err);
}

/* The same for secrets: the consumed pool bytes are wiped at once. */
static inline int idm__randsrc_take_secret(struct idm_randsrc *r, void *dst, size_t n, idm_error *err)
{
    return idm__randsrc_take_slow(r, dst, n, true, err);
}

/* ---- host-wide state files (src/gen/statefile.c, src/os/linux/) ---------- */

#define IDM_STATE_MAGIC "IDMSTATE"
#define IDM_STATE_VERSION 1u
enum { IDM_STATE_KIND_GEN = 1, IDM_STATE_KIND_SNOWFLAKE = 2 };

/* The first 256 bytes of every state file. What it holds is fixed at
 * creation; a process whose generator would need another kind, layout or
 * node is refused (IDM_ESTATE). */
struct idm_state_header {
    char magic[8];     /* IDM_STATE_MAGIC, written last at creation */
    uint32_t version;  /* IDM_STATE_VERSION */
    uint32_t kind;     /* IDM_STATE_KIND_* */
    uint64_t node;     /* snowflake: the node */
    uint64_t size;     /* total file size */
    char layout[IDM_SF_SPEC_CAP]; /* snowflake: canonical layout spec */
    uint8_t reserved[256 - 8 - 4 - 4 - 8 - 8 - IDM_SF_SPEC_CAP];
};

/* A mapped state file. */
struct idm_state_map {
    void *base;
    size_t size;
};

/* Opens or creates path, holding an flock only while it creates or checks
 * the header (the kernel drops it if the process dies), and maps it shared.
 * want describes the header expected; size the whole file. */
int idm__state_open(const char *path, const struct idm_state_header *want, struct idm_state_map *map,
                    idm_error *err);
void idm__state_close(struct idm_state_map *map);

/* OS part: open-or-create + exclusive flock; size check/extend; mmap. */
int idm__os_state_open(const char *path, int *fd, uint64_t *size, idm_error *err);
int idm__os_state_extend(int fd, uint64_t size, idm_error *err);
int idm__os_state_map(int fd, size_t size, void **base, idm_error *err);
void idm__os_state_unlock_close(int fd);
void idm__os_state_unmap(void *base, size_t size);

/* ---- 128-bit atomics (compare-and-swap on a 16-byte aligned word) ------- */

__extension__ typedef unsigned __int128 idm_u128;

static inline idm_u128 idm__cas128(idm_u128 *p, idm_u128 expected, idm_u128 desired)
{
    /* With -mcx16 (x86-64) this is an inline lock cmpxchg16b: lock-free and
     * address-based, so it also works across processes on shared memory. */
    return __sync_val_compare_and_swap(p, expected, desired);
}

/* ---- the idm_gen handle -------------------------------------------------- */

/* Monotonic states, each on its own cache line. They live inside the
 * generator, or in a mapped state file for host-wide generators (so only
 * fixed-width, pointer-free fields).
 *   v7:    unix_ms << 16 | counter (RFC 9562 Method 1), 0 = none yet
 *   ulid:  the last ULID as a 128-bit number, 0 = none yet
 *   ksuid: the first 128 bits of the last KSUID (seconds << 96 | the
 *          payload's counting 96 bits), 0 = none yet */
struct idm_gen_states {
    _Alignas(64) _Atomic uint64_t v7;
    _Alignas(64) idm_u128 ulid;
    _Alignas(64) idm_u128 ksuid;
};

struct idm_gen {
    struct idm_env env;
    struct idm_randsrc rand;
    bool unshared;
    struct idm_gen_states *states; /* -> own_states or into the state file */
    struct idm_state_map map;      /* host-wide only */
    /* fork(): fork_seen is the generation this generator has adapted to;
     * fork_done is set when that adaptation is complete. */
    _Atomic uint64_t fork_seen;
    _Atomic uint64_t fork_done;
    struct idm_gen_states own_states;
};

/* Call at the start of every minting call: adapts a generator inherited
 * across fork() (process-local ULID/KSUID states jump one tick ahead with a
 * fresh random part, so the child never increments into the parent's next
 * IDs). One relaxed load when nothing happened. */
int idm__gen_after_fork(idm_gen *g, idm_error *err);
static inline int idm__gen_enter(idm_gen *g, idm_error *err)
{
    if (IDM_LIKELY(atomic_load_explicit(&g->fork_done, memory_order_relaxed) ==
                   atomic_load_explicit(&idm__fork_generation_counter, memory_order_relaxed)))
        return IDM_OK;
    return idm__gen_after_fork(g, err);
}

/* The start of every time-ordered minting call: checks the arguments,
 * adapts after fork, and reads the clock once (only when n > 0). */
int idm__gen_begin(idm_gen *g, const void *out, size_t n, int64_t *now_ms, idm_error *err);

/* len (<= 16) random bytes as a big-endian number. */
int idm__gen_random_number(idm_gen *g, size_t len, idm_u128 *out, idm_error *err);

/* Reserves n consecutive values of a 128-bit monotonic state: the first is
 * max(previous + 1, fresh), where fresh = now_tick << rand_bits | random
 * (rand_bits of randomness given in fresh_rand); a carry out of the random
 * part moves to the next tick with the fresh random part. *first receives
 * the first value. IDM_ETIME_RANGE (naming what) past max_tick. */
int idm__reserve128(idm_gen *g, idm_u128 *state, size_t n, uint64_t now_tick, unsigned rand_bits,
                    idm_u128 fresh_rand, uint64_t max_tick, const char *what, idm_u128 *first,
                    idm_error *err);

#endif
