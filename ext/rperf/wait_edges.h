/*
 * wait_edges.h — who waits on whom: per-Ractor holder history and the
 * bounded table of waiter → holder edges.
 *
 * Each Ractor keeps a ring of recent holder segments (who held its GVL from
 * when: a thread, GC, or nobody = hand-off). A finished wait [ready,
 * resumed) is not split at once: the new holder defers it to the ring's
 * small batch, and a whole batch is split over the segments it overlaps
 * and merged into the edge table together (when the batch is full, when
 * the ring has moved on half its size, or when a report is built). Per
 * wait that touches one record instead of the table's lock and entries,
 * which on a GVL hand-off live on the other CPU. Time older than the ring
 * is "unknown"; the parts always sum to the wait. This file does NOT know
 * about slots or states (contention_events.c decides when to push and defer).
 *
 * Contract
 * - rperf_holder_ring_create/destroy: Ruby context; create returns NULL
 *   when out of memory.
 * - rperf_holder_ring_push / _reclaim_handoff / _resume, rperf_wait_defer: the
 *   Ractor's current GVL holder only (hook context, no allocation). Each
 *   takes the ring's spinlock, which only a report builder in another
 *   thread contends for (counted in rperf_edges_lock_contended).
 * - rperf_edges_cut / rperf_wait_attribute: report builder (Ruby context,
 *   GVL of its own Ractor held); safe on another Ractor's ring (the lock).
 * - rperf_edges_create/destroy: Ruby context, GVL held.
 * - Edge table: one spinlock held for a batch's stores (contended only by
 *   parallel Ractors). Time that does not fit in a full table goes to the
 *   lost handler (waiter seq, ns) and is counted in rperf_edges_dropped.
 * - rperf_edge_list_*: a plain growable array used outside hooks.
 */
#ifndef RPERF_WAIT_EDGES_H
#define RPERF_WAIT_EDGES_H

#include <stddef.h>
#include <stdint.h>

#include "report_format.h" /* enum rperf_holder_kind */

/* A deferred wait is split before the ring has moved on half its size
 * since it was deferred, so every wait still sees the RING_SIZE/2 segments
 * before its end. */
#define RPERF_HOLDER_RING_SIZE 2048
#define RPERF_PENDING_WAITS 64

typedef struct rperf_holder_segment {
    int64_t start_ns;
    int32_t holder_seq; /* thread seq for THREAD and GC, 0 otherwise */
    int32_t holder_label;
    uint32_t epoch; /* profile resume epoch when written */
    uint8_t kind;   /* enum rperf_holder_kind */
} rperf_holder_segment_t;

typedef struct rperf_pending_wait {
    int64_t from_ns;
    int64_t to_ns;
    uint64_t ring_head; /* segments written when the wait ended */
    int32_t waiter;
    int32_t waiter_label;
    uint32_t epoch;
} rperf_pending_wait_t;

typedef struct rperf_holder_ring rperf_holder_ring_t;

typedef struct rperf_edge {
    int32_t ractor;
    int32_t waiter;
    int32_t holder;
    int32_t waiter_label;
    int32_t holder_label;
    uint8_t kind;
    int64_t wait_ns;
    uint64_t count;
} rperf_edge_t;

typedef struct rperf_edge_list {
    rperf_edge_t *items;
    size_t count;
    size_t capacity;
} rperf_edge_list_t;

rperf_holder_ring_t *rperf_holder_ring_create(int ractor_id);
void rperf_holder_ring_destroy(rperf_holder_ring_t *ring);
void rperf_holder_ring_push(rperf_holder_ring_t *ring, int64_t start_ns, int kind, int holder_seq, int holder_label,
                            uint32_t epoch);
/* A duplicate SUSPENDED of `holder_seq`: its previous release was not one,
 * so the hand-off segment it opened becomes that thread's again. */
void rperf_holder_ring_reclaim_handoff(rperf_holder_ring_t *ring, int holder_seq, int holder_label);
/* Queues the wait [from, to) of `waiter` for attribution (from clipped to
 * the last clearing cut); flushes the batch when it is full. */
void rperf_wait_defer(rperf_holder_ring_t *ring, uint32_t epoch, int waiter, int waiter_label, int64_t from,
                      int64_t to);
/* The RESUMED of a thread that waited: rperf_wait_defer of its wait
 * [from, now), then rperf_holder_ring_push of its own segment from now,
 * under one lock acquisition. */
void rperf_holder_ring_resume(rperf_holder_ring_t *ring, uint32_t epoch, int holder_seq, int holder_label,
                              int64_t from, int64_t now);
/* Chooses, per deferred wait, whether a report takes it now (return 1) or
 * it stays deferred (0; it may move p->from_ns later). */
typedef int (*rperf_wait_take_fn)(rperf_pending_wait_t *p, void *arg);
/* Splits the wait [from, to), still open, over `ring` (NULL: all unknown)
 * into `into` (not NULL; it grows). Segments written in an older epoch are
 * unknown. */
void rperf_wait_attribute(rperf_holder_ring_t *ring, uint32_t epoch, int ractor_id, int waiter, int waiter_label,
                          int64_t from, int64_t to, rperf_edge_list_t *into);

/* Called with (waiter seq, ns) for wait time a full table could not take;
 * may run in hook context (atomics only). */
typedef void (*rperf_edge_lost_fn)(int waiter, int64_t ns);
int rperf_edges_create(long capacity, rperf_edge_lost_fn lost);
void rperf_edges_destroy(void);
uint64_t rperf_edges_dropped(int clear);
uint64_t rperf_edges_lock_contended(int clear);
/* A report's cut of the edges, atomic with respect to every ring in
 * `rings` (their locks are held throughout, so no holder defers or flushes
 * meanwhile): attributes the deferred waits `take` accepts (NULL: all),
 * copies the table into `out` (caller frees the list) and, with clear,
 * empties it and clips every wait deferred from now on to start no
 * earlier than `clip_ns`. Returns 0, or -1 when out of memory. */
int rperf_edges_cut(rperf_holder_ring_t *const *rings, int nrings, rperf_wait_take_fn take, void *arg, int clear,
                    int64_t clip_ns, rperf_edge_list_t *out);

void rperf_edge_list_add(rperf_edge_list_t *list, const rperf_edge_t *e);
void rperf_edge_list_free(rperf_edge_list_t *list);

#endif
