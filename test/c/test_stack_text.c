/* test_stack_text.c — the one-line stack rendering of the summary tables:
 * recursion collapsed, paths shown where they change, the width respected,
 * equal lines merged into one row, the [GVL wait]-only stack explained, and
 * the JSON summary still carrying every stack whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rga_test_util.h"
#include "stack_text.h"
#include "summary.h"
#include "summary_json.h"
#include "table.h"

#define FIB12 "4,4,4,4,4,4,4,4,4,4,4,4"

/* One thread. Frames: 4 Object#fib, 5 block in <main>, 6 Integer#times
 * (<internal:numeric>), 7 <main>, 8 Object#run, 9 Object#other.
 * Stacks (leaf first):
 *   0 [GVL wait] alone (a thread waiting before its first frame)
 *   1 [GVL wait], fib ×12, block, times, block, <main>
 *   2 [GVL wait], fib ×12, block, times, block, run, <main>
 *   3 [GVL wait], fib ×12, block, times, block, other, <main>
 *   4 [GVL wait], fib ×11, block, times, block, <main>
 *   5 fib, block, fib, <main>  (equal frames, not adjacent)
 * Stacks 1-3 differ only below the fourth item, so cut short they read the same. */
static const char report[] =
    "{\"format\":\"rperf-gvl-report\",\"version\":1,\"minor\":0,\n"
    " \"meta\":{\"tool\":\"rperf-gvl\",\"tool_version\":\"0.1.0\",\"ruby_version\":\"3.3.8\",\"pid\":5,\n"
    "  \"program\":\"fib.rb\",\"mode\":\"wall\",\"frequency\":1000,\"start_time_ns\":5,\n"
    "  \"start_monotonic_ns\":1000,\"duration_ns\":10000,\"sequence\":0},\n"
    " \"stats\":{},\n"
    " \"ractors\":[{\"id\":1,\"main\":true}],\n"
    " \"threads\":[{\"seq\":1,\"name\":\"main\",\"native_id\":1,\"ractor\":1,\"first_seen_ns\":0,\n"
    "   \"last_seen_ns\":10000,\"exited\":false,\"running_ns\":4000,\"gvl_wait_ns\":6000,\"blocked_ns\":0,\n"
    "   \"gc_mark_ns\":0,\"gc_sweep_ns\":0,\"acquisitions\":3,\"waits\":3}],\n"
    " \"label_sets\":[{\"id\":0,\"labels\":{}}],\n"
    " \"label_totals\":[{\"thread\":1,\"label_set\":0,\"running_ns\":4000,\"gvl_wait_ns\":6000,\"blocked_ns\":0,\n"
    "   \"gc_mark_ns\":0,\"gc_sweep_ns\":0}],\n"
    " \"frames\":[[\"<GVL>\",\"[GVL blocked]\"],[\"<GVL>\",\"[GVL wait]\"],[\"<GC>\",\"[GC marking]\"],\n"
    "   [\"<GC>\",\"[GC sweeping]\"],[\"fib.rb\",\"Object#fib\"],[\"fib.rb\",\"block in <main>\"],\n"
    "   [\"<internal:numeric>\",\"Integer#times\"],[\"fib.rb\",\"<main>\"],[\"fib.rb\",\"Object#run\"],\n"
    "   [\"fib.rb\",\"Object#other\"]],\n"
    " \"stacks\":[[1],[1," FIB12 ",5,6,5,7],[1," FIB12 ",5,6,5,8,7],[1," FIB12 ",5,6,5,9,7],\n"
    "   [1,4,4,4,4,4,4,4,4,4,4,4,5,6,5,7],[4,5,4,7]],\n"
    " \"samples\":[[0,2500,1,0],[1,1000,1,0],[2,900,1,0],[3,800,1,0],[4,700,1,0],[5,4000,1,0]],\n"
    " \"intervals\":[],\n"
    " \"edges\":[{\"ractor\":1,\"waiter\":1,\"holder_kind\":\"handoff\",\"holder\":0,\"waiter_label_set\":0,\n"
    "   \"holder_label_set\":0,\"wait_ns\":6000,\"count\":3}],\n"
    " \"blame\":[[1,1,0,100],[2,1,0,90],[3,1,0,80],[5,1,0,70]]}\n";

static void
test_line(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(report);
    char buf[1024];
    assert_string_equal(rga_stack_line(r, 0, 0, buf, sizeof(buf)), RGA_STACK_GVL_WAIT_ONLY);
    assert_string_equal(rga_stack_line(r, 0, 0, buf, sizeof(buf)), "[GVL wait] (before the thread's first frame)");
    /* Recursion is one item; the path shows where it changes; no cfunc/internal paths. */
    assert_string_equal(rga_stack_line(r, 1, 0, buf, sizeof(buf)),
                        "Object#fib ×12 (fib.rb) < block in <main> < Integer#times < block in <main> < <main>");
    assert_string_equal(rga_stack_line(r, 4, 0, buf, sizeof(buf)),
                        "Object#fib ×11 (fib.rb) < block in <main> < Integer#times < block in <main> < <main>");
    /* Only adjacent equal frames collapse. */
    assert_string_equal(rga_stack_line(r, 5, 0, buf, sizeof(buf)),
                        "Object#fib (fib.rb) < block in <main> < Object#fib < <main>");
    /* Every width from tight to roomy: the line fits, and a cut line says so. */
    for (size_t width = 27; width <= 120; width++) {
        for (int64_t s = 1; s < (int64_t)r->n_stacks; s++) {
            char whole[1024];
            rga_stack_line(r, s, 0, whole, sizeof(whole));
            rga_stack_line(r, s, width, buf, sizeof(buf));
            assert_true(rga_text_width(buf) <= width);
            if (strcmp(buf, whole) != 0) {
                size_t n = strlen(buf);
                assert_true(n > 5 && strcmp(buf + n - strlen(" < …"), " < …") == 0);
            }
        }
    }
    /* The first item is kept even when nothing fits. */
    assert_string_equal(rga_stack_line(r, 1, 5, buf, sizeof(buf)), "Object#fib ×12 (fib.rb) < …");
    /* A small buffer truncates without overflowing. */
    char tiny[12];
    rga_stack_line(r, 1, 0, tiny, sizeof(tiny));
    assert_true(strlen(tiny) < sizeof(tiny));
    rga_report_free(r);
}

static rga_summary_t
build(const rga_report_t *r)
{
    rga_filter_t f;
    rga_error_t err;
    assert_int_equal(rga_filter_init(&f, r, NULL, &err), RGA_OK);
    rga_summary_t s;
    assert_int_equal(rga_summary_build(r, &f, &s, &err), RGA_OK);
    rga_filter_free(&f);
    return s;
}

static char *
summary_text(const rga_summary_t *s, size_t columns)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    rga_error_t err;
    rga_summary_text_opts_t opts = {false, 10, columns};
    assert_int_equal(rga_summary_write_text(s, out, &opts, &err), RGA_OK);
    fclose(out);
    return buf;
}

/* The rows of the section titled title: "time  share  stack" lines after its header. */
static size_t
section_rows(const char *text, const char *title, char rows[][256], size_t max)
{
    const char *p = strstr(text, title);
    assert_non_null(p);
    p = strchr(p, '\n') + 1;
    p = strchr(p, '\n') + 1; /* column header */
    size_t n = 0;
    while (*p == ' ' && n < max) {
        const char *end = strchr(p, '\n');
        size_t len = (size_t)(end - p) < 255 ? (size_t)(end - p) : 255;
        memcpy(rows[n], p, len);
        rows[n][len] = '\0';
        n++;
        p = end + 1;
    }
    return n;
}

/* The stack column of a row: what follows the share ("NN.N%  "). */
static const char *
row_stack(const char *row)
{
    const char *pct = strchr(row, '%');
    assert_non_null(pct);
    return pct + 3;
}

static void
test_summary_rows_distinct(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(report);
    rga_summary_t s = build(r);
    assert_int_equal(s.n_wait_stacks, 5);
    for (size_t columns = 70; columns <= 200; columns += 26) {
        char *text = summary_text(&s, columns);
        char rows[16][256];
        size_t n = section_rows(text, "Top wait stacks", rows, 16);
        assert_true(n >= 2);
        for (size_t i = 0; i < n; i++) {
            assert_true(rga_text_width(rows[i]) <= columns);
            for (size_t j = i + 1; j < n; j++)
                assert_string_not_equal(row_stack(rows[i]), row_stack(rows[j]));
        }
        /* The new-thread wait is explained. */
        assert_non_null(strstr(text, "2.50µs  42.4%  [GVL wait] (before the thread's first frame)"));
        size_t nb = section_rows(text, "Top blame stacks", rows, 16);
        for (size_t i = 0; i < nb; i++)
            for (size_t j = i + 1; j < nb; j++)
                assert_string_not_equal(row_stack(rows[i]), row_stack(rows[j]));
        free(text);
    }
    /* Narrow: stacks 1-3 read the same and become one row of 1000+900+800 ns
     * (shares are of all wait samples: 5900 ns). */
    char *text = summary_text(&s, 70);
    char rows[16][256];
    size_t n = section_rows(text, "Top wait stacks", rows, 16);
    assert_int_equal(n, 3);
    assert_non_null(strstr(text, "2.70µs  45.8%  Object#fib ×12 (fib.rb) < "));
    free(text);
    /* Wide: every stack whole, one row each. */
    text = summary_text(&s, 200);
    n = section_rows(text, "Top wait stacks", rows, 16);
    assert_int_equal(n, 5);
    assert_non_null(strstr(text, "Object#fib ×12 (fib.rb) < block in <main> < Integer#times < block in <main> < "
                                 "Object#run < <main>"));
    free(text);

    /* JSON: every stack its own entry with all its frames. */
    json_t *j = rga_summary_to_json(&s);
    json_t *waits = json_object_get(j, "top_wait_stacks");
    assert_int_equal(json_array_size(waits), 5);
    size_t i;
    json_t *e;
    json_array_foreach(waits, i, e)
    {
        int64_t id = json_integer_value(json_object_get(e, "stack"));
        json_t *frames = json_object_get(e, "frames");
        assert_int_equal(json_array_size(frames), r->stacks[id].depth);
        assert_string_equal(json_string_value(json_array_get(json_array_get(frames, 0), 1)), "[GVL wait]");
    }
    json_decref(j);
    rga_summary_free(&s);
    rga_report_free(r);
}

/* A report whose only stack is empty has no frame slots at all (a NULL
 * array): rendering it must not do pointer arithmetic on NULL (UBSan). */
static void
test_only_empty_stacks(void **state)
{
    (void)state;
    static const char empty[] =
        "{\"format\":\"rperf-gvl-report\",\"version\":1,\"meta\":{\"pid\":1,\"start_monotonic_ns\":0,"
        "\"duration_ns\":10},\"ractors\":[{\"id\":1,\"main\":true}],\"threads\":[{\"seq\":1,\"name\":\"\","
        "\"ractor\":1,\"first_seen_ns\":0,\"last_seen_ns\":10,\"exited\":false,\"running_ns\":10,"
        "\"gvl_wait_ns\":0,\"blocked_ns\":0,\"gc_mark_ns\":0,\"gc_sweep_ns\":0,\"acquisitions\":1,\"waits\":0}],"
        "\"frames\":[],\"stacks\":[[]],\"samples\":[[0,10,1,0]],\"blame\":[[0,1,0,5]]}";
    rga_report_t *r = rga_test_load(empty);
    assert_null(r->stack_frames);
    char line[128];
    assert_string_equal(rga_stack_line(r, 0, 80, line, sizeof(line)), "(empty stack)");
    rga_report_free(r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line),
        cmocka_unit_test(test_summary_rows_distinct),
        cmocka_unit_test(test_only_empty_stacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
