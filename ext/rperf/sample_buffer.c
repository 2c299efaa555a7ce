/*
 * sample_buffer.c — fixed-capacity double buffer of samples and their frames.
 *
 * Writers may be hooks or postponed jobs of different Ractors running in
 * parallel, so the active buffer is guarded by a test-and-test-and-set
 * spinlock. It is held only for a bounded copy (at most
 * RPERF_MAX_STACK_DEPTH VALUEs), never across a stack walk, so with one
 * Ractor it is always free and costs one atomic exchange. It does NOT
 * allocate after init, intern frames, or know about threads and Ractors.
 */
#include "sample_buffer.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

static void
spin_lock(rperf_sample_buffers_t *bufs)
{
    if (!atomic_exchange_explicit(&bufs->lock, 1, memory_order_acquire))
        return;
    atomic_fetch_add_explicit(&bufs->contended, 1, memory_order_relaxed);
    for (unsigned spins = 0;; spins++) {
        if (!atomic_load_explicit(&bufs->lock, memory_order_relaxed) &&
            !atomic_exchange_explicit(&bufs->lock, 1, memory_order_acquire))
            return;
        /* The holder may have been descheduled mid-copy; give it the CPU
         * instead of burning ours. */
        if (spins > 64)
            sched_yield();
    }
}

static void
spin_unlock(rperf_sample_buffers_t *bufs)
{
    atomic_store_explicit(&bufs->lock, 0, memory_order_release);
}

static int
buffer_init(rperf_sample_buffer_t *buf, uint32_t sample_capacity, uint32_t frame_capacity)
{
    memset(buf, 0, sizeof(*buf));
    buf->samples = malloc(sizeof(rperf_sample_t) * sample_capacity);
    buf->frames = malloc(sizeof(VALUE) * frame_capacity);
    if (!buf->samples || !buf->frames) {
        free(buf->samples);
        free(buf->frames);
        memset(buf, 0, sizeof(*buf));
        return -1;
    }
    buf->sample_capacity = sample_capacity;
    buf->frame_capacity = frame_capacity;
    return 0;
}

int
rperf_sample_buffers_init(rperf_sample_buffers_t *bufs, uint32_t sample_capacity, uint32_t frame_capacity)
{
    memset(bufs, 0, sizeof(*bufs));
    if (buffer_init(&bufs->buf[0], sample_capacity, frame_capacity) < 0)
        goto fail;
    if (buffer_init(&bufs->buf[1], sample_capacity, frame_capacity) < 0)
        goto fail;
    atomic_init(&bufs->lock, 0);
    atomic_init(&bufs->dropped, 0);
    atomic_init(&bufs->contended, 0);
    return 0;
fail:
    rperf_sample_buffers_free(bufs);
    return -1;
}

void
rperf_sample_buffers_free(rperf_sample_buffers_t *bufs)
{
    for (int i = 0; i < 2; i++) {
        free(bufs->buf[i].samples);
        free(bufs->buf[i].frames);
        memset(&bufs->buf[i], 0, sizeof(bufs->buf[i]));
    }
}

/* Copies `*record` and its frames into the active buffer; -1 when full. */
static int
append(rperf_sample_buffers_t *bufs, const rperf_sample_t *record, const VALUE *frames)
{
    int depth = record->depth;
    spin_lock(bufs);
    rperf_sample_buffer_t *buf = &bufs->buf[bufs->active];
    if (buf->sample_count >= buf->sample_capacity || buf->frame_capacity - buf->frame_count < (uint32_t)depth) {
        spin_unlock(bufs);
        return -1;
    }
    rperf_sample_t *s = &buf->samples[buf->sample_count];
    *s = *record;
    s->frame_start = buf->frame_count;
    if (depth > 0)
        memcpy(buf->frames + buf->frame_count, frames, sizeof(VALUE) * (size_t)depth);
    buf->frame_count += (uint32_t)depth;
    buf->sample_count++;
    spin_unlock(bufs);
    return 0;
}

static int16_t
clamp_depth(int depth)
{
    if (depth < 0)
        return 0;
    return (int16_t)(depth > RPERF_MAX_STACK_DEPTH ? RPERF_MAX_STACK_DEPTH : depth);
}

int
rperf_sample_buffers_write(rperf_sample_buffers_t *bufs, const VALUE *frames, int depth, int synthetic,
                           int64_t weight_ns, int64_t blame_ns, int thread_seq, int label_set_id)
{
    rperf_sample_t record = {
        .weight_ns = weight_ns,
        .blame_ns = blame_ns,
        .depth = clamp_depth(depth),
        .synthetic = (int16_t)synthetic,
        .thread_seq = thread_seq,
        .label_set_id = label_set_id,
        .release_index = -1,
    };
    if (append(bufs, &record, frames) < 0) {
        atomic_fetch_add_explicit(&bufs->dropped, 1, memory_order_relaxed);
        return -1;
    }
    return 0;
}

int
rperf_sample_buffers_write_release(rperf_sample_buffers_t *bufs, const VALUE *frames, int depth, int64_t weight_ns,
                                   int waiter_seq, int release_index, uint32_t release_generation)
{
    rperf_sample_t record = {
        .weight_ns = weight_ns,
        .depth = clamp_depth(depth),
        .synthetic = RPERF_NO_SYNTHETIC,
        .thread_seq = waiter_seq,
        .release_index = release_index,
        .release_generation = release_generation,
    };
    return append(bufs, &record, frames);
}

rperf_sample_buffer_t *
rperf_sample_buffers_swap(rperf_sample_buffers_t *bufs)
{
    spin_lock(bufs);
    int drained = bufs->active;
    bufs->active = drained ^ 1;
    spin_unlock(bufs);
    return &bufs->buf[drained];
}

void
rperf_sample_buffer_reset(rperf_sample_buffer_t *buf)
{
    buf->sample_count = 0;
    /* Release: a GC mark that sees the emptied pool also sees the frame
     * table entries the drain published before it. */
    __atomic_store_n(&buf->frame_count, 0, __ATOMIC_RELEASE);
}

void
rperf_sample_buffers_mark(rperf_sample_buffers_t *bufs)
{
    for (int i = 0; i < 2; i++) {
        const rperf_sample_buffer_t *buf = &bufs->buf[i];
        uint32_t frame_count = __atomic_load_n(&buf->frame_count, __ATOMIC_ACQUIRE);
        /* mark_locations pins and tolerates stale slots: a drain may be
         * walking this buffer right now. */
        if (buf->frames)
            rb_gc_mark_locations(buf->frames, buf->frames + frame_count);
    }
}

void
rperf_sample_buffers_after_fork(rperf_sample_buffers_t *bufs)
{
    atomic_store(&bufs->lock, 0);
    rperf_sample_buffer_reset(&bufs->buf[0]);
    rperf_sample_buffer_reset(&bufs->buf[1]);
}
