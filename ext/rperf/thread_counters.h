/*
 * thread_counters.h — the layout of one read of a thread's counters, the
 * order of Rperf::COUNTER_FIELDS: the clock reading they were taken at, the
 * state totals (report.json's order), when the thread last became runnable
 * after blocking (0: not since the profile recorded, or paused since) with
 * the totals then, and the blocked time by cause (report.json's causes).
 * The difference of two reads on one thread adds up to the difference of
 * their clock readings exactly (a separate clock read could fall on either
 * side of a GVL switch).
 *
 * It does NOT read counters (rperf.c does) and does NOT name them.
 */
#ifndef RPERF_THREAD_COUNTERS_H
#define RPERF_THREAD_COUNTERS_H

#include "report_format.h"

enum {
    COUNTER_CLOCK = 0,
    COUNTER_TOTALS = 1,
    COUNTER_RUNNABLE = COUNTER_TOTALS + RPERF_STATE_COUNT,
    COUNTER_RUNNABLE_TOTALS = COUNTER_RUNNABLE + 1,
    COUNTER_CAUSES = COUNTER_RUNNABLE_TOTALS + RPERF_STATE_COUNT,
    COUNTER_COUNT = COUNTER_CAUSES + RPERF_CAUSE_COUNT,
};

#endif
