/*
 * sample_buffer.h — the double-buffered sample store between the writers
 * (the postponed sampling job and the GVL/GC hooks, in any Ractor) and the
 * sampler's worker thread, which drains it into the frame and aggregation
 * tables. Two kinds of record share it: samples (a thread's stack and its
 * weight) and release records (the stack a thread had when it released a
 * blocked waiter, weighted by the blocked time it ended), which the drain
 * keeps apart from the samples.
 *
 * It does NOT walk stacks, intern frames or aggregate: writers pass frames
 * they captured themselves; the drain callback does the rest.
 *
 * Contract
 * - Both buffers are allocated once by rperf_sample_buffers_init (fixed
 *   capacity: memory is bounded); rperf_sample_buffers_write never allocates,
 *   never calls Ruby and never blocks for long: writers of different Ractors
 *   serialise on a spinlock held only for a memcpy. A write that does not fit
 *   is dropped and counted in `dropped`.
 * - Exactly one drainer at a time (the worker thread or a GVL-holding flush,
 *   serialised by the sampler's worker mutex) calls rperf_sample_buffers_swap
 *   and then walks the returned buffer; writers never touch a drained buffer,
 *   so walking it needs no lock. rperf_sample_buffer_reset() must be called
 *   on it before the next swap.
 * - Frames are Ruby VALUEs (iseqs / method entries from rb_profile_frames):
 *   the owner must mark both buffers (rperf_sample_buffers_mark) until they
 *   are drained into the frame table.
 */
#ifndef RPERF_SAMPLE_BUFFER_H
#define RPERF_SAMPLE_BUFFER_H

#include <ruby.h>
#include <stdatomic.h>
#include <stdint.h>

/* Deeper stacks keep their leaf-most frames; the rest is cut off
 * (RPERF_MAX_STACK_DEPTH). */
#include "rperf_limits.h"
#define RPERF_NO_SYNTHETIC (-1)

typedef struct rperf_sample {
    int64_t weight_ns;
    int64_t blame_ns;            /* weight_ns x waiters for its Ractor's GVL */
    uint32_t frame_start;        /* index into the buffer's frame pool */
    int16_t depth;               /* real frames, leaf first */
    int16_t synthetic;           /* synthetic leaf frame id, or RPERF_NO_SYNTHETIC */
    int thread_seq;              /* the sampled thread; a release record: the released waiter */
    int label_set_id;            /* 0 in a release record (its edge names the label sets) */
    int release_index;           /* -1: a sample; else the release's index in the waiter's release list */
    uint32_t release_generation; /* a release record: report cuts completed before the release */
} rperf_sample_t;

typedef struct rperf_sample_buffer {
    rperf_sample_t *samples;
    VALUE *frames;
    uint32_t sample_count;
    uint32_t frame_count;
    uint32_t sample_capacity;
    uint32_t frame_capacity;
} rperf_sample_buffer_t;

typedef struct rperf_sample_buffers {
    rperf_sample_buffer_t buf[2];
    int active;      /* written under `lock` */
    atomic_int lock; /* writer/swap spinlock */
    atomic_uint_fast64_t dropped;
    atomic_uint_fast64_t contended; /* writes that found the lock taken */
} rperf_sample_buffers_t;

/* Returns 0, or -1 (nothing allocated) when memory is short. */
int rperf_sample_buffers_init(rperf_sample_buffers_t *bufs, uint32_t sample_capacity, uint32_t frame_capacity);
void rperf_sample_buffers_free(rperf_sample_buffers_t *bufs);

/* Appends one sample; returns 0, or -1 when it was dropped (counted). */
int rperf_sample_buffers_write(rperf_sample_buffers_t *bufs, const VALUE *frames, int depth, int synthetic,
                               int64_t weight_ns, int64_t blame_ns, int thread_seq, int label_set_id);
/* Appends one release record (the releaser's stack, leaf first, and the
 * blocked time it ended for `waiter_seq`'s release `release_index`);
 * returns 0, or -1 when it did not fit. Not counted in `dropped`: the
 * caller counts its own drops (they are no lost samples). */
int rperf_sample_buffers_write_release(rperf_sample_buffers_t *bufs, const VALUE *frames, int depth,
                                       int64_t weight_ns, int waiter_seq, int release_index,
                                       uint32_t release_generation);

/* Makes the other buffer active and returns the previously active one for
 * draining (it may be empty). */
rperf_sample_buffer_t *rperf_sample_buffers_swap(rperf_sample_buffers_t *bufs);
void rperf_sample_buffer_reset(rperf_sample_buffer_t *buf);

/* rb_gc_mark on every frame held by both buffers (called during GC, when no
 * Ruby thread of any Ractor can be writing). */
void rperf_sample_buffers_mark(rperf_sample_buffers_t *bufs);

/* Fork child: the parent's writers are gone; unlock and empty. */
void rperf_sample_buffers_after_fork(rperf_sample_buffers_t *bufs);

#endif
