/* test_merge.c — merging a snapshot series onto one time axis. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rga_test_util.h"
#include "summary.h"

static rga_report_t *
gen_load(const char *args)
{
    char *path = rga_test_generate(args);
    assert_non_null(path);
    rga_report_t *r = NULL;
    rga_error_t err;
    assert_int_equal(rga_report_load_file(path, &r, &err), RGA_OK);
    unlink(path);
    free(path);
    return r;
}

static void
test_series_on_one_axis(void **state)
{
    (void)state;
    rga_report_t *in[2];
    in[0] = gen_load("--threads 6 --labels 4 --slices 300 --seed 1 --start-ns 1000000000 --seq 1");
    /* The second snapshot starts where the first one ends. */
    const int64_t shift = in[0]->meta.duration_ns;
    char args[160];
    snprintf(args, sizeof(args), "--threads 6 --labels 4 --slices 200 --seed 2 --start-ns %lld --seq 2",
             (long long)(1000000000 + shift));
    in[1] = gen_load(args);
    rga_report_t *m = NULL;
    rga_error_t err;
    assert_int_equal(rga_report_merge(in, 2, &m, &err), RGA_OK);
    assert_int_equal(m->meta.start_monotonic_ns, 1000000000);
    assert_int_equal(m->meta.duration_ns, shift + in[1]->meta.duration_ns);
    assert_int_equal(m->n_threads, 6);
    assert_int_equal(m->n_intervals, in[0]->n_intervals + in[1]->n_intervals);
    for (size_t i = 0; i < m->n_threads; i++) {
        for (int s = 0; s < RGA_STATE_COUNT; s++)
            assert_int_equal(m->threads[i].state_ns[s],
                             in[0]->threads[i].state_ns[s] + in[1]->threads[i].state_ns[s]);
        assert_int_equal(m->threads[i].first_seen_ns, in[0]->threads[i].first_seen_ns);
        assert_int_equal(m->threads[i].last_seen_ns, shift + in[1]->threads[i].last_seen_ns);
    }
    /* Sorted by start, and the second report's intervals are shifted by the first's duration. */
    int64_t later = 0;
    for (size_t i = 1; i < m->n_intervals; i++)
        assert_true(m->intervals[i - 1].start_ns <= m->intervals[i].start_ns);
    for (size_t i = 0; i < m->n_intervals; i++)
        later += m->intervals[i].start_ns >= shift;
    assert_true((size_t)later >= in[1]->n_intervals);
    /* Equal content is interned once: frames and label sets do not double. */
    assert_int_equal(m->n_frames, in[0]->n_frames);
    assert_int_equal(m->n_label_sets, in[0]->n_label_sets);
    int64_t edges = 0, waits = 0;
    for (size_t i = 0; i < m->n_edges; i++)
        edges += m->edges[i].wait_ns;
    for (size_t i = 0; i < m->n_threads; i++)
        waits += m->threads[i].state_ns[RGA_STATE_GVL_WAIT];
    assert_int_equal(edges, waits);
    rga_report_free(m);

    /* Order of the inputs does not matter. */
    rga_report_t *rev[2] = {in[1], in[0]};
    assert_int_equal(rga_report_merge(rev, 2, &m, &err), RGA_OK);
    assert_int_equal(m->meta.start_monotonic_ns, 1000000000);
    rga_report_free(m);
    rga_report_free(in[0]);
    rga_report_free(in[1]);
}

/* The same report twice, or two cuts whose time ranges overlap, would count
 * the overlap twice: refused, naming the inputs by position. */
static void
test_refuses_overlap(void **state)
{
    (void)state;
    rga_report_t *in[2];
    in[0] = gen_load("--threads 3 --slices 40 --seed 1 --start-ns 1000000000");
    in[1] = in[0];
    rga_report_t *m = NULL;
    rga_error_t err;
    assert_int_equal(rga_report_merge(in, 2, &m, &err), RGA_ERR_ARGUMENT);
    assert_null(m);
    assert_non_null(strstr(err.reason, "reports 1 and 2 cover the same time"));
    in[1] = gen_load("--threads 3 --slices 40 --seed 2 --start-ns 1000000500");
    assert_int_equal(rga_report_merge(in, 2, &m, &err), RGA_ERR_ARGUMENT);
    assert_non_null(strstr(err.reason, "overlap in time"));
    rga_report_free(in[1]);
    /* Totals that fit in each report but not together are refused too. */
    char args[160];
    snprintf(args, sizeof(args), "--threads 3 --slices 40 --seed 2 --start-ns %lld",
             (long long)(1000000000 + in[0]->meta.duration_ns));
    in[1] = gen_load(args);
    in[0]->threads[0].state_ns[RGA_STATE_GVL_WAIT] = INT64_MAX / 2;
    in[1]->threads[0].state_ns[RGA_STATE_GVL_WAIT] = INT64_MAX / 2;
    assert_int_equal(rga_report_merge(in, 2, &m, &err), RGA_ERR_SCHEMA);
    assert_non_null(strstr(err.reason, "report 2: value too large"));
    rga_report_free(in[0]);
    rga_report_free(in[1]);
}

static void
test_refuses_other_process(void **state)
{
    (void)state;
    rga_report_t *in[2];
    in[0] = gen_load("--threads 2 --slices 20 --pid 10");
    in[1] = gen_load("--threads 2 --slices 20 --pid 11");
    rga_report_t *m = NULL;
    rga_error_t err;
    assert_int_equal(rga_report_merge(in, 2, &m, &err), RGA_ERR_ARGUMENT);
    assert_null(m);
    assert_non_null(strstr(err.reason, "different processes"));
    rga_report_free(in[0]);
    rga_report_free(in[1]);
}

static void
test_merge_of_one_is_a_copy(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(rga_test_small_report);
    rga_report_t *m = NULL;
    rga_error_t err;
    assert_int_equal(rga_report_merge(&r, 1, &m, &err), RGA_OK);
    assert_int_equal(m->n_threads, r->n_threads);
    assert_int_equal(m->n_edges, r->n_edges);
    assert_int_equal(m->n_intervals, r->n_intervals);
    assert_int_equal(m->meta.duration_ns, r->meta.duration_ns);
    assert_string_equal(rga_report_label_value(m, 2, "tenant"), "x");
    rga_report_free(m);
    rga_report_free(r);
}

/* A snapshot in which thread 2 had not yet run (its Ractor unknown: a row
 * of its own, id 256 + seq), then one in which its Ractor 2 is known. */
#define THREAD(seq, ractor, first, running, wait) \
    "{\"seq\":" #seq ",\"name\":\"\",\"ractor\":" #ractor ",\"first_seen_ns\":" #first ",\"last_seen_ns\":100," \
    "\"exited\":false,\"running_ns\":" #running ",\"gvl_wait_ns\":" #wait ",\"blocked_ns\":0,\"gc_mark_ns\":0," \
    "\"gc_sweep_ns\":0,\"acquisitions\":1,\"waits\":0}"
#define HEAD(start, seq) \
    "{\"format\":\"rperf-gvl-report\",\"version\":1,\"meta\":{\"pid\":7,\"start_monotonic_ns\":" #start \
    ",\"duration_ns\":100,\"sequence\":" #seq "},"
static const char *const unidentified_then_known[2] = {
    HEAD(1000, 1) "\"ractors\":[{\"id\":1,\"main\":true},{\"id\":258,\"main\":false,\"identified\":false}],"
                  "\"threads\":[" THREAD(1, 1, 0, 100, 0) "," THREAD(2, 258, 50, 0, 50) "]}",
    HEAD(1100, 2) "\"ractors\":[{\"id\":1,\"main\":true},{\"id\":2,\"main\":false}],"
                  "\"threads\":[" THREAD(1, 1, 0, 100, 0) "," THREAD(2, 2, 0, 100, 0) "]}",
};

static rga_report_t *
load_text(const char *json)
{
    rga_report_t *r = NULL;
    rga_error_t err;
    rga_status_t st = rga_report_load_buffer(json, strlen(json), "test", &r, &err);
    if (st != RGA_OK)
        fprintf(stderr, "%s: %s\n", err.path, err.reason);
    assert_int_equal(st, RGA_OK);
    return r;
}

/* The row of an unidentified Ractor is one thread's, never counted as a
 * Ractor; merged with a later report that identified it, the thread is
 * that Ractor's. */
static void
test_unidentified_ractor_rows(void **state)
{
    (void)state;
    rga_report_t *in[2] = {load_text(unidentified_then_known[0]), load_text(unidentified_then_known[1])};
    assert_true(in[0]->ractors[0].identified);
    assert_false(in[0]->ractors[1].identified);
    assert_true(in[1]->ractors[1].identified); /* absent key: identified */

    rga_summary_t s;
    rga_filter_t f;
    rga_error_t err;
    assert_int_equal(rga_filter_init(&f, in[0], NULL, &err), RGA_OK);
    assert_int_equal(rga_summary_build(in[0], &f, &s, &err), RGA_OK);
    rga_filter_free(&f);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(rga_summary_write_text(&s, out, NULL, &err), RGA_OK);
    fclose(out);
    assert_non_null(strstr(text, "2 threads, 1 Ractors (and 1 thread whose Ractor was not identified)"));
    assert_non_null(strstr(text, "? (unidentified)"));
    free(text);
    rga_summary_free(&s);

    rga_report_t *m = NULL;
    assert_int_equal(rga_report_merge(in, 2, &m, &err), RGA_OK);
    assert_int_equal(m->n_threads, 2);
    assert_int_equal(m->threads[1].seq, 2);
    assert_int_equal(m->threads[1].ractor, 2);
    char name[32];
    rga_ractor_name(m, 258, name, sizeof(name));
    assert_string_equal(name, "Ractor ?");
    rga_ractor_name(m, 1, name, sizeof(name));
    assert_string_equal(name, "Ractor 1 (main)");
    rga_report_free(m);
    rga_report_free(in[0]);
    rga_report_free(in[1]);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_series_on_one_axis),       cmocka_unit_test(test_refuses_other_process),
        cmocka_unit_test(test_refuses_overlap),          cmocka_unit_test(test_merge_of_one_is_a_copy),
        cmocka_unit_test(test_unidentified_ractor_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
