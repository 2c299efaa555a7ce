/* html_assets.h — the HTML report page's own source files, compiled in.
 *
 * The definitions are generated at build time from analysis/html/page.html,
 * page.css and page.js into html_assets.c in the build directory (by
 * analysis/html/embed.cmake for the CLI, by ext/rperf/extconf.rb for the
 * extension), so the page is edited as ordinary files and no binary reads
 * them at run time. Each array holds the file's bytes without a trailing NUL;
 * the _len constant is its length. Read-only, shareable between threads.
 */
#ifndef RGA_HTML_ASSETS_H
#define RGA_HTML_ASSETS_H

#include <stddef.h>

extern const unsigned char rga_html_page_html[];
extern const size_t rga_html_page_html_len;
extern const unsigned char rga_html_page_css[];
extern const size_t rga_html_page_css_len;
extern const unsigned char rga_html_page_js[];
extern const size_t rga_html_page_js_len;

#endif
