/* test_waitgraph.c — wait-graph construction from a known report, collapsing,
 * pruning, DOT output read back with cgraph, and SVG rendering with gvc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <graphviz/cgraph.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dot_writer.h"
#include "render.h"
#include "rga_test_util.h"
#include "waitgraph.h"

static rga_waitgraph_t
build(const rga_report_t *r, rga_group_by_t by, double min_share)
{
    rga_filter_t f;
    rga_error_t err;
    assert_int_equal(rga_filter_init(&f, r, NULL, &err), RGA_OK);
    rga_waitgraph_t g;
    assert_int_equal(rga_waitgraph_build(r, &f, by, min_share, &g, &err), RGA_OK);
    rga_filter_free(&f);
    return g;
}

static int64_t
edge_wait(const rga_waitgraph_t *g, long from, long to)
{
    for (size_t i = 0; i < g->n_edges; i++)
        if ((long)g->edges[i].from == from && (long)g->edges[i].to == to)
            return g->edges[i].wait_ns;
    return -1;
}

static void
test_by_thread(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(rga_test_small_report);
    rga_waitgraph_t g = build(r, RGA_BY_THREAD, 0.0);
    assert_int_equal(g.n_nodes, 4); /* threads 1 and 2, GC, hand-off */
    assert_int_equal(g.n_edges, 3);
    long t1 = rga_waitgraph_find(&g, RGA_NODE_THREAD, 1), t2 = rga_waitgraph_find(&g, RGA_NODE_THREAD, 2);
    long gc = rga_waitgraph_find(&g, RGA_NODE_GC, 0), ho = rga_waitgraph_find(&g, RGA_NODE_HANDOFF, 0);
    assert_true(t1 >= 0 && t2 >= 0 && gc >= 0 && ho >= 0);
    assert_int_equal(edge_wait(&g, t2, t1), 300);
    assert_int_equal(edge_wait(&g, t2, gc), 100);
    assert_int_equal(edge_wait(&g, t1, ho), 50);
    assert_int_equal(g.nodes[t2].wait_ns, 400);
    assert_int_equal(g.nodes[t1].caused_ns, 300);
    assert_int_equal(g.total_wait_ns, 450);
    assert_int_equal(g.nodes[t1].ractor, 1);
    assert_string_equal(g.nodes[t2].label, "worker-a #2");
    /* Edges are sorted by wait, largest first. */
    assert_int_equal(g.edges[0].wait_ns, 300);
    rga_waitgraph_free(&g);

    /* min-share 0.2 of 450 = 90: the 50 ns hand-off edge and its node go. */
    g = build(r, RGA_BY_THREAD, 0.2);
    assert_int_equal(g.n_edges, 2);
    assert_int_equal(g.n_pruned, 1);
    assert_int_equal(rga_waitgraph_find(&g, RGA_NODE_HANDOFF, 0), -1);
    assert_int_equal(g.total_wait_ns, 450);
    rga_waitgraph_free(&g);
    rga_report_free(r);
}

static void
test_by_label_and_ractor(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(rga_test_small_report);
    rga_waitgraph_t g = build(r, RGA_BY_LABEL, 0.0);
    long l0 = rga_waitgraph_find(&g, RGA_NODE_LABEL_SET, 0), l1 = rga_waitgraph_find(&g, RGA_NODE_LABEL_SET, 1);
    long l2 = rga_waitgraph_find(&g, RGA_NODE_LABEL_SET, 2);
    assert_true(l0 >= 0 && l1 >= 0 && l2 >= 0);
    assert_int_equal(edge_wait(&g, l1, l0), 300);
    assert_int_equal(edge_wait(&g, l2, rga_waitgraph_find(&g, RGA_NODE_GC, 0)), 100);
    assert_string_equal(g.nodes[l2].label, "endpoint=b, tenant=x");
    /* A label set node carries the sum of its label_totals rows. */
    assert_int_equal(g.nodes[l0].state_ns[RGA_STATE_RUNNING], 600 + 500);
    assert_int_equal(g.nodes[l0].state_ns[RGA_STATE_GC_MARK], 60);
    assert_int_equal(g.nodes[l1].state_ns[RGA_STATE_RUNNING], 150);
    assert_int_equal(g.nodes[l1].state_ns[RGA_STATE_GVL_WAIT], 300);
    assert_int_equal(g.nodes[l2].state_ns[RGA_STATE_BLOCKED], 200);
    /* Over all label set nodes the totals are the threads' totals. */
    for (int k = 0; k < RGA_STATE_COUNT; k++) {
        int64_t nodes = 0, threads = 0;
        for (size_t i = 0; i < g.n_nodes; i++)
            nodes += g.nodes[i].state_ns[k];
        for (size_t i = 0; i < r->n_threads; i++)
            threads += r->threads[i].state_ns[k];
        assert_int_equal(nodes, threads);
    }
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    rga_error_t derr;
    assert_int_equal(rga_dot_write(&g, out, &derr), RGA_OK);
    fclose(out);
    assert_non_null(strstr(text, "endpoint=a\\nrunning 150ns, blocked 0, GC 0"));
    free(text);
    rga_waitgraph_free(&g);

    g = build(r, RGA_BY_RACTOR, 0.0);
    long r1 = rga_waitgraph_find(&g, RGA_NODE_RACTOR, 1);
    assert_true(r1 >= 0);
    assert_int_equal(edge_wait(&g, r1, r1), 300); /* threads of Ractor 1 waiting on each other */
    /* A Ractor node carries the sums over its threads (1 and 2). */
    assert_int_equal(g.nodes[r1].state_ns[RGA_STATE_RUNNING], 600 + 200);
    assert_int_equal(g.nodes[r1].state_ns[RGA_STATE_GVL_WAIT], 50 + 400);
    assert_int_equal(g.nodes[r1].state_ns[RGA_STATE_BLOCKED], 250 + 200);
    assert_int_equal(g.nodes[r1].state_ns[RGA_STATE_GC_SWEEP], 40);
    assert_int_equal(rga_waitgraph_find(&g, RGA_NODE_RACTOR, 2), -1); /* never waited */
    rga_waitgraph_free(&g);

    rga_group_by_t by;
    assert_true(rga_group_by_parse("label", &by) && by == RGA_BY_LABEL);
    assert_false(rga_group_by_parse("fiber", &by));
    rga_filter_t f;
    rga_error_t err;
    assert_int_equal(rga_filter_init(&f, r, NULL, &err), RGA_OK);
    assert_int_equal(rga_waitgraph_build(r, &f, RGA_BY_THREAD, 1.5, &g, &err), RGA_ERR_ARGUMENT);
    rga_filter_free(&f);
    rga_report_free(r);
}

/* Writes the graph as DOT into memory and reads it back with agmemread. */
static Agraph_t *
dot_roundtrip(const rga_waitgraph_t *g, char **text)
{
    size_t len = 0;
    FILE *out = open_memstream(text, &len);
    rga_error_t err;
    assert_int_equal(rga_dot_write(g, out, &err), RGA_OK);
    fclose(out);
    Agraph_t *back = agmemread(*text);
    assert_non_null(back);
    return back;
}

static void
test_dot_parses_back(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(rga_test_small_report);
    rga_waitgraph_t g = build(r, RGA_BY_THREAD, 0.0);
    char *text = NULL;
    Agraph_t *back = dot_roundtrip(&g, &text);
    assert_int_equal(agnnodes(back), (int)g.n_nodes);
    assert_int_equal(agnedges(back), (int)g.n_edges);
    Agraph_t *cluster = agsubg(back, "cluster_ractor_1", 0);
    assert_non_null(cluster);
    assert_non_null(agnode(cluster, "t2", 0));
    Agnode_t *t2 = agnode(back, "t2", 0), *t1 = agnode(back, "t1", 0);
    Agedge_t *e = agedge(back, t2, t1, NULL, 0);
    assert_non_null(e);
    assert_string_equal(agget(e, "wait_ns"), "300");
    assert_non_null(strstr(agget(t2, "label"), "worker-a #2"));
    assert_non_null(strstr(agget(t1, "label"), "running 600ns, blocked 250ns, GC 100ns"));
    assert_non_null(agnode(back, "gc", 0));
    agclose(back);
    free(text);
    rga_waitgraph_free(&g);
    rga_report_free(r);
}

/* On a synthetic report, the graph holds all the waiting: edges sum to the
 * threads' GVL wait, and the DOT text carries the same weights. */
static void
test_synthetic_weights(void **state)
{
    (void)state;
    char *path = rga_test_generate("--threads 10 --ractors 2 --labels 4 --slices 600 --seed 11");
    rga_report_t *r = NULL;
    rga_error_t err;
    assert_int_equal(rga_report_load_file(path, &r, &err), RGA_OK);
    int64_t wait = 0;
    for (size_t i = 0; i < r->n_threads; i++)
        wait += r->threads[i].state_ns[RGA_STATE_GVL_WAIT];
    rga_waitgraph_t g = build(r, RGA_BY_THREAD, 0.0);
    assert_int_equal(g.total_wait_ns, wait);
    char *text = NULL;
    Agraph_t *back = dot_roundtrip(&g, &text);
    int64_t sum = 0;
    for (Agnode_t *n = agfstnode(back); n; n = agnxtnode(back, n))
        for (Agedge_t *e = agfstout(back, n); e; e = agnxtout(back, e))
            sum += strtoll(agget(e, "wait_ns"), NULL, 10);
    assert_int_equal(sum, wait);
    /* Threads never wait on another Ractor's threads: no edge crosses clusters. */
    for (size_t i = 0; i < g.n_edges; i++) {
        const rga_wg_node_t *a = &g.nodes[g.edges[i].from], *b = &g.nodes[g.edges[i].to];
        if (b->kind == RGA_NODE_THREAD)
            assert_int_equal(a->ractor, b->ractor);
    }
    agclose(back);
    free(text);
    rga_waitgraph_free(&g);
    rga_report_free(r);
    unlink(path);
    free(path);
}

/* The default graph (a negative min_share) keeps the largest edges until
 * they carry RGA_WG_STORY_COVER of the wait, at most RGA_WG_STORY_MAX_EDGES:
 * the first edge it leaves out would not have been needed, and node totals
 * keep all the wait. */
static void
test_story_default(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load_generated("--threads 24 --ractors 2 --labels 4 --slices 600 --seed 5");
    rga_waitgraph_t all = build(r, RGA_BY_THREAD, 0.0);
    rga_waitgraph_t g = build(r, RGA_BY_THREAD, -1.0);
    assert_true(all.n_edges > RGA_WG_STORY_MAX_EDGES); /* the report has more edges than the default shows */
    assert_true(g.n_edges >= 1 && g.n_edges <= RGA_WG_STORY_MAX_EDGES);
    assert_int_equal(g.n_pruned, all.n_edges - g.n_edges);
    assert_int_equal(g.total_wait_ns, all.total_wait_ns);
    int64_t kept = 0;
    for (size_t i = 0; i < g.n_edges; i++) {
        assert_int_equal(g.edges[i].wait_ns, all.edges[i].wait_ns); /* the largest ones, in order */
        kept += g.edges[i].wait_ns;
    }
    int64_t before_last = kept - g.edges[g.n_edges - 1].wait_ns;
    /* Stopped at the cover or at the cap, and not one edge earlier. */
    assert_true(g.n_edges == RGA_WG_STORY_MAX_EDGES || (double)kept >= RGA_WG_STORY_COVER * (double)g.total_wait_ns);
    assert_true((double)before_last < RGA_WG_STORY_COVER * (double)g.total_wait_ns);
    /* Every waiter's node still holds its whole wait. */
    int64_t waited = 0;
    for (size_t i = 0; i < g.n_nodes; i++)
        waited += g.nodes[i].wait_ns;
    assert_true(waited <= g.total_wait_ns);
    rga_waitgraph_free(&g);
    rga_waitgraph_free(&all);
    rga_report_free(r);
}

static void
test_svg_render(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(rga_test_small_report);
    rga_waitgraph_t g = build(r, RGA_BY_THREAD, 0.0);
    char *svg = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&svg, &len);
    rga_error_t err;
    assert_int_equal(rga_graph_render(&g, "svg", out, &err), RGA_OK);
    fclose(out);
    assert_non_null(strstr(svg, "<svg"));
    assert_non_null(strstr(svg, "worker&#45;a #2"));
    assert_non_null(strstr(svg, "cluster_ractor_1"));
    free(svg);
    out = open_memstream(&svg, &len);
    assert_int_equal(rga_graph_render(&g, "no-such-format", out, &err), RGA_ERR_ARGUMENT);
    fclose(out);
    free(svg);
    rga_waitgraph_free(&g);
    rga_report_free(r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_thread),       cmocka_unit_test(test_by_label_and_ractor),
        cmocka_unit_test(test_dot_parses_back), cmocka_unit_test(test_synthetic_weights),
        cmocka_unit_test(test_story_default),   cmocka_unit_test(test_svg_render),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
