/* tests/install/coord_hello.c - built by tests/install/test_package.sh
 * against an installed idmint_coord with `pkg-config idmint-coord`:
 * parses a coordinator URL of each kind (no network I/O) and prints what it
 * made of them, so that both clients are linked in. */
#include <idmint/idmint_coord.h>
#include <stdio.h>

int main(void)
{
    const char *urls[] = {"etcd://127.0.0.1:2379/idmint/hello", "zk://127.0.0.1:2181/idmint/hello"};
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        idmc_coord *c = NULL;
        idmc_error err;
        if (idmc_open(urls[i], 10000, &c, &err) != 0) {
            fprintf(stderr, "coord_hello: %s: %s\n", urls[i], err.msg);
            return 1;
        }
        printf("%s %s\n", idmc_kind(c), idmc_url(c));
        idmc_close(c);
    }
    return 0;
}
