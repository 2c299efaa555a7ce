/* filter.h — which threads, label sets and sampled states a view looks at
 * (--thread, --ractor, --label, --state).
 *
 * A filter is compiled against one report (rga_filter_init) and then answers
 * in O(1) per thread index and per label set index. It owns two small masks;
 * free with rga_filter_free(). A view with no criteria accepts everything.
 *
 * The state criterion applies to samples only (the profile outputs read it
 * through rga_filter_sample); a sample's state is read from its synthetic
 * leaf frame: [GVL wait], [GVL blocked], [GC marking]/[GC sweeping], or
 * running when the leaf is a Ruby frame (or the stack is empty). It does not
 * restrict the state-total views (summary, timeline, wait graph).
 */
#ifndef RGA_FILTER_H
#define RGA_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"

typedef struct rga_filter_spec {
    const char *thread;        /* a seq ("3") or an exact Thread#name; NULL = any */
    long long ractor;          /* Ractor id; 0 = any */
    const char *const *labels; /* "key=value" strings; all must match */
    size_t n_labels;
    const char *state; /* "running", "gvl_wait", "blocked", "gc"; NULL = any */
} rga_filter_spec_t;

/* The state a sample stands for, from its leaf frame. */
typedef enum rga_sample_state {
    RGA_SAMPLE_ANY = -1,
    RGA_SAMPLE_RUNNING = 0,
    RGA_SAMPLE_GVL_WAIT = 1,
    RGA_SAMPLE_BLOCKED = 2,
    RGA_SAMPLE_GC = 3
} rga_sample_state_t;

typedef struct rga_filter {
    bool active;        /* any criterion given */
    bool *thread_ok;    /* by thread index */
    bool *label_set_ok; /* by label set index */
    bool labels_active;
    rga_sample_state_t state; /* RGA_SAMPLE_ANY: every state */
} rga_filter_t;

/* Compiles spec (NULL = no criteria). A --thread that matches no thread, a
 * malformed label or an unknown state name is RGA_ERR_ARGUMENT. */
rga_status_t rga_filter_init(rga_filter_t *f, const rga_report_t *r, const rga_filter_spec_t *spec,
                             rga_error_t *err);
void rga_filter_free(rga_filter_t *f);

bool rga_filter_thread(const rga_filter_t *f, const rga_report_t *r, int64_t seq);
bool rga_filter_thread_index(const rga_filter_t *f, size_t index);
bool rga_filter_label_set(const rga_filter_t *f, const rga_report_t *r, int64_t label_set_id);

/* The state of a stack (by id; an id outside the report counts as running). */
rga_sample_state_t rga_stack_state(const rga_report_t *r, int64_t stack);

/* A sample passes when its thread, its label set and its state pass. */
bool rga_filter_sample(const rga_filter_t *f, const rga_report_t *r, const rga_sample_t *s);

#endif
