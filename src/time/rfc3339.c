/*
 * rfc3339.c - RFC 3339 UTC times with milliseconds, written the way
 * JavaScript's Date.prototype.toISOString writes them.
 *
 * Specs: RFC 3339 section 5.6 (date-time grammar); ECMA-262 section
 * 21.4.1.32 (Date Time String Format: four-digit years 0000-9999, else a
 * sign and six digits, "-000000" not allowed).
 *
 * Calendar arithmetic is done here, in the proleptic Gregorian calendar
 * with 64-bit day counts, instead of gmtime_r/timegm: those depend on
 * time_t's width and the C library, and cannot express years above 9999
 * or below 0 portably. Negative times floor (-1 ms is 1969-12-31T23:59:
 * 59.999Z).
 *
 * Deliberately left out: leap seconds (":60" is rejected, as JavaScript
 * does), local time zones, and date-only or time-only forms.
 */
#include "internal.h"

#include "codec/charname.h"

#include <stdbool.h>

#define MS_PER_DAY INT64_C(86400000)
/* Days from 0000-03-01 (the start of a March-based year 0) to 1970-01-01. */
#define DAYS_0000_03_01_TO_UNIX INT64_C(719468)
#define DAYS_PER_400_YEARS      146097
#define DAYS_PER_100_YEARS      36524
#define DAYS_PER_4_YEARS        1461
#define YEAR_MAX                999999 /* six digits */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0)))
        q--;
    return q;
}

/* Month m (1-12) as a month of a year that starts in March (0 = March,
 * 11 = February), which puts the leap day last. The days before month mp
 * in such a year are (153 * mp + 2) / 5: the month lengths 31 30 31 30 31
 * repeat with period five months / 153 days. */
static int64_t days_before_march_month(int64_t mp)
{
    return (153 * mp + 2) / 5;
}

/* Unix day number of y-m-d. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    int64_t year = m <= 2 ? y - 1 : y; /* January and February belong to the year before */
    int64_t mp = m <= 2 ? m + 9 : m - 3;
    int64_t era = floor_div(year, 400);
    int64_t year_of_era = year - era * 400; /* 0-399 */
    int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 +
                         days_before_march_month(mp) + d - 1;
    return era * DAYS_PER_400_YEARS + day_of_era - DAYS_0000_03_01_TO_UNIX;
}

/* The y-m-d of Unix day number days. */
static void civil_from_days(int64_t days, int64_t *y, int *m, int *d)
{
    int64_t z = days + DAYS_0000_03_01_TO_UNIX;
    int64_t era = floor_div(z, DAYS_PER_400_YEARS);
    int64_t rest = z - era * DAYS_PER_400_YEARS; /* 0-146096 */

    /* Peel off centuries, four-year cycles and years; the last of each is
     * one day longer, hence the caps at 3. */
    int64_t centuries = rest / DAYS_PER_100_YEARS;
    if (centuries > 3)
        centuries = 3;
    rest -= centuries * DAYS_PER_100_YEARS;
    int64_t quads = rest / DAYS_PER_4_YEARS;
    rest -= quads * DAYS_PER_4_YEARS;
    int64_t years = rest / 365;
    if (years > 3)
        years = 3;
    int64_t day_of_year = rest - years * 365; /* 0-365, from March 1 */

    int64_t mp = (5 * day_of_year + 2) / 153;
    *d = (int)(day_of_year - days_before_march_month(mp) + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = era * 400 + centuries * 100 + quads * 4 + years + (*m <= 2 ? 1 : 0);
}

static bool is_leap_year(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
    static const int lengths[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap_year(y) ? 29 : lengths[m - 1];
}

/* Writes v as exactly width decimal digits at dst (v < 10^width). */
static void put_digits(char *dst, int64_t v, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        dst[i] = (char)('0' + v % 10);
        v /= 10;
    }
}

int idm_time_format(int64_t unix_ms, char *dst, size_t cap)
{
    /* Floor division without multiplying back, which could overflow near
     * INT64_MIN. */
    int64_t ms_of_day = unix_ms % MS_PER_DAY;
    int64_t days = unix_ms / MS_PER_DAY;
    if (ms_of_day < 0) {
        ms_of_day += MS_PER_DAY;
        days--;
    }
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    if (y < -YEAR_MAX || y > YEAR_MAX)
        return IDM_ETIME_RANGE;

    bool short_year = y >= 0 && y <= 9999;
    size_t year_len = short_year ? 4 : 7;
    if (cap < year_len + 20 + 1)
        return IDM_ENOSPC;

    char *p = dst;
    if (short_year) {
        put_digits(p, y, 4);
    } else {
        p[0] = y < 0 ? '-' : '+';
        put_digits(p + 1, y < 0 ? -y : y, 6);
    }
    p += year_len;
    /* "-MM-DDTHH:MM:SS.mmmZ" */
    p[0] = '-';
    put_digits(p + 1, m, 2);
    p[3] = '-';
    put_digits(p + 4, d, 2);
    p[6] = 'T';
    put_digits(p + 7, ms_of_day / 3600000, 2);
    p[9] = ':';
    put_digits(p + 10, ms_of_day / 60000 % 60, 2);
    p[12] = ':';
    put_digits(p + 13, ms_of_day / 1000 % 60, 2);
    p[15] = '.';
    put_digits(p + 16, ms_of_day % 1000, 3);
    p[19] = 'Z';
    p[20] = '\0';
    return IDM_OK;
}

/* ---- parsing -------------------------------------------------------------- */

/* A position in the text with a sticky error: once a step fails, the
 * later steps do nothing, so the grammar reads top to bottom and the first
 * failure is the one reported. */
struct cursor {
    const unsigned char *s;
    size_t len;
    size_t pos;
    int rc;
    idm_error *err;
};

/* Records the error for the byte at the cursor (or the end of the text),
 * which is not what the grammar expects there. */
static void unexpected(struct cursor *c, const char *expected)
{
    if (c->rc != IDM_OK)
        return;
    if (c->pos >= c->len) {
        c->rc = idm__fail(c->err, IDM_EPARSE, c->pos,
                          "time ends early at position %zu (expected %s)", c->pos + 1, expected);
        return;
    }
    char name[IDM__CHARNAME_CAP];
    c->rc = idm__fail(c->err, IDM_EPARSE, c->pos, "time has %s at position %zu (expected %s)",
                      idm__char_name(c->s[c->pos], name), c->pos + 1, expected);
}

static bool at(const struct cursor *c, char ch)
{
    return c->rc == IDM_OK && c->pos < c->len && c->s[c->pos] == (unsigned char)ch;
}

static bool at_digit(const struct cursor *c)
{
    return c->rc == IDM_OK && c->pos < c->len && c->s[c->pos] >= '0' && c->s[c->pos] <= '9';
}

static void expect(struct cursor *c, char ch, const char *expected)
{
    if (at(c, ch))
        c->pos++;
    else
        unexpected(c, expected);
}

/* Reads exactly n digits (0 after an earlier error). */
static int64_t digits(struct cursor *c, int n)
{
    int64_t v = 0;
    for (int i = 0; i < n; i++) {
        if (!at_digit(c)) {
            unexpected(c, "a digit");
            return 0;
        }
        v = v * 10 + (c->s[c->pos] - '0');
        c->pos++;
    }
    return v;
}

/* Reads n digits and checks lo <= value <= hi. */
static int64_t field(struct cursor *c, int n, int64_t lo, int64_t hi, const char *what)
{
    size_t start = c->pos;
    int64_t v = digits(c, n);
    if (c->rc == IDM_OK && (v < lo || v > hi))
        c->rc = idm__fail(c->err, IDM_EPARSE, start,
                          "time has %s %0*lld at position %zu (expected %0*lld-%0*lld)", what, n,
                          (long long)v, start + 1, n, (long long)lo, n, (long long)hi);
    return v;
}

int idm_time_parse(const char *text, size_t len, int64_t *unix_ms, idm_error *err)
{
    struct cursor c = {(const unsigned char *)text, len, 0, IDM_OK, err};

    /* date-fullyear: four digits, or ECMAScript's expanded six-digit year. */
    int64_t year;
    if (at(&c, '+') || at(&c, '-')) {
        bool negative = at(&c, '-');
        c.pos++;
        year = digits(&c, 6);
        if (c.rc == IDM_OK && negative && year == 0)
            return idm__fail(err, IDM_EPARSE, 0, "time has year -000000 (write +000000 or 0000)");
        if (negative)
            year = -year;
    } else {
        year = digits(&c, 4);
    }
    expect(&c, '-', "'-'");
    int64_t month = field(&c, 2, 1, 12, "month");
    expect(&c, '-', "'-'");
    size_t day_pos = c.pos;
    int64_t day = digits(&c, 2);
    if (c.rc != IDM_OK)
        return c.rc;
    int month_days = days_in_month(year, (int)month);
    if (day < 1 || day > month_days)
        return idm__fail(err, IDM_EPARSE, day_pos,
                         "time has day %02lld at position %zu, but that month has %d days",
                         (long long)day, day_pos + 1, month_days);

    if (at(&c, 'T') || at(&c, 't') || at(&c, ' '))
        c.pos++;
    else
        unexpected(&c, "'T'");
    int64_t hour = field(&c, 2, 0, 23, "hour");
    expect(&c, ':', "':'");
    int64_t minute = field(&c, 2, 0, 59, "minute");
    expect(&c, ':', "':'");
    size_t second_pos = c.pos;
    int64_t second = digits(&c, 2);
    if (c.rc != IDM_OK)
        return c.rc;
    if (second == 60)
        return idm__fail(err, IDM_EPARSE, second_pos,
                         "time has leap second 60 at position %zu, which is not supported",
                         second_pos + 1);
    if (second > 59)
        return idm__fail(err, IDM_EPARSE, second_pos,
                         "time has second %02lld at position %zu (expected 00-59)",
                         (long long)second, second_pos + 1);

    /* time-secfrac: any number of digits; the first three are milliseconds
     * and the rest are dropped, which truncates toward the past because
     * the fraction is always added. */
    int64_t frac_ms = 0;
    if (at(&c, '.')) {
        c.pos++;
        if (!at_digit(&c))
            unexpected(&c, "a digit");
        int used = 0;
        while (at_digit(&c)) {
            if (used < 3) {
                frac_ms = frac_ms * 10 + (c.s[c.pos] - '0');
                used++;
            }
            c.pos++;
        }
        for (; used < 3; used++)
            frac_ms *= 10;
    }

    /* time-offset: Z, or +HH:MM / -HH:MM east of UTC. */
    int64_t offset_min = 0;
    if (at(&c, 'Z') || at(&c, 'z')) {
        c.pos++;
    } else if (at(&c, '+') || at(&c, '-')) {
        int64_t sign = at(&c, '-') ? -1 : 1;
        c.pos++;
        int64_t offset_hour = field(&c, 2, 0, 23, "offset hour");
        expect(&c, ':', "':'");
        int64_t offset_minute = field(&c, 2, 0, 59, "offset minute");
        offset_min = sign * (offset_hour * 60 + offset_minute);
    } else {
        unexpected(&c, "'Z', '+' or '-'");
    }
    if (c.rc != IDM_OK)
        return c.rc;
    if (c.pos != len) {
        char name[IDM__CHARNAME_CAP];
        return idm__fail(err, IDM_EPARSE, c.pos, "time has %s at position %zu after its end",
                         idm__char_name(c.s[c.pos], name), c.pos + 1);
    }

    /* Six-digit years keep this far inside int64 (about 3e16 ms). */
    int64_t days = days_from_civil(year, (int)month, (int)day);
    int64_t seconds_of_day = (hour * 60 + minute) * 60 + second;
    *unix_ms = days * MS_PER_DAY + seconds_of_day * 1000 + frac_ms - offset_min * 60000;
    return IDM_OK;
}
