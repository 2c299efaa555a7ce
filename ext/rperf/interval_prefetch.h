/*
 * interval_prefetch.h — a reader's records read ahead on a worker thread, a
 * batch at a time, while the caller uses the batch before.
 *
 * `save` of a large timeline merges and decodes the report's sorted runs
 * (about a quarter of its time) and formats and writes the JSON text (the
 * rest); the two need not wait for each other. Two batches alternate
 * between one worker pthread, which fills one from the reader, and the
 * caller, which uses the other; the records come in the reader's order, so
 * the text is the same bytes as when the caller reads them itself, which is
 * what happens when no thread can be started. It does NOT know where the
 * records come from (the read function) or what the caller does with them.
 *
 * Contract
 * - Plain C, no Ruby. The read function runs on the worker thread (or on the
 *   caller's without one), never on both at once: it must not call Ruby or
 *   need the GVL, and what it reads must stay unchanged and alive until free.
 *   It returns up to `max` next records, 0 only at the end.
 * - new(read, source, batch_records, threaded): two batches of
 *   `batch_records` with `threaded` and a worker thread (all signals
 *   blocked) if one can be started, else one batch read on the caller's
 *   thread in next. NULL when memory ran out.
 * - next: the next batch (*records, the count returned), valid until the
 *   next call to next or free; 0 at the end (and on every call after it).
 *   Waits at most for the worker to finish one batch.
 * - free: stops the worker after the batch it is reading, joins it and
 *   frees everything; at any point (an exception in the caller's use of a
 *   batch included). NULL is fine.
 * - One caller thread per object.
 */
#ifndef RPERF_INTERVAL_PREFETCH_H
#define RPERF_INTERVAL_PREFETCH_H

#include <stddef.h>

#include "interval_codec.h"

typedef size_t rperf_interval_read_fn(void *source, rperf_interval_t *out, size_t max);
typedef struct rperf_interval_prefetch rperf_interval_prefetch_t;

rperf_interval_prefetch_t *rperf_interval_prefetch_new(rperf_interval_read_fn *read, void *source,
                                                       size_t batch_records, int threaded);
size_t rperf_interval_prefetch_next(rperf_interval_prefetch_t *p, const rperf_interval_t **records);
void rperf_interval_prefetch_free(rperf_interval_prefetch_t *p);
/* Whether a worker thread runs (tests check that both paths ran). */
int rperf_interval_prefetch_threaded(const rperf_interval_prefetch_t *p);

#endif
