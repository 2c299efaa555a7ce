/* collapsed_writer.h — a profile model as folded stacks ("collapsed" format):
 * one line per distinct stack, root first, frames joined by ';', then a
 * space and the weight in nanoseconds — the input of flamegraph.pl, inferno
 * and speedscope.
 *
 * Frames are function names (the report's labels). A ';' inside a name
 * becomes ':' and a line break a space, so every line splits back into the
 * same frames. Optional extra root frames: the thread ("worker (#3, Ractor
 * 1)") and the label set ("endpoint=GET /users" or "(no labels)"). Equal
 * lines are merged (weights added) and lines are sorted; zero-weight lines
 * are left out. The weights sum to the model's total. No routine prints.
 */
#ifndef RGA_COLLAPSED_WRITER_H
#define RGA_COLLAPSED_WRITER_H

#include <stdbool.h>
#include <stdio.h>

#include "profile_model.h"

typedef struct rga_collapsed_opts {
    bool thread_root; /* a root frame naming the thread */
    bool label_root;  /* a root frame naming the label set (below the thread's) */
} rga_collapsed_opts_t;

/* Writes p to out. opts may be NULL (no extra root frames). Returns RGA_OK,
 * RGA_ERR_NOMEM, or RGA_ERR_IO when out failed. */
rga_status_t rga_collapsed_write(const rga_profile_t *p, const rga_collapsed_opts_t *opts, FILE *out,
                                 rga_error_t *err);

#endif
