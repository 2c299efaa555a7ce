/*
 * interval_list.h — a report's timeline as a Ruby object:
 * Rperf::Contention::Intervals, an immutable, Enumerable list of
 * [thread_seq, state, start_ns, end_ns, label_set_id, stack_id] tuples kept
 * encoded (interval_store.h: 6–12 bytes a record), and its causes view
 * Rperf::Contention::IntervalCauses (the blocked records' causes).
 *
 * A report of a GVL-switch-heavy run holds close to a million intervals;
 * as Ruby Arrays they were most of `stop`'s time (allocation and the
 * garbage collections it set off) and of the report's memory. Here a tuple
 * is made only when Ruby asks for one, `to_json` writes the whole list in C
 * (the JSON generator splices its result in) and `write_json(io)` streams
 * it to a file without holding the text. It does NOT clip, sort
 * or decide what goes in (report_builder.c builds the records).
 *
 * Contract
 * - rperf_interval_list_define: once, from Init, with the GVL.
 * - rperf_interval_list_new: with the GVL; takes ownership of `records`
 *   (malloc'd, times already relative to the report's start), also when it
 *   raises (Rperf::ResourceError when memory runs out). The object is
 *   frozen and may be shared between Ractors.
 * - rperf_interval_list_adopt: the same from records already encoded in
 *   order; the list takes the store's contents (the store is left empty),
 *   also when it raises.
 * - rperf_interval_list_adopt_runs: the same from `nruns` runs, each
 *   encoded in report order (interval_sort.h); the list is their merge.
 *   It takes `runs` (malloc'd, with the stores in it), also when it
 *   raises. The runs are kept: reading in order (each, to_json,
 *   write_json) merges them as it reads; the first `at` merges them once
 *   into one more store (thread- and Ractor-safe).
 * - rperf_interval_list_causes(intervals, count): with the GVL; the report's
 *   `interval_causes` (Rperf::Contention::IntervalCauses): a view of the
 *   list's blocked records whose cause is known
 *   (rperf_interval_json_has_cause), as [thread_seq, start_ns, cause,
 *   releaser_seq] tuples, read from the same store (no copy). The records
 *   must carry resolved causes (report_builder.c resolves them); `count` is
 *   how many of them the view lists, counted by the caller as it built
 *   them (the view's size; its rows are found by reading).
 */
#ifndef RPERF_INTERVAL_LIST_H
#define RPERF_INTERVAL_LIST_H

#include <ruby.h>
#include <stddef.h>

#include "interval_store.h"

void rperf_interval_list_define(VALUE mContention);
VALUE rperf_interval_list_new(rperf_interval_t *records, size_t count);
VALUE rperf_interval_list_adopt(rperf_interval_store_t *store);
VALUE rperf_interval_list_adopt_runs(rperf_interval_store_t *runs, size_t nruns);
VALUE rperf_interval_list_causes(VALUE intervals, size_t count);

#endif
