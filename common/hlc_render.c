/*
 * hlc_render.c - a stamp's members in JSON and as text (hlc_render.h).
 */
#include "hlc_render.h"

#include <idmint/hlc.h>
#include <idmint/rfc3339.h>

/* The stamp's three texts: hex, wall_ms's RFC 3339 time. Every wall_ms a
 * stamp holds (48 bits: up to the year 10889) has a six-digit-year form,
 * so the time never fails to format. */
static void texts(uint64_t stamp, char hex[IDM_HLC_STRLEN + 1], char time[IDM_RFC3339_CAP],
                  int64_t *wall_ms, uint16_t *logical)
{
    idm_hlc_decode(stamp, wall_ms, logical);
    if (idm_hlc_format(stamp, hex, IDM_HLC_STRLEN + 1) != IDM_OK)
        hex[0] = '\0';
    if (idm_time_format(*wall_ms, time, IDM_RFC3339_CAP) != IDM_OK)
        time[0] = '\0';
}

int idmx_hlc_json(idmx_outbuf *b, uint64_t stamp)
{
    char hex[IDM_HLC_STRLEN + 1], time[IDM_RFC3339_CAP];
    int64_t wall_ms;
    uint16_t logical;
    texts(stamp, hex, time, &wall_ms, &logical);
    idmx_outbuf_puts(b, "{\"stamp\": \"");
    idmx_outbuf_puts(b, hex);
    idmx_outbuf_puts(b, "\", \"wall_ms\": ");
    idmx_outbuf_i64(b, wall_ms);
    idmx_outbuf_puts(b, ", \"time\": \"");
    idmx_outbuf_puts(b, time);
    idmx_outbuf_puts(b, "\", \"logical\": ");
    idmx_outbuf_u64(b, logical);
    return idmx_outbuf_putc(b, '}');
}

int idmx_hlc_text(idmx_outbuf *b, uint64_t stamp)
{
    char hex[IDM_HLC_STRLEN + 1], time[IDM_RFC3339_CAP];
    int64_t wall_ms;
    uint16_t logical;
    texts(stamp, hex, time, &wall_ms, &logical);
    idmx_outbuf_puts(b, "stamp: ");
    idmx_outbuf_puts(b, hex);
    idmx_outbuf_puts(b, "\nwall_ms: ");
    idmx_outbuf_i64(b, wall_ms);
    idmx_outbuf_puts(b, "\ntime: ");
    idmx_outbuf_puts(b, time);
    idmx_outbuf_puts(b, "\nlogical: ");
    idmx_outbuf_u64(b, logical);
    return idmx_outbuf_putc(b, '\n');
}
