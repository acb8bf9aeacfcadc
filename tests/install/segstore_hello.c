/* tests/install/segstore_hello.c - built by tests/install/test_package.sh
 * against an installed idmint_segstore with `pkg-config idmint-segstore`:
 * makes a tag in a fresh SQLite store (argv[1], a path), leases twice and
 * prints the ranges' first IDs, then shows that a missing tag is refused
 * with IDMSEG_ENOTAG in the error record. The PostgreSQL client is linked
 * in too (the store's URL is only parsed by libpq when one is opened). */
#include <idmint/segstore.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    char url[600];
    snprintf(url, sizeof url, "sqlite:%s", argv[1]);
    idmseg_store *st = NULL;
    idmseg_error err;
    if (idmseg_store_open(url, &st, &err) != 0) {
        fprintf(stderr, "segstore_hello: %s: %s\n", url, err.msg);
        return 1;
    }
    uint64_t first = 0, stride = 0, second = 0;
    idmseg_tag_info info;
    if (idmseg_store_create(st, "hello", NULL, &err) != 0 ||
        idmseg_store_lease(st, "hello", 10, &first, &stride, &err) != 0 ||
        idmseg_store_lease(st, "hello", 10, &second, &stride, &err) != 0) {
        fprintf(stderr, "segstore_hello: %s\n", err.msg);
        idmseg_store_close(st);
        return 1;
    }
    int rc = idmseg_store_show(st, "missing", &info, &err);
    printf("%s %llu %llu %d %d\n", idmseg_store_kind(st), (unsigned long long)first,
           (unsigned long long)second, rc == IDMSEG_ENOTAG, err.code == IDMSEG_ENOTAG);
    idmseg_store_close(st);
    return 0;
}
