/*
 * error.c - error text and the error-record helper.
 */
#include "internal.h"

#include <stdio.h>

const char *idm_strerror(int code)
{
    switch (code) {
    case IDM_OK:
        return "success";
    case IDM_EINVAL:
        return "invalid argument";
    case IDM_EPARSE:
        return "invalid text";
    case IDM_ENOMEM:
        return "out of memory";
    case IDM_ENOENTROPY:
        return "randomness source failed";
    case IDM_ECLOCK:
        return "clock could not be read";
    case IDM_ECLOCK_REWIND:
        return "clock moved backwards beyond the tolerance";
    case IDM_ETIME_RANGE:
        return "time outside the format's range";
    case IDM_ENOSPC:
        return "output buffer too small";
    case IDM_EFORKED:
        return "generator inherited across fork";
    case IDM_EUNSUPPORTED:
        return "operation not supported for this kind of ID";
    case IDM_ESTATE:
        return "state file unusable";
    case IDM_EAGAIN:
        return "would have to wait";
    case IDM_ECEILING:
        return "ceiling reached";
    case IDM_EOFFSET:
        return "remote clock too far ahead";
    case IDM_EFORGED:
        return "check failed: another key, or altered";
    case IDM_EEXPIRED:
        return "expired";
    default:
        return "unknown error";
    }
}

int idm__fail(idm_error *err, int code, size_t offset, const char *fmt, ...)
{
    if (err == NULL)
        return code;
    err->code = code;
    err->offset = offset;
    err->rewind_ms = 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        snprintf(err->msg, sizeof err->msg, "%s", idm_strerror(code));
    return code;
}

const char *idm_version(void)
{
    return IDM_VERSION_STRING;
}
