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
 * (a signed 64-bit count, so clocks end in 2262; idm_gen_set_clock_shift_us mints past it) and
 * returns IDM_OK or an IDM_E* code (IDM_ECLOCK).
 * sleep_ns blocks for about ns nanoseconds; generators call it to wait out a small clock rewind or
 * an exhausted sequence, and a fake clock may simply advance itself. Both must be safe to call from
 * any thread that uses the generator. */
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

/* An allocator pair (realloc-free). alloc returns a pointer to size bytes
 * that must be aligned to align, or NULL when out of memory. align is a
 * power of two: the alignment of the object to be placed there, which for
 * generators is 64 (cache-line aligned members), more than malloc
 * promises. A non-NULL pointer that is not aligned to align is handed back
 * to free at once and the call fails as out of memory (IDM_ENOMEM). free
 * releases a pointer alloc returned (never NULL). Both are called only from
 * the _new and _free calls. Zeroed means posix_memalign/free. */
typedef struct idm_allocator {
    void *(*alloc)(void *ctx, size_t size, size_t align);
    void (*free)(void *ctx, void *ptr);
    void *ctx;
} idm_allocator;

/* Flags of idm_gen_config. */
enum {
    /* The generator is used by one thread at a time: no atomic operations,
     * no locks. Threads that each own such a generator still never mint the
     * same ID (the random bits see to it), but each generator's order is its
     * own. Not allowed with state_path. */
    IDM_GEN_UNSHARED = 1u << 0
};

/* Generator configuration. Zero-initialise it, then set what you need:
 * a zeroed member selects the OS default. flags: IDM_GEN_* or 0.
 *
 * ABI: idm_gen_config, idm_snowflake_config and idm_allocator (with the
 * idm_clock and idm_entropy structs they embed) are frozen from this
 * version on: no member is ever added, removed, reordered or retyped, so a
 * program built against an older header passes structs of the size and
 * layout the library expects. New settings arrive as setter functions on
 * the handle (for example a ceiling setter on idm_snowflake), called after
 * _new, never as new members of these structs.
 *
 * state_path (host-wide generators): when not NULL, the generator keeps its
 * monotonic state in a small file mapped shared at that path (created with
 * mode 0600 if missing, its blocks allocated at once), so that every
 * process and thread on the host that opens the same path mints one
 * strictly increasing sequence per format (and, for snowflakes, shares one
 * node without duplicates). The state is advanced only by atomic
 * compare-and-swap, never under a lock, so a process killed at any instant
 * leaves it consistent. A file made for another kind of generator (another
 * snowflake layout or node, or another file version) is refused with
 * IDM_ESTATE and a message saying what it holds; so are, with a message
 * naming the problem and the path, a symbolic link (the file is opened
 * with O_NOFOLLOW), anything but a regular file, a file owned by another
 * uid than the effective one, and a file its group or others may write. A
 * full filesystem is IDM_ESTATE at _new. The generator keeps the file open
 * (one descriptor, close-on-exec) until _free, and a file truncated under
 * it makes minting calls fail with IDM_ESTATE instead of raising SIGBUS
 * (from the first call of a later clock millisecond: the size is checked
 * once per millisecond, not per call; a call in the same millisecond as
 * the truncation can still fault).
 * Put the file in a directory only this user can write ($XDG_RUNTIME_DIR,
 * or a service's own directory such as /var/lib/NAME with mode 0700), not
 * /dev/shm or /tmp, where any user can replace or remove it. */
typedef struct idm_gen_config {
    idm_clock clock;
    idm_entropy entropy;
    idm_allocator allocator;
    uint32_t flags;
    const char *state_path;
} idm_gen_config;

typedef struct idm_gen idm_gen;

/* The OS clock (CLOCK_REALTIME, nanosleep) and the OS-seeded CSPRNG, as
 * values, for wrappers that want to delegate to them.
 * Thread-safe: yes (pure functions). */
IDM_API idm_clock idm_clock_system(void);
IDM_API idm_entropy idm_entropy_system(void);

/* Creates a generator. cfg may be NULL (all defaults). On success *out owns
 * a generator to release with idm_gen_free. Returns IDM_OK, IDM_EINVAL
 * (unknown flags, a clock with now_ns but no sleep_ns, UNSHARED with a
 * state_path), IDM_ENOMEM, IDM_ESTATE (the state file cannot be opened,
 * created or mapped, or holds another kind of state).
 * Thread-safe: yes (creates a new object). */
IDM_API IDM_NODISCARD int idm_gen_new(idm_gen **out, const idm_gen_config *cfg, idm_error *err);

/* Releases a generator and wipes its buffered random bytes. NULL is a no-op.
 * Thread-safe: no (no other call may use g concurrently). */
IDM_API void idm_gen_free(idm_gen *g);

/* Fills buf with len random bytes from the generator's buffered CSPRNG
 * stream (the bytes the formats are made of). Returns IDM_OK or
 * IDM_ENOENTROPY.
 * Thread-safe: yes (the generator may be shared), unless it was made
 * IDM_GEN_UNSHARED. */
IDM_API IDM_NODISCARD int idm_gen_random(idm_gen *g, void *buf, size_t len, idm_error *err);

/* The formats, numbered for good (format.h's table describes each).
 * idm_gen_next_text_n takes the first four; format.h's calls take all. */
enum {
    IDM_FORMAT_UUIDV4 = 1,
    IDM_FORMAT_UUIDV7 = 2,
    IDM_FORMAT_ULID = 3,
    IDM_FORMAT_KSUID = 4,
    IDM_FORMAT_SNOWFLAKE = 5,
    IDM_FORMAT_TYPEID = 6,
    IDM_FORMAT_TOKEN = 7,
    IDM_FORMAT_TRACEPARENT = 8
};

/* Flags of the *_next_text_n calls. */
enum {
    IDM_TEXT_NEWLINE = 1u << 0 /* follow every ID with '\n' */
};

/* Mints n IDs of format (IDM_FORMAT_UUIDV4 to IDM_FORMAT_KSUID; the other
 * formats are idm_format_next_text_n's, format.h: IDM_EINVAL here)
 * straight into text at dst: the canonical forms
 * (lowercase UUID, uppercase ULID, KSUID), each followed by a newline when
 * flags has IDM_TEXT_NEWLINE; no NUL. *len receives the bytes written. The
 * IDs are the same as n single calls would give (one clock read, as in the
 * binary bulk calls). IDM_ENOSPC, before minting anything, when cap is
 * less than n times the length of one. Thread-safe: as the generator. */
IDM_API IDM_NODISCARD int idm_gen_next_text_n(idm_gen *g, int format, char *dst, size_t cap,
                                              size_t n, uint32_t flags, size_t *len,
                                              idm_error *err);

/* Sets the ceiling for the time-ordered formats (UUIDv7 and the TypeIDs
 * built on it, ULID, KSUID): from the moment this returns, no ID with a
 * timestamp later than ceiling_unix_ms (Unix ms; a KSUID's second counts
 * from its start) is minted. A call that would need one fails with
 * IDM_ECEILING and hands out none of its IDs (idm_gen_next_text_n keeps
 * the chunks written before; the values skipped are never reused). The
 * owner sets it to what it can promise - a durable time high-water mark -
 * and raises it while other threads mint. INT64_MAX (the default) means
 * none. UUIDv4, tokens and traceparent are not affected. Not stored in a
 * host-wide state file. Thread-safe: yes (the generator may be shared). */
IDM_API void idm_gen_set_ceiling(idm_gen *g, int64_t ceiling_unix_ms);

/* Shifts the time the time-ordered formats (UUIDv7 and the TypeIDs built
 * on it, ULID, KSUID) are minted at by shift_us microseconds: from the
 * next call on, a call's time is floor((floor(now_ns / 1000) + shift_us) /
 * 1000) Unix ms, where now_ns is the clock's reading. In microseconds
 * because the clock's nanoseconds end in 2262 while a UUIDv7 or ULID runs
 * to the year 10889: the shifted time may lie anywhere in the format's
 * range (a call whose shifted time falls before 1970 or past the format's
 * range fails with IDM_ETIME_RANGE). PostgreSQL 18's uuidv7(interval) is
 * this (its times are microseconds too). The monotonic states are not
 * touched: IDs keep increasing while the shift stays the same, and a
 * smaller shift after a larger one continues from where the larger left
 * (make a generator per shift to start afresh). The ceiling, the high-
 * water mark and idm_*_observe's max_offset_ms compare shifted times. 0
 * (the default) is the clock itself. Snowflakes and UUIDv4 are not
 * affected. Thread-safe: no (set it before the generator is shared). */
IDM_API void idm_gen_set_clock_shift_us(idm_gen *g, int64_t shift_us);

/* The ceiling in force (INT64_MAX when none). Thread-safe: yes. */
IDM_API int64_t idm_gen_ceiling(const idm_gen *g);

/* A ceiling handler (idm_gen_set_ceiling_handler, and the snowflake's and
 * HLC's): called by a blocking minting call that reached the ceiling,
 * with the ceiling it saw (Unix ms). It returns IDM_OK once it has raised
 * the ceiling above that (the call then tries again and goes on), or an
 * error code with err filled, which the call returns. It must not return
 * IDM_OK without raising the ceiling. mark.h's idm_mark installs one that
 * makes the next reserve durable. */
typedef int (*idm_ceiling_fn)(void *ctx, int64_t ceiling_unix_ms, idm_error *err);

/* Installs (fn non-NULL) or removes the ceiling handler of the
 * time-ordered formats. Without one, a call at the ceiling fails with
 * IDM_ECEILING. Thread-safe: no (set it before the generator is shared). */
IDM_API void idm_gen_set_ceiling_handler(idm_gen *g, idm_ceiling_fn fn, void *ctx);

/* The latest timestamp of any time-ordered ID the generator's states have
 * reached (UUIDv7, ULID, KSUID - a KSUID's second counts from its start),
 * in Unix ms, or 0 before any (or when a host-wide state file has become
 * unusable): what an owner persists as its high-water
 * mark and passes back to idm_gen_resume_after. Thread-safe: yes. */
IDM_API int64_t idm_gen_high_water_ms(idm_gen *g);

/* Resumes above a time: every time-ordered ID minted afterwards has a
 * later timestamp than after_unix_ms (UUIDv7 and ULID the next
 * millisecond, KSUID the next second), however the clock reads, so that a
 * process restarting after one whose IDs all had times up to after_unix_ms
 * (its durable high-water mark) keeps their order. Never moves a state
 * back. IDM_EINVAL for a time outside 0 .. 2^48 - 1.
 * Thread-safe: yes (the generator may be shared). */
IDM_API IDM_NODISCARD int idm_gen_resume_after(idm_gen *g, int64_t after_unix_ms, idm_error *err);

IDM_END_DECLS

#endif
