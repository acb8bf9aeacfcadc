/*
 * uuid_text.c - the UUID text grammar of uuid.c and sqlean (uuid_text.h).
 */
#include "uuid_text.h"

#include <ctype.h>

int idmsq_uuid_text_read(const char *z, size_t len, idm_uuid *out)
{
    char hex[IDM_UUID_HEXLEN];
    size_t i = 0;
    /* The byte at i, or NUL past the end: the text ends at either. */
#define AT(k) ((k) < len ? (unsigned char)z[(k)] : 0u)
    if (z == NULL)
        return -1;
    if (AT(i) == '{')
        i++;
    for (size_t h = 0; h < IDM_UUID_HEXLEN; h += 2) {
        if (AT(i) == '-')
            i++;
        if (!isxdigit(AT(i)) || !isxdigit(AT(i + 1)))
            return -1;
        hex[h] = (char)AT(i);
        hex[h + 1] = (char)AT(i + 1);
        i += 2;
    }
    if (AT(i) == '}')
        i++;
    if (AT(i) != 0)
        return -1;
#undef AT
    return idm_uuid_parse(hex, sizeof hex, out, NULL) == IDM_OK ? 0 : -1;
}
