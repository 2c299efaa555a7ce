/*
 * interval_codec.h — a timeline interval record (rperf_interval_t) and a
 * compact byte encoding of it: each record is written as the difference
 * from the record before it (zigzag varints), so a GVL hand-off interval of a busy run takes about 6–9 bytes
 * instead of the 40 of an rperf_interval_t. Every field of the record is
 * kept exactly, for any values.
 *
 * It does NOT store, order or bound anything: interval_buffer.c keeps the
 * bytes of the recording, interval_list.c those of a report's timeline.
 *
 * Contract
 * - Plain C, no Ruby, no allocation, no locks: safe inside GVL hooks.
 * - A stream is a sequence of records encoded against one
 *   rperf_interval_codec_state_t, starting from a state zeroed by
 *   rperf_interval_codec_reset; decoding must start from the state the
 *   encoder had at the same position.
 * - encode: writes at most RPERF_INTERVAL_CODEC_MAX_BYTES bytes to `out`,
 *   returns how many, and advances the state.
 * - decode: reads from `in` (at most `avail` bytes, which may be more than
 *   the record: RPERF_INTERVAL_CODEC_FAST_AVAIL and more take the fast
 *   path, with the same results); returns the bytes used
 *   and fills `*rec` and advances the state, or returns 0 (state untouched)
 *   when the bytes are truncated or malformed.
 * - decode_many: decodes consecutive records into out[0..max) the same way,
 *   stopping at the first that decode would refuse; returns how many, the
 *   bytes they took in *used (each one's in lengths[i] unless lengths is
 *   NULL), and advances the state past them.
 */
#ifndef RPERF_INTERVAL_CODEC_H
#define RPERF_INTERVAL_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* One timeline interval as the profiler records it. */
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

/* The delta state of an encoded stream: the fields of the last record. */
typedef struct rperf_interval_codec_state {
    int64_t end_ns;
    int32_t thread_seq;
    int32_t label_set_id;
    int32_t stack_id;
} rperf_interval_codec_state_t;

/* The header and state bytes, four 32-bit varints (5 bytes at most), the
 * cause byte, two 64-bit varints (10 bytes at most). */
#define RPERF_INTERVAL_CODEC_MAX_BYTES (1 + 1 + 5 * 4 + 1 + 10 * 2)

/* Decoding is fastest with this many bytes readable at `in` (8-byte words
 * are read past the record's end); fewer are decoded byte by byte. */
#define RPERF_INTERVAL_CODEC_FAST_AVAIL (1 + 16 + 8)

void rperf_interval_codec_reset(rperf_interval_codec_state_t *state);
size_t rperf_interval_encode(rperf_interval_codec_state_t *state, const rperf_interval_t *rec, uint8_t *out);
size_t rperf_interval_decode(rperf_interval_codec_state_t *state, const uint8_t *in, size_t avail,
                             rperf_interval_t *rec);
size_t rperf_interval_decode_many(rperf_interval_codec_state_t *state, const uint8_t *in, size_t avail,
                                  rperf_interval_t *out, uint8_t *lengths, size_t max, size_t *used);

#endif
