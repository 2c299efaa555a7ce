/* render.c — SVG/PNG of the wait graph through gvc (see render.h).
 *
 * One gvContext for the whole process, created on first use and never
 * freed: Graphviz 2.43 caches font data in static variables that outlive a
 * freed context (a use-after-free in textspan_size on the next context).
 * Rendering goes to memory (gvRenderData) and is then copied to out, so
 * every output target works the same way.
 */
#include "render.h"
#include "dot_writer.h"

#include <graphviz/gvc.h>
#include <string.h>

rga_status_t
rga_graph_render(const rga_waitgraph_t *wg, const char *format, FILE *out, rga_error_t *err)
{
    if (!format || !*format)
        return rga_error_set(err, RGA_ERR_ARGUMENT, "no render format given");
    Agraph_t *g = rga_dot_build(wg, err);
    if (!g)
        return err ? err->code : RGA_ERR_RENDER;
    rga_status_t st = RGA_OK;
    char *data = NULL;
    unsigned int len = 0;
    bool laid_out = false;
    static GVC_t *gvc;
    if (!gvc)
        gvc = gvContext();
    if (!gvc) {
        st = rga_error_set(err, RGA_ERR_RENDER, "cannot create a Graphviz context");
        goto done;
    }
    if (gvLayout(gvc, g, "dot") != 0) {
        st = rga_error_set(err, RGA_ERR_RENDER, "Graphviz dot layout failed: %s", rga_graphviz_last_error());
        goto done;
    }
    laid_out = true;
    if (gvRenderData(gvc, g, format, &data, &len) != 0) {
        const char *why = rga_graphviz_last_error();
        st = rga_error_set(err,
                           (strstr(why, "not recognized") || strstr(why, "unavailable")) ? RGA_ERR_ARGUMENT
                                                                                         : RGA_ERR_RENDER,
                           "Graphviz cannot render %s: %s", format, why[0] ? why : "renderer failed");
        goto done;
    }
    if (fwrite(data, 1, len, out) != len)
        st = rga_error_set(err, RGA_ERR_IO, "cannot write the rendered graph");
done:
    if (data)
        gvFreeRenderData(data);
    if (laid_out)
        gvFreeLayout(gvc, g);
    agclose(g);
    return st;
}
