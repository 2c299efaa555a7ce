/*
 * ractor_table.c — the fixed Ractor table: slots prepared ahead, taken by
 * key, published to readers.
 *
 * prepare allocates rings and buffers for slots no one can take yet (at
 * or above `prepared`), then raises `prepared` with a release store; take
 * claims the next index below it with one CAS and publishes the slot once
 * its key is set, so hooks of other Ractors (find, by_id) never see a
 * half-built slot. Nothing here allocates in take. It does NOT talk to
 * Ruby: ractor_registry.c chooses the keys and runs prepare.
 */
#include "ractor_table.h"

#include <pthread.h>
#include <string.h>

static struct {
    int open;
    int timeline;
    uint64_t max_intervals;
    int count;                        /* atomic: slots taken (ids handed out) */
    int prepared;                     /* atomic: slots whose ring and buffer exist; >= count */
    int published[RPERF_MAX_RACTORS]; /* atomic: taken and keyed */
    rperf_ractor_slot_t slots[RPERF_MAX_RACTORS];
} table;

/* Preparers run outside hooks, in any Ractor (the registration job). */
static pthread_mutex_t prepare_lock = PTHREAD_MUTEX_INITIALIZER;

void
rperf_ractor_table_close(void)
{
    pthread_mutex_lock(&prepare_lock);
    for (int i = 0; i < RPERF_MAX_RACTORS; i++) {
        rperf_ractor_slot_t *r = &table.slots[i];
        rperf_holder_ring_destroy(r->ring);
        rperf_interval_buffer_free(&r->intervals);
        __atomic_store_n(&table.published[i], 0, __ATOMIC_RELAXED);
    }
    memset(table.slots, 0, sizeof(table.slots));
    __atomic_store_n(&table.count, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&table.prepared, 0, __ATOMIC_RELAXED);
    table.open = 0;
    pthread_mutex_unlock(&prepare_lock);
}

void
rperf_ractor_table_after_fork_child(void)
{
    /* Another thread of the parent may have held it at fork time. */
    pthread_mutex_init(&prepare_lock, NULL);
}

void
rperf_ractor_table_open(int timeline, uint64_t max_intervals)
{
    if (table.open)
        rperf_ractor_table_close();
    table.timeline = timeline;
    table.max_intervals = max_intervals;
    table.open = 1;
}

int
rperf_ractor_table_is_open(void)
{
    return table.open;
}

static int
prepare_slot(int index)
{
    rperf_ractor_slot_t *r = &table.slots[index];
    memset(r, 0, sizeof(*r));
    r->id = index + 1;
    r->ring = rperf_holder_ring_create(r->id);
    if (!r->ring)
        return -1;
    if (table.timeline && table.max_intervals > 0 &&
        rperf_interval_buffer_init(&r->intervals, table.max_intervals) < 0) {
        /* No timeline for this Ractor: its intervals are counted as dropped. */
        memset(&r->intervals, 0, sizeof(r->intervals));
    }
    return 0;
}

int
rperf_ractor_table_prepare(int ahead)
{
    int rc = 0;
    pthread_mutex_lock(&prepare_lock);
    if (!table.open) {
        pthread_mutex_unlock(&prepare_lock);
        return 0;
    }
    int taken = __atomic_load_n(&table.count, __ATOMIC_ACQUIRE);
    if (ahead < taken)
        ahead = taken < RPERF_RACTORS_AHEAD_MAX ? taken : RPERF_RACTORS_AHEAD_MAX;
    int want = taken + ahead < RPERF_MAX_RACTORS ? taken + ahead : RPERF_MAX_RACTORS;
    int have = __atomic_load_n(&table.prepared, __ATOMIC_RELAXED);
    while (have < want) {
        if (prepare_slot(have) < 0) {
            rc = -1;
            break;
        }
        have++;
        __atomic_store_n(&table.prepared, have, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&prepare_lock);
    return rc;
}

rperf_ractor_slot_t *
rperf_ractor_table_take(uintptr_t key)
{
    if (!table.open)
        return NULL;
    int index = __atomic_load_n(&table.count, __ATOMIC_RELAXED);
    for (;;) {
        if (index >= __atomic_load_n(&table.prepared, __ATOMIC_ACQUIRE))
            return NULL;
        if (__atomic_compare_exchange_n(&table.count, &index, index + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            break;
    }
    rperf_ractor_slot_t *r = &table.slots[index];
    r->key = key;
    __atomic_store_n(&table.published[index], 1, __ATOMIC_RELEASE);
    return r;
}

rperf_ractor_slot_t *
rperf_ractor_table_find(uintptr_t key)
{
    int n = rperf_ractor_count();
    for (int i = 0; i < n; i++) {
        if (__atomic_load_n(&table.published[i], __ATOMIC_ACQUIRE) && table.slots[i].key == key)
            return &table.slots[i];
    }
    return NULL;
}

rperf_ractor_slot_t *
rperf_ractor_by_id(int id)
{
    if (id < 1 || id > RPERF_MAX_RACTORS)
        return NULL;
    if (!__atomic_load_n(&table.published[id - 1], __ATOMIC_ACQUIRE))
        return NULL;
    return &table.slots[id - 1];
}

int
rperf_ractor_count(void)
{
    return __atomic_load_n(&table.count, __ATOMIC_ACQUIRE);
}

int
rperf_ractor_waiters(const rperf_ractor_slot_t *r)
{
    int n = __atomic_load_n(&r->waiters, __ATOMIC_RELAXED);
    return n > 0 ? n : 0;
}
