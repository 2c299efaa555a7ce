/*
 * frame_table.h — interns frame VALUEs (from rb_profile_frames) into dense
 * uint32 ids, and resolves ids to [path, label] String pairs for reports.
 *
 * It does NOT capture stacks or aggregate samples. Ids 0..3 are reserved for
 * the synthetic frames (sampler.h, docs/report-format.md); real frames start
 * at RPERF_SYNTHETIC_FRAMES and keep their ids for the table's lifetime
 * (a snapshot series shares one frame table).
 *
 * Contract
 * - insert may allocate (malloc, never Ruby objects) and is called only by the
 *   drainer (worker thread or a flush), serialised by the sampler's worker
 *   mutex; it needs no GVL. The table is bounded by max_frames: insert returns
 *   RPERF_FRAME_ID_NONE when full and the caller counts the drop.
 * - resolve runs with the GVL held and the worker mutex owned. mark runs
 *   during GC without any lock and may overlap an insert: it sees every id
 *   published before it started.
 */
#ifndef RPERF_FRAME_TABLE_H
#define RPERF_FRAME_TABLE_H

#include <ruby.h>
#include <stdint.h>

#include "hash_index.h"

#define RPERF_FRAME_ID_NONE UINT32_MAX

/* Keys live in fixed chunks that never move, so the GC mark function can read
 * them while the drainer inserts (no lock: a mark may run while the drainer
 * is stopped at a Ractor barrier holding the worker mutex). */
#define RPERF_FRAME_CHUNK 4096

typedef struct rperf_frame_table {
    VALUE **chunks;           /* id -> chunks[id / CHUNK][id % CHUNK] */
    uint32_t chunk_count;     /* max_frames / CHUNK, rounded up */
    uint32_t count;           /* published with release order after the key */
    rperf_hash_index_t index; /* frame VALUE -> id (synthetic ids are not in it) */
    uint32_t max_frames;
    VALUE resolved; /* Ruby Array of frozen [path, label] pairs, prefix of keys */
} rperf_frame_table_t;

/* Returns 0, or -1 (nothing allocated). */
int rperf_frame_table_init(rperf_frame_table_t *ft, uint32_t max_frames);
void rperf_frame_table_free(rperf_frame_table_t *ft);
uint32_t rperf_frame_table_insert(rperf_frame_table_t *ft, VALUE frame);

/* Returns a Ruby Array (index = id) of [path, label] pairs; entries resolved
 * once are cached, so repeated snapshots resolve only new frames. GVL held. */
VALUE rperf_frame_table_resolve(rperf_frame_table_t *ft);
void rperf_frame_table_mark(const rperf_frame_table_t *ft);

#endif
