/*
 * interval_buffer.h — a bounded single-producer/single-consumer ring of
 * timeline intervals, one per Ractor.
 *
 * The producer is whichever thread currently holds the Ractor's GVL (the
 * GVL hand-off orders consecutive producers), the consumer is the result
 * builder on the main Ractor. Pushing never allocates and never blocks: a
 * full ring drops the record and counts it. This file does NOT decide what
 * an interval is (contention.c) nor sort or serialise them (report_builder.c).
 *
 * Contract
 * - init/free: Ruby context (may allocate; memory is reserved lazily by the
 *   OS, so a large capacity costs only what is used).
 * - push: the producer only. Returns 0, or -1 when dropped.
 * - copy: the consumer only; copies up to `max` records in order into
 *   `out`; when `consume` is set they are removed from the ring.
 */
#ifndef RPERF_INTERVAL_BUFFER_H
#define RPERF_INTERVAL_BUFFER_H

#include <stddef.h>
#include <stdint.h>

typedef struct rperf_interval {
    int64_t start_ns; /* monotonic, absolute */
    int64_t end_ns;
    int32_t thread_seq;
    int32_t label_set_id;
    int32_t stack_id;     /* -1: no stack captured */
    int32_t releaser_seq; /* blocked: the thread that woke it, 0 if none is known */
    uint8_t state;        /* enum rperf_state */
    uint8_t cause;        /* blocked: enum rperf_blocked_cause; else 0 */
} rperf_interval_t;

typedef struct rperf_interval_buffer {
    rperf_interval_t *records;
    uint64_t capacity;
    uint64_t head;                              /* atomic: written by the producer (release) */
    uint64_t tail_seen;                         /* producer only: a past value of tail, so a push
                           * reads the consumer's line only when it looks full */
    uint64_t tail __attribute__((aligned(64))); /* atomic: written by the consumer (release) */
    uint64_t dropped;                           /* atomic */
} rperf_interval_buffer_t;

int rperf_interval_buffer_init(rperf_interval_buffer_t *buf, uint64_t capacity);
void rperf_interval_buffer_free(rperf_interval_buffer_t *buf);
int rperf_interval_buffer_push(rperf_interval_buffer_t *buf, const rperf_interval_t *rec);
size_t rperf_interval_buffer_count(const rperf_interval_buffer_t *buf);
size_t rperf_interval_buffer_copy(rperf_interval_buffer_t *buf, rperf_interval_t *out, size_t max, int consume);
uint64_t rperf_interval_buffer_take_dropped(rperf_interval_buffer_t *buf, int clear);

#endif
