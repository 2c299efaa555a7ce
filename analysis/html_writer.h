/* html_writer.h — the report as one self-contained HTML page (view "html").
 *
 * rga_html_write() writes page.html with its style sheet, script and the
 * data block (html_data.h) put in place of the page's three markers
 * (<!--rperf:css-->, <!--rperf:js-->, <!--rperf:data-->), so the result
 * needs no other file and no network: it opens from file:// and can be
 * attached to a ticket. The page's sources live in analysis/html/ and are
 * compiled in (html_assets.h).
 *
 * What it does NOT do: decide what is embedded (html_data.c) or draw
 * anything (the page's script does, in the browser).
 * Returns RGA_OK, RGA_ERR_NOMEM, or RGA_ERR_IO when out fails. Reentrant.
 */
#ifndef RGA_HTML_WRITER_H
#define RGA_HTML_WRITER_H

#include <stdio.h>

#include "filter.h"
#include "report.h"

rga_status_t rga_html_write(const rga_report_t *r, const rga_filter_t *filter, FILE *out, rga_error_t *err);

#endif
