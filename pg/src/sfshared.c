/*
 * sfshared.c - snowflake(): one sequence for every backend of the server,
 * held to a durable time high-water mark.
 *
 * Files, in the data directory's pg_idmint/ (made on first use, mode 0700):
 *
 *   snowflake-NODE-HASH.state  libidmint's host-wide state for the node and
 *                              the layout whose canonical spec hashes to
 *                              HASH (FNV-1a): mapped shared by every backend
 *                              that mints for them, advanced only by
 *                              compare-and-swap, so a backend killed at any
 *                              instant leaves it consistent. Equivalent
 *                              layouts (a preset and its spec) share it.
 *   snowflake-NODE-HASH.mark   the durable mark: two 96-byte slots, each
 *                              {magic, sequence, mark in Unix ms, boot id,
 *                              CRC-32C}; a write goes to the older slot and
 *                              is fdatasync'ed, so a torn write leaves the
 *                              other slot valid. The file is also the lock
 *                              (flock) that orders writers.
 *
 * The invariant is idmintd's (server/hwm.h): no snowflake carries a time
 * later than the mark that was on disk when it was minted. Each backend's
 * generator has the mark as its ceiling (idm_snowflake_set_ceiling); one
 * that reaches it takes the lock and adopts a mark another backend wrote
 * since, or writes max(now, latest time used) + pg_idmint.reserve and syncs
 * it - one fdatasync per reserve for the whole server.
 *
 * Where a backend's generator resumes (read under the lock, at creation):
 *   - from the state file itself, when it is known to hold every ID minted:
 *     it existed, and the mark file was written in this boot of the machine
 *     (/proc/sys/kernel/random/boot_id). A crash of the server, a backend
 *     killed, a restart: the mapping's pages live on in the kernel's page
 *     cache, so the state's last compare-and-swap is there.
 *   - from the mark, otherwise: a new state file, or a reboot since (a power
 *     loss may lose the state's last writes, never a synced mark). The
 *     resume moves the shared state above the mark; only then is this boot
 *     recorded in the mark file, so later backends trust the state.
 * A clock behind the resume point (or a clock stepped back) by up to
 * pg_idmint.max_rewind is waited out, interruptibly; by more, snowflake()
 * fails with 55000 saying how far, until the clock has caught up.
 *
 * Never remove pg_idmint/ while the server runs: backends that still map
 * the old state would mint beside a new one.
 */
#include "pg_idmint.h"

#include "miscadmin.h"
#include "common/file_perm.h"
#include "port/pg_crc32c.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR_NAME "pg_idmint"
#define SLOT_BYTES 96
#define BOOT_ID_CAP 40

typedef struct mark_slot {
    char magic[8]; /* "IDMPGMK1" */
    uint64 seq;
    int64 mark_ms;
    char boot[BOOT_ID_CAP];
    uint32 crc; /* CRC-32C of the bytes before it */
} mark_slot;

StaticAssertDecl(sizeof(mark_slot) <= SLOT_BYTES, "a mark slot fits its 96 bytes");

static const char slot_magic[8] = {'I', 'D', 'M', 'P', 'G', 'M', 'K', '1'};

/* The backend's generator and what it was made for. */
static struct {
    idm_snowflake *g;
    idm_sf_layout layout;
    uint64 node;
    int max_rewind_ms;
    int fd;            /* the mark file, open while g exists */
    uint64 seq;        /* sequence of the newest valid slot read */
    char mark_path[MAXPGPATH];
} sf = {.fd = -1};

/* --- the mark file ---------------------------------------------------------- */

static uint32 slot_crc(const mark_slot *s)
{
    pg_crc32c crc;
    INIT_CRC32C(crc);
    COMP_CRC32C(crc, s, offsetof(mark_slot, crc));
    FIN_CRC32C(crc);
    return crc;
}

static void read_boot_id(char *dst)
{
    memset(dst, 0, BOOT_ID_CAP);
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return; /* unknown: never matches, so the state is never trusted */
    ssize_t n = read(fd, dst, BOOT_ID_CAP - 1);
    close(fd);
    if (n <= 0) {
        dst[0] = '\0';
        return;
    }
    while (n > 0 && (dst[n - 1] == '\n' || dst[n - 1] == '\0'))
        n--;
    dst[n] = '\0';
}

/* Reads the newest valid slot into *out (zeroed when the file is empty).
 * A file with bytes but no valid slot is damaged: ERROR. */
static void read_mark(mark_slot *out)
{
    char buf[2 * SLOT_BYTES];
    memset(out, 0, sizeof *out);
    ssize_t n = pread(sf.fd, buf, sizeof buf, 0);
    if (n < 0)
        ereport(ERROR, (errcode_for_file_access(),
                        errmsg("could not read \"%s\": %m", sf.mark_path)));
    bool found = false;
    for (int i = 0; i < 2; i++) {
        if (n < (i + 1) * SLOT_BYTES)
            break;
        mark_slot s;
        memcpy(&s, buf + i * SLOT_BYTES, sizeof s);
        if (memcmp(s.magic, slot_magic, sizeof s.magic) != 0 || s.crc != slot_crc(&s))
            continue;
        s.boot[BOOT_ID_CAP - 1] = '\0';
        if (!found || s.seq > out->seq)
            *out = s;
        found = true;
    }
    if (!found && n > 0)
        ereport(ERROR,
                (errcode(ERRCODE_DATA_CORRUPTED),
                 errmsg("\"%s\" holds no valid snowflake mark", sf.mark_path),
                 errhint("If the clock is known to be past every snowflake minted on this server, "
                         "stop the server and remove the file; snowflake() then starts afresh.")));
    sf.seq = out->seq;
}

/* Writes mark_ms and this boot to the older slot and syncs it. */
static void write_mark(int64 mark_ms, const char *boot)
{
    char buf[SLOT_BYTES];
    mark_slot s;
    memset(buf, 0, sizeof buf);
    memset(&s, 0, sizeof s);
    memcpy(s.magic, slot_magic, sizeof s.magic);
    s.seq = sf.seq + 1;
    s.mark_ms = mark_ms;
    strlcpy(s.boot, boot, sizeof s.boot);
    s.crc = slot_crc(&s);
    memcpy(buf, &s, sizeof s);
    off_t at = (off_t)(s.seq & 1) * SLOT_BYTES;
    ssize_t n = pwrite(sf.fd, buf, sizeof buf, at);
    if (n != (ssize_t)sizeof buf) {
        if (n >= 0)
            errno = ENOSPC;
        ereport(ERROR, (errcode_for_file_access(),
                        errmsg("could not write the snowflake mark to \"%s\": %m", sf.mark_path)));
    }
    if (fdatasync(sf.fd) != 0)
        ereport(ERROR, (errcode_for_file_access(),
                        errmsg("could not sync the snowflake mark \"%s\": %m", sf.mark_path)));
    sf.seq = s.seq;
}

static void lock_mark(void)
{
    while (flock(sf.fd, LOCK_EX) != 0) {
        if (errno != EINTR)
            ereport(ERROR, (errcode_for_file_access(),
                            errmsg("could not lock \"%s\": %m", sf.mark_path)));
        CHECK_FOR_INTERRUPTS();
    }
}

static void unlock_mark(void)
{
    (void)flock(sf.fd, LOCK_UN);
}

/* --- the generator ------------------------------------------------------------ */

static void drop_generator(void)
{
    idm_snowflake_free(sf.g);
    sf.g = NULL;
    if (sf.fd >= 0)
        close(sf.fd);
    sf.fd = -1;
}

static uint64 fnv1a(const char *s)
{
    uint64 h = UINT64CONST(14695981039346656037);
    for (; *s != '\0'; s++)
        h = (h ^ (uint8)*s) * UINT64CONST(1099511628211);
    return h;
}

static void sync_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        errno = e;
        ereport(ERROR, (errcode_for_file_access(), errmsg("could not sync \"%s\": %m", path)));
    }
    close(fd);
}

/* Makes the generator for the current settings (the old one, if any, is
 * gone). Runs in the data directory, the backend's working directory. */
static void make_generator(const idm_sf_layout *l, uint64 node)
{
    uint64 max_node = idm_sf_layout_max_node(l);
    char spec[IDM_SF_SPEC_CAP];
    idm_sf_layout unnamed = *l;
    unnamed.name[0] = '\0';
    if (idm_sf_layout_format(&unnamed, spec, sizeof spec) != IDM_OK)
        elog(ERROR, "pg_idmint: could not format the snowflake layout");
    if (node > max_node)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("pg_idmint.node = %llu is out of range for layout %s",
                               (unsigned long long)node, l->name[0] ? l->name : spec),
                        errdetail("The layout's node field holds 0 to %llu.",
                                  (unsigned long long)max_node)));

    if (mkdir(DIR_NAME, pg_dir_create_mode) != 0 && errno != EEXIST)
        ereport(ERROR, (errcode_for_file_access(),
                        errmsg("could not create directory \"%s\": %m", DIR_NAME)));
    char base[MAXPGPATH], state_path[MAXPGPATH];
    snprintf(base, sizeof base, DIR_NAME "/snowflake-%llu-%016llx", (unsigned long long)node,
             (unsigned long long)fnv1a(spec));
    snprintf(state_path, sizeof state_path, "%s.state", base);
    snprintf(sf.mark_path, sizeof sf.mark_path, "%s.mark", base);

    sf.fd = open(sf.mark_path, O_RDWR | O_CREAT | O_CLOEXEC, S_IRUSR | S_IWUSR);
    if (sf.fd < 0)
        ereport(ERROR, (errcode_for_file_access(),
                        errmsg("could not open \"%s\": %m", sf.mark_path)));
    PG_TRY();
    {
        lock_mark();
        mark_slot m;
        read_mark(&m);
        char boot[BOOT_ID_CAP];
        read_boot_id(boot);
        struct stat st;
        bool state_exists = stat(state_path, &st) == 0;
        bool trusted = state_exists && m.seq > 0 && boot[0] != '\0' && strcmp(m.boot, boot) == 0;

        idm_snowflake_config cfg;
        idm_snowflake_config_init(&cfg);
        cfg.gen.allocator = pgi_allocator;
        cfg.gen.state_path = state_path;
        cfg.layout = *l;
        cfg.node = node;
        cfg.max_rewind_ms = pgi_max_rewind_ms;
        cfg.resume_unix_ms = trusted ? 0 : m.mark_ms;
        idm_error err = {0};
        int rc = idm_snowflake_new(&sf.g, &cfg, &err);
        if (rc != IDM_OK) {
            sf.g = NULL;
            pgi_raise(rc, &err, "snowflake(): could not open the server-wide state");
        }
        if (!trusted) {
            write_mark(m.mark_ms, boot);
            if (!state_exists)
                sync_dir(DIR_NAME);
        }
        unlock_mark();
        idm_snowflake_set_ceiling(sf.g, m.mark_ms);
    }
    PG_CATCH();
    {
        drop_generator();
        PG_RE_THROW();
    }
    PG_END_TRY();
    sf.layout = *l;
    sf.node = node;
    sf.max_rewind_ms = pgi_max_rewind_ms;
}

static bool same_layout(const idm_sf_layout *a, const idm_sf_layout *b)
{
    return a->epoch_ms == b->epoch_ms && a->unit_ms == b->unit_ms &&
           memcmp(a->order, b->order, sizeof a->order) == 0 &&
           memcmp(a->bits, b->bits, sizeof a->bits) == 0;
}

static idm_snowflake *generator(void)
{
    const idm_sf_layout *l = pgi_layout();
    uint64 node = (uint64)pgi_node;
    if (likely(sf.g != NULL && sf.node == node && sf.max_rewind_ms == pgi_max_rewind_ms &&
               same_layout(&sf.layout, l)))
        return sf.g;
    drop_generator();
    make_generator(l, node);
    return sf.g;
}

/* The generator reached its ceiling: adopt a later mark from the file, or
 * write and sync one. */
static void raise_mark(idm_snowflake *g)
{
    int64 now_ms = pgi_now_ns() / 1000000;
    int64 used_ms = idm_snowflake_high_water_ms(g);
    int64 base = Max(now_ms, used_ms) + sf.layout.unit_ms;
    int64 ceiling = idm_snowflake_ceiling(g);
    lock_mark();
    PG_TRY();
    {
        mark_slot m;
        read_mark(&m);
        int64 mark = m.mark_ms;
        if (mark <= ceiling || mark < base) {
            char boot[BOOT_ID_CAP];
            read_boot_id(boot);
            mark = Max(mark, base + pgi_reserve_ms);
            write_mark(mark, boot);
        }
        idm_snowflake_set_ceiling(g, mark);
    }
    PG_FINALLY();
    {
        unlock_mark();
    }
    PG_END_TRY();
}

uint64 pgi_sf_next(void)
{
    idm_snowflake *g = generator();
    for (;;) {
        uint64 id;
        size_t done = 0;
        int64_t retry_ns = 0;
        idm_error err;
        pgi_error_init(&err);
        int rc = idm_snowflake_try_next_n(g, &id, 1, &done, &retry_ns, &err);
        if (likely(rc == IDM_OK))
            return id;
        switch (rc) {
        case IDM_ECEILING:
            raise_mark(g);
            break;
        case IDM_EAGAIN:
            pgi_wait_until(retry_ns);
            break;
        case IDM_ECLOCK_REWIND:
            ereport(ERROR,
                    (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                     errmsg("snowflake(): the clock reads %lld ms behind the latest time "
                            "used for node %llu",
                            (long long)err.rewind_ms, (unsigned long long)sf.node),
                     errdetail("IDs already minted (or reserved before a restart) run to a "
                               "later time; minting now could repeat them."),
                     errhint("Wait for the clock to catch up, or raise pg_idmint.max_rewind "
                             "(now %d ms) to make snowflake() wait for it.",
                             pgi_max_rewind_ms)));
            break;
        default:
            pgi_raise(rc, &err, "snowflake()");
        }
        CHECK_FOR_INTERRUPTS();
    }
}
