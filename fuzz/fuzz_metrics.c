/* fuzz_metrics.c — libFuzzer harness for the metrics file reader and the
 * exposition (metrics.h).
 *
 * Feeds arbitrary bytes to rga_metrics_parse(). A file that loads is added
 * to a set twice (as if two processes wrote it) and rendered in both
 * formats, and every line of the text must be one the Prometheus parsers
 * take: a comment, or a valid metric name, label names, quoted values with
 * only \\, \" and \n escapes, and a value. The file written back
 * (rga_metrics_write) must load again and render the same bytes. Run under
 * ASan/UBSan: any crash, leak or overflow is a bug.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "output.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && c >= '0' && c <= '9');
}

/* One sample line: name{label="value",...} value. */
static bool
sample_line(const char *s, const char *end)
{
    if (s == end || !name_char(*s, true))
        return false;
    while (s < end && name_char(*s, false))
        s++;
    if (s < end && *s == '{') {
        s++;
        while (s < end && *s != '}') {
            if (!name_char(*s, true) || *s == ':')
                return false;
            while (s < end && name_char(*s, false) && *s != ':')
                s++;
            if (end - s < 2 || s[0] != '=' || s[1] != '"')
                return false;
            for (s += 2; s < end && *s != '"'; s++) {
                if (*s == '\0')
                    return false;
                if (*s == '\\' && (++s == end || (*s != '\\' && *s != '"' && *s != 'n')))
                    return false;
            }
            if (s == end)
                return false;
            s++;
            if (s < end && *s == ',')
                s++;
        }
        if (s == end)
            return false;
        s++;
    }
    return s < end && *s == ' ' && s + 1 < end;
}

static char *
render(const rga_metrics_file_t *f, unsigned flags)
{
    rga_error_t err;
    rga_metrics_set_t *set = rga_metrics_set_new();
    rga_output_t out;
    if (!set || rga_output_open(&out, RGA_OUTPUT_MEMORY, &err) != RGA_OK)
        abort();
    bool ok = rga_metrics_set_add(set, f, true, &err) == RGA_OK &&
              rga_metrics_set_add(set, f, false, &err) == RGA_OK;
    if (ok && rga_metrics_set_render(set, flags, out.fp, &err) != RGA_OK)
        abort();
    char *text = NULL;
    size_t len = 0;
    if (rga_output_close(&out, &text, &len, &err) != RGA_OK)
        abort();
    rga_metrics_set_free(set);
    if (!ok) { /* two copies overflowed: nothing to check */
        free(text);
        return NULL;
    }
    for (const char *line = text; line < text + len;) {
        const char *nl = memchr(line, '\n', (size_t)(text + len - line));
        if (!nl || (strncmp(line, "# ", 2) != 0 && !sample_line(line, nl)))
            abort();
        line = nl + 1;
    }
    return text;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rga_metrics_file_t *f = NULL;
    rga_error_t err;
    if (rga_metrics_parse((const char *)data, size, "fuzz", &f, &err) != RGA_OK) {
        char line[1024];
        rga_error_format(&err, line, sizeof(line));
        return 0;
    }
    char *text = render(f, 0);
    free(render(f, RGA_METRICS_OPENMETRICS));
    rga_output_t out;
    if (rga_output_open(&out, RGA_OUTPUT_MEMORY, &err) != RGA_OK || rga_metrics_write(f, out.fp, &err) != RGA_OK)
        abort();
    char *copy = NULL;
    size_t len = 0;
    rga_metrics_file_t *g = NULL;
    if (rga_output_close(&out, &copy, &len, &err) != RGA_OK ||
        rga_metrics_parse(copy, len, "copy", &g, &err) != RGA_OK)
        abort();
    char *again = render(g, 0);
    if ((text == NULL) != (again == NULL) || (text && strcmp(text, again) != 0))
        abort();
    free(text);
    free(again);
    free(copy);
    rga_metrics_file_free(g);
    rga_metrics_file_free(f);
    return 0;
}
