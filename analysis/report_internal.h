/* report_internal.h — routines shared by the report_*.c files, not part of the
 * public API (the Ruby extension and the CLI use report.h only). */
#ifndef RGA_REPORT_INTERNAL_H
#define RGA_REPORT_INTERNAL_H

#include "report.h"

/* Checks cross-references after loading or merging: sorts threads by seq and
 * label sets by id, rejects duplicates and ids that point nowhere, and turns
 * each interval's thread seq (stored in thread_index while loading) into an
 * index into threads[]. Fills err with a JSON path on failure. */
rga_status_t rga_report_validate(rga_report_t *report, rga_error_t *err);

/* Running totals of every kind of value the analysis adds up (summary,
 * wait graph, merge): if the total of a kind fits in int64_t, so does every
 * partial sum of it, since all values are non-negative. */
typedef struct rga_report_sums {
    int64_t thread_ns;   /* threads' five state times */
    int64_t lifetime_ns; /* threads' last_seen_ns - first_seen_ns */
    int64_t counts;      /* threads' acquisitions and waits */
    int64_t label_ns;    /* label_totals' state times */
    int64_t edge_wait_ns, edge_count;
    int64_t sample_ns, blame_ns;
    int64_t cause_ns;                        /* threads' blocked_by_cause and release_unknown_ns */
    int64_t label_cause_ns;                  /* label_totals' blocked_by_cause */
    int64_t blocked_edge_ns, blocked_counts; /* blocked_edges' and blocked_methods' ns; their counts */
    int64_t blocked_method_ns;
    int64_t stats; /* every stats counter */
} rga_report_sums_t;

/* Adds report's values into *sums (start from zero; a merge passes every
 * input through one accumulator). On overflow returns RGA_ERR_SCHEMA with the
 * JSON path of the value that made a total pass INT64_MAX. */
rga_status_t rga_report_add_sums(const rga_report_t *report, rga_report_sums_t *sums, rga_error_t *err);

#endif
