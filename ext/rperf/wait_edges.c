/*
 * wait_edges.c — holder rings and the waiter → holder edge table.
 *
 * The table is open addressing over a power-of-two array allocated at
 * start (twice max_edges, so probes stay short); it never grows. One
 * spinlock guards it: with one Ractor only one GVL holder attributes at a
 * time, so the lock is never contended; with parallel Ractors hold times
 * are a few dozen stores. A wait is first merged per holder in a small
 * on-stack array, so the lock is taken once per wait, not per segment.
 */
#include "wait_edges.h"

#include <stdlib.h>
#include <string.h>

typedef struct edge_entry {
    rperf_edge_t edge;
    uint32_t hash;
    int used;
} edge_entry_t;

static struct {
    edge_entry_t *entries;
    size_t mask;          /* buckets - 1 */
    size_t limit;         /* max_edges */
    size_t used;
    int lock;             /* spinlock */
    uint64_t dropped;     /* atomic */
    uint64_t contended;   /* atomic */
} table;

void
rperf_holder_ring_push(rperf_holder_ring_t *ring, int64_t start_ns, int kind,
                       int holder_seq, int holder_label, uint32_t epoch)
{
    if (!ring) return;
    rperf_holder_segment_t *last = rperf_holder_ring_last(ring);
    /* Same holder again (a label-less re-push): keep the older start. */
    if (last && last->kind == kind && last->holder_seq == holder_seq &&
        last->holder_label == holder_label && last->epoch == epoch)
        return;
    rperf_holder_segment_t *s = &ring->seg[ring->head % RPERF_HOLDER_RING_SIZE];
    s->start_ns = start_ns;
    s->kind = (uint8_t)kind;
    s->holder_seq = holder_seq;
    s->holder_label = holder_label;
    s->epoch = epoch;
    ring->head++;
}

rperf_holder_segment_t *
rperf_holder_ring_last(rperf_holder_ring_t *ring)
{
    if (!ring || ring->head == 0) return NULL;
    return &ring->seg[(ring->head - 1) % RPERF_HOLDER_RING_SIZE];
}

int
rperf_edges_create(long capacity)
{
    if (capacity < 1) capacity = 1;
    size_t buckets = 16;
    while (buckets < (size_t)capacity * 2) buckets <<= 1;
    table.entries = calloc(buckets, sizeof(edge_entry_t));
    if (!table.entries) return -1;
    table.mask = buckets - 1;
    table.limit = (size_t)capacity;
    table.used = 0;
    table.lock = 0;
    table.dropped = 0;
    table.contended = 0;
    return 0;
}

void
rperf_edges_destroy(void)
{
    free(table.entries);
    memset(&table, 0, sizeof(table));
}

static void
spin_lock(void)
{
    if (!__atomic_exchange_n(&table.lock, 1, __ATOMIC_ACQUIRE)) return;
    __atomic_fetch_add(&table.contended, 1, __ATOMIC_RELAXED);
    while (__atomic_exchange_n(&table.lock, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&table.lock, __ATOMIC_RELAXED))
            __builtin_ia32_pause();
    }
}

static void
spin_unlock(void)
{
    __atomic_store_n(&table.lock, 0, __ATOMIC_RELEASE);
}

static uint32_t
edge_hash(const rperf_edge_t *e)
{
    uint32_t h = 2166136261u;
    const int32_t parts[6] = { e->ractor, e->waiter, e->holder, e->waiter_label,
                               e->holder_label, e->kind };
    for (int i = 0; i < 6; i++) {
        h ^= (uint32_t)parts[i];
        h *= 16777619u;
    }
    return h;
}

static int
edge_same_key(const rperf_edge_t *a, const rperf_edge_t *b)
{
    return a->ractor == b->ractor && a->waiter == b->waiter && a->holder == b->holder &&
           a->waiter_label == b->waiter_label && a->holder_label == b->holder_label &&
           a->kind == b->kind;
}

/* Lock held. Returns 0, or -1 when the table is full. */
static int
table_add_locked(const rperf_edge_t *e)
{
    if (!table.entries) return -1;
    uint32_t h = edge_hash(e);
    for (size_t i = h & table.mask;; i = (i + 1) & table.mask) {
        edge_entry_t *slot = &table.entries[i];
        if (!slot->used) {
            if (table.used >= table.limit) return -1;
            slot->edge = *e;
            slot->hash = h;
            slot->used = 1;
            table.used++;
            return 0;
        }
        if (slot->hash == h && edge_same_key(&slot->edge, e)) {
            slot->edge.wait_ns += e->wait_ns;
            slot->edge.count += e->count;
            return 0;
        }
    }
}

#define LOCAL_HOLDERS 32

typedef struct local_acc {
    rperf_edge_t items[LOCAL_HOLDERS];
    int n;
} local_acc_t;

/* Returns ns that could not be stored. */
static int64_t
flush_local(local_acc_t *acc, rperf_edge_list_t *into)
{
    int64_t lost = 0;
    if (acc->n == 0) return 0;
    if (into) {
        for (int i = 0; i < acc->n; i++) rperf_edge_list_add(into, &acc->items[i]);
    }
    else {
        spin_lock();
        for (int i = 0; i < acc->n; i++) {
            if (table_add_locked(&acc->items[i]) < 0) lost += acc->items[i].wait_ns;
        }
        spin_unlock();
        if (lost) __atomic_fetch_add(&table.dropped, 1, __ATOMIC_RELAXED);
    }
    acc->n = 0;
    return lost;
}

static int64_t
local_add(local_acc_t *acc, const rperf_edge_t *proto, int kind, int holder, int holder_label,
          int64_t ns, rperf_edge_list_t *into)
{
    int64_t lost = 0;
    if (ns <= 0) return 0;
    if (kind != RPERF_HOLDER_THREAD) holder = 0;
    if (kind == RPERF_HOLDER_HANDOFF || kind == RPERF_HOLDER_UNKNOWN) holder_label = 0;
    for (int i = 0; i < acc->n; i++) {
        rperf_edge_t *e = &acc->items[i];
        if (e->kind == kind && e->holder == holder && e->holder_label == holder_label) {
            e->wait_ns += ns;
            return 0;
        }
    }
    if (acc->n == LOCAL_HOLDERS) lost = flush_local(acc, into);
    rperf_edge_t *e = &acc->items[acc->n++];
    *e = *proto;
    e->kind = (uint8_t)kind;
    e->holder = holder;
    e->holder_label = holder_label;
    e->wait_ns = ns;
    e->count = 1;
    return lost;
}

int64_t
rperf_wait_attribute(const rperf_holder_ring_t *ring, uint32_t epoch, int ractor_id,
                     int waiter, int waiter_label, int64_t from, int64_t to,
                     rperf_edge_list_t *into)
{
    if (to <= from) return 0;
    local_acc_t acc;
    acc.n = 0;
    rperf_edge_t proto;
    memset(&proto, 0, sizeof(proto));
    proto.ractor = ractor_id;
    proto.waiter = waiter;
    proto.waiter_label = waiter_label;
    int64_t lost = 0;
    int64_t seg_end = to;

    if (ring) {
        uint64_t head = ring->head;
        uint64_t oldest = head > RPERF_HOLDER_RING_SIZE ? head - RPERF_HOLDER_RING_SIZE : 0;
        for (uint64_t i = head; i > oldest && seg_end > from; i--) {
            const rperf_holder_segment_t *s = &ring->seg[(i - 1) % RPERF_HOLDER_RING_SIZE];
            int64_t lo = s->start_ns > from ? s->start_ns : from;
            if (seg_end > lo) {
                int kind = s->epoch == epoch ? s->kind : RPERF_HOLDER_UNKNOWN;
                lost += local_add(&acc, &proto, kind, s->holder_seq, s->holder_label,
                                  seg_end - lo, into);
            }
            if (s->start_ns < seg_end) seg_end = s->start_ns;
        }
    }
    if (seg_end > from)
        lost += local_add(&acc, &proto, RPERF_HOLDER_UNKNOWN, 0, 0, seg_end - from, into);
    lost += flush_local(&acc, into);
    return lost;
}

uint64_t
rperf_edges_dropped(int clear)
{
    if (clear) return __atomic_exchange_n(&table.dropped, 0, __ATOMIC_RELAXED);
    return __atomic_load_n(&table.dropped, __ATOMIC_RELAXED);
}

uint64_t
rperf_edges_lock_contended(int clear)
{
    if (clear) return __atomic_exchange_n(&table.contended, 0, __ATOMIC_RELAXED);
    return __atomic_load_n(&table.contended, __ATOMIC_RELAXED);
}

int
rperf_edges_copy(rperf_edge_list_t *out, int clear)
{
    memset(out, 0, sizeof(*out));
    if (!table.entries) return 0;
    /* Allocate before locking: hooks must never spin behind malloc. */
    size_t cap = table.limit;
    out->items = malloc((cap ? cap : 1) * sizeof(rperf_edge_t));
    if (!out->items) return -1;
    out->capacity = cap;
    spin_lock();
    for (size_t i = 0; i <= table.mask && out->count < cap; i++) {
        if (table.entries[i].used) out->items[out->count++] = table.entries[i].edge;
    }
    if (clear) {
        memset(table.entries, 0, (table.mask + 1) * sizeof(edge_entry_t));
        table.used = 0;
    }
    spin_unlock();
    return 0;
}

void
rperf_edge_list_add(rperf_edge_list_t *list, const rperf_edge_t *e)
{
    for (size_t i = 0; i < list->count; i++) {
        rperf_edge_t *x = &list->items[i];
        if (edge_same_key(x, e)) {
            x->wait_ns += e->wait_ns;
            x->count += e->count;
            return;
        }
    }
    if (list->count == list->capacity) {
        size_t cap = list->capacity ? list->capacity * 2 : 16;
        rperf_edge_t *p = realloc(list->items, cap * sizeof(rperf_edge_t));
        if (!p) return;
        list->items = p;
        list->capacity = cap;
    }
    list->items[list->count++] = *e;
}

void
rperf_edge_list_free(rperf_edge_list_t *list)
{
    free(list->items);
    memset(list, 0, sizeof(*list));
}
