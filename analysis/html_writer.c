/* html_writer.c — page.html with its markers filled in (see html_writer.h).
 *
 * The data block is JSON inside <script type="application/json">: every '<'
 * in it is written as \u003c (it can only occur inside strings), so no label
 * or frame name can close the element or open a comment that hides the rest
 * of the page.
 */
#include "html_writer.h"
#include "html_assets.h"
#include "html_data.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *
find_marker(const char *from, const char *end, const char *marker)
{
    size_t n = strlen(marker);
    for (const char *p = from; p + n <= end; p++)
        if (memcmp(p, marker, n) == 0)
            return p;
    return NULL;
}

static void
write_json_for_html(const char *json, FILE *out)
{
    for (const char *p = json; *p;) {
        const char *lt = strchr(p, '<');
        size_t n = lt ? (size_t)(lt - p) : strlen(p);
        fwrite(p, 1, n, out);
        if (!lt)
            break;
        fputs("\\u003c", out);
        p = lt + 1;
    }
}

rga_status_t
rga_html_write(const rga_report_t *r, const rga_filter_t *filter, FILE *out, rga_error_t *err)
{
    json_t *data = NULL;
    rga_status_t st = rga_html_data_build(r, filter, NULL, &data, err);
    if (st != RGA_OK)
        return st;
    char *json = json_dumps(data, JSON_COMPACT);
    json_decref(data);
    if (!json)
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory serialising the page data");

    static const char *const markers[3] = {"<!--rperf:css-->", "<!--rperf:data-->", "<!--rperf:js-->"};
    const char *page = (const char *)rga_html_page_html, *end = page + rga_html_page_html_len;
    const char *at = page;
    for (int m = 0; m < 3; m++) {
        const char *hit = find_marker(at, end, markers[m]);
        if (!hit) {
            free(json);
            return rga_error_set(err, RGA_ERR_RENDER, "page.html lacks the marker %s (in this order: css, data, js)",
                                 markers[m]);
        }
        fwrite(at, 1, (size_t)(hit - at), out);
        if (m == 0)
            fwrite(rga_html_page_css, 1, rga_html_page_css_len, out);
        else if (m == 1)
            write_json_for_html(json, out);
        else
            fwrite(rga_html_page_js, 1, rga_html_page_js_len, out);
        at = hit + strlen(markers[m]);
    }
    fwrite(at, 1, (size_t)(end - at), out);
    free(json);
    if (ferror(out))
        return rga_error_set(err, RGA_ERR_IO, "write error: %s", strerror(errno));
    return RGA_OK;
}
