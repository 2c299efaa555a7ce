/* test_rootcause_views.c — the views of root causes on the hand-written
 * fixture test/fixtures/chains_report.json, whose answers are known: a Mutex
 * convoy (a holder sleeps 190 ms inside the lock, three waiters queue behind
 * it) and a request that holds a Mutex while it waits 100 ms for the GVL a
 * hog holds. The summary's root causes and label-set shares (JSON read back
 * with jansson), critical paths of a thread and of a label (model and JSON),
 * the root-cause wait graph read back by Graphviz, and the profiles weighted
 * by root causes and by direct blame. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <graphviz/cgraph.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "critical_path.h"
#include "html_data.h"
#include "profile_model.h"
#include "rga.h"
#include "rga_test_util.h"

#define MS 1000000LL

static json_t *
render_json(const rga_report_t *r, const char *view, const rga_view_opts_t *opts)
{
    char *text = rga_test_render(r, view, opts);
    json_error_t jerr;
    json_t *root = json_loads(text, 0, &jerr);
    if (!root)
        fail_msg("%s is not JSON: %s", view, jerr.text);
    free(text);
    return root;
}

static json_int_t
int_at(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

static const char *
str_at(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    assert_true(json_is_string(v));
    return json_string_value(v);
}

static void
test_summary_json_roots(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_fixture("chains_report.json");
    json_t *root = render_json(r, "json", NULL);
    const json_t *rc = json_object_get(root, "root_causes");
    assert_true(json_is_true(json_object_get(rc, "available")));
    /* Waits: w0 194, w1 194, w2 194, the request's GVL 100, waiter-r 110 ms. */
    assert_int_equal(int_at(rc, "waited_ns"), 792 * MS);
    const json_t *first = json_array_get(json_object_get(rc, "roots"), 0);
    assert_string_equal(str_at(first, "kind"), "blocked");
    assert_string_equal(str_at(first, "cause"), "sleep");
    assert_string_equal(str_at(first, "name"), "holder");
    assert_int_equal(int_at(first, "ns"), 564 * MS);
    assert_int_equal(int_at(first, "chain_ns"), (188 + 187) * MS);
    const json_t *stack = json_array_get(json_object_get(first, "stacks"), 0);
    assert_int_equal(int_at(stack, "ns"), 564 * MS);
    const json_t *leaf = json_array_get(json_object_get(stack, "frames"), 1);
    assert_string_equal(json_string_value(json_array_get(leaf, 1)), "Kernel#sleep");
    const json_t *hog = json_array_get(json_object_get(rc, "roots"), 1);
    assert_string_equal(str_at(hog, "name"), "hog");
    assert_int_equal(int_at(hog, "ns"), 200 * MS);
    /* Each waiter's roots sum to its waits. */
    json_int_t per_waiter[9] = {0};
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(rc, "waiters"), i, row)
        per_waiter[int_at(row, "waiter")] += int_at(row, "ns");
    assert_int_equal(per_waiter[3], 194 * MS);
    assert_int_equal(per_waiter[5], 194 * MS);
    assert_int_equal(per_waiter[6], 100 * MS);
    assert_int_equal(per_waiter[8], 110 * MS);
    /* Each label set's shares sum to its time; /req's is the hog's. */
    json_array_foreach(json_object_get(rc, "label_sets"), i, row)
    {
        json_int_t sum = 0;
        size_t k;
        json_t *share;
        json_array_foreach(json_object_get(row, "shares"), k, share) sum += int_at(share, "ns");
        assert_int_equal(sum, int_at(row, "time_ns"));
        if (int_at(row, "label_set") == 2) {
            const json_t *top = json_array_get(json_object_get(row, "shares"), 0);
            assert_string_equal(str_at(top, "name"), "hog");
            assert_int_equal(int_at(top, "ns"), 200 * MS);
            assert_true(json_is_false(json_object_get(top, "own")));
        }
    }
    json_decref(root);
    rga_report_free(r);
}

/* A filter keeps the waits of the threads it selects. */
static void
test_summary_filter(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_fixture("chains_report.json");
    rga_view_opts_t opts = {0};
    opts.thread = "w2";
    json_t *root = render_json(r, "json", &opts);
    const json_t *rc = json_object_get(root, "root_causes");
    assert_int_equal(int_at(rc, "waited_ns"), 194 * MS);
    json_decref(root);
    char *text = rga_test_render(r, "summary", &opts);
    assert_non_null(strstr(text, "Root causes (who, at the end of each wait chain"));
    assert_non_null(strstr(text, "  holder (#2)  blocked: sleep        187ms"));
    free(text);
    rga_report_free(r);
}

static void
test_critical_path_of_a_thread(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_fixture("chains_report.json");
    rga_cp_spec_t spec = {"w2", 0, 0, false, 0};
    rga_critical_path_t p;
    rga_error_t err;
    assert_int_equal(rga_critical_path_build(r, &spec, &p, &err), RGA_OK);
    assert_int_equal(p.from_ns, 12 * MS);
    assert_int_equal(p.to_ns, 208 * MS);
    assert_int_equal(p.covered_ns, 196 * MS);
    assert_int_equal(p.own_ns, 2 * MS);
    assert_int_equal(p.n_segments, 6);
    const rga_cp_segment_t *deep = &p.segments[1];
    assert_int_equal(deep->start_ns, 13 * MS);
    assert_int_equal(deep->end_ns, 200 * MS);
    assert_int_equal(deep->n_hops, 3);
    assert_int_equal(r->threads[p.hops[deep->first_hop + 2].thread].seq, 3);
    assert_int_equal(deep->root.kind, RGA_RC_BLOCKED);
    char text[512];
    assert_string_equal(rga_cp_segment_text(&p, deep, text, sizeof(text)),
                        "mutex → w1 (#4) mutex → w0 (#3) mutex → holder (#2): blocked: sleep");
    assert_string_equal(rga_cp_segment_text(&p, &p.segments[2], text, sizeof(text)),
                        "mutex → w1 (#4) mutex → w0 (#3) GVL → holder (#2): running");
    int64_t sum = 0;
    for (size_t i = 0; i < p.n_segments; i++) {
        sum += p.segments[i].end_ns - p.segments[i].start_ns;
        if (i > 0)
            assert_int_equal(p.segments[i].start_ns, p.segments[i - 1].end_ns);
    }
    assert_int_equal(sum, p.covered_ns);
    assert_int_equal(p.shares[0].ns, 187 * MS);
    assert_int_equal(p.handoffs, 4);
    rga_critical_path_free(&p);
    /* A window cuts it. */
    spec.from_ns = 100 * MS;
    spec.to_ns = 150 * MS;
    assert_int_equal(rga_critical_path_build(r, &spec, &p, &err), RGA_OK);
    assert_int_equal(p.covered_ns, 50 * MS);
    assert_int_equal(p.n_segments, 1);
    rga_critical_path_free(&p);
    rga_report_free(r);
}

static void
test_critical_path_of_a_label(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_fixture("chains_report.json");
    rga_view_opts_t opts = {0};
    opts.critical_path = "label=endpoint=/req";
    json_t *root = render_json(r, "critical_path_json", &opts);
    assert_string_equal(str_at(json_object_get(root, "subject"), "kind"), "label");
    assert_int_equal(int_at(json_object_get(root, "subject"), "threads"), 2);
    assert_int_equal(int_at(root, "covered_ns"), 224 * MS);
    json_int_t sum = 0;
    size_t i;
    json_t *seg;
    json_array_foreach(json_object_get(root, "segments"), i, seg)
        sum += int_at(seg, "end_ns") - int_at(seg, "start_ns");
    assert_int_equal(sum, 224 * MS);
    const json_t *share = json_array_get(json_object_get(root, "shares"), 0);
    assert_string_equal(str_at(share, "name"), "hog");
    assert_int_equal(int_at(share, "ns"), 200 * MS);
    const json_t *frames = json_object_get(json_array_get(json_object_get(share, "stacks"), 0), "frames");
    assert_string_equal(json_string_value(json_array_get(json_array_get(frames, 0), 1)), "Object#compute");
    json_decref(root);
    rga_report_free(r);
}

static void
test_critical_path_errors(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_fixture("chains_report.json");
    rga_critical_path_t p;
    rga_error_t err;
    rga_cp_spec_t bad[] = {{"nobody", 0, 0, false, 0},
                           {"label=x", 0, 0, false, 0},
                           {"label=job=none", 0, 0, false, 0},
                           {"2", 300 * MS, 0, false, 0},
                           {"", 0, 0, false, 0}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(rga_critical_path_build(r, &bad[i], &p, &err), RGA_ERR_ARGUMENT);
    rga_report_free(r);
    char *text = rga_test_replace(rga_test_small_report, "\"intervals\":[", "\"intervals\":[],\"x\":[");
    r = rga_test_load(text);
    free(text);
    rga_cp_spec_t one = {"1", 0, 0, false, 0};
    assert_int_equal(rga_critical_path_build(r, &one, &p, &err), RGA_ERR_MISSING);
    assert_non_null(strstr(err.reason, "root causes need a full recording"));
    rga_report_free(r);
}

/* The root-cause graph read back by Graphviz. */
static void
test_root_graph(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_fixture("chains_report.json");
    rga_view_opts_t opts = {0};
    opts.blame = "root";
    opts.min_share = 0.0;
    opts.min_share_set = 1;
    char *dot = rga_test_render(r, "dot", &opts);
    Agraph_t *g = agmemread(dot);
    assert_non_null(g);
    Agnode_t *w2 = agnode(g, "t5", 0), *holder = agnode(g, "t2", 0), *hog = agnode(g, "t7", 0),
             *req = agnode(g, "t8", 0);
    assert_non_null(w2);
    assert_non_null(holder);
    bool sleep = false, through_request = false;
    for (Agedge_t *e = agfstout(g, w2); e; e = agnxtout(g, e))
        if (aghead(e) == holder && strcmp(agget(e, "root"), "blocked") == 0)
            sleep = strcmp(agget(e, "wait_ns"), "187000000") == 0;
    for (Agedge_t *e = agfstout(g, req); e; e = agnxtout(g, e))
        if (aghead(e) == hog)
            through_request = strcmp(agget(e, "wait_ns"), "100000000") == 0 &&
                              strcmp(agget(e, "cause"), "mutex") == 0;
    assert_true(sleep);
    assert_true(through_request); /* waiter-r's Mutex wait ends at the hog, not at the request */
    agclose(g);
    free(dot);
    rga_report_free(r);
}

static int64_t
function_ns(const rga_profile_t *p, const char *name)
{
    int64_t sum = 0;
    uint32_t buf[64];
    for (size_t i = 0; i < p->n_samples; i++) {
        size_t n = rga_profile_stack(p, p->samples[i], buf);
        if (strcmp(p->functions[buf[n - 1]].name, name) == 0)
            sum += p->samples[i]->weight_ns;
    }
    return sum;
}

static void
test_weighted_profiles(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_fixture("chains_report.json");
    rga_profile_t p;
    rga_error_t err;
    assert_int_equal(rga_profile_build_weighted(r, NULL, RGA_WEIGHT_ROOT, &p, &err), RGA_OK);
    /* 792 ms of waits: all but w0's 2 ms and w1's 1 ms of running have a sampled stack. */
    assert_int_equal(p.total_ns, 789 * MS);
    assert_int_equal(function_ns(&p, "Object#compute"), 200 * MS);
    assert_int_equal(function_ns(&p, "[GVL blocked]"), 564 * MS);
    rga_profile_free(&p);
    assert_int_equal(rga_profile_build_weighted(r, NULL, RGA_WEIGHT_DIRECT, &p, &err), RGA_OK);
    /* Blame 105 ms, release stacks 687 ms. */
    assert_int_equal(p.total_ns, 792 * MS);
    assert_int_equal(function_ns(&p, "Object#compute"), 100 * MS);
    assert_int_equal(function_ns(&p, "Thread::Mutex#synchronize"), 687 * MS);
    rga_profile_free(&p);
    rga_view_opts_t opts = {0};
    opts.blame = "root";
    char *top = rga_test_render(r, "top", &opts);
    assert_non_null(strstr(top, "Flat profile: wait explained at its roots 789ms"));
    free(top);
    rga_report_free(r);
}

/* The page's paths: every thread's and the label sets', capped per path. */
static void
test_page_paths(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_fixture("chains_report.json");
    rga_filter_t f;
    rga_error_t err;
    rga_filter_spec_t all = {0};
    assert_int_equal(rga_filter_init(&f, r, &all, &err), RGA_OK);
    rga_html_limits_t lim = {0, 0, 0, 2, 1, 0};
    json_t *data;
    assert_int_equal(rga_html_data_build(r, &f, &lim, &data, &err), RGA_OK);
    const json_t *paths = json_object_get(data, "paths");
    assert_true(json_is_true(json_object_get(paths, "available")));
    assert_int_equal(json_object_size(json_object_get(paths, "threads")), 8);
    assert_int_equal(json_object_size(json_object_get(paths, "labels")), 1); /* the label set with most time */
    const json_t *w2 = json_object_get(json_object_get(paths, "threads"), "5");
    assert_int_equal(int_at(w2, "covered"), 196 * MS);
    assert_int_equal(int_at(w2, "segments"), 6);
    assert_int_equal(int_at(w2, "kept"), 2);
    const json_t *dur = json_object_get(w2, "dur"), *lane = json_object_get(w2, "lane");
    assert_int_equal(json_integer_value(json_array_get(dur, 0)), 187 * MS); /* the longest two, in time order */
    assert_int_equal(json_integer_value(json_array_get(lane, 0)), 2);
    assert_int_equal(json_integer_value(json_array_get(dur, 1)), 5 * MS);
    json_int_t sum = 0;
    size_t i;
    json_t *share;
    json_array_foreach(json_object_get(w2, "shares"), i, share) sum += json_integer_value(json_array_get(share, 2));
    assert_int_equal(sum, 196 * MS);
    const json_t *root =
        json_array_get(json_object_get(paths, "roots"),
                       json_integer_value(json_array_get(json_array_get(json_object_get(w2, "shares"), 0), 0)));
    assert_string_equal(json_string_value(json_array_get(root, 0)), "blocked");
    assert_int_equal(json_integer_value(json_array_get(root, 1)), 2);
    json_decref(data);
    rga_filter_free(&f);
    rga_report_free(r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_json_roots),        cmocka_unit_test(test_summary_filter),
        cmocka_unit_test(test_critical_path_of_a_thread), cmocka_unit_test(test_critical_path_of_a_label),
        cmocka_unit_test(test_critical_path_errors),      cmocka_unit_test(test_root_graph),
        cmocka_unit_test(test_weighted_profiles),         cmocka_unit_test(test_page_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
