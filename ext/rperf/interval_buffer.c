/*
 * interval_buffer.c — SPSC ring of timeline intervals (see the header).
 *
 * head and tail only grow; the slot of record n is n % capacity. The
 * producer checks for room against tail (acquire) and publishes with a
 * release store of head; the consumer reads head (acquire), copies, and
 * publishes the new tail. No locks, no allocation after init.
 */
#include "interval_buffer.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int
rperf_interval_buffer_init(rperf_interval_buffer_t *buf, uint64_t capacity)
{
    memset(buf, 0, sizeof(*buf));
    if (capacity == 0)
        return 0;
    /* mmap so untouched pages cost nothing: the default capacity is sized
     * for a long busy run, most profiles use a small part of it. */
    size_t bytes = (size_t)capacity * sizeof(rperf_interval_t);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    buf->records = p;
    buf->capacity = capacity;
    return 0;
}

void
rperf_interval_buffer_free(rperf_interval_buffer_t *buf)
{
    if (buf->records)
        munmap(buf->records, (size_t)buf->capacity * sizeof(rperf_interval_t));
    memset(buf, 0, sizeof(*buf));
}

int
rperf_interval_buffer_push(rperf_interval_buffer_t *buf, const rperf_interval_t *rec)
{
    uint64_t head = __atomic_load_n(&buf->head, __ATOMIC_RELAXED);
    if (head - buf->tail_seen >= buf->capacity) {
        /* tail only grows, so a stale value can only understate the room. */
        buf->tail_seen = __atomic_load_n(&buf->tail, __ATOMIC_ACQUIRE);
        if (!buf->records || head - buf->tail_seen >= buf->capacity) {
            __atomic_fetch_add(&buf->dropped, 1, __ATOMIC_RELAXED);
            return -1;
        }
    }
    buf->records[head % buf->capacity] = *rec;
    __atomic_store_n(&buf->head, head + 1, __ATOMIC_RELEASE);
    return 0;
}

size_t
rperf_interval_buffer_count(const rperf_interval_buffer_t *buf)
{
    uint64_t head = __atomic_load_n(&buf->head, __ATOMIC_ACQUIRE);
    uint64_t tail = __atomic_load_n(&buf->tail, __ATOMIC_RELAXED);
    return (size_t)(head - tail);
}

size_t
rperf_interval_buffer_copy(rperf_interval_buffer_t *buf, rperf_interval_t *out, size_t max, int consume)
{
    uint64_t head = __atomic_load_n(&buf->head, __ATOMIC_ACQUIRE);
    uint64_t tail = __atomic_load_n(&buf->tail, __ATOMIC_RELAXED);
    size_t n = 0;
    for (uint64_t i = tail; i < head && n < max; i++, n++)
        out[n] = buf->records[i % buf->capacity];
    if (consume)
        __atomic_store_n(&buf->tail, tail + n, __ATOMIC_RELEASE);
    return n;
}

uint64_t
rperf_interval_buffer_take_dropped(rperf_interval_buffer_t *buf, int clear)
{
    if (clear)
        return __atomic_exchange_n(&buf->dropped, 0, __ATOMIC_RELAXED);
    return __atomic_load_n(&buf->dropped, __ATOMIC_RELAXED);
}
