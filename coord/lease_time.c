/*
 * lease_time.c - when a lease may have run out on its coordinator, as a
 * holder counts it (idmint_coord.h: idmc_lease_margin_ms,
 * idmc_lease_deadline). Pure arithmetic, shared by the CLI
 * (cli/nodelease.c) and idmintd (server/lease.c), so that both stop minting
 * at the same point of a lease.
 */
#include "idmint_coord.h"

int64_t idmc_lease_margin_ms(int64_t ttl_ms)
{
    int64_t m = ttl_ms / 5;
    return m < IDMC_LEASE_MARGIN_MIN_MS ? IDMC_LEASE_MARGIN_MIN_MS : m;
}

int64_t idmc_lease_deadline(int64_t confirmed_ms, int64_t ttl_ms)
{
    if (ttl_ms < 0) {
        ttl_ms = 0;
    }
    /* ttl - margin lies in [-IDMC_LEASE_MARGIN_MIN_MS, ttl]: no overflow. */
    int64_t usable = ttl_ms - idmc_lease_margin_ms(ttl_ms);
    if (usable > 0 && confirmed_ms > INT64_MAX - usable) {
        return INT64_MAX;
    }
    if (usable < 0 && confirmed_ms < INT64_MIN - usable) {
        return INT64_MIN;
    }
    return confirmed_ms + usable;
}
