/* tests/install/hello.c - the program tests/install/test_package.sh builds
 * against an installed idmint, once with pkg-config and once with
 * find_package(idmint CONFIG): mints one UUIDv7 and prints it, then the
 * library's version on a second line. Only the installed headers and
 * library are used. */
#include <idmint/idmint.h>
#include <stdio.h>

int main(void)
{
    idm_error err;
    idm_gen *g;
    if (idm_gen_new(&g, NULL, &err) != IDM_OK) {
        fprintf(stderr, "hello: idm_gen_new: %s\n", err.msg);
        return 1;
    }
    idm_uuid id;
    if (idm_uuidv7_next_n(g, &id, 1, &err) != IDM_OK) {
        fprintf(stderr, "hello: idm_uuidv7_next_n: %s\n", err.msg);
        idm_gen_free(g);
        return 1;
    }
    idm_gen_free(g);
    char text[IDM_UUID_STRLEN + 1];
    if (idm_uuid_format(&id, text, sizeof text) != IDM_OK) {
        fprintf(stderr, "hello: idm_uuid_format failed\n");
        return 1;
    }
    printf("%s\n%s\n", text, idm_version());
    return 0;
}
