/*
 * hwm.c - the time high-water mark: before a snowflake is minted at a time
 * later than the mark, the mark moves reserve_ms ahead and is written and
 * fsynced, so after a crash and a clock stepped back, a restart knows that
 * IDs may exist up to the mark and does not mint below it (the snowflake
 * generator refuses until the clock passes it). A graceful shutdown
 * shrinks the mark to the time actually used, so an ordinary restart does
 * not wait out the reserve.
 *
 * File: STATE_DIR/hwm, 16 bytes: "IDMHWM01" and the mark as a
 * little-endian int64 of Unix ms.
 */
#include "idmintd.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int write_mark(idms_server *s, int64_t mark)
{
    uint8_t rec[16];
    memcpy(rec, "IDMHWM01", 8);
    for (int i = 0; i < 8; i++)
        rec[8 + i] = (uint8_t)((uint64_t)mark >> (8 * i));
    if (pwrite(s->hwm_fd, rec, sizeof rec, 0) != (ssize_t)sizeof rec || fdatasync(s->hwm_fd) != 0) {
        idms_log(IDMS_LOG_ERROR, "cannot write the time high-water mark: %s", strerror(errno));
        return -1;
    }
    s->metrics.reserve_writes++;
    return 0;
}

int idms_hwm_open(idms_server *s, int64_t *resume_ms)
{
    *resume_ms = 0;
    s->hwm_fd = -1;
    s->reserved_until_ms = INT64_MAX; /* no state dir: nothing to reserve */
    if (s->opt.state_dir[0] == '\0')
        return 0;
    char path[1100];
    snprintf(path, sizeof path, "%s/hwm", s->opt.state_dir);
    s->hwm_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (s->hwm_fd < 0) {
        idms_log(IDMS_LOG_ERROR, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    uint8_t rec[16];
    ssize_t r = pread(s->hwm_fd, rec, sizeof rec, 0);
    if (r == (ssize_t)sizeof rec && memcmp(rec, "IDMHWM01", 8) == 0) {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
            v |= (uint64_t)rec[8 + i] << (8 * i);
        *resume_ms = (int64_t)v;
    } else if (r != 0) {
        idms_log(IDMS_LOG_ERROR, "%s is damaged (%zd bytes); remove it only if no IDs were minted "
                 "after the clock's current time", path, r);
        return -1;
    }
    s->reserved_until_ms = *resume_ms;
    return 0;
}

int idms_hwm_reserve(idms_server *s, int64_t now_ms)
{
    /* A margin: the generator reads the clock again after this check. */
    if (s->hwm_fd < 0 || now_ms + 50 <= s->reserved_until_ms)
        return 0;
    int64_t mark = now_ms + s->opt.reserve_ms;
    if (write_mark(s, mark) != 0)
        return -1;
    s->reserved_until_ms = mark;
    return 0;
}

void idms_hwm_close(idms_server *s)
{
    if (s->hwm_fd < 0)
        return;
    int64_t used = idm_snowflake_high_water_ms(s->sf);
    if (used > 0 && used < s->reserved_until_ms && write_mark(s, used) == 0)
        idms_log(IDMS_LOG_INFO, "time high-water mark set to the last time used");
    close(s->hwm_fd);
    s->hwm_fd = -1;
}
