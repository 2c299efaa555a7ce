/*
 * ractor_table.h — the fixed table of Ractors a profile has seen: one slot
 * per Ractor with its holder ring, its timeline buffer and its waiters
 * count, handed out by index and found again through a token.
 *
 * Plain C (no Ruby): the Ruby side (ractor_registry.h) stores a Ractor's
 * token in Ractor-local storage and asks this table to decode it. A token
 * encodes the table's generation (bumped at every open) and the slot's
 * index, so a token left in a Ractor by an earlier profile decodes to NULL.
 * This file does NOT know which Ractor is calling (ractor_registry.c does)
 * and does NOT charge time (contention.c).
 *
 * Contract
 * - open/close: one caller at a time (the profiler's start/stop, main
 *   Ractor, GVL held); close frees every ring and buffer, so no hook may
 *   run any more when it is called. open on an open table closes it first.
 * - add: any thread outside hooks (it allocates the ring and the buffer);
 *   concurrent adds get distinct slots (one atomic fetch_add). Returns the
 *   new slot and its token, or NULL when the table is full (RPERF_MAX_RACTORS)
 *   or out of memory.
 * - decode, by_id, count, waiters: any context including hooks; never
 *   allocate, never block. A slot is visible to them once add has
 *   published it (release/acquire) and stays valid until close.
 * - The slot's `waiters` and `holder_seq` are atomic; `ring` is written by the Ractor's GVL
 *   holder (wait_edges.h rules); `intervals` has one producer, the holder.
 */
#ifndef RPERF_RACTOR_TABLE_H
#define RPERF_RACTOR_TABLE_H

#include <stdint.h>

#include "interval_buffer.h"
#include "wait_edges.h"
#include "rperf_limits.h" /* RPERF_MAX_RACTORS */

/* Per-thread and per-Ractor records written by hooks on different CPUs
 * start on their own cache line (no false sharing). */
#define RPERF_CACHE_LINE 64

/* `waiters` changes at every READY and RESUMED (on different CPUs) and the
 * interval buffer's head at every push: each sits on its own cache line, so
 * neither drags the read-mostly fields, nor the other, between CPUs. */
typedef struct rperf_ractor_slot {
    int id;                                                 /* 1-based; the first added (the main Ractor) is 1 */
    int main;                                               /* set by the caller that registers the main Ractor */
    rperf_holder_ring_t *ring;                              /* holder history, written by the GVL holder */
    int waiters __attribute__((aligned(RPERF_CACHE_LINE))); /* atomic: threads between READY and RESUMED */
    /* Written by the holder at RESUMED and SUSPENDED, read by READY: on a
     * line of its own, away from `waiters` (written by every READY). The
     * thread holding the GVL now, 0 if none. */
    int holder_seq __attribute__((aligned(RPERF_CACHE_LINE)));
    rperf_interval_buffer_t intervals __attribute__((aligned(RPERF_CACHE_LINE)));
} rperf_ractor_slot_t;

/* Empties the table and starts a new generation. With timeline set and
 * max_intervals > 0 each Ractor added gets a timeline buffer of that many
 * intervals (a Ractor whose buffer cannot be had records none: its
 * intervals are counted as dropped). */
void rperf_ractor_table_open(int timeline, uint64_t max_intervals);
void rperf_ractor_table_close(void);
int rperf_ractor_table_is_open(void);

rperf_ractor_slot_t *rperf_ractor_table_add(uintptr_t *token);
/* The slot of a token from add in the current generation, else NULL. */
rperf_ractor_slot_t *rperf_ractor_table_decode(uintptr_t token);

rperf_ractor_slot_t *rperf_ractor_by_id(int id);        /* NULL when not published */
int rperf_ractor_count(void);                           /* indexes handed out, at most RPERF_MAX_RACTORS */
int rperf_ractor_waiters(const rperf_ractor_slot_t *r); /* never negative */

#endif
