/* test_html.c — the HTML page's data block: intervals kept or aggregated
 * without losing time, the cap on kept intervals, the filter, and a page
 * whose markers are all filled and whose data cannot close its script. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "html_data.h"
#include "rga.h"
#include "rga_test_util.h"

static json_t *
build(const rga_report_t *r, const rga_filter_spec_t *spec, const rga_html_limits_t *lim)
{
    rga_filter_t f;
    rga_error_t err;
    assert_int_equal(rga_filter_init(&f, r, spec, &err), RGA_OK);
    json_t *data = NULL;
    assert_int_equal(rga_html_data_build(r, &f, lim, &data, &err), RGA_OK);
    assert_non_null(data);
    rga_filter_free(&f);
    return data;
}

static json_int_t
at(const json_t *obj, const char *column, size_t i)
{
    const json_t *v = json_array_get(json_object_get(obj, column), i);
    assert_non_null(v);
    return json_integer_value(v);
}

/* Interval time per (thread seq, state) in the data block: kept intervals plus buckets. */
static void
embedded_time(const json_t *iv, int64_t *ns, size_t n_seq)
{
    size_t kept = json_array_size(json_object_get(iv, "thread"));
    assert_int_equal(kept, (size_t)json_integer_value(json_object_get(iv, "kept")));
    for (size_t i = 0; i < kept; i++) {
        json_int_t seq = at(iv, "thread", i);
        assert_true(seq >= 0 && (size_t)seq < n_seq);
        ns[seq * RGA_STATE_COUNT + (size_t)at(iv, "state", i)] += at(iv, "duration", i);
    }
    const json_t *rows = json_object_get(json_object_get(iv, "buckets"), "rows");
    size_t r;
    json_t *row;
    json_array_foreach(rows, r, row)
    {
        json_int_t seq = json_integer_value(json_array_get(row, 0));
        for (size_t s = 0; s < RGA_STATE_COUNT; s++)
            ns[seq * RGA_STATE_COUNT + s] += json_integer_value(json_array_get(json_array_get(row, 1), s));
    }
}

/* The drawn levels say the same as the exact totals, within the rounding:
 * half a 63rd of a bucket per bucket (a nonzero share below that rounds up
 * to one 63rd). */
static void
check_levels(const json_t *iv, int64_t axis)
{
    const json_t *buckets = json_object_get(iv, "buckets");
    size_t n = (size_t)json_integer_value(json_object_get(buckets, "count"));
    size_t r;
    json_t *row;
    size_t rows = 0;
    json_array_foreach(json_object_get(buckets, "rows"), r, row)
    {
        for (size_t s = 0; s < RGA_STATE_COUNT; s++) {
            const char *levels = json_string_value(json_array_get(json_array_get(row, 2), s));
            int64_t exact = json_integer_value(json_array_get(json_array_get(row, 1), s));
            assert_non_null(levels);
            if (exact == 0) {
                assert_string_equal(levels, "");
                continue;
            }
            assert_int_equal(strlen(levels), n);
            double drawn = 0;
            for (size_t k = 0; k < n; k++) {
                const char *digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
                const char *d = strchr(digits, levels[k]);
                assert_non_null(d);
                drawn += (double)(d - digits) / 63.0 * ((double)axis / (double)n);
            }
            assert_true(fabs(drawn - (double)exact) <= (double)axis / 63.0);
        }
        rows++;
    }
    assert_true(rows > 0);
}

static void
report_time(const rga_report_t *r, int64_t *ns)
{
    for (size_t i = 0; i < r->n_intervals; i++) {
        const rga_interval_t *iv = &r->intervals[i];
        ns[r->threads[iv->thread_index].seq * RGA_STATE_COUNT + iv->state] += iv->end_ns - iv->start_ns;
    }
}

static void
small_report_keeps_every_interval(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(rga_test_small_report);
    json_t *data = build(r, NULL, NULL);
    const json_t *iv = json_object_get(data, "intervals");
    assert_int_equal(json_integer_value(json_object_get(iv, "kept")), r->n_intervals);
    assert_int_equal(json_integer_value(json_object_get(iv, "aggregated")), 0);
    assert_int_equal(json_array_size(json_object_get(json_object_get(iv, "buckets"), "rows")), 0);
    /* Start times are delta-coded in report order. */
    int64_t start = 0;
    for (size_t i = 0; i < r->n_intervals; i++) {
        start += at(iv, "start_delta", i);
        assert_int_equal(start, r->intervals[i].start_ns);
        assert_int_equal(at(iv, "duration", i), r->intervals[i].end_ns - r->intervals[i].start_ns);
    }
    /* Every sample row is there, with its stack resolvable. */
    const json_t *samples = json_object_get(data, "samples");
    assert_int_equal(json_array_size(samples), r->n_samples);
    size_t n_stacks = json_array_size(json_object_get(data, "stacks"));
    for (size_t i = 0; i < r->n_samples; i++) {
        json_int_t st = json_integer_value(json_array_get(json_array_get(samples, i), 0));
        assert_true(st >= 0 && (size_t)st < n_stacks);
        assert_int_equal(json_integer_value(json_array_get(json_array_get(samples, i), 1)), r->samples[i].weight_ns);
    }
    json_decref(data);
    rga_report_free(r);
}

static void
large_report_aggregates_without_losing_time(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_generated("--threads 6 --ractors 2 --labels 3 --slices 3000 --seed 5");
    /* Buckets about a slice long, so some intervals span one and can be kept. */
    rga_html_limits_t lim = {40, 3000, 0, 0, 0, 0};
    json_t *data = build(r, NULL, &lim);
    const json_t *iv = json_object_get(data, "intervals");
    json_int_t kept = json_integer_value(json_object_get(iv, "kept"));
    json_int_t aggregated = json_integer_value(json_object_get(iv, "aggregated"));
    assert_true(kept > 0 && kept <= 40);
    assert_int_equal(kept + aggregated, r->n_intervals);
    json_int_t min_kept = json_integer_value(json_object_get(iv, "min_kept_ns"));
    int64_t axis = json_integer_value(json_object_get(data, "axis_ns"));
    assert_true(min_kept >= axis / 3000);
    for (json_int_t i = 0; i < kept; i++)
        assert_true(at(iv, "duration", (size_t)i) >= min_kept);

    size_t n_seq = 0;
    for (size_t i = 0; i < r->n_threads; i++)
        if ((size_t)r->threads[i].seq + 1 > n_seq)
            n_seq = (size_t)r->threads[i].seq + 1;
    int64_t *want = calloc(n_seq * RGA_STATE_COUNT, sizeof(int64_t));
    int64_t *got = calloc(n_seq * RGA_STATE_COUNT, sizeof(int64_t));
    report_time(r, want);
    embedded_time(iv, got, n_seq);
    for (size_t k = 0; k < n_seq * RGA_STATE_COUNT; k++)
        assert_int_equal(got[k], want[k]);
    check_levels(iv, axis);
    free(want);
    free(got);
    json_decref(data);
    rga_report_free(r);
}

static void
edges_beyond_the_cap_fold_into_other(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_generated("--threads 9 --labels 3 --slices 800 --seed 2");
    rga_html_limits_t lim = {0, 0, 3, 0, 0, 0};
    json_t *data = build(r, NULL, &lim);
    size_t i, named = 0, other = 0;
    json_t *row;
    int64_t *want = calloc(64, sizeof(int64_t)), *got = calloc(64, sizeof(int64_t));
    for (size_t e = 0; e < r->n_edges; e++)
        want[r->edges[e].waiter] += r->edges[e].wait_ns;
    json_array_foreach(json_object_get(data, "edges"), i, row)
    {
        bool is_other = strcmp(json_string_value(json_array_get(row, 1)), "other") == 0;
        named += !is_other;
        other += is_other;
        got[json_integer_value(json_array_get(row, 0))] += json_integer_value(json_array_get(row, 3));
    }
    assert_int_equal(named, 3);
    assert_true(other > 0);
    for (size_t k = 0; k < 64; k++)
        assert_int_equal(got[k], want[k]);
    free(want);
    free(got);
    json_decref(data);
    rga_report_free(r);
}

static void
filter_limits_what_is_embedded(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(rga_test_small_report);
    rga_filter_spec_t spec = {.thread = "worker-a"};
    json_t *data = build(r, &spec, NULL);
    const json_t *iv = json_object_get(data, "intervals");
    size_t kept = (size_t)json_integer_value(json_object_get(iv, "kept"));
    size_t expected = 0;
    for (size_t i = 0; i < r->n_intervals; i++)
        expected += r->threads[r->intervals[i].thread_index].seq == 2;
    assert_int_equal(kept, expected);
    for (size_t i = 0; i < kept; i++)
        assert_int_equal(at(iv, "thread", i), 2);
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(data, "samples"), i, row)
        assert_int_equal(json_integer_value(json_array_get(row, 2)), 2);
    json_decref(data);
    rga_report_free(r);
}

/* The page's data block, parsed back: the text between the JSON script's tags. */
static json_t *
page_data(const char *page)
{
    const char *open = strstr(page, "<script type=\"application/json\" id=\"rperf-data\">");
    assert_non_null(open);
    open = strchr(open, '>') + 1;
    const char *close = strstr(open, "</script>");
    assert_non_null(close);
    json_error_t jerr;
    json_t *data = json_loadb(open, (size_t)(close - open), 0, &jerr);
    assert_non_null(data);
    return data;
}

static void
page_is_complete_and_data_cannot_escape(void **state)
{
    (void)state;
    /* A label value that would end the script element if written raw. */
    const char *needle = "\"endpoint\":\"a\"";
    const char *evil = "\"endpoint\":\"</script><!--<script>\"";
    const char *at_needle = strstr(rga_test_small_report, needle);
    assert_non_null(at_needle);
    size_t head = (size_t)(at_needle - rga_test_small_report);
    char *text = malloc(strlen(rga_test_small_report) + strlen(evil) + 1);
    memcpy(text, rga_test_small_report, head);
    strcpy(text + head, evil);
    strcat(text, at_needle + strlen(needle));

    char *page = NULL;
    size_t len = 0;
    rga_error_t err;
    assert_int_equal(rga_render(text, strlen(text), "html", NULL, &page, &len, &err), RGA_OK);
    assert_int_equal(strlen(page), len);
    assert_true(strncmp(page, "<!DOCTYPE html>", 15) == 0);
    assert_null(strstr(page, "<!--rperf:"));
    assert_non_null(strstr(page, "#timeline-canvas")); /* the style sheet is in */
    assert_non_null(strstr(page, "window.rperfPage")); /* and the script */
    /* One closing script tag per script element: the data's did not add one. */
    size_t closes = 0;
    for (const char *p = page; (p = strstr(p, "</script>")); p++)
        closes++;
    assert_int_equal(closes, 2);
    json_t *data = page_data(page);
    assert_string_equal(json_string_value(json_object_get(data, "format")), "rperf-gvl-page");
    int found = 0;
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(data, "label_sets"), i, row)
        found |= strstr(json_string_value(json_array_get(row, 1)), "</script><!--<script>") != NULL;
    assert_true(found);
    json_decref(data);
    free(page);
    free(text);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_report_keeps_every_interval),
        cmocka_unit_test(large_report_aggregates_without_losing_time),
        cmocka_unit_test(edges_beyond_the_cap_fold_into_other),
        cmocka_unit_test(filter_limits_what_is_embedded),
        cmocka_unit_test(page_is_complete_and_data_cannot_escape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
