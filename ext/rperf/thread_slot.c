/*
 * thread_slot.c — the preallocated per-thread slot pool.
 *
 * Claiming is one atomic fetch_add on the pool's counter plus plain stores
 * into the fresh slot, then a release store of `published`; readers on
 * other threads skip unpublished slots. Nothing here allocates after
 * rperf_slot_pool_create(), so the hooks may claim. This file does NOT
 * interpret states or charge time (contention_events.c).
 */
#include "thread_slot.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static rb_internal_thread_specific_key_t slot_key;
static int slot_key_ready;

static struct {
    rperf_thread_slot_t *slots;
    int capacity;
    int claimed;      /* atomic: next index to hand out (may exceed capacity) */
    uint64_t dropped; /* atomic */
    int abandoned;    /* fork child: claim nothing more */
} pool;

void
rperf_slot_key_init(void)
{
    if (slot_key_ready)
        return;
    slot_key = rb_internal_thread_specific_key_create();
    slot_key_ready = 1;
}

int
rperf_slot_pool_create(int capacity, const char **err)
{
    if (pool.slots) {
        *err = "slot pool already exists";
        return -1;
    }
    if (capacity < 1) {
        *err = "max_threads must be >= 1";
        return -1;
    }
    /* mmap: page-aligned (so every slot starts a cache line) and zeroed by
     * the kernel page by page as threads claim slots, so the default 4096
     * slots cost nothing until used. */
    size_t bytes = (size_t)capacity * sizeof(rperf_thread_slot_t);
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    pool.slots = mem == MAP_FAILED ? NULL : mem;
    if (!pool.slots) {
        *err = "cannot allocate the thread slot pool";
        return -1;
    }
    pool.capacity = capacity;
    __atomic_store_n(&pool.claimed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pool.dropped, 0, __ATOMIC_RELAXED);
    return 0;
}

int
rperf_slot_pool_active(void)
{
    return pool.slots != NULL;
}

/* The thread object is alive (the pool marked it), so its storage exists. */
static void
forget_slot(rperf_thread_slot_t *slot, void *arg)
{
    (void)arg;
    if (rperf_slot_find(slot->thread) == slot)
        rb_internal_thread_specific_set(slot->thread, slot_key, NULL);
}

static void
mark_slot(rperf_thread_slot_t *slot, void *arg)
{
    (void)arg;
    rb_gc_mark(slot->thread);
}

void
rperf_slot_pool_destroy(void)
{
    if (!pool.slots)
        return;
    rperf_slots_foreach(forget_slot, NULL);
    munmap(pool.slots, (size_t)pool.capacity * sizeof(rperf_thread_slot_t));
    pool.slots = NULL;
    pool.capacity = 0;
    pool.abandoned = 0;
    __atomic_store_n(&pool.claimed, 0, __ATOMIC_RELAXED);
}

void
rperf_slot_pool_abandon(void)
{
    /* Fork child: the pool is the child's private copy and stays readable
     * until rperf_slot_pool_destroy() (on the child's next Ruby-level
     * call) clears the threads' pointers and frees it; until then nothing
     * new is claimed. The count of claimed slots is kept for that destroy. */
    pool.abandoned = 1;
}

int
rperf_slot_count(void)
{
    int n = __atomic_load_n(&pool.claimed, __ATOMIC_ACQUIRE);
    return n < pool.capacity ? n : pool.capacity;
}

uint64_t
rperf_slot_dropped(void)
{
    return __atomic_load_n(&pool.dropped, __ATOMIC_RELAXED);
}

void
rperf_slot_pool_reset_dropped(void)
{
    __atomic_store_n(&pool.dropped, 0, __ATOMIC_RELAXED);
}

void
rperf_slot_pool_mark(void)
{
    rperf_slots_foreach(mark_slot, NULL);
}

rperf_thread_slot_t *
rperf_slot_find(VALUE thread)
{
    if (!pool.slots || !slot_key_ready)
        return NULL;
    rperf_thread_slot_t *slot = rb_internal_thread_specific_get(thread, slot_key);
    /* A pointer left by an earlier pool (cleared at destroy, so only after a
     * fork) must not be trusted: check it points into this pool. */
    if (slot < pool.slots || slot >= pool.slots + pool.capacity)
        return NULL;
    return slot;
}

rperf_thread_slot_t *
rperf_slot_claim(VALUE thread, int64_t now_ns)
{
    rperf_thread_slot_t *slot = rperf_slot_find(thread);
    if (slot)
        return slot;
    if (!pool.slots || pool.abandoned)
        return NULL;

    int idx = __atomic_fetch_add(&pool.claimed, 1, __ATOMIC_RELAXED);
    if (idx >= pool.capacity) {
        __atomic_fetch_add(&pool.dropped, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    slot = &pool.slots[idx];
    slot->seq = idx + 1;
    slot->label_set_id = 0;
    slot->thread = thread;
    slot->state = RPERF_STATE_BLOCKED;
    slot->state_since_ns = now_ns;
    slot->first_seen_ns = now_ns;
    slot->last_seen_ns = now_ns;
    slot->timeline_from_ns = now_ns;
    __atomic_store_n(&slot->published, 1, __ATOMIC_RELEASE);
    rb_internal_thread_specific_set(thread, slot_key, slot);
    return slot;
}

rperf_thread_slot_t *
rperf_slot_by_seq(int seq)
{
    if (!pool.slots || seq < 1 || seq > rperf_slot_count())
        return NULL;
    rperf_thread_slot_t *slot = &pool.slots[seq - 1];
    return __atomic_load_n(&slot->published, __ATOMIC_ACQUIRE) ? slot : NULL;
}

void
rperf_slots_foreach(void (*fn)(rperf_thread_slot_t *, void *), void *arg)
{
    if (!pool.slots)
        return;
    int n = rperf_slot_count();
    for (int i = 0; i < n; i++) {
        rperf_thread_slot_t *slot = &pool.slots[i];
        if (__atomic_load_n(&slot->published, __ATOMIC_ACQUIRE))
            fn(slot, arg);
    }
}

/* One copy of the accounting fields; nonzero when no writer was busy
 * before (v1 even) or during it. */
static inline int
read_copy(const rperf_thread_slot_t *slot, rperf_slot_view_t *out, uint32_t v1, int releases)
{
    out->state = RPERF_LOAD(slot->state);
    out->exited = RPERF_LOAD(slot->exited);
    out->state_since_ns = RPERF_LOAD(slot->state_since_ns);
    out->first_seen_ns = RPERF_LOAD(slot->first_seen_ns);
    out->last_seen_ns = RPERF_LOAD(slot->last_seen_ns);
    out->ready_ns = RPERF_LOAD(slot->ready_ns);
    out->timeline_from_ns = RPERF_LOAD(slot->timeline_from_ns);
    for (int i = 0; i < RPERF_STATE_COUNT; i++)
        out->totals[i] = RPERF_LOAD(slot->totals[i]);
    out->acquisitions = RPERF_LOAD(slot->acquisitions);
    out->waits = RPERF_LOAD(slot->waits);
    out->runnable_ns = RPERF_LOAD(slot->runnable_ns);
    for (int i = 0; i < RPERF_STATE_COUNT; i++)
        out->runnable_totals[i] = RPERF_LOAD(slot->runnable_totals[i]);
    out->block_method = RPERF_LOAD(slot->block_method);
    out->ready_releaser = RPERF_LOAD(slot->ready_releaser);
    int nm = RPERF_LOAD(slot->nmethods);
    int nr = RPERF_LOAD(slot->nreleases);
    out->nmethods = nm < 1 ? 1 : (nm > RPERF_SLOT_BLOCK_METHODS ? RPERF_SLOT_BLOCK_METHODS : nm);
    out->nreleases = !releases || nr < 0 ? 0 : (nr > RPERF_SLOT_RELEASES ? RPERF_SLOT_RELEASES : nr);
    for (int i = 0; i < out->nmethods; i++) {
        out->methods[i].frame = RPERF_LOAD(slot->methods[i].frame);
        out->methods[i].count = RPERF_LOAD(slot->methods[i].count);
        out->methods[i].ns = RPERF_LOAD(slot->methods[i].ns);
    }
    int bm = out->block_method;
    if (bm >= 0 && bm < out->nmethods) {
        /* The current method's part not moved into its entry yet. */
        out->methods[bm].ns += out->totals[RPERF_STATE_BLOCKED] - RPERF_LOAD(slot->method_mark_ns);
        out->methods[bm].count += RPERF_LOAD(slot->blocked_spans) - RPERF_LOAD(slot->span_mark);
    }
    for (int i = 0; i < out->nreleases; i++) {
        const rperf_release_t *rel = &slot->releases[i];
        out->releases[i] = (rperf_release_t){
            .releaser = RPERF_LOAD(rel->releaser),
            .releaser_label = RPERF_LOAD(rel->releaser_label),
            .waiter_label = RPERF_LOAD(rel->waiter_label),
            .method = RPERF_LOAD(rel->method),
            .ns = RPERF_LOAD(rel->ns),
            .count = RPERF_LOAD(rel->count),
        };
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return !(v1 & 1) && __atomic_load_n(&slot->version, __ATOMIC_RELAXED) == v1;
}

/* Retries until one copy is consistent (a writer is a hook: it finishes). */
static inline void
read_consistent(const rperf_thread_slot_t *slot, rperf_slot_view_t *out, int releases)
{
    for (;;) {
        uint32_t v1 = __atomic_load_n(&slot->version, __ATOMIC_ACQUIRE);
        if (!(v1 & 1) && read_copy(slot, out, v1, releases))
            return;
    }
}

void
rperf_slot_read(const rperf_thread_slot_t *slot, rperf_slot_view_t *out)
{
    read_consistent(slot, out, 1);
}

void
rperf_slot_read_counts(const rperf_thread_slot_t *slot, rperf_slot_view_t *out)
{
    read_consistent(slot, out, 0);
}

int
rperf_slot_read_within(const rperf_thread_slot_t *slot, rperf_slot_view_t *out, long tries)
{
    for (long i = 0; i < tries; i++) {
        uint32_t v1 = __atomic_load_n(&slot->version, __ATOMIC_ACQUIRE);
        if (!(v1 & 1) && read_copy(slot, out, v1, 1))
            return 1;
    }
    read_copy(slot, out, 1, 1); /* as it is: its writer never finished */
    return 0;
}
