/*
 * label_totals.h — state totals per (thread, label set): the rows of the
 * report's "label_totals".
 *
 * Rows in an array, in the order they were made, found through a hash
 * index keyed by thread seq and label set id; rows are only added to and
 * emptied as a whole.
 * Plain C. It does NOT decide how much time moves into a row (contention.c
 * flushes each slot's label portion) and takes no lock: the caller
 * serialises every call (contention.c's label mutex).
 *
 * Contract
 * - A zeroed rperf_label_totals_t is an empty table.
 * - row: the row of (thread_seq >= 1, label_set_id), created with zero
 *   totals and causes if missing; NULL when memory runs out (the table is unchanged).
 *   The pointer is valid until the next row or free.
 * - copy: the rows in a malloc'd array the caller frees (*count rows; never
 *   NULL unless memory runs out, then *count is 0).
 * - free: releases the rows and leaves an empty table.
 */
#ifndef RPERF_LABEL_TOTALS_H
#define RPERF_LABEL_TOTALS_H

#include <stddef.h>
#include <stdint.h>

#include "hash_index.h"
#include "report_format.h" /* RPERF_STATE_COUNT, RPERF_CAUSE_COUNT */

typedef struct rperf_label_total {
    int thread_seq;
    int label_set_id;
    int64_t totals[RPERF_STATE_COUNT]; /* ns per enum rperf_state */
    int64_t causes[RPERF_CAUSE_COUNT]; /* blocked ns per enum rperf_blocked_cause */
} rperf_label_total_t;

typedef struct rperf_label_totals {
    rperf_label_total_t *rows;
    size_t cap;
    size_t used;
    rperf_hash_index_t index; /* (thread, label set) -> row */
} rperf_label_totals_t;

rperf_label_total_t *rperf_label_totals_row(rperf_label_totals_t *t, int thread_seq, int label_set_id);
rperf_label_total_t *rperf_label_totals_copy(const rperf_label_totals_t *t, size_t *count);
void rperf_label_totals_free(rperf_label_totals_t *t);

#endif
