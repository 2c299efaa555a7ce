/*
 * ractor_table.h — the fixed table of Ractors a profile has seen: one slot
 * per Ractor with its holder ring, its timeline buffer and its waiters
 * count, handed out by index and found again by the Ractor's key.
 *
 * Plain C (no Ruby): the key is an opaque word the caller chooses (the
 * Ruby side, ractor_registry.h, uses the Ractor's main thread). Slots are
 * prepared ahead (ring and buffer allocated) outside hooks, so a hook can
 * take one for a Ractor it meets first without allocating. This file does
 * NOT know which Ractor is calling (ractor_registry.c does) and does NOT
 * charge time (contention_events.c).
 *
 * Contract
 * - open/close: one caller at a time (the profiler's start/stop, main
 *   Ractor, GVL held); close frees every ring and buffer, so no hook may
 *   run any more when it is called (a prepare in another Ractor waits for
 *   it, then finds the table closed). open on an open table closes it first.
 * - prepare: any thread outside hooks (it allocates); callers are
 *   serialised by a mutex. It keeps `ahead` slots prepared beyond those
 *   taken. Returns -1 when an allocation failed (fewer are prepared).
 * - take: any context including hooks; never allocates, never blocks.
 *   Hands out the next prepared slot for `key` (one CAS), or NULL when
 *   none is prepared or the table is full (RPERF_MAX_RACTORS). The caller
 *   must not take twice for one key: callers for one Ractor hold its GVL.
 * - find, by_id, count, waiters: any context including hooks; never
 *   allocate, never block. A slot is visible to them once take has
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
    int id;                                                 /* 1-based; the first taken (the main Ractor) is 1 */
    int main;                                               /* set by the caller that registers the main Ractor */
    uintptr_t key;                                          /* the caller's name for the Ractor, set by take */
    rperf_holder_ring_t *ring;                              /* holder history, written by the GVL holder */
    int waiters __attribute__((aligned(RPERF_CACHE_LINE))); /* atomic: threads between READY and RESUMED */
    /* Written by the holder at RESUMED and SUSPENDED, read by READY: on a
     * line of its own, away from `waiters` (written by every READY). The
     * thread holding the GVL now, 0 if none. */
    int holder_seq __attribute__((aligned(RPERF_CACHE_LINE)));
    rperf_interval_buffer_t intervals __attribute__((aligned(RPERF_CACHE_LINE)));
} rperf_ractor_slot_t;

/* Empties the table. With timeline set and max_intervals > 0 each slot
 * prepared gets a timeline buffer of that many intervals (a Ractor whose
 * buffer cannot be had records none: its intervals are counted as
 * dropped). */
void rperf_ractor_table_open(int timeline, uint64_t max_intervals);
void rperf_ractor_table_close(void);
int rperf_ractor_table_is_open(void);
/* Fork child (atfork handler): the preparers' mutex anew. */
void rperf_ractor_table_after_fork_child(void);

/* Slots prepared beyond those taken: at least `ahead`, and as many as are
 * taken (up to RPERF_RACTORS_AHEAD_MAX), so that a program starting
 * Ractors in bursts finds slots ready before the next prepare runs. */
#define RPERF_RACTORS_PREPARED_AHEAD 8
#define RPERF_RACTORS_AHEAD_MAX 64
int rperf_ractor_table_prepare(int ahead);
rperf_ractor_slot_t *rperf_ractor_table_take(uintptr_t key);
/* The slot taken for `key`, else NULL. */
rperf_ractor_slot_t *rperf_ractor_table_find(uintptr_t key);

rperf_ractor_slot_t *rperf_ractor_by_id(int id);        /* NULL when not published */
int rperf_ractor_count(void);                           /* indexes handed out, at most RPERF_MAX_RACTORS */
int rperf_ractor_waiters(const rperf_ractor_slot_t *r); /* never negative */

#endif
