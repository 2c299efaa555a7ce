/* test_causes_views.c — the views of blocked causes (report minor 1) on the
 * hand-written fixture test/fixtures/causes_report.json, whose numbers are
 * known: the summary's causes, releasers and blocked methods (model, text,
 * JSON read back with jansson), the wait graph's release edges (model, and
 * the DOT read back by Graphviz), the timeline's cause letters, Perfetto's
 * "blocked: <cause>" slices with their releaser (read back with jansson), the
 * HTML page's cause and releaser columns,
 * and that a minor-0 report shows none of it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dot_writer.h"
#include "html_data.h"
#include "rga.h"
#include "rga_test_util.h"
#include "summary.h"
#include "waitgraph.h"

#define MS 1000000LL

static rga_summary_t
build(const rga_report_t *r, const rga_filter_spec_t *spec)
{
    rga_filter_t f;
    rga_error_t err;
    rga_filter_spec_t all = {0};
    assert_int_equal(rga_filter_init(&f, r, spec ? spec : &all, &err), RGA_OK);
    rga_summary_t s;
    assert_int_equal(rga_summary_build(r, &f, &s, &err), RGA_OK);
    rga_filter_free(&f);
    return s;
}

static void
test_summary_model(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_fixture("causes_report.json");
    rga_summary_t s = build(r, NULL);
    assert_true(s.has_causes);
    assert_int_equal(s.threads[2].seq, 3);
    assert_int_equal(s.threads[2].cause_ns[RGA_CAUSE_QUEUE], 300 * MS);
    /* join 800 (#2 -> #1), no releaser 300 (#3), mutex 200 (#2 -> #3). */
    assert_int_equal(s.n_releases, 3);
    assert_int_equal(s.releases[0].releaser, 2);
    assert_int_equal(s.releases[0].waiter, 1);
    assert_int_equal(s.releases[0].cause, RGA_CAUSE_JOIN);
    assert_int_equal(s.releases[1].releaser, 0);
    assert_int_equal(s.releases[1].blocked_ns, 300 * MS);
    assert_int_equal(s.releases[2].cause, RGA_CAUSE_MUTEX);
    assert_int_equal(s.n_methods, 6);
    /* Per waiter: release edges + no-releaser time = its releasable causes. */
    for (size_t t = 0; t < s.n_threads; t++) {
        const rga_summary_thread_t *th = &s.threads[t];
        int64_t released = 0, releasable = 0;
        for (size_t i = 0; i < s.n_releases; i++)
            if (s.releases[i].waiter == th->seq)
                released += s.releases[i].blocked_ns;
        for (int c = 0; c < RGA_CAUSE_COUNT; c++)
            if (RPERF_CAUSE_RELEASABLE(c))
                releasable += th->cause_ns[c];
        assert_int_equal(released, releasable);
    }
    int label = -1;
    for (size_t i = 0; i < s.n_labels; i++)
        if (s.labels[i].label_set == 1)
            label = (int)i;
    assert_true(label >= 0);
    assert_int_equal(s.labels[label].cause_ns[RGA_CAUSE_MUTEX], 200 * MS);
    /* Lock blame: the holder's stack when it released the mutex (the join edge has none). */
    assert_int_equal(s.n_release_stacks, 1);
    assert_int_equal(s.release_stacks[0].stack, 0);
    assert_int_equal(s.release_stacks[0].ns, 200 * MS);
    rga_summary_free(&s);

    /* Under a label filter the thread's causes come from its label rows,
     * and releases keep the edges whose waiter's label set matches. */
    const char *labels[] = {"job=Import"};
    rga_filter_spec_t by_label = {NULL, 0, labels, 1, NULL};
    s = build(r, &by_label);
    assert_int_equal(s.n_threads, 4);
    assert_int_equal(s.threads[2].cause_ns[RGA_CAUSE_MUTEX], 200 * MS);
    assert_int_equal(s.threads[0].cause_ns[RGA_CAUSE_JOIN], 0);
    assert_int_equal(s.n_releases, 1);
    assert_int_equal(s.releases[0].cause, RGA_CAUSE_MUTEX);
    /* ...and release stacks the releasers whose label set matches: #2 runs without labels. */
    assert_int_equal(s.n_release_stacks, 0);
    rga_summary_free(&s);
    rga_report_free(r);
}

static void
test_summary_text(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_fixture("causes_report.json");
    char *text = rga_test_render(r, "summary", NULL);
    const char *causes = strstr(text, "\nBlocked by cause (per thread)\n");
    assert_non_null(causes);
    /* The waiter's causes, largest first, each with its share of blocked. */
    assert_non_null(strstr(causes, "waiter (#3)     500ms  queue  300ms       60.0%\n"));
    assert_non_null(strstr(causes, "                       mutex  200ms       40.0%\n"));
    assert_non_null(strstr(text, "\nBlocked by cause (per label set)\n  labels"));
    assert_non_null(strstr(text, "sleeper (#4)  PG::Connection#exec    400ms      1\n"));
    const char *rel = strstr(text, "\nTop releasers (who woke blocked threads)\n");
    assert_non_null(rel);
    assert_non_null(strstr(rel, "holder (#2)          main (#1)    join"));
    assert_non_null(strstr(rel, "[no releaser found]  waiter (#3)"));
    /* The report has labels, so an unlabelled thread's Queue wait is an idle
     * worker's wait for work: listed apart, after the others. */
    assert_null(strstr(text, "Idle workers woken for work"));
    free(text);
    rga_report_t *idle = rga_test_load_fixture("causes_report.json");
    for (size_t i = 0; i < idle->n_blocked_edges; i++)
        if (idle->blocked_edges[i].waiter == 1)
            idle->blocked_edges[i].cause = RGA_CAUSE_QUEUE;
    text = rga_test_render(idle, "summary", NULL);
    const char *apart = strstr(text, "\nIdle workers woken for work (unlabelled waits in a labelled report)\n");
    assert_non_null(apart);
    assert_non_null(strstr(apart, "  holder (#2)  main (#1)  queue    800ms      1\n"));
    /* ...and only there: the main section comes first and omits it. */
    rel = strstr(text, "\nTop releasers (who woke blocked threads)\n");
    assert_true(rel && rel < apart);
    const char *main_row = strstr(rel, "main (#1)");
    assert_true(main_row > apart);
    rga_report_free(idle);
    const char *stacks = strstr(text, "\nTop release stacks (what releasers ran when they woke a waiter)\n");
    assert_non_null(stacks);
    assert_non_null(strstr(stacks, "  200ms  100.0%  Holder#work (app.rb:12)\n"));
    free(text);
    rga_report_free(r);

    /* A minor-0 report: none of these sections. */
    r = rga_test_load(rga_test_small_report);
    text = rga_test_render(r, "summary", NULL);
    assert_null(strstr(text, "Blocked by cause"));
    assert_null(strstr(text, "releaser"));
    assert_null(strstr(text, "Blocked in other methods"));
    assert_null(strstr(text, "release stacks"));
    free(text);
    rga_report_free(r);
}

static void
test_summary_json(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_fixture("causes_report.json");
    char *text = rga_test_render(r, "json", NULL);
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    assert_non_null(root);
    json_t *waiter = json_array_get(json_object_get(root, "threads"), 2);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(waiter, "blocked_by_cause"), "queue")),
                     300 * MS);
    assert_int_equal(json_integer_value(json_object_get(waiter, "release_unknown_ns")), 300 * MS);
    json_t *top = json_array_get(json_object_get(root, "top_releasers"), 0);
    assert_string_equal(json_string_value(json_object_get(top, "cause")), "join");
    assert_int_equal(json_integer_value(json_object_get(top, "releaser")), 2);
    assert_int_equal(json_array_size(json_object_get(root, "blocked_methods")), 6);
    json_t *release = json_array_get(json_object_get(root, "top_release_stacks"), 0);
    assert_int_equal(json_integer_value(json_object_get(release, "ns")), 200 * MS);
    json_decref(root);
    free(text);
    rga_report_free(r);

    r = rga_test_load(rga_test_small_report);
    text = rga_test_render(r, "json", NULL);
    root = json_loads(text, 0, &je);
    assert_non_null(root);
    assert_null(json_object_get(root, "top_releasers"));
    assert_null(json_object_get(json_array_get(json_object_get(root, "threads"), 0), "blocked_by_cause"));
    json_decref(root);
    free(text);
    rga_report_free(r);
}

static rga_waitgraph_t
graph(const rga_report_t *r, rga_edge_kinds_t kinds, double min_share)
{
    rga_filter_t f;
    rga_error_t err;
    rga_filter_spec_t all = {0};
    assert_int_equal(rga_filter_init(&f, r, &all, &err), RGA_OK);
    rga_waitgraph_t g;
    assert_int_equal(rga_waitgraph_build_kinds(r, &f, RGA_BY_THREAD, kinds, min_share, &g, &err), RGA_OK);
    rga_filter_free(&f);
    return g;
}

static const rga_wg_edge_t *
edge(const rga_waitgraph_t *g, int64_t from_seq, int64_t to_seq, int cause)
{
    long from = rga_waitgraph_find(g, RGA_NODE_THREAD, from_seq),
         to = rga_waitgraph_find(g, RGA_NODE_THREAD, to_seq);
    for (size_t i = 0; from >= 0 && to >= 0 && i < g->n_edges; i++)
        if (g->edges[i].from == (size_t)from && g->edges[i].to == (size_t)to && g->edges[i].cause == cause)
            return &g->edges[i];
    return NULL;
}

static void
test_waitgraph_edges(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_fixture("causes_report.json");
    /* gvl (the default): today's graph, no release edge. */
    rga_waitgraph_t g = graph(r, RGA_EDGES_GVL, 0.0);
    assert_int_equal(g.n_edges, 1);
    assert_non_null(edge(&g, 3, 2, -1));
    assert_int_equal(g.total_blocked_ns, 0);
    rga_waitgraph_free(&g);
    /* all, nothing pruned: the GVL edge and both release edges. */
    g = graph(r, RGA_EDGES_ALL, 0.0);
    assert_int_equal(g.n_edges, 3);
    assert_int_equal(edge(&g, 3, 2, -1)->wait_ns, 50 * MS);
    assert_int_equal(edge(&g, 1, 2, RGA_CAUSE_JOIN)->wait_ns, 800 * MS);
    assert_int_equal(edge(&g, 3, 2, RGA_CAUSE_MUTEX)->count, 1);
    assert_int_equal(g.total_blocked_ns, 1000 * MS);
    assert_int_equal(g.nodes[rga_waitgraph_find(&g, RGA_NODE_THREAD, 2)].released_ns, 1000 * MS);
    /* Nodes keep their state totals. */
    assert_int_equal(g.nodes[rga_waitgraph_find(&g, RGA_NODE_THREAD, 1)].state_ns[RGA_STATE_BLOCKED], 800 * MS);
    rga_waitgraph_free(&g);
    /* The default story prunes each kind on its own: the lone GVL edge
     * stays although the release edges carry 20 times its time; the join
     * edge covers 80% of the release time, so the mutex edge goes. */
    g = graph(r, RGA_EDGES_ALL, -1.0);
    assert_int_equal(g.n_edges, 2);
    assert_non_null(edge(&g, 3, 2, -1));
    assert_non_null(edge(&g, 1, 2, RGA_CAUSE_JOIN));
    assert_int_equal(g.n_pruned, 1);
    rga_waitgraph_free(&g);
    /* --min-share 0.5 of each kind's own total. */
    g = graph(r, RGA_EDGES_BLOCKED, 0.5);
    assert_int_equal(g.n_edges, 1);
    assert_non_null(edge(&g, 1, 2, RGA_CAUSE_JOIN));
    rga_waitgraph_free(&g);
    rga_report_free(r);
}

static void
test_dot_release_edges_parse_back(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_fixture("causes_report.json");
    rga_waitgraph_t g = graph(r, RGA_EDGES_ALL, 0.0);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    rga_error_t err;
    assert_int_equal(rga_dot_write(&g, out, &err), RGA_OK);
    fclose(out);
    Agraph_t *back = agmemread(text);
    assert_non_null(back);
    /* Two edges join waiter #3 and holder #2: its GVL wait and its mutex release. */
    assert_int_equal(agnedges(back), 3);
    Agnode_t *t1 = agnode(back, "t1", 0), *t2 = agnode(back, "t2", 0), *t3 = agnode(back, "t3", 0);
    assert_non_null(t1);
    Agedge_t *join = agedge(back, t1, t2, NULL, 0);
    assert_non_null(join);
    assert_string_equal(agget(join, "style"), "dashed");
    assert_string_equal(agget(join, "cause"), "join");
    assert_string_equal(agget(join, "blocked_ns"), "800000000");
    assert_non_null(strstr(agget(join, "label"), "join 800ms"));
    int dashed = 0, solid = 0;
    for (Agedge_t *e = agfstout(back, t3); e; e = agnxtout(back, e)) {
        assert_ptr_equal(aghead(e), t2);
        const char *style = agget(e, "style");
        if (style && strcmp(style, "dashed") == 0) {
            dashed++;
            assert_string_equal(agget(e, "cause"), "mutex");
        } else {
            solid++;
            assert_string_equal(agget(e, "wait_ns"), "50000000");
        }
    }
    assert_int_equal(dashed, 1);
    assert_int_equal(solid, 1);
    assert_non_null(strstr(agget(t2, "label"), "released 1.00s"));
    agclose(back);
    free(text);
    rga_waitgraph_free(&g);

    /* gvl on a minor-1 report: the DOT of today, no release edge. */
    g = graph(r, RGA_EDGES_GVL, 0.0);
    out = open_memstream(&text, &len);
    assert_int_equal(rga_dot_write(&g, out, &err), RGA_OK);
    fclose(out);
    assert_null(strstr(text, "cause="));
    assert_null(strstr(text, "released"));
    free(text);
    rga_waitgraph_free(&g);
    rga_report_free(r);
}

static void
test_timeline_marks_causes(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_fixture("causes_report.json");
    rga_view_opts_t opts = {0};
    opts.width = 50; /* 20 ms a column */
    char *text = rga_test_render(r, "timeline", &opts);
    /* waiter #3: running 100 ms, mutex 200 ms, running 100 ms, queue 300 ms, GVL wait 50 ms, running. */
    assert_non_null(strstr(text, "waiter #3  |█████mmmmmmmmmm█████qqqqqqqqqqqqqqq▒▒▒████████████|\n"));
    assert_non_null(strstr(text, "sleeper #4 |zzzzzzzzzzzzzzzzzzzzzzzzz█████oooooooooooooooooooo|\n"));
    assert_non_null(strstr(text, "\nblocked by cause: i io  z sleep  m mutex"));
    free(text);
    opts.ascii = 1;
    text = rga_test_render(r, "timeline", &opts);
    assert_non_null(strstr(text, "main #1    |#####jjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj#####|\n"));
    free(text);
    rga_report_free(r);

    r = rga_test_load(rga_test_small_report);
    text = rga_test_render(r, "timeline", &opts);
    assert_null(strstr(text, "blocked by cause"));
    free(text);
    rga_report_free(r);
}

/* The trace's complete events, read back with jansson. */
static json_t *
trace_events(const rga_report_t *r)
{
    char *text = rga_test_render(r, "perfetto", NULL);
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    free(text);
    if (!root)
        fail_msg("perfetto output is not JSON: %s", je.text);
    return root;
}

static void
test_perfetto_names_causes(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_fixture("causes_report.json");
    json_t *root = trace_events(r);
    json_t *events = json_object_get(root, "traceEvents");
    size_t i, blocked = 0, with_releaser = 0;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        const char *name = json_string_value(json_object_get(ev, "name"));
        if (strncmp(name, "blocked", 7) != 0)
            continue;
        blocked++;
        json_t *args = json_object_get(ev, "args");
        assert_string_equal(name + strlen("blocked: "), json_string_value(json_object_get(args, "cause")));
        if (json_integer_value(json_object_get(ev, "tid")) == 1) {
            assert_string_equal(name, "blocked: join");
            assert_string_equal(json_string_value(json_object_get(args, "releaser")), "holder #2");
            assert_int_equal(json_integer_value(json_object_get(args, "releaser_seq")), 2);
        }
        with_releaser += json_object_get(args, "releaser") != NULL;
    }
    assert_int_equal(blocked, 6);
    assert_int_equal(with_releaser, 2); /* the join and the mutex wait; the queue wait's waker is unknown */
    json_decref(root);
    rga_report_free(r);

    r = rga_test_load(rga_test_small_report);
    root = trace_events(r);
    size_t plain = 0;
    json_array_foreach(json_object_get(root, "traceEvents"), i, ev)
    {
        const char *name = json_string_value(json_object_get(ev, "name"));
        assert_null(strstr(name, "blocked:"));
        plain += strcmp(name, "blocked") == 0;
    }
    assert_true(plain > 0);
    json_decref(root);
    rga_report_free(r);
}

/* The page's timeline columns: cause and releaser per kept interval. */
static json_t *
html_intervals(const rga_report_t *r, json_t **root)
{
    rga_filter_t f;
    rga_error_t err;
    rga_filter_spec_t all = {0};
    assert_int_equal(rga_filter_init(&f, r, &all, &err), RGA_OK);
    assert_int_equal(rga_html_data_build(r, &f, NULL, root, &err), RGA_OK);
    rga_filter_free(&f);
    return json_object_get(*root, "intervals");
}

static void
test_html_data_carries_causes(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_fixture("causes_report.json");
    json_t *root = NULL, *iv = html_intervals(r, &root);
    json_t *thread = json_object_get(iv, "thread"), *start = json_object_get(iv, "start_delta");
    json_t *cause = json_object_get(iv, "cause"), *releaser = json_object_get(iv, "releaser");
    assert_int_equal(json_array_size(cause), r->n_intervals);
    assert_string_equal(json_string_value(json_array_get(json_object_get(iv, "cause_names"), RGA_CAUSE_JOIN)),
                        "join");
    int64_t at = 0;
    size_t found = 0;
    for (size_t i = 0; i < json_array_size(thread); i++) {
        at += json_integer_value(json_array_get(start, i));
        if (json_integer_value(json_array_get(thread, i)) == 1 && at == 100 * MS) {
            assert_int_equal(json_integer_value(json_array_get(cause, i)), RGA_CAUSE_JOIN);
            assert_int_equal(json_integer_value(json_array_get(releaser, i)), 2);
            found++;
        }
    }
    assert_int_equal(found, 1);
    json_decref(root);
    rga_report_free(r);

    r = rga_test_load(rga_test_small_report);
    iv = html_intervals(r, &root);
    assert_null(json_object_get(iv, "cause"));
    assert_null(json_object_get(iv, "cause_names"));
    json_decref(root);
    rga_report_free(r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_model),
        cmocka_unit_test(test_summary_text),
        cmocka_unit_test(test_summary_json),
        cmocka_unit_test(test_waitgraph_edges),
        cmocka_unit_test(test_dot_release_edges_parse_back),
        cmocka_unit_test(test_timeline_marks_causes),
        cmocka_unit_test(test_perfetto_names_causes),
        cmocka_unit_test(test_html_data_carries_causes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
