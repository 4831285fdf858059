/*
 * src/threads/slottab.c — per-slot tables (see slottab.h).
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "threads/slottab.h"
#include "threads/threads.h"

_Static_assert((uint64_t)RP_SLOTTAB_BLOCK * RP_SLOTTAB_BLOCKS >= RP_THREADS_MAX,
               "a table holds every slot the registry can make");

void *rp_slottab_get(struct rp_slottab *t, uint32_t index, int make)
{
    if (index / RP_SLOTTAB_BLOCK >= RP_SLOTTAB_BLOCKS)
        return NULL;
    void *_Atomic *bp = &t->blocks[index / RP_SLOTTAB_BLOCK];
    char *b = atomic_load_explicit(bp, memory_order_acquire);
    if (!b && make) {
        void *mine = calloc(RP_SLOTTAB_BLOCK, t->size);
        if (!mine)
            return NULL;
        void *none = NULL;
        if (atomic_compare_exchange_strong_explicit(bp, &none, mine, memory_order_acq_rel,
                                                    memory_order_acquire)) {
            b = mine;
        } else {
            free(mine);                     /* another thread made it first        */
            b = none;
        }
    }
    return b ? b + (size_t)(index % RP_SLOTTAB_BLOCK) * t->size : NULL;
}
