/* metrics.h — contention counters as Prometheus metrics: the per-process
 * metrics files of a directory read, added up and written as the Prometheus
 * text exposition (0.0.4) or OpenMetrics 1.0 (docs/metrics.md).
 *
 * A directory holds one file per process (rperf-PID-START.json, written
 * by lib/rperf/metrics.rb with a temporary file and a rename) and at most
 * one aggregate of dead processes (rperf-dead.json). rga_metrics_render_dir()
 * reads them all under a shared lock (rperf.lock), optionally folds the files
 * of dead processes into the aggregate first (exclusive lock), and renders.
 * Counters of every file are summed, so a worker that exits and is replaced
 * never makes a total go backwards; gauges come from live processes only.
 *
 * Contract: no printing; errors in rga_error_t (err->file names the file).
 * The parsed model is plain C owned by the caller (rga_metrics_file_free).
 * Not thread-safe per object; reentrant otherwise.
 */
#ifndef RGA_METRICS_H
#define RGA_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "metrics_format.h"
#include "rga_error.h"

typedef struct rga_metrics_label {
    char *name;  /* as written by the program (made a valid name when rendered) */
    char *value; /* valid UTF-8; may hold NUL bytes */
    size_t value_len;
} rga_metrics_label_t;

/* One label set's counters: units of work of one kind and labels. */
typedef struct rga_metrics_row {
    char *kind;
    rga_metrics_label_t *labels;
    size_t n_labels;
    int64_t count;
    int64_t wall_ns, running_ns, gvl_wait_ns, gc_ns;
    int64_t blocked_ns[RPERF_CAUSE_COUNT];
    int64_t wait_buckets[RPERF_METRICS_WAIT_BOUNDS + 1];   /* per bucket, the last is +Inf */
    int64_t ratio_buckets[RPERF_METRICS_RATIO_BOUNDS + 1]; /* per bucket, the last is +Inf */
    int64_t ratio_sum_ppm;                                 /* sum of the shares, millionths */
} rga_metrics_row_t;

/* A process's own totals: every thread, units or not. */
typedef struct rga_metrics_process {
    int64_t threads; /* alive when written; not summed from dead processes */
    int64_t running_ns, gvl_wait_ns, gc_ns;
    int64_t blocked_ns[RPERF_CAUSE_COUNT];
    int64_t dropped[RPERF_METRICS_DROPS];
    int64_t label_sets_folded; /* units whose label set went to the "other" bucket */
    int64_t units_unmeasured;  /* units without counters (profiler not running) */
} rga_metrics_process_t;

typedef struct rga_metrics_file {
    int64_t pid;         /* 0 for the dead processes' aggregate */
    int64_t start_ticks; /* the process's start time (/proc/PID/stat field 22); 0 = unknown */
    rga_metrics_process_t process;
    rga_metrics_row_t *rows;
    size_t n_rows;
    char **folded; /* aggregate: file names already added into it */
    size_t n_folded;
} rga_metrics_file_t;

/* Parses one metrics file's bytes. name is for messages (err->file). */
rga_status_t rga_metrics_parse(const char *buf, size_t len, const char *name, rga_metrics_file_t **out,
                               rga_error_t *err);
void rga_metrics_file_free(rga_metrics_file_t *f);

/* Writes f in the file format (the aggregate of dead processes). */
rga_status_t rga_metrics_write(const rga_metrics_file_t *f, FILE *out, rga_error_t *err);

/* Files added up: rows of the same rendered label set are one series. */
typedef struct rga_metrics_set rga_metrics_set_t;

rga_metrics_set_t *rga_metrics_set_new(void);
void rga_metrics_set_free(rga_metrics_set_t *set);
/* Adds f's counters (and, when live, its gauges). */
rga_status_t rga_metrics_set_add(rga_metrics_set_t *set, const rga_metrics_file_t *f, bool live, rga_error_t *err);
/* Files by state for rperf_metrics_files{state=...}. */
void rga_metrics_set_count_files(rga_metrics_set_t *set, int64_t live, int64_t dead, int64_t skipped);
/* The set as one file (rows merged; gauges left out): the new aggregate. */
rga_status_t rga_metrics_set_to_file(const rga_metrics_set_t *set, rga_metrics_file_t **out, rga_error_t *err);

#define RGA_METRICS_OPENMETRICS 1u /* OpenMetrics 1.0 text instead of 0.0.4 */
#define RGA_METRICS_FOLD 2u        /* fold dead processes' files into the aggregate first */
#define RGA_METRICS_SKIP_BAD 4u    /* skip (and count) unreadable files instead of failing */

/* Writes the exposition of the set. */
rga_status_t rga_metrics_set_render(const rga_metrics_set_t *set, unsigned flags, FILE *out, rga_error_t *err);

/* Reads every metrics file of dir and writes the exposition. Errors: dir
 * missing or not a directory (RGA_ERR_IO), a file unreadable, not JSON,
 * of another version or inconsistent (without RGA_METRICS_SKIP_BAD). A
 * fold that cannot write leaves the dead files in place (they are still
 * summed) and is not an error. */
rga_status_t rga_metrics_render_dir(const char *dir, unsigned flags, FILE *out, rga_error_t *err);

/* The content type of the exposition the flags select. */
const char *rga_metrics_content_type(unsigned flags);

#endif
