/* zk.c - placeholder until the backend lands (this commit only). */
#include "backend.h"
const idmc_ops *const idmc_zk_ops = NULL;
