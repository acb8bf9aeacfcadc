/*
 * checker.h - the record the fault harness's clients write for each ID
 * (faultclient.c) and the checker reads (checker.c): 24 bytes, host byte
 * order (both run on the machine that made the file).
 */
#ifndef IDM_FAULTS_CHECKER_H
#define IDM_FAULTS_CHECKER_H

#include <stdint.h>

enum { FC_KIND_SF = 1, FC_KIND_SEG = 2 };

typedef struct fc_rec {
    uint64_t id;
    int64_t recv_us; /* Unix µs, the client's CLOCK_REALTIME */
    uint32_t conn;   /* client * 65536 + connection serial: unique per run */
    uint16_t inst;   /* the idmintd instance the connection went to */
    uint8_t kind;    /* FC_KIND_* */
    uint8_t proto;   /* 0 HTTP, 1 RESP */
} fc_rec;

_Static_assert(sizeof(fc_rec) == 24, "fc_rec is 24 bytes");

#endif
