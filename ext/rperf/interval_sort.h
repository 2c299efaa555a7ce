/*
 * interval_sort.h — orders a report's timeline by (start_ns, thread_seq).
 *
 * A stop of a GVL-switch-heavy run sorts close to a million intervals, and
 * a comparison sort through a callback spent more instructions there than
 * the hooks spent recording them; this is a stable LSD radix sort on the
 * two integer keys instead. It does NOT clip, filter or own the records.
 *
 * Contract
 * - Plain C, no Ruby, no allocation: the caller passes `scratch` with room
 *   for `n` records.
 * - Stable: records equal in both keys keep their input order.
 * - Returns the array that holds the sorted records, which is either `a` or
 *   `scratch`; the other one holds garbage.
 */
#ifndef RPERF_INTERVAL_SORT_H
#define RPERF_INTERVAL_SORT_H

#include <stddef.h>

#include "interval_buffer.h"

rperf_interval_t *rperf_interval_sort(rperf_interval_t *a, rperf_interval_t *scratch, size_t n);

#endif
