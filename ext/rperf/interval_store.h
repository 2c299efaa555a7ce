/*
 * interval_store.h — a growable, append-only list of intervals kept
 * encoded (interval_codec.h), read back in order or at any index: a
 * report's timeline and the sorted runs it is merged from take 6–12 bytes
 * a record instead of the 40 of an rperf_interval_t.
 *
 * Every RPERF_INTERVAL_STORE_STRIDE-th record starts a key frame (its byte
 * offset and the codec state before it), so reading record i decodes at
 * most STRIDE - 1 records before it. It does NOT sort, clip or decide what
 * goes in (report_builder.c), and knows nothing of Ruby.
 *
 * Contract
 * - Plain C; one thread at a time (the caller holds the GVL or owns it).
 * - init: an empty store (no allocation). append: 0, or -1 when memory ran
 *   out (the store is unchanged). append_encoded: the same for a record
 *   already encoded (`length` bytes): the bytes must be rec's encoding
 *   against the record appended last (as when copying consecutive records
 *   of another store); they are copied as they are. shrink: gives back
 *   unused capacity.
 * - get: 0 and the record at `index`, or -1 when out of range.
 * - A cursor reads from a start index to the end; it stays valid while no
 *   record is appended. next: 1 and the record, or 0 at the end. read: up
 *   to `max` records at once into out (fewer only at the end), and each
 *   one's encoded length into lengths (unless NULL); returns how many; the
 *   cheaper way through a whole list.
 * - free: releases everything; the store is empty again.
 */
#ifndef RPERF_INTERVAL_STORE_H
#define RPERF_INTERVAL_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "interval_codec.h"

#define RPERF_INTERVAL_STORE_STRIDE 64

typedef struct rperf_interval_store_key {
    size_t offset;
    rperf_interval_codec_state_t state;
} rperf_interval_store_key_t;

typedef struct rperf_interval_store {
    uint8_t *bytes;
    size_t used, capacity;
    rperf_interval_store_key_t *keys;
    size_t nkeys, keys_capacity;
    size_t count;
    rperf_interval_codec_state_t state;
} rperf_interval_store_t;

typedef struct rperf_interval_store_cursor {
    const rperf_interval_store_t *store;
    size_t offset;
    size_t index;
    rperf_interval_codec_state_t state;
} rperf_interval_store_cursor_t;

void rperf_interval_store_init(rperf_interval_store_t *store);
int rperf_interval_store_append(rperf_interval_store_t *store, const rperf_interval_t *rec);
int rperf_interval_store_append_encoded(rperf_interval_store_t *store, const uint8_t *bytes, size_t length,
                                        const rperf_interval_t *rec);
void rperf_interval_store_shrink(rperf_interval_store_t *store);
void rperf_interval_store_free(rperf_interval_store_t *store);
size_t rperf_interval_store_bytes(const rperf_interval_store_t *store);
int rperf_interval_store_get(const rperf_interval_store_t *store, size_t index, rperf_interval_t *out);
void rperf_interval_store_cursor_init(rperf_interval_store_cursor_t *cur, const rperf_interval_store_t *store,
                                      size_t index);
int rperf_interval_store_next(rperf_interval_store_cursor_t *cur, rperf_interval_t *out);
size_t rperf_interval_store_read(rperf_interval_store_cursor_t *cur, rperf_interval_t *out, uint8_t *lengths,
                                 size_t max);

#endif
