/*
 * wait_edges.c — holder rings, deferred waits and the waiter → holder edge
 * table.
 *
 * The table is open addressing over a power-of-two array allocated at
 * start (twice max_edges, so probes stay short); it never grows, so hooks
 * can fill it (common/hash_index.c grows, and so allocates). One
 * spinlock guards it. Waits reach it in batches: the holder that ends a
 * wait appends a 40-byte record to its Ractor's ring, and a batch is split
 * over the ring's segments and merged on the stack before the table is
 * locked once for all of it. On a GVL hand-off the table's lock and
 * entries were last written on the other CPU, so touching them once per
 * batch instead of once per wait is where the time goes.
 *
 * It does NOT decide when waits begin or end, nor read slots.
 */
#include "wait_edges.h"
#include "grow_array.h"
#include "hash_index.h" /* rperf_hash_word: no allocation */

#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#define CACHE_LINE 64

struct rperf_holder_ring {
    /* Written by every push and deferral: one line. */
    uint64_t head;         /* segments written so far */
    uint64_t pending_head; /* head when the oldest pending wait ended */
    int64_t clip_ns;       /* deferred waits start no earlier (last clearing cut) */
    int lock;              /* spinlock: the holder vs a report builder */
    int npending;
    int ractor_id;
    rperf_pending_wait_t pending[RPERF_PENDING_WAITS] __attribute__((aligned(CACHE_LINE)));
    rperf_holder_segment_t seg[RPERF_HOLDER_RING_SIZE];
} __attribute__((aligned(CACHE_LINE)));

typedef struct edge_entry {
    rperf_edge_t edge;
    uint32_t hash;
    int used;
} edge_entry_t;

static struct {
    edge_entry_t *entries;
    /* The buckets in use, in the order they were taken: a cut reads and
     * clears these alone. Scanning every bucket read every page of the
     * table, and a read fault makes an untouched page resident where the
     * kernel maps no shared zero page (6 MiB at the default max_edges). */
    uint32_t *taken;
    size_t mask;  /* buckets - 1 */
    size_t limit; /* max_edges */
    size_t used;
    int lock;           /* spinlock */
    uint64_t dropped;   /* atomic */
    uint64_t contended; /* atomic: table and ring locks */
    rperf_edge_lost_fn lost;
} table;

static void
spin_lock(int *lock)
{
    if (!__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE))
        return;
    __atomic_fetch_add(&table.contended, 1, __ATOMIC_RELAXED);
    while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(lock, __ATOMIC_RELAXED))
            __builtin_ia32_pause();
    }
}

static void
spin_unlock(int *lock)
{
    __atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------ */
/* edge keys and the table                                             */

static uint32_t
edge_hash(const rperf_edge_t *e)
{
    uint32_t h = rperf_hash_word(RPERF_HASH_SEED, ((uint64_t)(uint32_t)e->ractor << 32) | (uint32_t)e->waiter);
    h = rperf_hash_word(h, ((uint64_t)(uint32_t)e->holder << 32) | (uint32_t)e->waiter_label);
    return rperf_hash_word(h, ((uint64_t)(uint32_t)e->holder_label << 32) | e->kind);
}

static int
edge_same_key(const rperf_edge_t *a, const rperf_edge_t *b)
{
    return a->ractor == b->ractor && a->waiter == b->waiter && a->holder == b->holder &&
           a->waiter_label == b->waiter_label && a->holder_label == b->holder_label && a->kind == b->kind;
}

/* Table lock held. Returns 0, or -1 when the table is full. */
static int
table_add_locked(const rperf_edge_t *e, uint32_t h)
{
    if (!table.entries)
        return -1;
    for (size_t i = h & table.mask;; i = (i + 1) & table.mask) {
        edge_entry_t *slot = &table.entries[i];
        if (!slot->used) {
            if (table.used >= table.limit)
                return -1;
            slot->edge = *e;
            slot->hash = h;
            slot->used = 1;
            table.taken[table.used++] = (uint32_t)i;
            return 0;
        }
        if (slot->hash == h && edge_same_key(&slot->edge, e)) {
            slot->edge.wait_ns += e->wait_ns;
            slot->edge.count += e->count;
            return 0;
        }
    }
}

static size_t
table_bytes(size_t buckets, size_t limit)
{
    return buckets * sizeof(edge_entry_t) + limit * sizeof(uint32_t);
}

int
rperf_edges_create(long capacity, rperf_edge_lost_fn lost)
{
    if (capacity < 1)
        capacity = 1;
    size_t buckets = 16;
    while (buckets < (size_t)capacity * 2)
        buckets <<= 1;
    /* mmap, not calloc: calloc of memory the heap had freed zeroes every
     * page of it (6 MiB at the default max_edges) at each start; fresh
     * mappings stay untouched until an edge lands there. */
    void *entries = mmap(NULL, table_bytes(buckets, (size_t)capacity), PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (entries == MAP_FAILED)
        return -1;
    table.entries = entries;
    table.taken = (uint32_t *)(table.entries + buckets);
    table.mask = buckets - 1;
    table.limit = (size_t)capacity;
    table.used = 0;
    table.lock = 0;
    table.dropped = 0;
    table.contended = 0;
    table.lost = lost;
    return 0;
}

void
rperf_edges_destroy(void)
{
    if (table.entries)
        munmap(table.entries, table_bytes(table.mask + 1, table.limit));
    memset(&table, 0, sizeof(table));
}

/* ------------------------------------------------------------------ */
/* merging a batch                                                     */

/* The edges of one batch, open addressing on the stack; spilled when it
 * fills. `last_wait` makes an edge's count the number of waits that
 * overlapped that holder, however many of the holder's segments one wait
 * spans. Where it spills is a function chosen at init: the hooks' batches
 * spill into the table (no allocation), a report's into its list (which
 * grows); so no hook path names the list's allocator. */
#define BATCH_BUCKETS 64
#define BATCH_LIMIT 48
typedef struct batch batch_t;
typedef void (*batch_spill_fn)(batch_t *b);
struct batch {
    rperf_edge_t items[BATCH_BUCKETS];
    uint32_t hash[BATCH_BUCKETS];
    int last_wait[BATCH_BUCKETS];
    unsigned char used[BATCH_BUCKETS];
    int n;
    batch_spill_fn spill;
    rperf_edge_list_t *list; /* spill_to_list's */
};

static void
batch_init(batch_t *b, batch_spill_fn spill, rperf_edge_list_t *list)
{
    memset(b->used, 0, sizeof(b->used));
    b->n = 0;
    b->spill = spill;
    b->list = list;
}

static void
spill_to_list(batch_t *b)
{
    for (int i = 0; i < BATCH_BUCKETS; i++) {
        if (b->used[i])
            rperf_edge_list_add(b->list, &b->items[i]);
    }
    batch_init(b, spill_to_list, b->list);
}

static void
spill_to_table(batch_t *b)
{
    int dropped = 0;
    spin_lock(&table.lock);
    for (int i = 0; i < BATCH_BUCKETS; i++) {
        if (!b->used[i])
            continue;
        if (table_add_locked(&b->items[i], b->hash[i]) < 0) {
            dropped = 1;
            if (table.lost)
                table.lost(b->items[i].waiter, b->items[i].wait_ns);
        }
    }
    spin_unlock(&table.lock);
    if (dropped)
        __atomic_fetch_add(&table.dropped, 1, __ATOMIC_RELAXED);
    batch_init(b, spill_to_table, NULL);
}

static void
batch_spill(batch_t *b)
{
    if (b->n > 0)
        b->spill(b);
}

/* Adds `ns` of wait number `wait` to the edge `key` (wait_ns and count
 * unset). */
static void
batch_add(batch_t *b, rperf_edge_t *key, int wait, int64_t ns)
{
    if (ns <= 0)
        return;
    if (key->kind != RPERF_HOLDER_THREAD)
        key->holder = 0;
    if (key->kind == RPERF_HOLDER_HANDOFF || key->kind == RPERF_HOLDER_UNKNOWN)
        key->holder_label = 0;
    uint32_t h = edge_hash(key);
    for (;;) {
        for (uint32_t i = h & (BATCH_BUCKETS - 1);; i = (i + 1) & (BATCH_BUCKETS - 1)) {
            if (!b->used[i]) {
                if (b->n >= BATCH_LIMIT)
                    break;
                b->used[i] = 1;
                b->hash[i] = h;
                b->items[i] = *key;
                b->items[i].wait_ns = ns;
                b->items[i].count = 1;
                b->last_wait[i] = wait;
                b->n++;
                return;
            }
            rperf_edge_t *e = &b->items[i];
            if (b->hash[i] == h && edge_same_key(e, key)) {
                e->wait_ns += ns;
                if (b->last_wait[i] != wait) {
                    e->count++;
                    b->last_wait[i] = wait;
                }
                return;
            }
        }
        batch_spill(b);
    }
}

/* Ring lock held (or ring NULL). Splits wait number `wait`, [from, to),
 * over the segments written before `head`. Hand-off and unknown time
 * (holder 0, label 0: one edge each per wait) is summed over the wait's
 * segments and added once: a wait that spans several hand-offs, the
 * common case on a busy GVL, then costs one batch insert per thread
 * holder and not one per segment. */
static void
attribute_locked(const rperf_holder_ring_t *ring, uint64_t head, uint32_t epoch, int ractor_id, int waiter,
                 int waiter_label, int64_t from, int64_t to, int wait, batch_t *b)
{
    if (to <= from)
        return;
    rperf_edge_t key;
    memset(&key, 0, sizeof(key));
    key.ractor = ractor_id;
    key.waiter = waiter;
    key.waiter_label = waiter_label;
    int64_t seg_end = to;
    int64_t handoff_ns = 0;
    int64_t unknown_ns = 0;

    if (ring) {
        /* Segments the ring has overwritten since are unknown. */
        uint64_t oldest = ring->head > RPERF_HOLDER_RING_SIZE ? ring->head - RPERF_HOLDER_RING_SIZE : 0;
        for (uint64_t i = head; i > oldest && seg_end > from; i--) {
            const rperf_holder_segment_t *s = &ring->seg[(i - 1) % RPERF_HOLDER_RING_SIZE];
            int64_t lo = s->start_ns > from ? s->start_ns : from;
            if (seg_end > lo) {
                int kind = s->epoch == epoch ? s->kind : RPERF_HOLDER_UNKNOWN;
                if (kind == RPERF_HOLDER_HANDOFF) {
                    handoff_ns += seg_end - lo;
                } else if (kind == RPERF_HOLDER_UNKNOWN) {
                    unknown_ns += seg_end - lo;
                } else {
                    key.kind = (uint8_t)kind;
                    key.holder = s->holder_seq;
                    key.holder_label = s->holder_label;
                    batch_add(b, &key, wait, seg_end - lo);
                }
            }
            if (s->start_ns < seg_end)
                seg_end = s->start_ns;
        }
    }
    if (seg_end > from)
        unknown_ns += seg_end - from;
    if (handoff_ns > 0) {
        key.kind = RPERF_HOLDER_HANDOFF;
        batch_add(b, &key, wait, handoff_ns);
    }
    if (unknown_ns > 0) {
        key.kind = RPERF_HOLDER_UNKNOWN;
        batch_add(b, &key, wait, unknown_ns);
    }
}

/* Ring lock held. Waits `take` refuses move to the front, in order. */
static void
flush_locked(rperf_holder_ring_t *ring, rperf_wait_take_fn take, void *arg)
{
    if (ring->npending == 0)
        return;
    batch_t batch;
    batch_init(&batch, spill_to_table, NULL);
    int kept = 0;
    for (int i = 0; i < ring->npending; i++) {
        rperf_pending_wait_t *p = &ring->pending[i];
        if (take && !take(p, arg)) {
            ring->pending[kept++] = *p;
            continue;
        }
        attribute_locked(ring, p->ring_head, p->epoch, ring->ractor_id, p->waiter, p->waiter_label, p->from_ns,
                         p->to_ns, i, &batch);
    }
    batch_spill(&batch);
    ring->npending = kept;
    if (kept)
        ring->pending_head = ring->pending[0].ring_head;
}

/* ------------------------------------------------------------------ */
/* rings                                                               */

rperf_holder_ring_t *
rperf_holder_ring_create(int ractor_id)
{
    rperf_holder_ring_t *ring = aligned_alloc(CACHE_LINE, sizeof(rperf_holder_ring_t));
    if (!ring)
        return NULL;
    /* Only the header: segments and pending waits are read below `head`
     * and `npending` alone, so rings prepared ahead for Ractors that may
     * never come touch one page each. */
    memset(ring, 0, offsetof(rperf_holder_ring_t, pending));
    ring->ractor_id = ractor_id;
    return ring;
}

void
rperf_holder_ring_destroy(rperf_holder_ring_t *ring)
{
    free(ring);
}

static rperf_holder_segment_t *
ring_last(rperf_holder_ring_t *ring)
{
    if (ring->head == 0)
        return NULL;
    return &ring->seg[(ring->head - 1) % RPERF_HOLDER_RING_SIZE];
}

/* Ring lock held. */
static void
push_locked(rperf_holder_ring_t *ring, int64_t start_ns, int kind, int holder_seq, int holder_label, uint32_t epoch)
{
    rperf_holder_segment_t *last = ring_last(ring);
    /* Same holder again (a label-less re-push): keep the older start. */
    if (last && last->kind == kind && last->holder_seq == holder_seq && last->holder_label == holder_label &&
        last->epoch == epoch)
        return;
    /* Pending waits must still find their segments. */
    if (ring->npending && ring->head - ring->pending_head >= RPERF_HOLDER_RING_SIZE / 2)
        flush_locked(ring, NULL, NULL);
    rperf_holder_segment_t *s = &ring->seg[ring->head % RPERF_HOLDER_RING_SIZE];
    s->start_ns = start_ns;
    s->kind = (uint8_t)kind;
    s->holder_seq = holder_seq;
    s->holder_label = holder_label;
    s->epoch = epoch;
    ring->head++;
}

/* Ring lock held. */
static void
defer_locked(rperf_holder_ring_t *ring, uint32_t epoch, int waiter, int waiter_label, int64_t from, int64_t to)
{
    /* Under the lock: a cut that cleared the table while this hook waited
     * for the lock counted the part before it as an open wait. */
    if (from < ring->clip_ns)
        from = ring->clip_ns;
    if (to <= from)
        return;
    if (ring->npending == RPERF_PENDING_WAITS)
        flush_locked(ring, NULL, NULL);
    if (ring->npending == 0)
        ring->pending_head = ring->head;
    rperf_pending_wait_t *p = &ring->pending[ring->npending++];
    p->from_ns = from;
    p->to_ns = to;
    p->ring_head = ring->head;
    p->waiter = waiter;
    p->waiter_label = waiter_label;
    p->epoch = epoch;
}

void
rperf_holder_ring_push(rperf_holder_ring_t *ring, int64_t start_ns, int kind, int holder_seq, int holder_label,
                       uint32_t epoch)
{
    if (!ring)
        return;
    spin_lock(&ring->lock);
    push_locked(ring, start_ns, kind, holder_seq, holder_label, epoch);
    spin_unlock(&ring->lock);
}

void
rperf_holder_ring_reclaim_handoff(rperf_holder_ring_t *ring, int holder_seq, int holder_label)
{
    if (!ring)
        return;
    spin_lock(&ring->lock);
    rperf_holder_segment_t *last = ring_last(ring);
    if (last && last->kind == RPERF_HOLDER_HANDOFF && last->holder_seq == holder_seq) {
        last->kind = RPERF_HOLDER_THREAD;
        last->holder_label = holder_label;
    }
    spin_unlock(&ring->lock);
}

void
rperf_wait_defer(rperf_holder_ring_t *ring, uint32_t epoch, int waiter, int waiter_label, int64_t from, int64_t to)
{
    if (!ring)
        return;
    spin_lock(&ring->lock);
    defer_locked(ring, epoch, waiter, waiter_label, from, to);
    spin_unlock(&ring->lock);
}

void
rperf_holder_ring_resume(rperf_holder_ring_t *ring, uint32_t epoch, int holder_seq, int holder_label, int64_t from,
                         int64_t now)
{
    if (!ring)
        return;
    spin_lock(&ring->lock);
    defer_locked(ring, epoch, holder_seq, holder_label, from, now);
    push_locked(ring, now, RPERF_HOLDER_THREAD, holder_seq, holder_label, epoch);
    spin_unlock(&ring->lock);
}

void
rperf_wait_attribute(rperf_holder_ring_t *ring, uint32_t epoch, int ractor_id, int waiter, int waiter_label,
                     int64_t from, int64_t to, rperf_edge_list_t *into)
{
    batch_t batch;
    batch_init(&batch, spill_to_list, into);
    if (ring)
        spin_lock(&ring->lock);
    attribute_locked(ring, ring ? ring->head : 0, epoch, ractor_id, waiter, waiter_label, from, to, 0, &batch);
    if (ring)
        spin_unlock(&ring->lock);
    batch_spill(&batch);
}

/* ------------------------------------------------------------------ */
/* reading                                                             */

uint64_t
rperf_edges_dropped(int clear)
{
    if (clear)
        return __atomic_exchange_n(&table.dropped, 0, __ATOMIC_RELAXED);
    return __atomic_load_n(&table.dropped, __ATOMIC_RELAXED);
}

uint64_t
rperf_edges_lock_contended(int clear)
{
    if (clear)
        return __atomic_exchange_n(&table.contended, 0, __ATOMIC_RELAXED);
    return __atomic_load_n(&table.contended, __ATOMIC_RELAXED);
}

int
rperf_edges_cut(rperf_holder_ring_t *const *rings, int nrings, rperf_wait_take_fn take, void *arg, int clear,
                int64_t clip_ns, rperf_edge_list_t *out)
{
    memset(out, 0, sizeof(*out));
    /* Allocate before locking: hooks must never spin behind malloc. */
    size_t cap = table.limit;
    out->items = malloc((cap ? cap : 1) * sizeof(rperf_edge_t));
    if (!out->items)
        return -1;
    out->capacity = cap;
    /* Ring locks in index order, then the table's: the order hooks use. */
    for (int i = 0; i < nrings; i++) {
        if (rings[i])
            spin_lock(&rings[i]->lock);
    }
    for (int i = 0; i < nrings; i++) {
        if (rings[i])
            flush_locked(rings[i], take, arg);
    }
    if (table.entries) {
        spin_lock(&table.lock);
        /* Clearing entry by entry writes only pages that hold edges: a
         * memset of the whole table made every page of it resident (6 MiB
         * at the default max_edges) at each clearing cut, the final stop's
         * included. */
        for (size_t k = 0; k < table.used; k++) {
            edge_entry_t *slot = &table.entries[table.taken[k]];
            if (out->count < cap)
                out->items[out->count++] = slot->edge;
            if (clear)
                memset(slot, 0, sizeof(edge_entry_t));
        }
        if (clear)
            table.used = 0;
        spin_unlock(&table.lock);
    }
    for (int i = nrings - 1; i >= 0; i--) {
        if (!rings[i])
            continue;
        if (clear && rings[i]->clip_ns < clip_ns)
            rings[i]->clip_ns = clip_ns;
        spin_unlock(&rings[i]->lock);
    }
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
    if (rperf_grow_array((void **)&list->items, &list->capacity, list->count + 1, sizeof(*list->items), 16) < 0)
        return;
    list->items[list->count++] = *e;
}

void
rperf_edge_list_free(rperf_edge_list_t *list)
{
    free(list->items);
    memset(list, 0, sizeof(*list));
}
