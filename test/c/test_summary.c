/* test_summary.c — summary arithmetic on a report with known numbers, filters,
 * the text and JSON writers, and conservation on synthetic reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rga_test_util.h"
#include "summary.h"
#include "summary_json.h"

static rga_summary_t
build(const rga_report_t *r, const rga_filter_spec_t *spec)
{
    rga_filter_t f;
    rga_error_t err;
    assert_int_equal(rga_filter_init(&f, r, spec, &err), RGA_OK);
    rga_summary_t s;
    assert_int_equal(rga_summary_build(r, &f, &s, &err), RGA_OK);
    rga_filter_free(&f);
    return s;
}

static const rga_summary_thread_t *
thread_row(const rga_summary_t *s, int64_t seq)
{
    for (size_t i = 0; i < s->n_threads; i++)
        if (s->threads[i].seq == seq)
            return &s->threads[i];
    return NULL;
}

static void
test_known_numbers(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(rga_test_small_report);
    rga_summary_t s = build(r, NULL);
    assert_int_equal(s.n_threads, 3);
    /* Totals are the sums of the thread rows. */
    int64_t wait = 0, life = 0;
    for (size_t i = 0; i < s.n_threads; i++) {
        wait += s.threads[i].state_ns[RGA_STATE_GVL_WAIT];
        life += s.threads[i].lifetime_ns;
    }
    assert_int_equal(s.total_ns[RGA_STATE_GVL_WAIT], wait);
    assert_int_equal(s.total_lifetime_ns, life);
    assert_int_equal(thread_row(&s, 2)->lifetime_ns, 800);
    assert_int_equal(rga_summary_gc_ns(thread_row(&s, 1)->state_ns), 100);
    /* Ractor 1 = threads 1 + 2; Ractor 2 = thread 3. */
    assert_int_equal(s.n_ractors, 2);
    assert_int_equal(s.ractors[0].n_threads, 2);
    assert_int_equal(s.ractors[0].state_ns[RGA_STATE_RUNNING], 600 + 200);
    assert_int_equal(s.ractors[1].state_ns[RGA_STATE_RUNNING], 500);
    /* Waiters sorted: thread 2 (400) then thread 1 (50); thread 3 never waited. */
    assert_int_equal(s.n_waiters, 2);
    assert_int_equal(s.threads[s.waiters[0]].seq, 2);
    assert_int_equal(s.threads[s.waiters[1]].seq, 1);
    /* Holders: thread 1 (300), GC (100), hand-off (50). */
    assert_int_equal(s.n_holders, 3);
    assert_int_equal(s.holders[0].kind, RGA_HOLDER_THREAD);
    assert_int_equal(s.holders[0].seq, 1);
    assert_int_equal(s.holders[0].wait_ns, 300);
    assert_int_equal(s.holders[1].kind, RGA_HOLDER_GC);
    assert_int_equal(s.holders[2].kind, RGA_HOLDER_HANDOFF);
    assert_int_equal(s.total_edge_wait_ns, 450);
    /* Label sets sorted by GVL wait: {endpoint=a} 300, {b,x} 100, {} 50. */
    assert_int_equal(s.n_labels, 3);
    assert_int_equal(s.labels[0].label_set, 1);
    assert_int_equal(s.labels[0].state_ns[RGA_STATE_GVL_WAIT], 300);
    assert_int_equal(s.labels[2].label_set, 0);
    assert_int_equal(s.labels[2].n_threads, 2);
    /* Wait stacks: only samples whose leaf is [GVL wait] (stack 1: 300 + 100). */
    assert_int_equal(s.n_wait_stacks, 1);
    assert_int_equal(s.wait_stacks[0].stack, 1);
    assert_int_equal(s.wait_stacks[0].ns, 400);
    assert_int_equal(s.n_blame_stacks, 1);
    assert_int_equal(s.blame_stacks[0].ns, 300);
    rga_summary_free(&s);
    rga_report_free(r);
}

static void
test_filters(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(rga_test_small_report);
    const char *labels[] = {"endpoint=a"};
    rga_filter_spec_t by_label = {NULL, 0, labels, 1, NULL};
    rga_summary_t s = build(r, &by_label);
    /* Under a label filter thread totals come from matching label_totals rows. */
    assert_int_equal(thread_row(&s, 2)->state_ns[RGA_STATE_GVL_WAIT], 300);
    assert_int_equal(thread_row(&s, 2)->state_ns[RGA_STATE_RUNNING], 150);
    assert_int_equal(thread_row(&s, 1)->state_ns[RGA_STATE_GVL_WAIT], 0);
    assert_int_equal(s.n_holders, 1);
    assert_int_equal(s.holders[0].wait_ns, 300);
    assert_int_equal(s.n_wait_stacks, 1);
    assert_int_equal(s.wait_stacks[0].ns, 300);
    rga_summary_free(&s);

    rga_filter_spec_t by_name = {"worker-a", 0, NULL, 0, NULL};
    s = build(r, &by_name);
    assert_int_equal(s.n_threads, 1);
    assert_int_equal(s.threads[0].seq, 2);
    assert_int_equal(s.total_edge_wait_ns, 400);
    rga_summary_free(&s);

    rga_filter_spec_t by_ractor = {NULL, 2, NULL, 0, NULL};
    s = build(r, &by_ractor);
    assert_int_equal(s.n_threads, 1);
    assert_int_equal(s.threads[0].seq, 3);
    assert_int_equal(s.n_holders, 0);
    rga_summary_free(&s);

    rga_filter_spec_t no_such = {"nobody", 0, NULL, 0, NULL};
    rga_filter_t f;
    rga_error_t err;
    assert_int_equal(rga_filter_init(&f, r, &no_such, &err), RGA_ERR_ARGUMENT);
    const char *bad[] = {"novalue"};
    rga_filter_spec_t bad_label = {NULL, 0, bad, 1, NULL};
    assert_int_equal(rga_filter_init(&f, r, &bad_label, &err), RGA_ERR_ARGUMENT);
    rga_report_free(r);
}

static void
test_text_and_json(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(rga_test_small_report);
    rga_summary_t s = build(r, NULL);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    rga_error_t err;
    rga_summary_text_opts_t opts = {false, 10, 0};
    assert_int_equal(rga_summary_write_text(&s, out, &opts, &err), RGA_OK);
    fclose(out);
    assert_non_null(strstr(buf, "worker-a (#2)"));
    assert_non_null(strstr(buf, "Top holders"));
    assert_non_null(strstr(buf, "[GC]"));
    assert_non_null(strstr(buf, "Object#work (app.rb:3)"));
    assert_null(strstr(buf, "\033[")); /* no colour unless asked */
    free(buf);

    json_t *j = rga_summary_to_json(&s);
    assert_non_null(j);
    json_t *threads = json_object_get(j, "threads");
    assert_int_equal(json_array_size(threads), 3);
    json_int_t sum = 0;
    size_t i;
    json_t *t;
    json_array_foreach(threads, i, t) sum += json_integer_value(json_object_get(t, "gvl_wait_ns"));
    assert_int_equal(sum, json_integer_value(json_object_get(json_object_get(j, "totals"), "gvl_wait_ns")));
    assert_string_equal(json_string_value(
                            json_object_get(json_array_get(json_object_get(j, "top_holders"), 1), "kind")),
                        "gc");
    json_decref(j);
    rga_summary_free(&s);
    rga_report_free(r);
}

static void
test_drops_shown(void **state)
{
    (void)state;
    char *path = rga_test_generate("--threads 3 --slices 50 --drops");
    assert_non_null(path);
    rga_report_t *r = NULL;
    rga_error_t err;
    assert_int_equal(rga_report_load_file(path, &r, &err), RGA_OK);
    rga_summary_t s = build(r, NULL);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_int_equal(rga_summary_write_text(&s, out, NULL, &err), RGA_OK);
    fclose(out);
    /* Each drop against its kind: 1234 intervals of the kept ones plus
     * themselves is material, so the report says it is incomplete. */
    char want[160];
    int64_t of = (int64_t)r->n_intervals + 1234;
    snprintf(want, sizeof(want), "  intervals       1234 of %lld timeline intervals (%.1f%%): gaps", (long long)of,
             123400.0 / (double)of);
    assert_non_null(strstr(buf, "incomplete report: the profiler's bounded tables dropped\n"));
    assert_non_null(strstr(buf, want));
    snprintf(want, sizeof(want), "  samples         17 of %lld samples (",
             (long long)(r->stats.sampling_count + 17));
    assert_non_null(strstr(buf, want));
    free(buf);
    rga_summary_free(&s);
    /* One lost release stack in many is listed, not alarmed about. */
    r->stats.dropped_intervals = r->stats.dropped_samples = 0;
    r->stats.dropped_release_stacks = 1;
    r->stats.release_stacks = 4999;
    s = build(r, NULL);
    assert_int_equal(s.n_drops, 1);
    assert_false(s.drops_material);
    assert_int_equal(rga_summary_drop_ppm(&s.drops[0]), 200);
    out = open_memstream(&buf, &len);
    assert_int_equal(rga_summary_write_text(&s, out, NULL, &err), RGA_OK);
    fclose(out);
    assert_null(strstr(buf, "incomplete"));
    assert_non_null(strstr(buf, "dropped, under 1% of each kind (the figures hold):\n"
                                "  release_stacks  1 of 5000 releases (0.02%): their time is kept, without the "
                                "releaser's stack\n"));
    free(buf);
    rga_summary_free(&s);
    rga_report_free(r);
    unlink(path);
    free(path);
}

/* On synthetic reports: every waiter's holder edges add up to its wait, so the
 * holders table accounts for all of the waiting. */
static void
test_conservation_synthetic(void **state)
{
    (void)state;
    char *path = rga_test_generate("--threads 9 --ractors 2 --labels 5 --slices 800 --seed 7");
    assert_non_null(path);
    rga_report_t *r = NULL;
    rga_error_t err;
    assert_int_equal(rga_report_load_file(path, &r, &err), RGA_OK);
    rga_summary_t s = build(r, NULL);
    int64_t holders = 0;
    for (size_t i = 0; i < s.n_holders; i++)
        holders += s.holders[i].wait_ns;
    assert_int_equal(holders, s.total_ns[RGA_STATE_GVL_WAIT]);
    int64_t labels = 0;
    for (size_t i = 0; i < s.n_labels; i++)
        labels += s.labels[i].state_ns[RGA_STATE_GVL_WAIT];
    assert_int_equal(labels, s.total_ns[RGA_STATE_GVL_WAIT]);
    int64_t ractors = 0;
    for (size_t i = 0; i < s.n_ractors; i++) {
        ractors += s.ractors[i].state_ns[RGA_STATE_GVL_WAIT];
        /* One GVL per Ractor: its threads' running time fits in the wall time. */
        assert_true(s.ractors[i].state_ns[RGA_STATE_RUNNING] <= r->meta.duration_ns);
    }
    assert_int_equal(ractors, s.total_ns[RGA_STATE_GVL_WAIT]);
    rga_summary_free(&s);
    rga_report_free(r);
    unlink(path);
    free(path);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_numbers),          cmocka_unit_test(test_filters),
        cmocka_unit_test(test_text_and_json),          cmocka_unit_test(test_drops_shown),
        cmocka_unit_test(test_conservation_synthetic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
