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
 *   snowflake-NODE-HASH.idmark the durable mark: libidmint's mark file
 *                              (include/idmint/mark.h: two checksummed
 *                              slots, fdatasync, an flock around each write)
 *                              shared by every backend, its tag the boot of
 *                              the machine the state was last resumed in.
 *                              pg_idmint 0.2's snowflake-NODE-HASH.mark (its
 *                              own 96-byte slots) is read once, carried
 *                              into the new file and removed.
 *
 * The invariant is idmintd's: no snowflake carries a time later than the
 * mark that was on disk when it was minted. Each backend's generator is
 * attached to the mark (split mode: it never writes inside a minting
 * call), which sets its ceiling; one that reaches it calls idm_mark_advance,
 * which adopts a mark another backend wrote since, or writes
 * max(now, latest time used + a unit) + pg_idmint.reserve and syncs it -
 * one fdatasync per reserve for the whole server.
 *
 * Where a backend's generator resumes (at creation):
 *   - from the state file itself, when it is known to hold every ID minted:
 *     it existed, and the mark's tag is this boot of the machine
 *     (/proc/sys/kernel/random/boot_id). A crash of the server, a backend
 *     killed, a restart: the mapping's pages live on in the kernel's page
 *     cache, so the state's last compare-and-swap is there.
 *   - from the mark, otherwise: a new state file, or a reboot since (a power
 *     loss may lose the state's last writes, never a synced mark). The
 *     resume moves the shared state above the mark; only then is this boot
 *     written as the mark's tag, so later backends trust the state (one
 *     that looks earlier resumes from the mark too, which is safe).
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
#define BOOT_ID_CAP 40
#define OLD_SLOT_BYTES 96

/* The backend's generator, its mark and what they were made for. */
static struct {
    idm_snowflake *g;
    idm_mark *mark;
    idm_sf_layout layout;
    uint64 node;
    int max_rewind_ms;
    int reserve_ms;
    char mark_path[MAXPGPATH];
} sf;

/* --- the boot, the mark's tag ------------------------------------------------ */

/* This boot of the machine as 16 bytes (/proc/sys/kernel/random/boot_id, a
 * UUID); all zero when unknown, which never matches, so the state is then
 * never trusted. */
static void read_boot_tag(uint8 tag[IDM_MARK_TAG_BYTES])
{
    memset(tag, 0, IDM_MARK_TAG_BYTES);
    char text[BOOT_ID_CAP] = {0};
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    idm_uuid u;
    if (n >= IDM_UUID_STRLEN && idm_uuid_parse(text, IDM_UUID_STRLEN, &u, NULL) == IDM_OK)
        memcpy(tag, u.bytes, IDM_MARK_TAG_BYTES);
}

static bool tag_known(const uint8 tag[IDM_MARK_TAG_BYTES])
{
    for (int i = 0; i < IDM_MARK_TAG_BYTES; i++)
        if (tag[i] != 0)
            return true;
    return false;
}

/* --- the mark file ------------------------------------------------------------ */

/* A mark file with bytes but no valid mark: XX001, the file left as it is. */
pg_noinline static void check_not_damaged(const char *path)
{
    uint8 buf[IDM_MARK_FILE_BYTES];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return; /* missing (made by idm_mark_open), or refused there */
    ssize_t n = pread(fd, buf, sizeof buf, 0);
    close(fd);
    idm_error err;
    pgi_error_init(&err);
    if (n >= 0 && idm_mark_decode(buf, (size_t)n, NULL, NULL, NULL, &err) != IDM_OK)
        ereport(ERROR,
                (errcode(ERRCODE_DATA_CORRUPTED),
                 errmsg("\"%s\" holds no valid snowflake mark", path),
                 errdetail("%s", err.msg),
                 errhint("If the clock is known to be past every snowflake minted on this server, "
                         "stop the server and remove the file; snowflake() then starts afresh.")));
}

/* The mark of pg_idmint 0.2's own format (base.mark: two 96-byte slots
 * {"IDMPGMK1", seq, mark_ms, boot id, CRC-32C}), 0 when there is none:
 * read once, to carry it into the library's mark file. A file with bytes
 * but no valid slot is damaged: XX001. */
pg_noinline static int64 read_old_mark(const char *path)
{
    static const char magic[8] = {'I', 'D', 'M', 'P', 'G', 'M', 'K', '1'};
    enum { OFF_SEQ = 8, OFF_MARK = 16, OFF_CRC = 8 + 8 + 8 + BOOT_ID_CAP };
    char buf[2 * OLD_SLOT_BYTES];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = pread(fd, buf, sizeof buf, 0);
    close(fd);
    uint64 best_seq = 0;
    int64 best = 0;
    for (int i = 0; i < 2 && n >= (i + 1) * OLD_SLOT_BYTES; i++) {
        const char *slot = buf + i * OLD_SLOT_BYTES;
        uint32 crc_stored;
        uint64 seq;
        int64 mark;
        memcpy(&crc_stored, slot + OFF_CRC, sizeof crc_stored);
        memcpy(&seq, slot + OFF_SEQ, sizeof seq);
        memcpy(&mark, slot + OFF_MARK, sizeof mark);
        pg_crc32c crc;
        INIT_CRC32C(crc);
        COMP_CRC32C(crc, slot, OFF_CRC);
        FIN_CRC32C(crc);
        if (memcmp(slot, magic, sizeof magic) == 0 && crc == crc_stored && seq >= best_seq) {
            best_seq = seq;
            best = mark;
        }
    }
    if (best_seq == 0 && n > 0)
        ereport(ERROR,
                (errcode(ERRCODE_DATA_CORRUPTED),
                 errmsg("\"%s\" holds no valid snowflake mark", path),
                 errhint("If the clock is known to be past every snowflake minted on this server, "
                         "stop the server and remove the file; snowflake() then starts afresh.")));
    return best;
}

static void mark_failed(int rc, idm_error *err, const char *what)
{
    pgi_raise(rc, err, what);
}

/* --- the generator ------------------------------------------------------------ */

static void drop_generator(void)
{
    /* The mark first: it reads the generator's high water. A shared mark
     * is never lowered, so closing it writes nothing. */
    (void)idm_mark_close(sf.mark, NULL);
    sf.mark = NULL;
    idm_snowflake_free(sf.g);
    sf.g = NULL;
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
    char base[MAXPGPATH], state_path[MAXPGPATH], old_path[MAXPGPATH];
    snprintf(base, sizeof base, DIR_NAME "/snowflake-%llu-%016llx", (unsigned long long)node,
             (unsigned long long)fnv1a(spec));
    snprintf(state_path, sizeof state_path, "%s.state", base);
    snprintf(sf.mark_path, sizeof sf.mark_path, "%s.idmark", base);
    snprintf(old_path, sizeof old_path, "%s.mark", base);

    struct stat st;
    bool fresh_mark = stat(sf.mark_path, &st) != 0;
    int64 old_mark = fresh_mark ? read_old_mark(old_path) : 0;
    check_not_damaged(sf.mark_path);
    idm_mark_config mc;
    idm_mark_config_init(&mc);
    mc.reserve_ms = pgi_reserve_ms;
    mc.allocator = pgi_allocator;
    /* Every backend shares the file; none ever waits inside a minting
     * call (pgi_sf_next raises the mark itself, between tries). */
    mc.flags = IDM_MARK_SHARED | IDM_MARK_SPLIT;
    idm_error err;
    pgi_error_init(&err);
    int rc = idm_mark_open(&sf.mark, sf.mark_path, &mc, &err);
    if (rc != IDM_OK) {
        sf.mark = NULL;
        mark_failed(rc, &err, "snowflake(): could not open the durable mark");
    }
    PG_TRY();
    {
        uint8 boot[IDM_MARK_TAG_BYTES], tag[IDM_MARK_TAG_BYTES];
        read_boot_tag(boot);
        idm_mark_tag(sf.mark, tag);
        int64 resume = idm_mark_resume_ms(sf.mark);
        bool state_exists = stat(state_path, &st) == 0;
        bool trusted = state_exists && resume > 0 && tag_known(boot) &&
                       memcmp(tag, boot, sizeof tag) == 0;
        if (old_mark > resume)
            resume = old_mark; /* pg_idmint 0.2's mark, carried over */

        idm_snowflake_config cfg;
        idm_snowflake_config_init(&cfg);
        cfg.gen.allocator = pgi_allocator;
        cfg.gen.state_path = state_path;
        cfg.layout = *l;
        cfg.node = node;
        cfg.max_rewind_ms = pgi_max_rewind_ms;
        cfg.resume_unix_ms = trusted ? 0 : resume;
        rc = idm_snowflake_new(&sf.g, &cfg, &err);
        if (rc != IDM_OK) {
            sf.g = NULL;
            pgi_raise(rc, &err, "snowflake(): could not open the server-wide state");
        }
        if (trusted)
            idm_mark_trust_state(sf.mark);
        /* Every write of this backend's carries this boot: one without it
         * would make the next backend distrust a state that holds every ID. */
        idm_mark_set_tag(sf.mark, boot);
        rc = idm_mark_attach_snowflake(sf.mark, sf.g, &err);
        if (rc != IDM_OK)
            mark_failed(rc, &err, "snowflake(): could not attach the durable mark");
        if (!trusted) {
            /* The state now lies above the mark: record this boot, so that
             * later backends trust the state (a write even when the mark
             * stays, since the tag changes). */
            int64 target = 0, durable = 0;
            rc = IDM_OK;
            if (idm_mark_want(sf.mark, resume, true, &target)) {
                rc = idm_mark_write(sf.mark, resume, &durable, &err);
                if (rc == IDM_OK)
                    idm_mark_commit(sf.mark, durable);
                else
                    idm_mark_abort(sf.mark);
            }
            if (rc == IDM_OK && old_mark > 0 && unlink(old_path) != 0 && errno != ENOENT)
                ereport(WARNING, (errcode_for_file_access(),
                                  errmsg("could not remove \"%s\" (carried into \"%s\"): %m",
                                         old_path, sf.mark_path)));
            if (rc != IDM_OK)
                mark_failed(rc, &err, "snowflake(): could not write the durable mark");
            if (!state_exists || fresh_mark)
                sync_dir(DIR_NAME);
        }
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
    sf.reserve_ms = pgi_reserve_ms;
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
               sf.reserve_ms == pgi_reserve_ms && same_layout(&sf.layout, l)))
        return sf.g;
    drop_generator();
    make_generator(l, node);
    return sf.g;
}

/* The generator reached its ceiling: the mark adopts a later one another
 * backend wrote, or writes and syncs max(now, latest used + a unit) plus
 * pg_idmint.reserve, and raises the ceiling (the one rule: mark.h). */
static void raise_mark(idm_snowflake *g)
{
    int64 now_ms = pgi_now_ns() / 1000000;
    int64 used_ms = idm_snowflake_high_water_ms(g);
    idm_error err;
    pgi_error_init(&err);
    int rc = idm_mark_advance(sf.mark, Max(now_ms, used_ms) + sf.layout.unit_ms, &err);
    if (rc != IDM_OK)
        mark_failed(rc, &err, "snowflake(): could not write the durable mark");
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
