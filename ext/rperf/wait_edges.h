/*
 * wait_edges.h — who waits on whom: per-Ractor holder history and the
 * bounded table of waiter → holder edges.
 *
 * Each Ractor keeps a ring of recent holder segments (who held its GVL from
 * when: a thread, GC, or nobody = hand-off). When a waiter acquires the
 * GVL, its wait [ready, resumed) is split over the segments it overlaps
 * and added to the edge table; time older than the ring is "unknown". The
 * parts always sum to the wait. This file does NOT know about slots or
 * states (contention.c decides when to push and attribute).
 *
 * Contract
 * - rperf_holder_ring_*: only the Ractor's current GVL holder writes or
 *   reads its ring (hook context, no allocation).
 * - rperf_edges_create/destroy/copy: Ruby context, GVL held.
 * - rperf_wait_attribute / rperf_edges_add: hook context; the table is
 *   protected by a spinlock held for a few stores (contended only by
 *   parallel Ractors; contended acquisitions are counted). A full table
 *   returns the unplaced ns so the caller charges it to the waiter's
 *   overflow (counted in dropped_edges).
 * - rperf_edge_list_*: a plain growable array used outside hooks.
 */
#ifndef RPERF_WAIT_EDGES_H
#define RPERF_WAIT_EDGES_H

#include <stddef.h>
#include <stdint.h>

enum rperf_holder_kind {
    RPERF_HOLDER_HANDOFF = 0,
    RPERF_HOLDER_THREAD = 1,
    RPERF_HOLDER_GC = 2,
    RPERF_HOLDER_UNKNOWN = 3
};

#define RPERF_HOLDER_RING_SIZE 1024

typedef struct rperf_holder_segment {
    int64_t start_ns;
    int32_t holder_seq;       /* thread seq for THREAD and GC, 0 otherwise */
    int32_t holder_label;
    uint32_t epoch;           /* profile resume epoch when written */
    uint8_t kind;             /* enum rperf_holder_kind */
} rperf_holder_segment_t;

typedef struct rperf_holder_ring {
    rperf_holder_segment_t seg[RPERF_HOLDER_RING_SIZE];
    uint64_t head;            /* segments written so far */
} rperf_holder_ring_t;

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

void rperf_holder_ring_push(rperf_holder_ring_t *ring, int64_t start_ns, int kind,
                            int holder_seq, int holder_label, uint32_t epoch);
/* The latest segment, or NULL when the ring is empty. */
rperf_holder_segment_t *rperf_holder_ring_last(rperf_holder_ring_t *ring);

int  rperf_edges_create(long capacity);
void rperf_edges_destroy(void);
/* Splits [from, to) over `ring` (NULL: all unknown). Segments written in an
 * older epoch are unknown. Returns ns that did not fit in the table. */
int64_t rperf_wait_attribute(const rperf_holder_ring_t *ring, uint32_t epoch, int ractor_id,
                             int waiter, int waiter_label, int64_t from, int64_t to,
                             rperf_edge_list_t *into);
uint64_t rperf_edges_dropped(int clear);
uint64_t rperf_edges_lock_contended(int clear);
/* Copies the table (caller frees the list); clear empties it. */
int  rperf_edges_copy(rperf_edge_list_t *out, int clear);

void rperf_edge_list_add(rperf_edge_list_t *list, const rperf_edge_t *e);
void rperf_edge_list_free(rperf_edge_list_t *list);

#endif
