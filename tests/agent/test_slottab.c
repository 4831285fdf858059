/*
 * tests/agent/test_slottab.c — per-slot tables (src/threads/slottab.h) alone: threads
 * that make the same blocks at once all get one entry per index (the CAS
 * loser's block is dropped, no count is lost), entries start zeroed, a lookup
 * without make finds what a make published, and an index beyond the table
 * gets NULL. Suite unit, so the TSan build runs it too.
 *
 * (CHECK counts from one thread only: the racing threads record their own
 * failures in an atomic, checked by main.)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "../check.h"
#include "../../src/threads/slottab.h"

#define THREADS 4
#define ROUNDS 50
#define SPAN (4 * RP_SLOTTAB_BLOCK)      /* four blocks, each made in a race    */
#define STEP 7u

struct entry {
    _Atomic uint64_t n;
    uint32_t gen1;
};
static struct rp_slottab g_tab = RP_SLOTTAB(struct entry);
static _Atomic unsigned g_no_entry, g_not_zeroed, g_moved;

static void *hammer(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++)
        for (uint32_t i = 0; i < SPAN; i += STEP) {
            struct entry *e = rp_slottab_get(&g_tab, i, 1);
            if (!e) {
                atomic_fetch_add(&g_no_entry, 1);
                return NULL;
            }
            if (e->gen1 != 0)
                atomic_fetch_add(&g_not_zeroed, 1);
            atomic_fetch_add(&e->n, 1);
            if (rp_slottab_get(&g_tab, i, 0) != e)
                atomic_fetch_add(&g_moved, 1);
        }
    return NULL;
}

int main(void)
{
    CHECK(rp_slottab_get(&g_tab, 0, 0) == NULL, "a lookup before any make found an entry");
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        REQUIRE(pthread_create(&t[i], NULL, hammer, NULL) == 0, "pthread_create");
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK(atomic_load(&g_no_entry) == 0, "make gave NULL %u times", atomic_load(&g_no_entry));
    CHECK(atomic_load(&g_not_zeroed) == 0, "%u entries not zeroed", atomic_load(&g_not_zeroed));
    CHECK(atomic_load(&g_moved) == 0, "a lookup found another entry %u times",
          atomic_load(&g_moved));
    unsigned lost = 0;
    for (uint32_t i = 0; i < SPAN; i += STEP) {
        struct entry *e = rp_slottab_get(&g_tab, i, 0);
        if (!e || atomic_load(&e->n) != (uint64_t)THREADS * ROUNDS)
            lost++;
    }
    CHECK(lost == 0, "%u entries lost counts (a block made twice?)", lost);
    CHECK(rp_slottab_get(&g_tab, RP_SLOTTAB_BLOCK * RP_SLOTTAB_BLOCKS, 1) == NULL,
          "an index beyond the table got an entry");
    return check_exit("test_slottab");
}
