/*
 * rperf_limits.h — every limit and default of the profiler's options, in
 * one place: the extension validates against it, exports it to Ruby as
 * Rperf::LIMITS (lib/rperf.rb reads its ranges and defaults from there), and
 * the CLI checks `record` options with it before starting a program.
 *
 * It does NOT hold the report format's numbering (report_format.h) nor
 * internal capacities that no option sets (those stay with their tables).
 *
 * Contract: header only, no code; include it from C11 or the extension.
 * RPERF_OPTION_LIMITS(X) calls X(name, min, max, default, unit) once per
 * option, in the order Rperf::LIMITS lists them; min..max is inclusive.
 */
#ifndef RPERF_LIMITS_H
#define RPERF_LIMITS_H

#define RPERF_FREQUENCY_MIN 1
#define RPERF_FREQUENCY_MAX 10000
#define RPERF_FREQUENCY_DEFAULT 1000

#define RPERF_MAX_THREADS_MIN 1
#define RPERF_MAX_THREADS_MAX (1LL << 20)
#define RPERF_MAX_THREADS_DEFAULT 4096

/* Per Ractor: the timeline ring holds at most this many intervals and
 * reserves RPERF_INTERVAL_BYTES bytes for each (reserved lazily: untouched
 * pages cost nothing), so the default is an hour of ~280 state changes a
 * second in at most 12 MB. Intervals are kept delta-encoded, 6–9 bytes for
 * a busy run's hand-offs; when their bytes fill the ring first (records of
 * far-apart threads and stacks), later ones are dropped and counted. */
#define RPERF_MAX_INTERVALS_MIN 0
#define RPERF_MAX_INTERVALS_MAX (1LL << 31)
#define RPERF_MAX_INTERVALS_DEFAULT 1000000
#define RPERF_INTERVAL_BYTES 12

#define RPERF_MIN_INTERVAL_NS_MIN 0
#define RPERF_MIN_INTERVAL_NS_MAX 10000000000LL
#define RPERF_MIN_INTERVAL_NS_DEFAULT 0

#define RPERF_MAX_EDGES_MIN 1
#define RPERF_MAX_EDGES_MAX (1LL << 24)
#define RPERF_MAX_EDGES_DEFAULT 65536

/* Distinct label sets beyond this many are counted, not registered. The
 * contention log's max_label_sets (ContentionLog, 1,000) is another cap: it
 * folds a log's label sets into "other" before they reach this registry. */
#define RPERF_MAX_LABEL_SETS_MIN 1
#define RPERF_MAX_LABEL_SETS_MAX 100000
#define RPERF_MAX_LABEL_SETS_DEFAULT 100000

/* A limit as a string literal, for messages built at compile time. */
#define RPERF_STR_(x) #x
#define RPERF_STR(x) RPERF_STR_(x)

#define RPERF_OPTION_LIMITS(X) \
    X(frequency, RPERF_FREQUENCY_MIN, RPERF_FREQUENCY_MAX, RPERF_FREQUENCY_DEFAULT, "Hz") \
    X(max_threads, RPERF_MAX_THREADS_MIN, RPERF_MAX_THREADS_MAX, RPERF_MAX_THREADS_DEFAULT, "threads") \
    X(max_intervals, RPERF_MAX_INTERVALS_MIN, RPERF_MAX_INTERVALS_MAX, RPERF_MAX_INTERVALS_DEFAULT, \
      "intervals per Ractor, " RPERF_STR(RPERF_INTERVAL_BYTES) " bytes each") \
    X(min_interval_ns, RPERF_MIN_INTERVAL_NS_MIN, RPERF_MIN_INTERVAL_NS_MAX, RPERF_MIN_INTERVAL_NS_DEFAULT, "ns") \
    X(max_edges, RPERF_MAX_EDGES_MIN, RPERF_MAX_EDGES_MAX, RPERF_MAX_EDGES_DEFAULT, "edges") \
    X(max_label_sets, RPERF_MAX_LABEL_SETS_MIN, RPERF_MAX_LABEL_SETS_MAX, RPERF_MAX_LABEL_SETS_DEFAULT, "label sets")

/* Reading a report: the most bytes a gzip report may inflate to, so that
 * a small hostile file cannot exhaust memory (Report.load and the CLI). */
#define RPERF_REPORT_INFLATED_BYTES_DEFAULT (1LL << 30)

/* Fixed capacities, exported too (Rperf::LIMITS[:ractors], [:stack_depth],
 * [:report_inflated_bytes], [:interval_bytes]). */
#define RPERF_MAX_RACTORS 256
#define RPERF_MAX_STACK_DEPTH 256

#endif
