/* render.h — laying out and rendering the wait graph with Graphviz gvc.
 *
 * rga_graph_render() builds the cgraph graph (dot_writer.h), lays it out with
 * the "dot" engine and renders it in a Graphviz output format ("svg", "png",
 * "pdf", ...) into out. The plugin set is the one installed with Graphviz;
 * an unknown format is RGA_ERR_ARGUMENT. Same threading rule as cgraph: one
 * caller at a time.
 */
#ifndef RGA_RENDER_H
#define RGA_RENDER_H

#include <stdio.h>

#include "waitgraph.h"

rga_status_t rga_graph_render(const rga_waitgraph_t *g, const char *format, FILE *out, rga_error_t *err);

#endif
