/* test_rootcause.c — wait chains followed to their root (rootcause.h) on
 * hand-written timelines whose answers are known to the nanosecond: a Mutex
 * convoy three deep, a lock holder waiting for the GVL behind a CPU hog, a
 * join on a worker that waited on a Queue, a cycle, an unknown releaser, a
 * chain cut at a Ractor boundary, a chain longer than the depth bound, the
 * roots' stacks from state-matched samples; and the conservation laws on
 * every fixture and on generated reports: each waiter's roots sum to its
 * waited intervals, each label set's shares to its intervals, each walk
 * covers its span. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rga_test_util.h"
#include "rootcause.h"

#define MS 1000000LL

enum { RUN = RGA_STATE_RUNNING, WAIT = RGA_STATE_GVL_WAIT, BLK = RGA_STATE_BLOCKED, GCM = RGA_STATE_GC_MARK };

static rga_report_t *
timeline(const rga_test_thread_t *t, size_t nt, const rga_test_interval_t *iv, size_t ni, const char *extra)
{
    char *text = rga_test_timeline(t, nt, iv, ni, extra);
    rga_report_t *r = rga_test_load(text);
    free(text);
    return r;
}

static rga_rootcauses_t
build(const rga_report_t *r)
{
    rga_rootcauses_t rc;
    rga_error_t err;
    assert_int_equal(rga_rootcauses_build(r, NULL, &rc, &err), RGA_OK);
    return rc;
}

static size_t
ti(const rga_report_t *r, int64_t seq)
{
    long i = rga_report_thread_index(r, seq);
    assert_true(i >= 0);
    return (size_t)i;
}

/* The explained time of roots of this kind, cause and thread seq (0: none). */
static int64_t
root_ns(const rga_rootcauses_t *rc, int kind, int cause, int64_t seq)
{
    int64_t thread = seq ? (int64_t)ti(rc->report, seq) : -1;
    for (size_t i = 0; i < rc->n_roots; i++)
        if (rc->roots[i].root.kind == kind && rc->roots[i].root.thread == thread &&
            (cause < 0 || rc->roots[i].root.cause == cause))
            return rc->roots[i].ns;
    return 0;
}

static int64_t
root_chain_ns(const rga_rootcauses_t *rc, int kind, int64_t seq)
{
    for (size_t i = 0; i < rc->n_roots; i++)
        if (rc->roots[i].root.kind == kind && rc->roots[i].root.thread == (int64_t)ti(rc->report, seq))
            return rc->roots[i].chain_ns;
    return 0;
}

/* A waiter's explained wait by root (kind, thread seq; any cause). */
static int64_t
flow_ns(const rga_rootcauses_t *rc, int64_t waiter, int kind, int64_t seq)
{
    int64_t thread = seq ? (int64_t)ti(rc->report, seq) : -1, sum = 0;
    for (size_t i = 0; i < rc->n_flows; i++)
        if (rc->flows[i].key == waiter && rc->flows[i].root.kind == kind && rc->flows[i].root.thread == thread)
            sum += rc->flows[i].ns;
    return sum;
}

/* Conservation: every waiter's flows sum to its waited intervals, every
 * label set's shares to its intervals, the roots to the flows, and every
 * thread's walk over [first start, last end) covers it piece by piece. */
typedef struct cover {
    int64_t at, total;
    bool ordered;
} cover_t;

static void
on_cover(const rga_rc_piece_t *p, void *arg)
{
    cover_t *c = arg;
    if (p->start_ns != c->at || p->end_ns <= p->start_ns)
        c->ordered = false;
    c->at = p->end_ns;
    c->total += p->end_ns - p->start_ns;
}

static void
check_laws(const rga_report_t *r)
{
    rga_rootcauses_t rc = build(r);
    int64_t *waited = calloc(r->n_threads + 1, sizeof(int64_t)), *flows = calloc(r->n_threads + 1, sizeof(int64_t));
    assert_non_null(waited);
    assert_non_null(flows);
    for (size_t i = 0; i < r->n_intervals; i++)
        if (rga_rc_is_wait(&r->intervals[i]))
            waited[r->intervals[i].thread_index] += r->intervals[i].end_ns - r->intervals[i].start_ns;
    int64_t sum_flows = 0, sum_roots = 0;
    for (size_t i = 0; i < rc.n_flows; i++) {
        flows[ti(r, rc.flows[i].key)] += rc.flows[i].ns;
        sum_flows += rc.flows[i].ns;
    }
    for (size_t t = 0; t < r->n_threads; t++)
        if (waited[t] != flows[t])
            fail_msg("thread #%lld waited %lld ns, its roots sum to %lld", (long long)r->threads[t].seq,
                     (long long)waited[t], (long long)flows[t]);
    for (size_t i = 0; i < rc.n_roots; i++)
        sum_roots += rc.roots[i].ns;
    assert_int_equal(sum_roots, sum_flows);
    assert_int_equal(rc.waited_ns, sum_flows);
    for (size_t l = 0; l < rc.n_labels; l++) {
        int64_t time = 0, shares = 0;
        for (size_t i = 0; i < r->n_intervals; i++)
            if (r->intervals[i].label_set == rc.labels[l].label_set)
                time += r->intervals[i].end_ns - r->intervals[i].start_ns;
        for (size_t k = 0; k < rc.labels[l].n; k++)
            shares += rc.label_shares[rc.labels[l].first + k].ns;
        assert_int_equal(rc.labels[l].time_ns, time);
        assert_int_equal(shares, time);
    }
    rga_rc_index_t *ix;
    rga_error_t err;
    assert_int_equal(rga_rc_index_build(r, &ix, &err), RGA_OK);
    for (size_t t = 0; t < r->n_threads; t++) {
        size_t n;
        const size_t *list = rga_rc_thread_intervals(ix, t, &n);
        if (n == 0)
            continue;
        int64_t a = r->intervals[list[0]].start_ns, b = r->intervals[list[n - 1]].end_ns;
        cover_t c = {a, 0, true};
        rga_rc_explain(ix, t, a, b, on_cover, &c);
        assert_true(c.ordered);
        assert_int_equal(c.at, b);
        assert_int_equal(c.total, b - a);
    }
    rga_rc_index_free(ix);
    free(waited);
    free(flows);
    rga_rootcauses_free(&rc);
}

/* One holder sleeps inside the lock for 190 ms; three waiters queue behind
 * it and Ruby wakes them one at a time, each by the one before. */
static const rga_test_thread_t convoy_threads[] = {{1, "holder", 1}, {2, "w0", 1}, {3, "w1", 1}, {4, "w2", 1}};
static const rga_test_interval_t convoy[] = {
    {1, RUN, 0, 10, 0, NULL, 0},      {2, RUN, 10, 11, 0, NULL, 0},     {1, BLK, 10, 200, 0, "sleep", 0},
    {2, BLK, 11, 200, 0, "mutex", 1}, {3, RUN, 11, 12, 0, NULL, 0},     {3, BLK, 12, 206, 0, "mutex", 2},
    {4, RUN, 12, 13, 0, NULL, 0},     {4, BLK, 13, 207, 0, "mutex", 3}, {1, RUN, 200, 205, 0, NULL, 0},
    {2, WAIT, 200, 205, 0, NULL, 0},  {2, RUN, 205, 206, 0, NULL, 0},   {3, RUN, 206, 207, 0, NULL, 0},
    {4, RUN, 207, 208, 0, NULL, 0},
};

static void
test_convoy_three_deep(void **state)
{
    (void)state;
    rga_report_t *r = timeline(convoy_threads, 4, convoy, sizeof(convoy) / sizeof(convoy[0]), NULL);
    rga_rootcauses_t rc = build(r);
    /* w0 189 + 5, w1 188 + 5 + 1, w2 187 + 5 + 1 + 1 (ms): the holder's sleep
     * explains 564 of the 582 ms, its running after the sleep 15. */
    assert_int_equal(rc.waited_ns, 582 * MS);
    assert_int_equal(root_ns(&rc, RGA_RC_BLOCKED, RGA_CAUSE_SLEEP, 1), 564 * MS);
    assert_int_equal(root_ns(&rc, RGA_RC_RUNNING, -1, 1), 15 * MS);
    assert_int_equal(root_ns(&rc, RGA_RC_RUNNING, -1, 2), 2 * MS);
    assert_int_equal(root_ns(&rc, RGA_RC_RUNNING, -1, 3), 1 * MS);
    /* The direct view charges w1's wait to w0 and w2's to w1; the chains
     * say the holder, reached through them for 188 + 187 ms of sleep and
     * 5 + 5 ms of running. */
    assert_int_equal(root_chain_ns(&rc, RGA_RC_BLOCKED, 1), (188 + 187) * MS);
    assert_int_equal(root_chain_ns(&rc, RGA_RC_RUNNING, 1), 10 * MS);
    assert_int_equal(flow_ns(&rc, 4, RGA_RC_BLOCKED, 1), 187 * MS);
    assert_int_equal(flow_ns(&rc, 4, RGA_RC_RUNNING, 3), 1 * MS);
    /* The roots are largest first: the holder's sleep. */
    assert_int_equal(rc.roots[0].root.kind, RGA_RC_BLOCKED);
    assert_int_equal(rc.roots[0].root.thread, (int64_t)ti(r, 1));
    assert_int_equal(rc.cycles + rc.depth_cuts, 0);
    check_laws(r);
    rga_rootcauses_free(&rc);
    rga_report_free(r);
}

/* The path of w2 through w1 and w0 to the holder: three hops. */
typedef struct hops_seen {
    size_t max_hops;
    int64_t at_150_root;
    int64_t at_150_hops[4];
} hops_seen_t;

static void
on_hops(const rga_rc_piece_t *p, void *arg)
{
    hops_seen_t *h = arg;
    if (p->n_hops > h->max_hops)
        h->max_hops = p->n_hops;
    if (p->start_ns <= 150 * MS && p->end_ns > 150 * MS) {
        h->at_150_root = p->root.thread;
        for (size_t i = 0; i < p->n_hops && i < 4; i++)
            h->at_150_hops[i] = p->hops[i].thread;
    }
}

static void
test_convoy_chain_hops(void **state)
{
    (void)state;
    rga_report_t *r = timeline(convoy_threads, 4, convoy, sizeof(convoy) / sizeof(convoy[0]), NULL);
    rga_rc_index_t *ix;
    rga_error_t err;
    assert_int_equal(rga_rc_index_build(r, &ix, &err), RGA_OK);
    hops_seen_t h = {0, -2, {-1, -1, -1, -1}};
    rga_rc_explain(ix, ti(r, 4), 0, 208 * MS, on_hops, &h);
    assert_int_equal(h.max_hops, 3);
    assert_int_equal(h.at_150_root, (int64_t)ti(r, 1));
    assert_int_equal(h.at_150_hops[0], (int64_t)ti(r, 4));
    assert_int_equal(h.at_150_hops[1], (int64_t)ti(r, 3));
    assert_int_equal(h.at_150_hops[2], (int64_t)ti(r, 2));
    rga_rc_index_free(ix);
    rga_report_free(r);
}

/* A request holds a Mutex and waits for the GVL that a hog holds; a waiter
 * waits for the Mutex meanwhile. */
static void
test_lock_holder_behind_a_hog(void **state)
{
    (void)state;
    static const rga_test_thread_t th[] = {{1, "request", 1}, {2, "hog", 1}, {3, "waiter", 1}};
    static const rga_test_interval_t iv[] = {
        {3, RUN, 0, 2, 0, NULL, 0},     {1, RUN, 2, 10, 1, NULL, 0},    {3, BLK, 2, 120, 0, "mutex", 1},
        {2, RUN, 10, 110, 0, NULL, 0},  {1, WAIT, 10, 110, 1, NULL, 0}, {1, RUN, 110, 120, 1, NULL, 0},
        {3, RUN, 120, 125, 0, NULL, 0},
    };
    rga_report_t *r = timeline(th, 3, iv, sizeof(iv) / sizeof(iv[0]), NULL);
    rga_rootcauses_t rc = build(r);
    assert_int_equal(flow_ns(&rc, 3, RGA_RC_RUNNING, 2), 100 * MS);
    assert_int_equal(flow_ns(&rc, 3, RGA_RC_RUNNING, 1), 18 * MS);
    /* The request's own GVL wait is the hog's too, directly. */
    assert_int_equal(flow_ns(&rc, 1, RGA_RC_RUNNING, 2), 100 * MS);
    assert_int_equal(root_ns(&rc, RGA_RC_RUNNING, -1, 2), 200 * MS);
    assert_int_equal(root_chain_ns(&rc, RGA_RC_RUNNING, 2), 100 * MS);
    /* The request's label set's time: its own running, and the hog. */
    const rga_rc_label_t *req = NULL;
    for (size_t l = 0; l < rc.n_labels; l++)
        if (rc.labels[l].label_set == 1)
            req = &rc.labels[l];
    assert_non_null(req);
    assert_int_equal(req->time_ns, 118 * MS);
    assert_int_equal(rc.label_shares[req->first].root.thread, (int64_t)ti(r, 2));
    assert_int_equal(rc.label_shares[req->first].ns, 100 * MS);
    assert_false(rc.label_shares[req->first].own);
    assert_true(rc.label_shares[req->first + 1].own);
    check_laws(r);
    rga_rootcauses_free(&rc);
    rga_report_free(r);
}

/* main joins a worker that pops from a Queue a feeder pushes to late. */
static void
test_join_on_a_queue_fed_late(void **state)
{
    (void)state;
    static const rga_test_thread_t th[] = {{1, "main", 1}, {2, "worker", 1}, {3, "feeder", 1}};
    static const rga_test_interval_t iv[] = {
        {1, RUN, 0, 5, 0, NULL, 0},     {2, RUN, 5, 6, 0, NULL, 0},      {1, BLK, 5, 310, 0, "join", 2},
        {3, RUN, 6, 8, 0, NULL, 0},     {2, BLK, 6, 300, 0, "queue", 3}, {3, BLK, 8, 299, 0, "sleep", 0},
        {3, RUN, 299, 300, 0, NULL, 0}, {2, WAIT, 300, 301, 0, NULL, 0}, {3, BLK, 300, 400, 0, "io", 0},
        {2, RUN, 301, 310, 0, NULL, 0}, {1, RUN, 310, 311, 0, NULL, 0},
    };
    rga_report_t *r = timeline(th, 3, iv, sizeof(iv) / sizeof(iv[0]), NULL);
    rga_rootcauses_t rc = build(r);
    /* main's 305 ms: the feeder's sleep 291 (two hops), its running 2 + 1,
     * the worker's running 9 + 1 and the hand-off... none: 6..8 the feeder ran. */
    assert_int_equal(flow_ns(&rc, 1, RGA_RC_BLOCKED, 3), 291 * MS);
    assert_int_equal(flow_ns(&rc, 1, RGA_RC_RUNNING, 3), 3 * MS);
    assert_int_equal(flow_ns(&rc, 1, RGA_RC_RUNNING, 2), 10 * MS);
    assert_int_equal(flow_ns(&rc, 1, RGA_RC_HANDOFF, 0), 1 * MS);
    check_laws(r);
    rga_rootcauses_free(&rc);
    rga_report_free(r);
}

/* Two threads each "released" by the other at once: impossible in a real
 * report, so the chain stops where it meets itself and counts it. */
static void
test_cycle_is_cut_and_counted(void **state)
{
    (void)state;
    static const rga_test_thread_t th[] = {{1, "a", 1}, {2, "b", 1}};
    static const rga_test_interval_t iv[] = {
        {1, BLK, 0, 100, 0, "mutex", 2},
        {2, BLK, 0, 100, 0, "mutex", 1},
    };
    rga_report_t *r = timeline(th, 2, iv, 2, NULL);
    rga_rootcauses_t rc = build(r);
    /* a → b → a: cut at a (and b → a → b at b). */
    assert_int_equal(flow_ns(&rc, 1, RGA_RC_CYCLE, 1), 100 * MS);
    assert_int_equal(flow_ns(&rc, 2, RGA_RC_CYCLE, 2), 100 * MS);
    assert_int_equal(rc.cycles, 2);
    assert_int_equal(rc.cycle_ns, 200 * MS);
    check_laws(r);
    rga_rootcauses_free(&rc);
    rga_report_free(r);
}

/* A Queue wait whose releaser is not known (or is the waiter itself) stops
 * there, said; a join on that thread goes through it to the same place. */
static void
test_unknown_releaser_is_said(void **state)
{
    (void)state;
    static const rga_test_thread_t th[] = {{1, "main", 1}, {2, "consumer", 1}};
    static const rga_test_interval_t iv[] = {
        {1, RUN, 0, 1, 0, NULL, 0},     {2, RUN, 1, 2, 0, NULL, 0},      {1, BLK, 1, 100, 0, "join", 2},
        {2, BLK, 2, 50, 0, "queue", 0}, {2, BLK, 50, 99, 0, "queue", 2}, /* named as its own releaser: no other thread woke it */
        {2, RUN, 99, 100, 0, NULL, 0},
    };
    rga_report_t *r = timeline(th, 2, iv, sizeof(iv) / sizeof(iv[0]), NULL);
    rga_rootcauses_t rc = build(r);
    assert_int_equal(flow_ns(&rc, 2, RGA_RC_NO_RELEASER, 2), 97 * MS);
    assert_int_equal(rc.cycles, 0);
    assert_int_equal(flow_ns(&rc, 1, RGA_RC_NO_RELEASER, 2), 97 * MS);
    assert_int_equal(flow_ns(&rc, 1, RGA_RC_RUNNING, 2), 2 * MS);
    for (size_t i = 0; i < rc.n_roots; i++)
        if (rc.roots[i].root.kind == RGA_RC_NO_RELEASER)
            assert_int_equal(rc.roots[i].root.cause, RGA_CAUSE_QUEUE);
    check_laws(r);
    rga_rootcauses_free(&rc);
    rga_report_free(r);
}

/* A thread waiting on another Ractor (Ractor#take) has no releaser: a join
 * on it is cut at the Ractor boundary. GVL waits see holders of their own
 * Ractor only. */
static void
test_cut_at_the_ractor_boundary(void **state)
{
    (void)state;
    static const rga_test_thread_t th[] = {{1, "main", 1}, {2, "taker", 1}, {3, "r2-main", 2}, {4, "r2-wait", 2}};
    static const rga_test_interval_t iv[] = {
        {3, RUN, 0, 50, 0, NULL, 0},  {4, WAIT, 0, 50, 0, NULL, 0},  {1, RUN, 0, 1, 0, NULL, 0},
        {2, RUN, 1, 2, 0, NULL, 0},   {1, BLK, 1, 80, 0, "join", 2}, {2, BLK, 2, 79, 0, "ractor", 0},
        {4, RUN, 50, 80, 0, NULL, 0}, {2, RUN, 79, 80, 0, NULL, 0},  {1, RUN, 80, 81, 0, NULL, 0},
    };
    rga_report_t *r = timeline(th, 4, iv, sizeof(iv) / sizeof(iv[0]), NULL);
    rga_rootcauses_t rc = build(r);
    assert_int_equal(flow_ns(&rc, 1, RGA_RC_RACTOR, 2), 77 * MS);
    assert_int_equal(flow_ns(&rc, 1, RGA_RC_RUNNING, 2), 2 * MS);
    /* r2-wait waited 50 ms for r2-main, not for main or taker (Ractor 1 ran then too). */
    assert_int_equal(flow_ns(&rc, 4, RGA_RC_RUNNING, 3), 50 * MS);
    assert_int_equal(flow_ns(&rc, 4, RGA_RC_RUNNING, 1), 0);
    char what[64];
    assert_string_equal(rga_rc_root_what(&rc.roots[0].root, what, sizeof(what)), "waiting on another Ractor (cut)");
    check_laws(r);
    rga_rootcauses_free(&rc);
    rga_report_free(r);
}

/* 300 threads each blocked on the next: the chains of the first 43 are cut
 * at 256 hops and counted; the others reach the last thread's running. */
static void
test_depth_bound(void **state)
{
    (void)state;
    enum { N = 300 };
    rga_test_thread_t *th = calloc(N, sizeof(*th));
    rga_test_interval_t *iv = calloc(N, sizeof(*iv));
    for (int i = 0; i < N; i++) {
        th[i] = (rga_test_thread_t){i + 1, "t", 1};
        iv[i] = i + 1 < N ? (rga_test_interval_t){i + 1, BLK, 0, 10, 0, "mutex", i + 2}
                          : (rga_test_interval_t){i + 1, RUN, 0, 10, 0, NULL, 0};
    }
    rga_report_t *r = timeline(th, N, iv, N, NULL);
    rga_rootcauses_t rc = build(r);
    assert_int_equal(rc.depth_cuts, N - 1 - RGA_RC_MAX_DEPTH);
    assert_int_equal(root_ns(&rc, RGA_RC_RUNNING, -1, N), (int64_t)RGA_RC_MAX_DEPTH * 10 * MS);
    assert_int_equal(flow_ns(&rc, 1, RGA_RC_DEPTH, RGA_RC_MAX_DEPTH + 2), 10 * MS);
    check_laws(r);
    rga_rootcauses_free(&rc);
    rga_report_free(r);
    free(th);
    free(iv);
}

/* The holder's stacks: its samples in the root's state, cause and label set
 * (the Mutex wait it also had is not its sleep). */
static const char convoy_stacks[] =
    "\"frames\":[[\"<GVL>\",\"[GVL blocked]\"],[\"<GVL>\",\"[GVL wait]\"],[\"<GC>\",\"[GC marking]\"],"
    "[\"<GC>\",\"[GC sweeping]\"],[\"<cfunc>\",\"Kernel#sleep\"],[\"app.rb:3\",\"Object#hold\"],"
    "[\"<cfunc>\",\"Thread::Mutex#synchronize\"],[\"app.rb:9\",\"Object#compute\"]],"
    "\"stacks\":[[0,4,5],[0,6,5],[7,5],[0,6,7]],"
    "\"samples\":[[0,150000000,1,0],[1,900000000,1,0],[2,40000000,1,0],[3,10000000,1,0]],"
    "\"blocked_methods\":[{\"thread\":1,\"cause\":\"sleep\",\"method\":\"Kernel#sleep\",\"blocked_ns\":1,"
    "\"count\":1},{\"thread\":1,\"cause\":\"mutex\",\"method\":\"Thread::Mutex#synchronize\",\"blocked_ns\":1,"
    "\"count\":1}],";

static void
test_root_stacks_match_the_state(void **state)
{
    (void)state;
    rga_report_t *r = timeline(convoy_threads, 4, convoy, sizeof(convoy) / sizeof(convoy[0]), convoy_stacks);
    rga_rootcauses_t rc = build(r);
    rga_rc_stacks_t *s;
    rga_error_t err;
    assert_int_equal(rga_rc_stacks_build(r, &s, &err), RGA_OK);
    rga_rc_stack_t top[4];
    rga_rc_root_t sleep = {RGA_RC_BLOCKED, RGA_CAUSE_SLEEP, (int32_t)ti(r, 1), -1};
    assert_int_equal(rga_rc_top_stacks(&rc.parts, s, &sleep, top, 4), 1);
    assert_int_equal(top[0].stack, 0); /* Kernel#sleep < Object#hold, not the heavier Mutex wait */
    assert_int_equal(top[0].ns, 564 * MS);
    rga_rc_root_t running = {RGA_RC_RUNNING, 0, (int32_t)ti(r, 1), -1};
    assert_int_equal(rga_rc_top_stacks(&rc.parts, s, &running, top, 4), 1);
    assert_int_equal(top[0].stack, 2);
    assert_int_equal(top[0].ns, 15 * MS);
    /* No sample of w0 running: no stack, said by an empty list. */
    rga_rc_root_t w0 = {RGA_RC_RUNNING, 0, (int32_t)ti(r, 2), -1};
    assert_int_equal(rga_rc_top_stacks(&rc.parts, s, &w0, top, 4), 0);
    rga_rc_stacks_free(s);
    rga_rootcauses_free(&rc);
    rga_report_free(r);
}

/* Split over two stacks of weights 3:1, the parts sum exactly. */
static void
add_part(int64_t stack, int64_t ns, void *arg)
{
    int64_t *parts = arg;
    parts[stack] += ns;
}

static void
test_split_is_exact(void **state)
{
    (void)state;
    static const char extra[] =
        "\"frames\":[[\"<GVL>\",\"[GVL blocked]\"],[\"<GVL>\",\"[GVL wait]\"],[\"<GC>\",\"[GC marking]\"],"
        "[\"<GC>\",\"[GC sweeping]\"],[\"a.rb:1\",\"A#x\"],[\"a.rb:2\",\"A#y\"]],"
        "\"stacks\":[[4],[5]],\"samples\":[[0,3,1,0],[1,1,1,0],[1,5,1,1]],";
    static const rga_test_thread_t th[] = {{1, "t", 1}};
    static const rga_test_interval_t iv[] = {{1, RUN, 0, 10, 0, NULL, 0}, {1, RUN, 10, 12, 1, NULL, 0}};
    rga_report_t *r = timeline(th, 1, iv, 2, extra);
    rga_rc_stacks_t *s;
    rga_error_t err;
    assert_int_equal(rga_rc_stacks_build(r, &s, &err), RGA_OK);
    int64_t parts[2] = {0, 0};
    rga_rc_root_t root = {RGA_RC_RUNNING, 0, 0, 0};
    assert_true(rga_rc_stacks_split(s, &root, 1000001, add_part, parts));
    assert_int_equal(parts[0] + parts[1], 1000001);
    assert_int_equal(parts[1], 250000);
    /* Label set 1 has its own sample; label set 7 none: all of them. */
    root.label_set = 7;
    parts[0] = parts[1] = 0;
    assert_true(rga_rc_stacks_split(s, &root, 900, add_part, parts));
    assert_int_equal(parts[0], 300);
    assert_int_equal(parts[1], 600);
    root.kind = RGA_RC_HANDOFF;
    assert_false(rga_rc_stacks_split(s, &root, 900, add_part, parts));
    rga_rc_stacks_free(s);
    rga_report_free(r);
}

/* No timeline, nothing to follow. */
static void
test_no_timeline(void **state)
{
    (void)state;
    char *text = rga_test_replace(rga_test_small_report, "\"intervals\":[", "\"intervals\":[],\"x\":[");
    rga_report_t *r = rga_test_load(text);
    free(text);
    rga_rootcauses_t rc = build(r);
    assert_false(rc.available);
    assert_int_equal(rc.n_roots + rc.n_flows + rc.n_labels, 0);
    rga_rootcauses_free(&rc);
    rga_report_free(r);
}

/* The laws on every report of a directory that loads; how many did. */
static size_t
laws_in(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    size_t checked = 0;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || (strcmp(e->d_name + n - 5, ".json") != 0 && strcmp(e->d_name + n - 3, ".gz") != 0))
            continue;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        rga_report_t *r = NULL;
        rga_error_t err;
        if (rga_report_load_file(path, &r, &err) != RGA_OK)
            continue;
        check_laws(r);
        rga_report_free(r);
        checked++;
    }
    closedir(d);
    return checked;
}

/* The laws on every fixture and seed report that loads, the small report
 * and generated ones. */
static void
test_laws_on_every_report(void **state)
{
    (void)state;
    assert_true(laws_in(RGA_FIXTURES) >= 1);
    assert_true(laws_in(RGA_FIXTURES "/../../fuzz/corpus") >= 5);
    rga_report_t *r = rga_test_load(rga_test_small_report);
    check_laws(r);
    rga_report_free(r);
    r = rga_test_load_generated("--threads 12 --ractors 2 --labels 4 --slices 3000 --seed 5 --causes");
    check_laws(r);
    rga_report_free(r);
    r = rga_test_load_generated("--threads 5 --ractors 1 --labels 2 --slices 2000 --seed 9");
    check_laws(r);
    rga_report_free(r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_convoy_three_deep),
        cmocka_unit_test(test_convoy_chain_hops),
        cmocka_unit_test(test_lock_holder_behind_a_hog),
        cmocka_unit_test(test_join_on_a_queue_fed_late),
        cmocka_unit_test(test_cycle_is_cut_and_counted),
        cmocka_unit_test(test_unknown_releaser_is_said),
        cmocka_unit_test(test_cut_at_the_ractor_boundary),
        cmocka_unit_test(test_depth_bound),
        cmocka_unit_test(test_root_stacks_match_the_state),
        cmocka_unit_test(test_split_is_exact),
        cmocka_unit_test(test_no_timeline),
        cmocka_unit_test(test_laws_on_every_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
