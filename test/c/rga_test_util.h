/* rga_test_util.h — helpers shared by the analysis cmocka tests: generating
 * a report with the generator binary and loading reports from strings,
 * and editing report text (one replacement) for tests of bad input. */
#ifndef RGA_TEST_UTIL_H
#define RGA_TEST_UTIL_H

#include <stddef.h>

#include "rga.h"
#include "report.h"

/* Runs the report generator with args into a new temp file; returns its
 * malloc'd path (the caller unlinks and frees it) or NULL. */
char *rga_test_generate(const char *args);

/* Creates an empty file in $TMPDIR (or the system temp dir); returns its
 * malloc'd path or NULL. */
char *rga_test_tempfile(const char *prefix);

/* Reads a whole file; NULL on failure. *len receives its size. */
char *rga_test_slurp(const char *path, size_t *len);

/* Loads text as a report, asserting success. */
rga_report_t *rga_test_load(const char *text);

/* Generates a report with args (rga_test_generate) and loads it, asserting
 * success; the file is removed. */
rga_report_t *rga_test_load_generated(const char *args);

/* A malloc'd copy of text with the first occurrence of from replaced by
 * to; fails the test when text has no from. */
char *rga_test_replace(const char *text, const char *from, const char *to);

/* A thread and an interval of a hand-written timeline (rga_test_timeline). */
typedef struct rga_test_thread {
    int seq;
    const char *name;
    int ractor;
} rga_test_thread_t;

typedef struct rga_test_interval {
    int thread, state;
    long long start, end; /* ms */
    int label_set;
    const char *cause; /* blocked: a cause name, NULL = no interval_causes row */
    int releaser;      /* thread seq, 0 = none */
} rga_test_interval_t;

/* A minor-1 report of these threads and intervals (times in ms, written in
 * ns): thread totals, lifetimes and label totals from the intervals,
 * blocked_by_cause from the causes, label set n > 0 = {"req": "n"},
 * Ractors from the threads (id 1 main). extra: more top-level members
 * ("\"frames\": ..., ") written first, or NULL. Returns malloc'd text. */
char *rga_test_timeline(const rga_test_thread_t *threads, size_t n_threads, const rga_test_interval_t *intervals,
                        size_t n_intervals, const char *extra);

/* Loads test/fixtures/NAME, asserting success. */
rga_report_t *rga_test_load_fixture(const char *name);

/* The view rendered into a malloc'd NUL-terminated string (opts NULL:
 * defaults); fails the test naming the view when it fails. */
char *rga_test_render(const rga_report_t *r, const char *view, const rga_view_opts_t *opts);

/* A small hand-written report with known numbers (see rga_test_util.c). */
extern const char rga_test_small_report[];

#endif
