/*
 * interval_runs.h — a stop's timeline turned into sorted encoded runs, one
 * slice at a time, each slice encoded on a worker thread beside the caller
 * while the caller decodes and sorts the next.
 *
 * A stop of a GVL-switch-heavy run decodes, sorts and encodes about a
 * million intervals while the program waits. Decoding the rings is
 * sequential (each record is a delta from the one before), but a slice once
 * decoded, clipped and sorted can be encoded while the caller decodes the
 * next: two slices alternate between the caller and one worker pthread, so
 * on two cores the stop takes about the longer of the two stages instead
 * of their sum. The sort stays with the caller because that balances the
 * stages (decoding and clipping weigh about what the sort does not: the
 * encoding; a worker that also sorted was busy twice as long as the
 * caller). The runs come out in the order the slices
 * were submitted whichever thread made them, so the result is the same
 * bytes as without a worker. It does NOT decode rings, clip, resolve
 * causes or merge the runs (report_builder.c, interval_sort.h).
 *
 * Contract
 * - Plain C, no Ruby: the worker touches only this object's slices, sort
 *   orders and runs, all malloc'd here; the caller may hold the GVL
 *   throughout (a submit waits at most for the worker to finish one slice).
 * - new(slice_records, threaded): with `threaded`, two slices of
 *   `slice_records` records and two sort scratches of as many (the
 *   worker reads one pair while the caller fills the other) and a worker
 *   thread (all signals blocked) if one can be started; else one of each
 *   and everything runs on the caller's thread in submit, as with
 *   `threaded` 0. NULL when memory ran out.
 * - slice: the records to fill next (room for slice_records). Valid until
 *   the next submit or finish; each submit may hand out the other slice.
 * - submit(n): the first n records of the slice become the next run, in
 *   (start_ns, thread_seq) order, stable (interval_sort.h); sorted before
 *   it returns, encoded before the next submit returns; n 0 makes no run. 0, or -1 once memory ran out (in this or an earlier run): stop
 *   submitting and call finish, which reports it too.
 * - finish: waits for the last run, joins the worker and frees the object
 *   (always, whatever it returns). 0 with the runs (*runs, *nruns: the
 *   caller owns them, frees each with rperf_interval_store_free and the
 *   array with free; NULL and 0 when there were none), or -1 when memory
 *   ran out anywhere (nothing returned, nothing leaked). finish(NULL) is a
 *   no-op returning 0.
 * - One caller thread per object; objects are independent.
 */
#ifndef RPERF_INTERVAL_RUNS_H
#define RPERF_INTERVAL_RUNS_H

#include <stddef.h>

#include "interval_codec.h"
#include "interval_store.h"

typedef struct rperf_interval_runs rperf_interval_runs_t;

rperf_interval_runs_t *rperf_interval_runs_new(size_t slice_records, int threaded);
rperf_interval_t *rperf_interval_runs_slice(rperf_interval_runs_t *r);
int rperf_interval_runs_submit(rperf_interval_runs_t *r, size_t n);
int rperf_interval_runs_finish(rperf_interval_runs_t *r, rperf_interval_store_t **runs, size_t *nruns);
/* Whether a worker thread runs (tests check that both paths ran). */
int rperf_interval_runs_threaded(const rperf_interval_runs_t *r);

#endif
