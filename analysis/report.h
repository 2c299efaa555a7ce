/* report.h — the in-memory model of a report.json (format version 1) and its loader.
 *
 * rga_report_load_buffer()/rga_report_load_file() read one report (plain or
 * gzip JSON) into a compact rga_report_t and validate it against
 * docs/report-format.md: types, non-negative times, end >= start, and every
 * id (thread seq, Ractor, label set, stack, frame) pointing somewhere. A
 * failure fills rga_error_t with the input name, line:column (syntax errors
 * and element-level checks) and a JSON path ("threads[3].gvl_wait_ns").
 * Minor 1 adds blocked causes: per thread and label row (cause_ns), per
 * blocked interval (rga_interval_t.cause, and the interval_causes row with
 * its releaser), release edges and blocked methods; has_causes says whether
 * a report carries any, and the views show causes only then.
 *
 * The loader never holds the whole document as a jansson DOM: jansson parses
 * the top-level values one by one and the large arrays element by element,
 * each element converted into a fixed-size record right away, so peak memory
 * is the text plus the compact model.
 *
 * Ownership: a loaded report owns all its memory; free it with
 * rga_report_free(). Reports are plain data: no internal locking; a report is
 * safe to read from several threads once loaded. No routine here prints.
 *
 * Merging (report_merge.c): rga_report_merge() places several reports of one
 * process (a snapshot series) on one time axis by their meta.start_monotonic_ns.
 */
#ifndef RGA_REPORT_H
#define RGA_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rga_error.h"

#include "report_format.h"
#include "rperf_limits.h"

/* The format's numbering (report_format.h, shared with the extension). */
enum rga_state {
    RGA_STATE_RUNNING = RPERF_STATE_RUNNING,
    RGA_STATE_GVL_WAIT = RPERF_STATE_GVL_WAIT,
    RGA_STATE_BLOCKED = RPERF_STATE_BLOCKED,
    RGA_STATE_GC_MARK = RPERF_STATE_GC_MARK,
    RGA_STATE_GC_SWEEP = RPERF_STATE_GC_SWEEP,
    RGA_STATE_COUNT = RPERF_STATE_COUNT
};

/* Synthetic frame ids fixed by the format. */
enum {
    RGA_FRAME_GVL_BLOCKED = RPERF_FRAME_GVL_BLOCKED,
    RGA_FRAME_GVL_WAIT = RPERF_FRAME_GVL_WAIT,
    RGA_FRAME_GC_MARK = RPERF_FRAME_GC_MARK,
    RGA_FRAME_GC_SWEEP = RPERF_FRAME_GC_SWEEP
};

typedef enum rga_holder_kind {
    RGA_HOLDER_THREAD = RPERF_HOLDER_THREAD,
    RGA_HOLDER_GC = RPERF_HOLDER_GC,
    RGA_HOLDER_HANDOFF = RPERF_HOLDER_HANDOFF,
    RGA_HOLDER_UNKNOWN = RPERF_HOLDER_UNKNOWN
} rga_holder_kind_t;

/* Why a thread was blocked (report_format.h). A cause name this reader does
 * not know reads as RGA_CAUSE_OTHER. */
enum rga_cause {
    RGA_CAUSE_UNKNOWN = RPERF_CAUSE_UNKNOWN,
    RGA_CAUSE_IO = RPERF_CAUSE_IO,
    RGA_CAUSE_SLEEP = RPERF_CAUSE_SLEEP,
    RGA_CAUSE_MUTEX = RPERF_CAUSE_MUTEX,
    RGA_CAUSE_CONDVAR = RPERF_CAUSE_CONDVAR,
    RGA_CAUSE_QUEUE = RPERF_CAUSE_QUEUE,
    RGA_CAUSE_JOIN = RPERF_CAUSE_JOIN,
    RGA_CAUSE_RACTOR = RPERF_CAUSE_RACTOR,
    RGA_CAUSE_PROCESS = RPERF_CAUSE_PROCESS,
    RGA_CAUSE_OTHER = RPERF_CAUSE_OTHER,
    RGA_CAUSE_COUNT = RPERF_CAUSE_COUNT
};

typedef struct rga_meta {
    char *tool, *tool_version, *ruby_version, *program, *mode;
    char *recording; /* "full" or "counters" ("" when the report does not say: full) */
    int64_t pid, frequency, start_time_ns, start_monotonic_ns, duration_ns, sequence;
} rga_meta_t;

/* Every stat of RPERF_REPORT_STATS (report_format.h); 0 when the report
 * leaves it out (the optional ones, and minor 1's in a minor-0 report). */
#define RGA_STAT_FIELD(name, counter) int64_t name;
typedef struct rga_stats {
    RPERF_REPORT_STATS(RGA_STAT_FIELD)
} rga_stats_t;
#undef RGA_STAT_FIELD

typedef struct rga_ractor {
    int64_t id;
    bool main;
    bool identified; /* false: the row of one thread whose Ractor is not known */
} rga_ractor_t;

typedef struct rga_thread {
    int64_t seq;
    char *name;
    int64_t native_id;
    int64_t ractor;
    int64_t first_seen_ns, last_seen_ns;
    bool exited;
    int64_t state_ns[RGA_STATE_COUNT]; /* running, gvl_wait, blocked, gc_mark, gc_sweep */
    int64_t acquisitions, waits;
    int64_t label_set; /* the thread's label set at the end of the interval; -1 = not given */
    /* Minor 1: blocked time by cause (has_causes: the report gave them). */
    bool has_causes;
    int64_t cause_ns[RGA_CAUSE_COUNT];
    int64_t release_unknown_ns; /* releasable-cause time with no releaser found */
} rga_thread_t;

typedef struct rga_label_set {
    int64_t id;
    size_t n_labels;
    char **keys; /* n_labels each, sorted by key */
    char **values;
} rga_label_set_t;

typedef struct rga_label_total {
    int64_t thread, label_set;
    int64_t state_ns[RGA_STATE_COUNT];
    bool has_causes; /* minor 1: blocked_by_cause given */
    int64_t cause_ns[RGA_CAUSE_COUNT];
} rga_label_total_t;

typedef struct rga_frame {
    char *path, *label;
} rga_frame_t;

typedef struct rga_stack {
    size_t first;   /* index into rga_report_t.stack_frames */
    uint32_t depth; /* leaf first */
} rga_stack_t;

typedef struct rga_sample {
    int64_t stack, weight_ns, thread, label_set;
} rga_sample_t;

/* 32 bytes: intervals are the bulk of a large report. */
typedef struct rga_interval {
    int64_t start_ns, end_ns;
    uint32_t thread_index; /* index into threads[], resolved at load */
    uint32_t label_set;
    int32_t stack; /* -1: none */
    uint8_t state;
    uint8_t cause; /* blocked intervals: enum rga_cause from interval_causes (else UNKNOWN) */
} rga_interval_t;

/* One interval_causes row. cause_id indexes the report's `causes` list as
 * loaded; validation maps it to cause and finds the interval. */
typedef struct rga_interval_cause {
    int64_t thread, start_ns, cause_id, releaser; /* releaser: a thread seq, 0 = none known */
    size_t interval;                              /* index into intervals[], set by validation */
    uint8_t cause;
} rga_interval_cause_t;

/* A release edge: waiter was blocked on cause until releaser woke it. */
typedef struct rga_blocked_edge {
    int64_t ractor, waiter, releaser, waiter_label_set, releaser_label_set, blocked_ns, count;
    int64_t releaser_stack; /* -1: not known */
    uint8_t cause;
} rga_blocked_edge_t;

/* Where a thread was blocked: a leaf method and its cause. */
typedef struct rga_blocked_method {
    int64_t thread;
    char *method;
    int64_t blocked_ns, count;
    uint8_t cause;
} rga_blocked_method_t;

typedef struct rga_edge {
    int64_t ractor, waiter, holder, waiter_label_set, holder_label_set, wait_ns, count;
    rga_holder_kind_t holder_kind;
} rga_edge_t;

typedef struct rga_blame {
    int64_t stack, holder, label_set, blame_ns;
} rga_blame_t;

typedef struct rga_report {
    int64_t version, minor;
    rga_meta_t meta;
    rga_stats_t stats;
    rga_ractor_t *ractors;
    size_t n_ractors;
    rga_thread_t *threads;
    size_t n_threads; /* sorted by seq, seqs unique */
    rga_label_set_t *label_sets;
    size_t n_label_sets;
    rga_label_total_t *label_totals;
    size_t n_label_totals;
    rga_frame_t *frames;
    size_t n_frames;
    rga_stack_t *stacks;
    size_t n_stacks;
    int64_t *stack_frames;
    size_t n_stack_frames;
    rga_sample_t *samples;
    size_t n_samples;
    rga_interval_t *intervals;
    size_t n_intervals;
    rga_edge_t *edges;
    size_t n_edges;
    rga_blame_t *blame;
    size_t n_blame;
    /* Minor 1 (all empty in a minor-0 report). cause_of_id maps the ids of
     * `causes` to enum rga_cause. interval_causes are sorted by interval
     * once validated (rga_report_interval_cause bisects them). */
    uint8_t *cause_of_id;
    size_t n_cause_ids;
    rga_interval_cause_t *interval_causes;
    size_t n_interval_causes;
    rga_blocked_edge_t *blocked_edges;
    size_t n_blocked_edges;
    rga_blocked_method_t *blocked_methods;
    size_t n_blocked_methods;
    bool has_causes; /* any blocked-cause data at all: the views show causes only then */
    /* Where the "intervals" array sat in the loaded text (after gunzip), so
     * a caller may read the rest with another parser and take the timeline
     * from here; both 0 when there was none (and in merged reports). */
    size_t intervals_text_offset, intervals_text_length;
} rga_report_t;

/* Loads a report from len bytes of JSON (gzip data is detected by its magic
 * bytes and inflated). name labels errors ("" or NULL for none). On success
 * *out receives a new report and RGA_OK is returned; on failure *out is NULL. */
rga_status_t rga_report_load_buffer(const char *data, size_t len, const char *name, rga_report_t **out,
                                    rga_error_t *err);

/* Default cap on the inflated size of a gzip report: 1 GiB. A larger report
 * needs a larger cap (rga_report_set_max_inflated; the CLI's --max-inflated
 * and RPERF_GVL_MAX_INFLATED). */
#define RGA_MAX_INFLATED_DEFAULT ((size_t)RPERF_REPORT_INFLATED_BYTES_DEFAULT) /* rperf_limits.h */

/* Sets the cap on the inflated size of gzip input for every later load in
 * the process (0 restores the default). Set it before loading, from one
 * thread; loads read it once each. */
void rga_report_set_max_inflated(size_t bytes);
size_t rga_report_max_inflated(void);

/* Reads path (gzip when it starts with the gzip magic) and loads it; "-" is
 * standard input (named so in errors), read to its end, not closed. */
rga_status_t rga_report_load_file(const char *path, rga_report_t **out, rga_error_t *err);

/* Loader flags. RGA_LOAD_JANSSON_ONLY: parse every element with jansson,
 * bypassing the integer-tuple fast path (for comparison and testing; the
 * result is the same, only slower). */
#define RGA_LOAD_JANSSON_ONLY 1u

rga_status_t rga_report_load_buffer_flags(const char *data, size_t len, const char *name, unsigned flags,
                                          rga_report_t **out, rga_error_t *err);
rga_status_t rga_report_load_file_flags(const char *path, unsigned flags, rga_report_t **out, rga_error_t *err);

void rga_report_free(rga_report_t *report);

/* Index of the thread with this seq, or -1. O(log n). */
long rga_report_thread_index(const rga_report_t *report, int64_t seq);

/* Index of the label set with this id, or -1. */
long rga_report_label_set_index(const rga_report_t *report, int64_t id);
/* Where the report's time axis ends: its duration, or the end of an interval
 * that reaches past it (the state open at the cut). */
int64_t rga_report_end_ns(const rga_report_t *report);

/* The Ractor row with this id, NULL if none. */
const rga_ractor_t *rga_report_ractor(const rga_report_t *report, int64_t id);
/* "Ractor 2", "Ractor 1 (main)", or "Ractor ?" for a row whose Ractor is
 * not identified (one thread's row); truncated to fit `size`. */
void rga_ractor_name(const rga_report_t *report, int64_t id, char *buf, size_t size);

/* "name (#seq)", or "#seq" for an unnamed thread, the name escaped for a
 * terminal (term_text.h). Returns buf. */
char *rga_thread_label(const rga_report_t *r, int64_t seq, char *buf, size_t size);

/* Value of key in the label set with this id, or NULL. */
const char *rga_report_label_value(const rga_report_t *report, int64_t label_set, const char *key);

/* Merges n reports of one process into a new report on one time axis: the
 * earliest meta.start_monotonic_ns becomes 0; threads are matched by seq and
 * their totals added, label sets by content, frames by (path, label), edges by
 * key. The inputs are not modified. n == 1 returns a copy. */
rga_status_t rga_report_merge(rga_report_t *const *reports, size_t n, rga_report_t **out, rga_error_t *err);

/* Name of a state ("running", "gvl_wait", ...). */
const char *rga_state_name(int state);

/* The interval_causes row of interval index i, or NULL (cause unknown, no
 * releaser). O(log n). */
const rga_interval_cause_t *rga_report_interval_cause(const rga_report_t *report, size_t interval);

/* Name of a cause ("mutex", ...); "unknown" out of range. */
const char *rga_cause_name(int cause);

/* The cause with this name; a name this reader does not know is OTHER. */
int rga_cause_from_name(const char *name);

/* Name of a holder kind ("thread", "gc", "handoff", "unknown"). */
const char *rga_holder_kind_name(rga_holder_kind_t kind);

#endif
