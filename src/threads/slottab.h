/*
 * src/threads/slottab.h — per-slot tables: what one module keeps for each thread slot
 * (threads.h), outside struct rp_slot, so that the slot holds only what the
 * registry and the signal handler share.
 *
 * A table is an array of fixed-size entries indexed by the slot's index, in
 * blocks of RP_SLOTTAB_BLOCK entries allocated (zeroed) at the first use of an
 * index in them and never freed while the library is loaded; an entry's address
 * never changes. A block is published with a compare-and-swap, so any thread may
 * make one (the allocation and monitor callbacks run on application threads);
 * the loser of a race frees its copy.
 *
 * A slot is reused by the next thread that starts: an entry that belongs to one
 * occupant rather than to the slot keeps the occupant's generation (the slot's
 * `gen` + 1; 0: nothing kept) and is taken only when it matches. That is the
 * module's business, not the table's.
 *
 * Threads: rp_slottab_get from any thread, concurrently. With make = 0 it only
 * loads a pointer (no allocation, no lock), which the signal handler may do
 * (vthreads.c reads the mounted virtual thread so); make allocates, never in
 * a handler.
 */
#ifndef RINGPROF_SRC_SLOTTAB_H
#define RINGPROF_SRC_SLOTTAB_H

#include <stddef.h>
#include <stdint.h>

#define RP_SLOTTAB_BLOCK 256u
#define RP_SLOTTAB_BLOCKS 1024u            /* 262144 slots, the registry's most   */

struct rp_slottab {
    size_t size;                           /* bytes of one entry                   */
    void *_Atomic blocks[RP_SLOTTAB_BLOCKS];
};

/* A table of entries of `type`, as a static initialiser. */
#define RP_SLOTTAB(type) { .size = sizeof(type) }

/* The entry of slot `index`: zeroed when its block was made. With `make`, the
 * block is made if it is not yet. @return NULL if there is none (not made, no
 * memory, index beyond the registry's most). */
void *rp_slottab_get(struct rp_slottab *t, uint32_t index, int make);

#endif
