/*
 * metrics_format.h — what a per-process metrics file (docs/metrics.md,
 * "The directory") fixes: its format name and version, the histogram
 * buckets, the drop counters' names and the limits a reader enforces.
 * Shared by the writer (lib/rperf/metrics.rb reads them from the extension
 * as Rperf::METRICS_FORMAT) and the reader (metrics.h), so the two cannot
 * disagree.
 *
 * It does NOT describe the JSON layout (metrics_file.c and
 * lib/rperf/metrics.rb do) nor the exposition (metrics_text.c).
 *
 * Contract: header only, no code. Bucket bounds are the upper bounds of
 * all but the last bucket (+Inf); a file holds one count per bucket,
 * not cumulative. Changing a bound or a list is a new version.
 */
#ifndef RPERF_METRICS_FORMAT_H
#define RPERF_METRICS_FORMAT_H

#include "report_format.h" /* RPERF_CAUSE_COUNT, RPERF_CAUSE_NAMES */

#define RPERF_METRICS_FORMAT_NAME "rperf-gvl-metrics"
#define RPERF_METRICS_VERSION 1

/* GVL wait of one unit of work: upper bounds in ns (100 µs to 2.5 s). */
#define RPERF_METRICS_WAIT_BOUNDS 14
#define RPERF_METRICS_WAIT_BOUNDS_NS \
    { \
        100000LL, 250000LL, 500000LL, 1000000LL, 2500000LL, 5000000LL, 10000000LL, 25000000LL, 50000000LL, \
            100000000LL, 250000000LL, 500000000LL, 1000000000LL, 2500000000LL \
    }

/* GVL wait share of one unit (wait / wall): upper bounds in thousandths. */
#define RPERF_METRICS_RATIO_BOUNDS 8
#define RPERF_METRICS_RATIO_BOUNDS_PERMILLE \
    { \
        10, 50, 100, 200, 300, 500, 700, 900 \
    }

/* The profiler's drop counters a file carries, in this order. */
#define RPERF_METRICS_DROPS 6
#define RPERF_METRICS_DROP_NAMES \
    { \
        "threads", "causes", "intervals", "edges", "blocked_edges", "label_sets" \
    }

/* What a reader accepts: bigger files, more rows, labels or longer texts
 * are refused (the writer never makes them). */
#define RPERF_METRICS_MAX_FILE_BYTES (16L << 20)
#define RPERF_METRICS_MAX_ROWS 100000
#define RPERF_METRICS_MAX_LABELS 32
#define RPERF_METRICS_MAX_TEXT 1024 /* bytes of a kind, label name or label value */
#define RPERF_METRICS_MAX_FILES 4096
#define RPERF_METRICS_MAX_FOLDED_NAMES RPERF_METRICS_MAX_FILES

#endif
