/* metrics_internal.h — the summed metrics set that metrics_set.c builds and
 * metrics_text.c renders; not part of the library's interface (metrics.h).
 *
 * Each row keeps its exposition label text (`kind="request",endpoint="..."`,
 * names made valid, values escaped) as its key: rows whose keys are equal
 * are one series, whatever files they came from.
 */
#ifndef RGA_METRICS_INTERNAL_H
#define RGA_METRICS_INTERNAL_H

#include "metrics.h"

typedef struct rga_metrics_series {
    char *key; /* the label text inside the braces; no NUL byte */
    rga_metrics_row_t row;
} rga_metrics_series_t;

struct rga_metrics_set {
    rga_metrics_series_t *series;
    size_t n, cap;
    size_t merged;                 /* series[0..merged) are sorted by key and distinct */
    rga_metrics_process_t process; /* counters of every file; threads of the live ones */
    int64_t files_live, files_dead, files_skipped;
};

/* Frees what a row holds (not the row). */
void rga_metrics_row_free(rga_metrics_row_t *r);

/* Sorts and merges the series (equal keys summed); false on overflow. */
bool rga_metrics_set_compact(rga_metrics_set_t *set);

/* Seconds of ns as the shortest exact decimal ("0.00025", "3", "12.5"). */
void rga_metrics_seconds(int64_t ns, char *buf, size_t size);

#endif
