/* top_text.h — the flat/cumulative view of a profile model, like `pprof -top`
 * and rperf's text report: per function its self time (samples whose leaf
 * it is) and cumulative time (samples it is anywhere in, counted once per
 * sample however deep the recursion), with shares of the total and the
 * running sum of the self shares.
 *
 * rga_top_build() computes the rows, sorted by self time, then cumulative,
 * then order of first sight in the frame table; rga_top_write_text() prints the first rows as an aligned table
 * with a header line naming the mode, the total and the thread count.
 * The rows borrow the model: keep it (and its report) alive. Free with
 * rga_top_free(). No routine prints except to the FILE* given.
 */
#ifndef RGA_TOP_TEXT_H
#define RGA_TOP_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "profile_model.h"

typedef struct rga_top_row {
    uint32_t function; /* index into the model's functions */
    int64_t self_ns, cum_ns;
} rga_top_row_t;

typedef struct rga_top {
    const rga_profile_t *profile;
    rga_top_row_t *rows;
    size_t n_rows;    /* functions with cumulative time > 0 */
    size_t n_threads; /* threads with selected samples */
} rga_top_t;

rga_status_t rga_top_build(const rga_profile_t *p, rga_top_t *out, rga_error_t *err);
void rga_top_free(rga_top_t *t);

/* Prints at most max_rows rows (0 = 20). Returns RGA_OK, RGA_ERR_NOMEM, or
 * RGA_ERR_IO when out failed. */
rga_status_t rga_top_write_text(const rga_top_t *t, size_t max_rows, bool color, FILE *out, rga_error_t *err);

#endif
