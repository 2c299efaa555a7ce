/*
 * interval_buffer.c — SPSC ring of encoded timeline intervals (see the
 * header).
 *
 * head and tail are byte positions that only grow; byte n lives at
 * n % capacity, so a record may wrap around the end. head_records and
 * tail_records count records, for the max_records bound and for count().
 * The producer encodes against head_state, checks for room against tail
 * (acquire) and publishes with a release store of head; the consumer reads
 * head (acquire), decodes from tail starting at tail_state, and publishes
 * the new tail. No locks, no allocation after init.
 */
#include "interval_buffer.h"
#include "interval_codec.h"
#include "rperf_limits.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

uint64_t
rperf_interval_buffer_bytes(uint64_t max_records)
{
    if (max_records == 0)
        return 0;
    /* Room for one record of the largest size, so a small bound still
     * holds its records whatever their size. */
    return max_records * RPERF_INTERVAL_BYTES + RPERF_INTERVAL_CODEC_MAX_BYTES;
}

int
rperf_interval_buffer_init(rperf_interval_buffer_t *buf, uint64_t max_records)
{
    memset(buf, 0, sizeof(*buf));
    if (max_records == 0)
        return 0;
    /* mmap so untouched pages cost nothing: the default bound is sized for
     * a long busy run, most profiles use a small part of it. */
    uint64_t bytes = rperf_interval_buffer_bytes(max_records);
    if (bytes > SIZE_MAX)
        return -1;
    void *p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    buf->bytes = p;
    buf->capacity = bytes;
    buf->max_records = max_records;
    return 0;
}

void
rperf_interval_buffer_free(rperf_interval_buffer_t *buf)
{
    if (buf->bytes)
        munmap(buf->bytes, (size_t)buf->capacity);
    memset(buf, 0, sizeof(*buf));
}

int
rperf_interval_buffer_push(rperf_interval_buffer_t *buf, const rperf_interval_t *rec)
{
    if (!buf->bytes) {
        __atomic_fetch_add(&buf->dropped, 1, __ATOMIC_RELAXED);
        return -1;
    }
    uint64_t head = __atomic_load_n(&buf->head, __ATOMIC_RELAXED);
    uint64_t records = __atomic_load_n(&buf->head_records, __ATOMIC_RELAXED);
    uint64_t at = buf->head_at;
    /* Room for the largest record before the end and before the consumer:
     * encoded in place, no copy (the bytes past it are free, and nobody
     * reads past head), and the encoder's state advanced in place: the
     * record cannot be dropped now. (A copy of the state through the stack
     * cost a stalled load: the encoder stores its fields one by one, the
     * copy read them back as one wide load.) */
    if (buf->capacity - at >= RPERF_INTERVAL_CODEC_MAX_BYTES &&
        head + RPERF_INTERVAL_CODEC_MAX_BYTES - buf->tail_seen <= buf->capacity &&
        records - buf->tail_records_seen < buf->max_records) {
        uint64_t len = rperf_interval_encode(&buf->head_state, rec, buf->bytes + at);
        buf->head_at = at + len == buf->capacity ? 0 : at + len;
        __atomic_store_n(&buf->head_records, records + 1, __ATOMIC_RELAXED);
        __atomic_store_n(&buf->head, head + len, __ATOMIC_RELEASE);
        return 0;
    }
    rperf_interval_codec_state_t next = buf->head_state;
    uint8_t encoded[RPERF_INTERVAL_CODEC_MAX_BYTES];
    uint64_t len = rperf_interval_encode(&next, rec, encoded);
    if (head + len - buf->tail_seen > buf->capacity || records - buf->tail_records_seen >= buf->max_records) {
        /* tail only grows, so a stale value can only understate the room. */
        buf->tail_records_seen = __atomic_load_n(&buf->tail_records, __ATOMIC_ACQUIRE);
        buf->tail_seen = __atomic_load_n(&buf->tail, __ATOMIC_ACQUIRE);
        if (head + len - buf->tail_seen > buf->capacity || records - buf->tail_records_seen >= buf->max_records) {
            __atomic_fetch_add(&buf->dropped, 1, __ATOMIC_RELAXED);
            return -1;
        }
    }
    uint64_t first = buf->capacity - at < len ? buf->capacity - at : len;
    memcpy(buf->bytes + at, encoded, (size_t)first);
    memcpy(buf->bytes, encoded + first, (size_t)(len - first));
    buf->head_state = next;
    buf->head_at = first < len ? len - first : (at + len == buf->capacity ? 0 : at + len);
    __atomic_store_n(&buf->head_records, records + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&buf->head, head + len, __ATOMIC_RELEASE);
    return 0;
}

size_t
rperf_interval_buffer_count(const rperf_interval_buffer_t *buf)
{
    uint64_t head = __atomic_load_n(&buf->head_records, __ATOMIC_ACQUIRE);
    uint64_t tail = __atomic_load_n(&buf->tail_records, __ATOMIC_RELAXED);
    return (size_t)(head - tail);
}

/* Gives the whole pages of the consumed bytes [from, upto) back to the
 * OS, so a stop that decodes a large ring does not hold both the ring and
 * its records. Only before tail moves past them: from then on the producer
 * may write there again. */
static void
release_consumed(rperf_interval_buffer_t *buf, uint64_t from, uint64_t upto)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    if (upto - from < 16 * page)
        return; /* not worth a system call */
    while (from < upto) {
        uint64_t at = from % buf->capacity;
        uint64_t end = upto - from < buf->capacity - at ? at + (upto - from) : buf->capacity;
        uint64_t lo = (at + page - 1) / page * page, hi = end / page * page;
        if (hi > lo)
            madvise(buf->bytes + lo, (size_t)(hi - lo), MADV_DONTNEED);
        from += end - at;
    }
}

void
rperf_interval_buffer_begin(const rperf_interval_buffer_t *buf, rperf_interval_buffer_cursor_t *cur)
{
    cur->head = __atomic_load_n(&buf->head, __ATOMIC_ACQUIRE);
    cur->pos = __atomic_load_n(&buf->tail, __ATOMIC_RELAXED);
    cur->records = 0;
    cur->state = buf->tail_state;
}

size_t
rperf_interval_buffer_read(const rperf_interval_buffer_t *buf, rperf_interval_buffer_cursor_t *cur,
                           rperf_interval_t *out, size_t max)
{
    size_t n = 0;
    while (buf->bytes && cur->pos < cur->head && n < max) {
        /* The records that lie whole before the end of the mapping, in
         * place and many at a time... */
        uint64_t at = cur->pos % buf->capacity;
        uint64_t avail = cur->head - cur->pos;
        if (avail > buf->capacity - at)
            avail = buf->capacity - at;
        size_t used;
        n += rperf_interval_decode_many(&cur->state, buf->bytes + at, (size_t)avail, out + n, NULL, max - n, &used);
        cur->pos += used;
        if (cur->pos >= cur->head || n >= max)
            break;
        /* ...then the one that wraps around it, from a straight copy. */
        uint8_t linear[RPERF_INTERVAL_CODEC_MAX_BYTES];
        at = cur->pos % buf->capacity;
        const uint8_t *in = buf->bytes + at;
        avail = cur->head - cur->pos;
        if (avail > RPERF_INTERVAL_CODEC_MAX_BYTES)
            avail = RPERF_INTERVAL_CODEC_MAX_BYTES;
        if (at + avail > buf->capacity) { /* the record may wrap */
            uint64_t first = buf->capacity - at;
            memcpy(linear, in, (size_t)first);
            memcpy(linear + first, buf->bytes, (size_t)(avail - first));
            in = linear;
        }
        size_t one = rperf_interval_decode(&cur->state, in, (size_t)avail, &out[n]);
        if (!one)
            break; /* cannot happen: the producer wrote whole records */
        cur->pos += one;
        n++;
    }
    cur->records += n;
    return n;
}

void
rperf_interval_buffer_consume(rperf_interval_buffer_t *buf, rperf_interval_buffer_cursor_t *cur)
{
    uint64_t tail = __atomic_load_n(&buf->tail, __ATOMIC_RELAXED);
    if (!buf->bytes || cur->pos == tail)
        return;
    release_consumed(buf, tail, cur->pos);
    buf->tail_state = cur->state;
    __atomic_store_n(&buf->tail, cur->pos, __ATOMIC_RELEASE);
    __atomic_store_n(&buf->tail_records, __atomic_load_n(&buf->tail_records, __ATOMIC_RELAXED) + cur->records,
                     __ATOMIC_RELEASE);
    cur->records = 0;
}

size_t
rperf_interval_buffer_copy(rperf_interval_buffer_t *buf, rperf_interval_t *out, size_t max, int consume)
{
    rperf_interval_buffer_cursor_t cur;
    rperf_interval_buffer_begin(buf, &cur);
    size_t n = rperf_interval_buffer_read(buf, &cur, out, max);
    if (consume)
        rperf_interval_buffer_consume(buf, &cur);
    return n;
}

uint64_t
rperf_interval_buffer_take_dropped(rperf_interval_buffer_t *buf, int clear)
{
    if (clear)
        return __atomic_exchange_n(&buf->dropped, 0, __ATOMIC_RELAXED);
    return __atomic_load_n(&buf->dropped, __ATOMIC_RELAXED);
}
