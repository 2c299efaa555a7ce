/* fuzz_report.c — libFuzzer harness for the report reader, the merge and
 * the views.
 *
 * Feeds arbitrary bytes to rga_report_load_buffer() (plain and gzip paths),
 * checks that the integer-tuple fast path agrees with jansson-only parsing
 * and that the recorded span of "intervals" is that array, and, when a
 * report loads, renders the views that walk every table (summary, timeline,
 * JSON, Perfetto, DOT, the profiles, HTML; root causes in the summary, the
 * root-cause graph and profile, the critical paths of the first thread and
 * of a label) into memory; the text views must not let a control
 * byte through (names and labels come from the profiled program). Then it
 * merges the report with a copy of itself placed right after it on the time
 * axis (a two-report series: the merge path, its overflow checks, and the
 * views of the result) and checks that merging it with itself is refused.
 * Run under ASan/UBSan: any crash, leak, overflow (signed arithmetic
 * included) or hang is a bug. Graph layout (SVG) is left out: it exercises
 * Graphviz, not our reader, and is slow.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "rga.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* memcmp that accepts NULL for empty arrays (an empty report has no buffers). */
static bool
same_bytes(const void *a, const void *b, size_t n)
{
    return n == 0 || memcmp(a, b, n) == 0;
}

/* Differential check: the integer-tuple fast path must agree with jansson
 * on every input (same status, same error, same tuples). */
static void
compare_with_jansson(const uint8_t *data, size_t size, rga_status_t st, const rga_report_t *r,
                     const rga_error_t *err)
{
    rga_report_t *slow = NULL;
    rga_error_t slow_err;
    rga_status_t slow_st = rga_report_load_buffer_flags((const char *)data, size, "fuzz", RGA_LOAD_JANSSON_ONLY,
                                                        &slow, &slow_err);
    if (slow_st != st)
        abort();
    if (st != RGA_OK) {
        if (strcmp(err->reason, slow_err.reason) != 0 || strcmp(err->path, slow_err.path) != 0 ||
            err->line != slow_err.line || err->column != slow_err.column)
            abort();
        return;
    }
    if (r->n_intervals != slow->n_intervals || r->n_samples != slow->n_samples || r->n_blame != slow->n_blame ||
        r->n_stack_frames != slow->n_stack_frames ||
        !same_bytes(r->intervals, slow->intervals, r->n_intervals * sizeof(*r->intervals)) ||
        !same_bytes(r->samples, slow->samples, r->n_samples * sizeof(*r->samples)) ||
        !same_bytes(r->blame, slow->blame, r->n_blame * sizeof(*r->blame)) ||
        !same_bytes(r->stack_frames, slow->stack_frames, r->n_stack_frames * sizeof(int64_t)) ||
        r->intervals_text_offset != slow->intervals_text_offset ||
        r->intervals_text_length != slow->intervals_text_length)
        abort();
    rga_report_free(slow);
}

/* The recorded span of "intervals" (which Ruby's Report.load cuts out of
 * the text) must be the array itself: inside the input, '[' to ']'. */
static void
check_intervals_span(const uint8_t *data, size_t size, const rga_report_t *r)
{
    if (r->intervals_text_length == 0 || (size >= 2 && data[0] == 0x1f && data[1] == 0x8b))
        return;
    size_t start = r->intervals_text_offset, len = r->intervals_text_length;
    if (start >= size || len > size - start || len < 2 || data[start] != '[' || data[start + len - 1] != ']')
        abort();
}

/* A byte sequence a terminal acts on at buf[i]: C0 but newline, DEL, C1
 * (U+0080..U+009F), U+061C, U+200E/F, U+202A..U+202E, U+2066..U+2069,
 * U+2028/9 (term_text.h). */
static bool
terminal_control_at(const unsigned char *b, size_t i, size_t len)
{
    unsigned char c = b[i];
    if ((c < 0x20 && c != '\n') || c == 0x7f)
        return true;
    if (c == 0xc2 && i + 1 < len && b[i + 1] >= 0x80 && b[i + 1] <= 0x9f)
        return true;
    if (c == 0xd8 && i + 1 < len && b[i + 1] == 0x9c)
        return true;
    if (c == 0xe2 && i + 2 < len && b[i + 1] == 0x80 &&
        (b[i + 2] == 0x8e || b[i + 2] == 0x8f || (b[i + 2] >= 0xa8 && b[i + 2] <= 0xae)))
        return true;
    return c == 0xe2 && i + 2 < len && b[i + 1] == 0x81 && b[i + 2] >= 0xa6 && b[i + 2] <= 0xa9;
}

/* Renders view into memory; the text views must carry no control byte but
 * the newline (colour is off). */
static void
render(const rga_report_t *r, const char *view, const rga_view_opts_t *opts)
{
    rga_error_t err;
    rga_output_t out;
    if (rga_output_open(&out, RGA_OUTPUT_MEMORY, &err) != RGA_OK)
        return;
    rga_status_t st = rga_render_report(r, view, opts, out.fp, &err);
    char *buf = NULL;
    size_t len = 0;
    rga_output_close(&out, &buf, &len, &err);
    bool text = strcmp(view, "summary") == 0 || strcmp(view, "timeline") == 0 || strcmp(view, "collapsed") == 0 ||
                strcmp(view, "top") == 0 || strcmp(view, "critical_path") == 0;
    for (size_t i = 0; st == RGA_OK && text && buf && i < len; i++)
        if (terminal_control_at((const unsigned char *)buf, i, len))
            abort();
    free(buf);
}

/* r followed by a copy of itself starting where r ends: a snapshot series. */
static void
merge_series(const uint8_t *data, size_t size, rga_report_t *r, const rga_view_opts_t *opts)
{
    rga_report_t *copy = NULL, *merged = NULL;
    rga_error_t err;
    if (rga_report_load_buffer((const char *)data, size, "fuzz", &copy, &err) != RGA_OK)
        abort(); /* the same bytes loaded once already */
    int64_t start;
    if (!__builtin_add_overflow(r->meta.start_monotonic_ns, r->meta.duration_ns, &start)) {
        copy->meta.start_monotonic_ns = start;
        rga_report_t *pair[2] = {r, copy};
        if (rga_report_merge(pair, 2, &merged, &err) == RGA_OK) {
            render(merged, "summary", opts);
            render(merged, "timeline", opts);
            rga_report_free(merged);
        }
    }
    rga_report_t *twice[2] = {r, r};
    if (rga_report_merge(twice, 2, &merged, &err) == RGA_OK)
        abort(); /* the same report twice counts its time twice: always refused */
    rga_report_free(copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rga_report_t *r = NULL;
    rga_error_t err;
    rga_status_t st = rga_report_load_buffer((const char *)data, size, "fuzz", &r, &err);
    compare_with_jansson(data, size, st, r, &err);
    if (st != RGA_OK) {
        char line[1024];
        rga_error_format(&err, line, sizeof(line));
        return 0;
    }
    check_intervals_span(data, size, r);
    static const char *const views[] = {"summary", "timeline",  "json",       "perfetto", "dot",
                                        "pprof",   "collapsed", "speedscope", "top",      "html"};
    rga_view_opts_t opts = {0};
    opts.roots = (unsigned)(size % 4);
    opts.width = 37;
    opts.by = size % 3 == 0 ? "label" : size % 3 == 1 ? "ractor" : "thread";
    opts.min_share = (double)(size % 10) / 20.0;
    opts.min_share_set = size % 3 != 0; /* and the default graph otherwise */
    opts.top = 3 + size % 5;
    opts.columns = 40 + (int)(size % 80);
    for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++)
        render(r, views[i], &opts);
    /* Root causes: the graph and the profile weighted by them, and the
     * critical paths of the first thread and of the first label pair. */
    rga_view_opts_t roots = opts;
    roots.blame = size % 2 ? "root" : "direct";
    render(r, "dot", &roots);
    render(r, "top", &roots);
    roots.blame = "root";
    render(r, "collapsed", &roots);
    if (r->n_threads > 0) {
        char subject[600];
        snprintf(subject, sizeof(subject), "%lld", (long long)r->threads[0].seq);
        roots.critical_path = subject;
        render(r, "critical_path", &roots);
        render(r, "critical_path_json", &roots);
        for (size_t i = 0; i < r->n_label_sets; i++)
            if (r->label_sets[i].n_labels > 0) {
                snprintf(subject, sizeof(subject), "label=%s=%s", r->label_sets[i].keys[0],
                         r->label_sets[i].values[0]);
                render(r, "critical_path", &roots);
                break;
            }
    }
    merge_series(data, size, r, &opts);
    rga_report_free(r);
    return 0;
}
