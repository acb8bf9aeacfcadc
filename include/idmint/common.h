/*
 * idmint/common.h - export macros and conventions shared by every header.
 *
 * Conventions used throughout the public API:
 *  - Functions return int: IDM_OK (0) on success, an IDM_E* code otherwise
 *    (see error.h). Details go into a caller-supplied idm_error (NULL allowed).
 *  - ID values are plain fixed-size structs in wire (big-endian) byte order.
 *  - Encoders write into (dst, cap) and NUL-terminate; *_STRLEN constants give
 *    the exact text length without the NUL.
 *  - Parsers take (text, len) and never read past len; they never allocate.
 *  - Only *_new allocates and only *_free releases; *_free(NULL) is a no-op.
 *  - Each function states "Thread-safe: yes (...)" or "Thread-safe: no (...)".
 */
#ifndef IDMINT_COMMON_H
#define IDMINT_COMMON_H

#include <stddef.h>
#include <stdint.h>

#if defined(IDM_BUILDING_LIBRARY) && defined(__GNUC__)
#define IDM_API __attribute__((visibility("default")))
#else
#define IDM_API
#endif

#if defined(__GNUC__)
#define IDM_NODISCARD __attribute__((warn_unused_result))
#else
#define IDM_NODISCARD
#endif

#ifdef __cplusplus
#define IDM_BEGIN_DECLS extern "C" {
#define IDM_END_DECLS   }
#else
#define IDM_BEGIN_DECLS
#define IDM_END_DECLS
#endif

#endif
