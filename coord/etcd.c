/* etcd.c - placeholder until the backend lands (this commit only). */
#include "backend.h"
const idmc_ops *const idmc_etcd_ops = NULL;
