/* dot_writer.h — the wait graph as a Graphviz cgraph graph, and as DOT text.
 *
 * rga_dot_build() creates a cgraph Agraph_t from an rga_waitgraph_t: one node
 * per graph node (thread nodes inside subgraph "cluster_ractor_N", annotated
 * with name and totals; GC, hand-off and unknown as ellipses), one edge
 * waiter → holder with penwidth and a label proportional to the wait time.
 * rga_dot_write() writes it with agwrite(). The caller closes a built graph
 * with agclose().
 *
 * cgraph keeps process-global state (its error reporting): call these with
 * the GVL held / from one thread at a time. Errors reported by Graphviz are
 * captured (never printed) and returned in rga_error_t.
 */
#ifndef RGA_DOT_WRITER_H
#define RGA_DOT_WRITER_H

#include <graphviz/cgraph.h>
#include <stdio.h>

#include "waitgraph.h"

Agraph_t *rga_dot_build(const rga_waitgraph_t *g, rga_error_t *err);

rga_status_t rga_dot_write(const rga_waitgraph_t *g, FILE *out, rga_error_t *err);

/* Routes Graphviz error messages into a buffer instead of stderr and clears
 * it; rga_graphviz_last_error() returns the last captured message or "". */
void rga_graphviz_quiet(void);
const char *rga_graphviz_last_error(void);

#endif
