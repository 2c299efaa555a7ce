/*
 * ractor_registry.h — which Ractor is calling: its slot in the Ractor
 * table (ractor_table.h), found by the Ractor's main thread.
 *
 * rb_thread_main() reads the calling Ractor's main thread (a field read,
 * no allocation), and a Ractor's main thread is the same object for its
 * whole life: so a hook can name the Ractor of the thread it runs for,
 * and take a prepared table slot for a Ractor it meets first. Ractor-local
 * storage is not used: setting it allocates, so a Ractor that ran and
 * ended before a job could set it stayed unknown. A job prepares the next
 * slots (allocating) outside hooks. This file does NOT own the table
 * (ractor_table.c) and does NOT charge time (contention_events.c).
 *
 * Contract
 * - init: once, at Init (pre-registers the preparing job).
 * - current: a thread holding its Ractor's GVL with its execution context
 *   set (RESUMED, GC hooks, Ruby methods), while the Ractor's main thread
 *   has not finished (Ruby clears it at the Ractor's teardown, before the
 *   main thread's last SUSPENDED: do not call it from SUSPENDED). Never
 *   allocates. NULL when no profile is open, the table is full or no slot
 *   is prepared (the job is then asked to prepare more).
 * - prepare: Ruby context outside hooks (allocates): the main Ractor at
 *   start, before its first current().
 * - mark: the profiler's mark function; keeps the keys (main threads) of
 *   the table alive and unmoved, so a key never names two Ractors.
 */
#ifndef RPERF_RACTOR_REGISTRY_H
#define RPERF_RACTOR_REGISTRY_H

#include "ractor_table.h"

void rperf_ractor_registry_init(void);
rperf_ractor_slot_t *rperf_ractor_current(void);
int rperf_ractor_prepare(void);
void rperf_ractor_registry_mark(void);

#endif
