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
 * The rules (where a backend resumes, what the mark's tag means, who
 * writes the next reserve) are libidmint's idm_sfhost
 * (include/idmint/sfhost.h), which every backend opens on pg_idmint/ for
 * the current node and layout; what is here is PostgreSQL's side: the
 * settings, carrying pg_idmint 0.2's mark over, SQLSTATEs, and waiting
 * interruptibly (a clock behind the latest time used by up to
 * pg_idmint.max_rewind is waited out; by more, snowflake() fails with 55000
 * saying how far, until the clock has caught up).
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

/* The backend's host-wide snowflake and what it was made for. */
static struct {
    idm_sfhost *h;
    idm_sf_layout layout;
    uint64 node;
    int max_rewind_ms;
    int reserve_ms;
} sf;

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

/* --- the generator ------------------------------------------------------------ */

static void drop_generator(void)
{
    idm_sfhost_close(sf.h);
    sf.h = NULL;
}

static void sfhost_path(const idm_sfhost_config *cfg, const char *ext, char *dst)
{
    idm_error err;
    pgi_error_init(&err);
    int rc = idm_sfhost_path(cfg, ext, dst, MAXPGPATH, &err);
    if (rc != IDM_OK)
        pgi_raise(rc, &err, "snowflake()");
}

/* Opens the host-wide snowflake for the current settings (the old one, if
 * any, is gone). Runs in the data directory, the backend's working
 * directory. */
static void make_generator(const idm_sf_layout *l, uint64 node)
{
    uint64 max_node = idm_sf_layout_max_node(l);
    if (node > max_node) {
        char spec[IDM_SF_SPEC_CAP];
        if (idm_sf_layout_format(l, spec, sizeof spec) != IDM_OK)
            spec[0] = '\0';
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("pg_idmint.node = %llu is out of range for layout %s",
                               (unsigned long long)node, l->name[0] ? l->name : spec),
                        errdetail("The layout's node field holds 0 to %llu.",
                                  (unsigned long long)max_node)));
    }
    idm_sfhost_config cfg;
    idm_sfhost_config_init(&cfg);
    cfg.dir = DIR_NAME;
    cfg.layout = *l;
    cfg.node = node;
    cfg.reserve_ms = pgi_reserve_ms;
    cfg.max_rewind_ms = pgi_max_rewind_ms;
    cfg.allocator = pgi_allocator;
    char mark_path[MAXPGPATH], old_path[MAXPGPATH];
    sfhost_path(&cfg, "idmark", mark_path);
    sfhost_path(&cfg, "mark", old_path);
    struct stat st;
    if (stat(mark_path, &st) != 0)
        cfg.floor_unix_ms = read_old_mark(old_path); /* pg_idmint 0.2's, carried over */
    check_not_damaged(mark_path);
    idm_error err;
    pgi_error_init(&err);
    int rc = idm_sfhost_open(&sf.h, &cfg, &err);
    if (rc != IDM_OK) {
        sf.h = NULL;
        pgi_raise(rc, &err, "snowflake(): could not open the server-wide state");
    }
    if (cfg.floor_unix_ms > 0 && unlink(old_path) != 0 && errno != ENOENT)
        ereport(WARNING, (errcode_for_file_access(),
                          errmsg("could not remove \"%s\" (carried into \"%s\"): %m", old_path,
                                 mark_path)));
    sf.layout = *l;
    sf.node = node;
    sf.max_rewind_ms = pgi_max_rewind_ms;
    sf.reserve_ms = pgi_reserve_ms;
}

static idm_sfhost *generator(void)
{
    const idm_sf_layout *l = pgi_layout();
    uint64 node = (uint64)pgi_node;
    if (likely(sf.h != NULL && sf.node == node && sf.max_rewind_ms == pgi_max_rewind_ms &&
               sf.reserve_ms == pgi_reserve_ms && idm_sf_layout_equal(&sf.layout, l)))
        return sf.h;
    drop_generator();
    make_generator(l, node);
    return sf.h;
}

uint64 pgi_sf_next(void)
{
    idm_sfhost *h = generator();
    for (;;) {
        uint64 id;
        int64_t retry_ns = 0;
        idm_error err;
        pgi_error_init(&err);
        int rc = idm_sfhost_try_next(h, &id, &retry_ns, &err);
        if (likely(rc == IDM_OK))
            return id;
        switch (rc) {
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
