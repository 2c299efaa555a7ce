/*
 * interval_sort.h — orders a report's timeline by (start_ns, thread_seq).
 *
 * A stop of a GVL-switch-heavy run sorts close to a million intervals, and
 * a comparison sort through a callback spent more instructions there than
 * the hooks spent recording them; this is a stable LSD radix sort on the
 * two integer keys instead. A timeline too large to hold decoded is sorted
 * in slices, each kept encoded as a run (interval_store.h), and the runs
 * merged as they are read (a report keeps the runs: a merge into one more
 * list cost a quarter of a large stop). It does NOT clip, filter or own the
 * records.
 *
 * Contract
 * - Plain C, no Ruby. The sorts allocate nothing: the caller passes
 *   `scratch` with room for `n` records.
 * - Stable: records equal in both keys keep their input order.
 * - Returns the array that holds the sorted records, which is either `a` or
 *   `scratch`; the other one holds garbage.
 * - sort_keys: the same order without moving the records: returns n keys
 *   (in `keys` or `scratch`, each with room for n) whose low *index_bits
 *   bits are the indexes into `a` of the records in sorted order; `a` is
 *   not changed. NULL when the key of a record does not fit 64 bits (the
 *   starts or seqs span too much): sort the records instead.
 * - merge_new: a reader of the merge of `runs`, each already in
 *   (start_ns, thread_seq) order: the records of all runs in that order,
 *   equal records in run order. NULL when memory ran out. The runs must
 *   not change until merge_free (several merges may read them at once:
 *   they are only read). merge_read: up to `max` next records into out;
 *   fewer only at the end (0 there). merge_free: NULL is fine.
 * - merge_runs: appends that merge to `out` (copying the encoded bytes of
 *   consecutive records of one run). Returns 0, or -1 when memory ran out
 *   (`out` then holds a part). The runs are not changed.
 */
#ifndef RPERF_INTERVAL_SORT_H
#define RPERF_INTERVAL_SORT_H

#include <stddef.h>
#include <stdint.h>

#include "interval_codec.h"
#include "interval_store.h"

rperf_interval_t *rperf_interval_sort(rperf_interval_t *a, rperf_interval_t *scratch, size_t n);
const uint64_t *rperf_interval_sort_keys(const rperf_interval_t *a, size_t n, uint64_t *keys, uint64_t *scratch,
                                         unsigned *index_bits);

typedef struct rperf_interval_merge rperf_interval_merge_t;
rperf_interval_merge_t *rperf_interval_merge_new(const rperf_interval_store_t *runs, size_t nruns);
size_t rperf_interval_merge_read(rperf_interval_merge_t *m, rperf_interval_t *out, size_t max);
void rperf_interval_merge_free(rperf_interval_merge_t *m);
int rperf_interval_merge_runs(const rperf_interval_store_t *runs, size_t nruns, rperf_interval_store_t *out);

#endif
