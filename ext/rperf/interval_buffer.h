/*
 * interval_buffer.h — a bounded single-producer/single-consumer ring of
 * timeline intervals, one per Ractor, kept encoded (interval_codec.h:
 * about 6–9 bytes a record instead of 40).
 *
 * The producer is whichever thread currently holds the Ractor's GVL (the
 * GVL hand-off orders consecutive producers), the consumer is the result
 * builder on the main Ractor. Pushing never allocates and never blocks: a
 * ring that holds its maximum number of records, or has no room for the
 * record's bytes, drops the record and counts it. This file does NOT
 * decide what an interval is (contention_events.c) nor sort or serialise them
 * (report_builder.c).
 *
 * Contract
 * - init/free: Ruby context (may allocate; memory is reserved lazily by the
 *   OS, so a large capacity costs only what is used). init reserves
 *   rperf_interval_buffer_bytes(max_records) bytes.
 * - push: the producer only. Returns 0, or -1 when dropped.
 * - count: how many records the ring holds (any thread; a lower bound
 *   while the producer runs).
 * - copy: the consumer only; decodes up to `max` whole records in order
 *   into `out`; when `consume` is set they are removed from the ring and
 *   the pages they used are given back to the OS.
 * - A cursor reads a large ring a slice at a time (the consumer only):
 *   begin fixes the end at the records pushed so far, read decodes up to
 *   `max` more, consume removes what the cursor has read (and gives back
 *   its pages), so a slice can be dropped from the ring as soon as it is
 *   decoded.
 */
#ifndef RPERF_INTERVAL_BUFFER_H
#define RPERF_INTERVAL_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "interval_codec.h" /* rperf_interval_t */

typedef struct rperf_interval_buffer {
    uint8_t *bytes;
    uint64_t capacity;    /* bytes */
    uint64_t max_records; /* records held at once */
    /* Producer side. head/head_records: atomic, published with release. */
    uint64_t head;
    uint64_t head_records;
    uint64_t head_at;           /* head % capacity, kept by the producer: no division a push */
    uint64_t tail_seen;         /* a past value of tail: a push reads the */
    uint64_t tail_records_seen; /* consumer's line only when it looks full */
    rperf_interval_codec_state_t head_state;
    /* Consumer side. tail/tail_records: atomic, published with release. */
    uint64_t tail __attribute__((aligned(64)));
    uint64_t tail_records;
    rperf_interval_codec_state_t tail_state; /* the encoder's state at tail */
    uint64_t dropped;                        /* atomic */
} rperf_interval_buffer_t;

typedef struct rperf_interval_buffer_cursor {
    uint64_t pos, head;
    uint64_t records; /* read since begin or the last consume */
    rperf_interval_codec_state_t state;
} rperf_interval_buffer_cursor_t;

/* Bytes reserved for max_records records (common/rperf_limits.h). */
uint64_t rperf_interval_buffer_bytes(uint64_t max_records);
int rperf_interval_buffer_init(rperf_interval_buffer_t *buf, uint64_t max_records);
void rperf_interval_buffer_free(rperf_interval_buffer_t *buf);
int rperf_interval_buffer_push(rperf_interval_buffer_t *buf, const rperf_interval_t *rec);
size_t rperf_interval_buffer_count(const rperf_interval_buffer_t *buf);
size_t rperf_interval_buffer_copy(rperf_interval_buffer_t *buf, rperf_interval_t *out, size_t max, int consume);
void rperf_interval_buffer_begin(const rperf_interval_buffer_t *buf, rperf_interval_buffer_cursor_t *cur);
size_t rperf_interval_buffer_read(const rperf_interval_buffer_t *buf, rperf_interval_buffer_cursor_t *cur,
                                  rperf_interval_t *out, size_t max);
void rperf_interval_buffer_consume(rperf_interval_buffer_t *buf, rperf_interval_buffer_cursor_t *cur);
uint64_t rperf_interval_buffer_take_dropped(rperf_interval_buffer_t *buf, int clear);

#endif
