/* profile_model.h — the samples every profile output reads (pprof, folded
 * stacks, speedscope, the flat/cumulative top view).
 *
 * rga_profile_build() selects the report's aggregated samples that pass a
 * filter (thread, Ractor, label set, state) and groups the report's frames
 * into functions: frames with the same label and path are one function, so
 * two frame ids of one method (e.g. after a redefinition) are not split. A
 * sample with an empty stack (a thread sampled before its first Ruby frame)
 * is given the placeholder function "[no Ruby frame]", so every output keeps
 * all of the weight. The synthetic [GVL wait], [GVL blocked], [GC marking]
 * and [GC sweeping] frames are functions of their own.
 *
 * It does not merge equal stacks across threads or label sets (each output
 * decides that). Weighted by blame instead of samples (--blame), its rows
 * are the stacks that made others wait, each under the thread that ran it:
 * RGA_WEIGHT_DIRECT the blame rows (GVL holders, weight × waiters) and the
 * releasers' stacks (blocked_edges.releaser_stack, the blocked time each
 * release ended); RGA_WEIGHT_ROOT every wait's root (rootcause.h) split over
 * the root thread's stacks in the root's state. A root with no such sample
 * (hand-off, a thread never sampled in that state) has no row.
 *
 * Ownership: the model borrows the report (samples, names and paths point
 * into it): keep the report alive and unchanged while the model is used.
 * Free with rga_profile_free(). Plain data, no locking. No routine prints.
 */
#ifndef RGA_PROFILE_MODEL_H
#define RGA_PROFILE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "filter.h"
#include "report.h"

typedef struct rga_profile_function {
    const char *name; /* the frame's label */
    const char *file; /* the frame's path ("" for the placeholder) */
    bool synthetic;   /* a state frame or the placeholder: no Ruby code */
} rga_profile_function_t;

typedef struct rga_profile {
    const rga_report_t *report;
    const rga_sample_t **samples;
    size_t n_samples;         /* selected, in report order */
    rga_sample_t *owned;      /* blame rows the samples point to (weighted builds) */
    int weight;               /* rga_profile_weight_t it was built with */
    uint32_t *frame_function; /* by frame id: index into functions */
    rga_profile_function_t *functions;
    size_t n_functions;
    size_t max_depth;  /* deepest selected stack, at least 1 */
    int64_t total_ns;  /* sum of the selected weights */
    int64_t period_ns; /* sampling interval: 1e9 / meta.frequency */
} rga_profile_t;

/* Builds the model of r under filter (NULL: every sample). Returns RGA_OK,
 * or RGA_ERR_NOMEM (out is then empty and needs no free). */
rga_status_t rga_profile_build(const rga_report_t *r, const rga_filter_t *filter, rga_profile_t *out,
                               rga_error_t *err);

/* What a profile weighs: the samples, or who made others wait (see above). */
typedef enum rga_profile_weight { RGA_WEIGHT_SAMPLES, RGA_WEIGHT_DIRECT, RGA_WEIGHT_ROOT } rga_profile_weight_t;

/* rga_profile_build with a choice of rows. The filter applies to each row's
 * thread, label set and stack state. RGA_ERR_NOMEM only. */
rga_status_t rga_profile_build_weighted(const rga_report_t *r, const rga_filter_t *filter,
                                        rga_profile_weight_t weight, rga_profile_t *out, rga_error_t *err);
void rga_profile_free(rga_profile_t *p);

/* The functions of s's stack, root first, into buf (room for p->max_depth).
 * Returns the depth, >= 1 (an empty stack is the placeholder function). */
size_t rga_profile_stack(const rga_profile_t *p, const rga_sample_t *s, uint32_t *buf);

/* a + b for non-negative weights, saturating at INT64_MAX: sums of weights
 * read from an untrusted report must not overflow. */
int64_t rga_weight_add(int64_t a, int64_t b);

/* Estimated number of samples behind an aggregated weight: weight / period,
 * rounded, at least 1 (the report keeps weights, not sample counts). */
int64_t rga_profile_sample_count(const rga_profile_t *p, int64_t weight_ns);

/* Name of a thread for people: "name" or "#seq" for an unnamed thread. */
const char *rga_profile_thread_name(const rga_thread_t *t, char *buf, size_t size);

/* A thread with its seq and Ractor: "worker (#3, Ractor 1)" or "#3 (Ractor 1)". */
const char *rga_profile_thread_title(const rga_thread_t *t, char *buf, size_t size);

#endif
