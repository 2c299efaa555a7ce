/* filter.h — which threads and label sets a view looks at (--thread, --ractor, --label).
 *
 * A filter is compiled against one report (rga_filter_init) and then answers
 * in O(1) per thread index and per label set index. It owns two small masks;
 * free with rga_filter_free(). A view with no criteria accepts everything.
 */
#ifndef RGA_FILTER_H
#define RGA_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"

typedef struct rga_filter_spec {
    const char *thread;             /* a seq ("3") or an exact Thread#name; NULL = any */
    long long ractor;               /* Ractor id; 0 = any */
    const char *const *labels;      /* "key=value" strings; all must match */
    size_t n_labels;
} rga_filter_spec_t;

typedef struct rga_filter {
    bool active;           /* any criterion given */
    bool *thread_ok;       /* by thread index */
    bool *label_set_ok;    /* by label set index */
    bool labels_active;
} rga_filter_t;

/* Compiles spec (NULL = no criteria). A --thread that matches no thread or a
 * malformed label is RGA_ERR_ARGUMENT. */
rga_status_t rga_filter_init(rga_filter_t *f, const rga_report_t *r, const rga_filter_spec_t *spec,
                             rga_error_t *err);
void rga_filter_free(rga_filter_t *f);

bool rga_filter_thread(const rga_filter_t *f, const rga_report_t *r, int64_t seq);
bool rga_filter_thread_index(const rga_filter_t *f, size_t index);
bool rga_filter_label_set(const rga_filter_t *f, const rga_report_t *r, int64_t label_set_id);

#endif
