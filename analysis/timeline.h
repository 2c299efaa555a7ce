/* timeline.h — per-thread contention timeline: intervals bucketed on a time axis.
 *
 * rga_timeline_build() splits [from_ns, to_ns) into n_buckets equal buckets
 * and adds to each (thread, bucket, state) the overlap of every interval,
 * so the time per thread and state is conserved (an interval crossing a
 * bucket border is split proportionally). The dominant state of a bucket is
 * the one with the most time; a bucket with none is idle (thread not yet
 * started/ended, or no interval recorded).
 *
 * rga_timeline_write_text() renders one row per thread: a glyph (and with
 * colour an ANSI colour) per bucket, a time axis and a legend. With blocked
 * causes (report minor 1) a blocked bucket shows its main cause's letter
 * (m mutex, q queue, i io, ...) and a second legend line names them.
 * The timeline owns its arrays and borrows thread names from the report.
 */
#ifndef RGA_TIMELINE_H
#define RGA_TIMELINE_H

#include <stdio.h>

#include "filter.h"
#include "report.h"

#define RGA_TIMELINE_IDLE (-1)

typedef struct rga_timeline {
    const rga_report_t *report;
    int64_t from_ns, to_ns; /* the axis, report-relative ns */
    size_t n_buckets;
    size_t n_rows;
    size_t *row_thread; /* thread index per row */
    int64_t *ns;        /* n_rows * n_buckets * RGA_STATE_COUNT */
    int64_t *cause_ns;  /* blocked time by cause: n_rows * n_buckets * RGA_CAUSE_COUNT; NULL without causes */
} rga_timeline_t;

/* to_ns <= 0 means the end of the report (meta.duration_ns, or the last
 * interval end when later). n_buckets must be >= 1. */
rga_status_t rga_timeline_build(const rga_report_t *r, const rga_filter_t *filter, int64_t from_ns, int64_t to_ns,
                                size_t n_buckets, rga_timeline_t *out, rga_error_t *err);
void rga_timeline_free(rga_timeline_t *t);

/* Time of state in (row, bucket). */
int64_t rga_timeline_ns(const rga_timeline_t *t, size_t row, size_t bucket, int state);

/* Dominant state of (row, bucket) or RGA_TIMELINE_IDLE. Ties go to the lower
 * state number except that gvl_wait beats running, so contention shows. */
int rga_timeline_dominant(const rga_timeline_t *t, size_t row, size_t bucket);

/* The cause with the most blocked time in (row, bucket), or -1 when the
 * report has no blocked causes (minor 0) or the bucket no blocked time. */
int rga_timeline_cause(const rga_timeline_t *t, size_t row, size_t bucket);

typedef struct rga_timeline_text_opts {
    bool color;
    bool ascii; /* ASCII glyphs instead of block characters */
} rga_timeline_text_opts_t;

rga_status_t rga_timeline_write_text(const rga_timeline_t *t, FILE *out, const rga_timeline_text_opts_t *opts,
                                     rga_error_t *err);

#endif
