/* waitgraph.c — building the wait graph model (see waitgraph.h).
 *
 * Nodes are found through per-kind index tables (thread index, label set
 * index, Ractor slot) and edges through a small open-addressing table, so a
 * report with thousands of threads and edges builds in linear time. Does not
 * talk to Graphviz.
 */
#include "waitgraph.h"
#include "grow_array.h"
#include "rootcause.h"
#include "summary.h"

#include <stdlib.h>
#include <string.h>

bool
rga_group_by_parse(const char *text, rga_group_by_t *out)
{
    if (!text || strcmp(text, "thread") == 0)
        *out = RGA_BY_THREAD;
    else if (strcmp(text, "label") == 0 || strcmp(text, "labels") == 0)
        *out = RGA_BY_LABEL;
    else if (strcmp(text, "ractor") == 0)
        *out = RGA_BY_RACTOR;
    else
        return false;
    return true;
}

bool
rga_edge_kinds_parse(const char *text, rga_edge_kinds_t *out)
{
    if (!text || strcmp(text, "gvl") == 0)
        *out = RGA_EDGES_GVL;
    else if (strcmp(text, "blocked") == 0)
        *out = RGA_EDGES_BLOCKED;
    else if (strcmp(text, "all") == 0)
        *out = RGA_EDGES_ALL;
    else
        return false;
    return true;
}

long
rga_waitgraph_find(const rga_waitgraph_t *g, rga_node_kind_t kind, int64_t key)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].kind == kind && g->nodes[i].key == key)
            return (long)i;
    return -1;
}

typedef struct builder {
    rga_waitgraph_t *g;
    size_t cap_nodes, cap_edges;
    long *thread_node;             /* by thread index */
    long *label_node;              /* by label set index (+1 slot for the implied empty set) */
    long *ractor_node;             /* by Ractor slot */
    long special[3];               /* GC, hand-off, unknown */
    rperf_hash_index_t edge_index; /* (from, to, cause, root) -> edge */
} builder_t;

/* The slot of the index tables that (kind, key) uses. */
static long *
node_slot(builder_t *b, const rga_report_t *r, rga_node_kind_t kind, int64_t key)
{
    switch (kind) {
    case RGA_NODE_THREAD: {
        long ti = rga_report_thread_index(r, key);
        return ti >= 0 ? &b->thread_node[ti] : NULL;
    }
    case RGA_NODE_LABEL_SET: {
        long li = rga_report_label_set_index(r, key);
        return &b->label_node[li >= 0 ? (size_t)li : r->n_label_sets];
    }
    case RGA_NODE_RACTOR:
        for (size_t i = 0; i < r->n_ractors; i++)
            if (r->ractors[i].id == key)
                return &b->ractor_node[i];
        return NULL;
    case RGA_NODE_GC: return &b->special[0];
    case RGA_NODE_HANDOFF: return &b->special[1];
    case RGA_NODE_UNKNOWN: return &b->special[2];
    }
    return NULL;
}

static long
node_for(builder_t *b, const rga_report_t *r, rga_node_kind_t kind, int64_t key, int64_t ractor)
{
    long *slot = node_slot(b, r, kind, key);
    long i = slot ? *slot : rga_waitgraph_find(b->g, kind, key);
    if (i >= 0) {
        if (b->g->nodes[i].ractor != ractor)
            b->g->nodes[i].ractor = 0;
        return i;
    }
    if (b->g->n_nodes == b->cap_nodes) {
        size_t cap = b->cap_nodes ? b->cap_nodes * 2 : 16;
        rga_wg_node_t *p = realloc(b->g->nodes, cap * sizeof(*p));
        if (!p)
            return -1;
        b->g->nodes = p;
        b->cap_nodes = cap;
    }
    if (slot)
        *slot = (long)b->g->n_nodes;
    rga_wg_node_t *n = &b->g->nodes[b->g->n_nodes];
    memset(n, 0, sizeof(*n));
    n->kind = kind;
    n->key = key;
    n->ractor = ractor;
    switch (kind) {
    case RGA_NODE_THREAD: {
        long ti = rga_report_thread_index(r, key);
        const char *name = ti >= 0 ? r->threads[ti].name : "";
        if (name[0])
            snprintf(n->label, sizeof(n->label), "%s #%lld", name, (long long)key);
        else
            snprintf(n->label, sizeof(n->label), "thread #%lld", (long long)key);
        break;
    }
    case RGA_NODE_LABEL_SET: rga_label_set_text(r, key, n->label, sizeof(n->label)); break;
    case RGA_NODE_RACTOR: rga_ractor_name(r, key, n->label, sizeof(n->label)); break;
    case RGA_NODE_GC: snprintf(n->label, sizeof(n->label), "GC"); break;
    case RGA_NODE_HANDOFF: snprintf(n->label, sizeof(n->label), "hand-off"); break;
    case RGA_NODE_UNKNOWN: snprintf(n->label, sizeof(n->label), "unknown"); break;
    }
    return (long)b->g->n_nodes++;
}

static void
add_states(rga_wg_node_t *n, const int64_t *state_ns)
{
    for (int k = 0; k < RGA_STATE_COUNT; k++)
        n->state_ns[k] += state_ns[k];
}

/* Fills state_ns of the nodes made so far from the index tables, in one
 * pass over threads (thread and Ractor nodes) and one over label_totals
 * (label set nodes): linear however many nodes there are. */
static void
add_node_totals(builder_t *b, const rga_report_t *r)
{
    for (size_t t = 0; t < r->n_threads; t++) {
        const rga_thread_t *th = &r->threads[t];
        if (b->thread_node[t] >= 0)
            add_states(&b->g->nodes[b->thread_node[t]], th->state_ns);
        if (b->g->by == RGA_BY_RACTOR) {
            long *slot = node_slot(b, r, RGA_NODE_RACTOR, th->ractor);
            if (slot && *slot >= 0)
                add_states(&b->g->nodes[*slot], th->state_ns);
        }
    }
    if (b->g->by != RGA_BY_LABEL)
        return;
    for (size_t i = 0; i < r->n_label_totals; i++) {
        const rga_label_total_t *lt = &r->label_totals[i];
        long *slot = node_slot(b, r, RGA_NODE_LABEL_SET, lt->label_set);
        if (*slot >= 0)
            add_states(&b->g->nodes[*slot], lt->state_ns);
    }
}

static uint32_t
edge_hash(const rga_wg_edge_t *k)
{
    uint32_t h = rperf_hash_word(RPERF_HASH_SEED, k->from);
    h = rperf_hash_word(h, k->to);
    return rperf_hash_word(h, ((uint64_t)(uint32_t)k->cause << 32) | (uint32_t)k->root);
}

static int
same_edge(const void *table, const void *key, uint32_t id)
{
    const rga_wg_edge_t *e = &((const builder_t *)table)->g->edges[id];
    const rga_wg_edge_t *k = key;
    return e->from == k->from && e->to == k->to && e->cause == k->cause && e->root == k->root;
}

static int
add_edge(builder_t *b, size_t from, size_t to, int cause, int root, int64_t wait_ns, int64_t count)
{
    rga_wg_edge_t k = {from, to, wait_ns, count, cause, root};
    uint32_t h = edge_hash(&k);
    size_t slot;
    long id = rperf_hash_index_upsert(&b->edge_index, h, same_edge, b, &k, &slot);
    if (id >= 0) {
        b->g->edges[id].wait_ns += wait_ns;
        b->g->edges[id].count += count;
        return 0;
    }
    if (id < -1 ||
        rperf_grow_array((void **)&b->g->edges, &b->cap_edges, b->g->n_edges + 1, sizeof(*b->g->edges), 64) < 0)
        return -1;
    rperf_hash_index_put(&b->edge_index, slot, h, (uint32_t)b->g->n_edges);
    b->g->edges[b->g->n_edges++] = k;
    return 0;
}

static int
cmp_edge(const void *a, const void *b)
{
    const rga_wg_edge_t *x = a, *y = b;
    if ((x->cause < 0) != (y->cause < 0)) /* GVL edges first */
        return x->cause < 0 ? -1 : 1;
    if (x->wait_ns != y->wait_ns)
        return x->wait_ns < y->wait_ns ? 1 : -1;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    if (x->to != y->to)
        return x->to < y->to ? -1 : 1;
    if (x->cause != y->cause)
        return x->cause - y->cause;
    return x->root - y->root;
}

/* The node a release edge end stands for under the grouping. */
static long
release_node(builder_t *b, const rga_report_t *r, rga_group_by_t by, int64_t seq, int64_t label_set, int64_t ractor)
{
    if (by == RGA_BY_LABEL)
        return node_for(b, r, RGA_NODE_LABEL_SET, label_set, ractor);
    if (by == RGA_BY_RACTOR)
        return node_for(b, r, RGA_NODE_RACTOR, ractor, ractor);
    return node_for(b, r, RGA_NODE_THREAD, seq, ractor);
}

/* Release edges that pass the filter (by waiter or by releaser). 0, or -1
 * when out of memory. */
static int
add_release_edges(builder_t *b, const rga_report_t *r, const rga_filter_t *filter, rga_group_by_t by)
{
    rga_waitgraph_t *g = b->g;
    for (size_t i = 0; i < r->n_blocked_edges; i++) {
        const rga_blocked_edge_t *e = &r->blocked_edges[i];
        bool waiter_ok = rga_filter_thread(filter, r, e->waiter) &&
                         rga_filter_label_set(filter, r, e->waiter_label_set);
        bool releaser_ok = rga_filter_thread(filter, r, e->releaser) &&
                           rga_filter_label_set(filter, r, e->releaser_label_set);
        if (!waiter_ok && !releaser_ok)
            continue;
        long from = release_node(b, r, by, e->waiter, e->waiter_label_set, e->ractor);
        long to = from < 0 ? -1 : release_node(b, r, by, e->releaser, e->releaser_label_set, e->ractor);
        if (to < 0 || add_edge(b, (size_t)from, (size_t)to, e->cause, -1, e->blocked_ns, e->count) != 0)
            return -1;
        g->nodes[from].blocked_ns += e->blocked_ns;
        g->nodes[to].released_ns += e->blocked_ns;
        g->total_blocked_ns += e->blocked_ns;
    }
    return 0;
}

rga_status_t
rga_waitgraph_build(const rga_report_t *r, const rga_filter_t *filter, rga_group_by_t by, double min_share,
                    rga_waitgraph_t *g, rga_error_t *err)
{
    return rga_waitgraph_build_kinds(r, filter, by, RGA_EDGES_GVL, min_share, g, err);
}

/* The index tables of an empty graph. 0, or -1 when out of memory. */
static int
builder_open(builder_t *b, const rga_report_t *r, rga_waitgraph_t *g, rga_group_by_t by, rga_edge_kinds_t kinds)
{
    memset(g, 0, sizeof(*g));
    g->by = by;
    g->report = r;
    g->kinds = kinds;
    memset(b, 0, sizeof(*b));
    b->g = g;
    b->thread_node = malloc((r->n_threads + 1) * sizeof(long));
    b->label_node = malloc((r->n_label_sets + 1) * sizeof(long));
    b->ractor_node = malloc((r->n_ractors + 1) * sizeof(long));
    if (!b->thread_node || !b->label_node || !b->ractor_node)
        return -1;
    for (size_t i = 0; i <= r->n_threads; i++)
        b->thread_node[i] = -1;
    for (size_t i = 0; i <= r->n_label_sets; i++)
        b->label_node[i] = -1;
    for (size_t i = 0; i <= r->n_ractors; i++)
        b->ractor_node[i] = -1;
    for (size_t i = 0; i < 3; i++)
        b->special[i] = -1;
    return 0;
}

static void
builder_close(builder_t *b)
{
    free(b->thread_node);
    free(b->label_node);
    free(b->ractor_node);
    rperf_hash_index_free(&b->edge_index);
}

static int prune(builder_t *b, const rga_report_t *r, bool story, double min_share);

rga_status_t
rga_waitgraph_build_kinds(const rga_report_t *r, const rga_filter_t *filter, rga_group_by_t by,
                          rga_edge_kinds_t kinds, double min_share, rga_waitgraph_t *g, rga_error_t *err)
{
    bool story = min_share < 0.0;
    if (!story && !(min_share <= 1.0))
        return rga_error_set(err, RGA_ERR_ARGUMENT, "--min-share must be between 0 and 1");
    rga_status_t st = RGA_OK;
    builder_t b;
    if (builder_open(&b, r, g, by, kinds) != 0)
        goto nomem;
    for (size_t i = 0; i < r->n_edges && (kinds & RGA_EDGES_GVL); i++) {
        const rga_edge_t *e = &r->edges[i];
        bool holder_is_thread = e->holder_kind == RGA_HOLDER_THREAD;
        bool waiter_ok = rga_filter_thread(filter, r, e->waiter) &&
                         rga_filter_label_set(filter, r, e->waiter_label_set);
        bool holder_ok = holder_is_thread && rga_filter_thread(filter, r, e->holder) &&
                         rga_filter_label_set(filter, r, e->holder_label_set);
        if (!waiter_ok && !holder_ok)
            continue;
        long from, to;
        switch (by) {
        case RGA_BY_LABEL: from = node_for(&b, r, RGA_NODE_LABEL_SET, e->waiter_label_set, e->ractor); break;
        case RGA_BY_RACTOR: from = node_for(&b, r, RGA_NODE_RACTOR, e->ractor, e->ractor); break;
        default: from = node_for(&b, r, RGA_NODE_THREAD, e->waiter, e->ractor);
        }
        if (from < 0)
            goto nomem;
        switch (e->holder_kind) {
        case RGA_HOLDER_GC: to = node_for(&b, r, RGA_NODE_GC, 0, 0); break;
        case RGA_HOLDER_HANDOFF: to = node_for(&b, r, RGA_NODE_HANDOFF, 0, 0); break;
        case RGA_HOLDER_UNKNOWN: to = node_for(&b, r, RGA_NODE_UNKNOWN, 0, 0); break;
        default:
            if (by == RGA_BY_LABEL)
                to = node_for(&b, r, RGA_NODE_LABEL_SET, e->holder_label_set, e->ractor);
            else if (by == RGA_BY_RACTOR)
                to = node_for(&b, r, RGA_NODE_RACTOR, e->ractor, e->ractor);
            else
                to = node_for(&b, r, RGA_NODE_THREAD, e->holder, e->ractor);
        }
        if (to < 0 || add_edge(&b, (size_t)from, (size_t)to, -1, -1, e->wait_ns, e->count) != 0)
            goto nomem;
        g->nodes[from].wait_ns += e->wait_ns;
        g->nodes[to].caused_ns += e->wait_ns;
        g->total_wait_ns += e->wait_ns;
    }
    if ((kinds & RGA_EDGES_BLOCKED) && add_release_edges(&b, r, filter, by) != 0)
        goto nomem;
    if (prune(&b, r, story, min_share) != 0)
        goto nomem;
    goto done;
nomem:
    st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory building the wait graph");
    rga_waitgraph_free(g);
done:
    builder_close(&b);
    return st;
}

/* The node totals, then small edges pruned, each kind against its own
 * total, then nodes left without any edge. 0, or -1 when out of memory. */
static int
prune(builder_t *b, const rga_report_t *r, bool story, double min_share)
{
    rga_waitgraph_t *g = b->g;
    add_node_totals(b, r);
    if (g->n_edges > 1) /* edges is NULL when there are none */
        qsort(g->edges, g->n_edges, sizeof(*g->edges), cmp_edge);
    size_t kept = 0, kept_of_kind[2] = {0, 0};
    int64_t covered_of_kind[2] = {0, 0};
    for (size_t i = 0; i < g->n_edges; i++) {
        rga_wg_edge_t *e = &g->edges[i];
        int kind = e->cause >= 0;
        int64_t total = kind ? g->total_blocked_ns : g->total_wait_ns;
        bool drop;
        if (story) /* largest first: stop once the kept ones tell most of it */
            drop = kept_of_kind[kind] > 0 && (kept_of_kind[kind] >= RGA_WG_STORY_MAX_EDGES ||
                                              (double)covered_of_kind[kind] >= RGA_WG_STORY_COVER * (double)total);
        else
            drop = total > 0 && (double)e->wait_ns < min_share * (double)total;
        if (drop) {
            g->n_pruned++;
            continue;
        }
        covered_of_kind[kind] += e->wait_ns;
        kept_of_kind[kind]++;
        g->edges[kept++] = *e;
    }
    g->n_edges = kept;
    if (g->n_pruned > 0) {
        size_t *remap = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof(size_t));
        bool *used = calloc(g->n_nodes ? g->n_nodes : 1, sizeof(bool));
        if (!remap || !used) {
            free(remap);
            free(used);
            return -1;
        }
        for (size_t i = 0; i < g->n_edges; i++)
            used[g->edges[i].from] = used[g->edges[i].to] = true;
        size_t n = 0;
        for (size_t i = 0; i < g->n_nodes; i++) {
            if (used[i]) {
                remap[i] = n;
                g->nodes[n++] = g->nodes[i];
            }
        }
        g->n_nodes = n;
        for (size_t i = 0; i < g->n_edges; i++) {
            g->edges[i].from = remap[g->edges[i].from];
            g->edges[i].to = remap[g->edges[i].to];
        }
        free(remap);
        free(used);
    }
    return 0;
}

/* One root edge per entry of the root causes' edges table that passes. */
static int
add_root_edges(builder_t *b, const rga_report_t *r, const rga_filter_t *filter, rga_group_by_t by,
               const rga_rootcauses_t *rc)
{
    rga_waitgraph_t *g = b->g;
    for (size_t i = 0; i < rc->edges.n; i++) {
        const int64_t *k = rc->edges.entries[i].key;
        int64_t ns = rc->edges.entries[i].sum[0];
        bool gvl = k[5] < 0;
        if (!(g->kinds & (gvl ? RGA_EDGES_GVL : RGA_EDGES_BLOCKED)))
            continue;
        long wi = rga_report_thread_index(r, k[3]);
        const rga_thread_t *root = k[1] >= 0 ? &r->threads[k[1]] : NULL;
        bool waiter_ok = wi >= 0 && rga_filter_thread_index(filter, (size_t)wi) &&
                         rga_filter_label_set(filter, r, k[4]);
        bool root_ok = root && rga_filter_thread_index(filter, (size_t)k[1]) &&
                       rga_filter_label_set(filter, r, k[2]);
        if (wi < 0 || (!waiter_ok && !root_ok))
            continue;
        int64_t ractor = r->threads[wi].ractor;
        long from = release_node(b, r, by, k[3], k[4], ractor);
        long to = from < 0 ? -1
                  : root   ? release_node(b, r, by, root->seq, k[2], root->ractor)
                           : node_for(b, r, RGA_NODE_HANDOFF, 0, 0);
        if (to < 0 || add_edge(b, (size_t)from, (size_t)to, gvl ? -1 : (int)k[5], (int)k[0], ns, 0) != 0)
            return -1;
        if (gvl) {
            g->nodes[from].wait_ns += ns;
            g->nodes[to].caused_ns += ns;
            g->total_wait_ns += ns;
        } else {
            g->nodes[from].blocked_ns += ns;
            g->nodes[to].released_ns += ns;
            g->total_blocked_ns += ns;
        }
    }
    return 0;
}

rga_status_t
rga_waitgraph_build_roots(const rga_report_t *r, const rga_filter_t *filter, rga_group_by_t by,
                          rga_edge_kinds_t kinds, double min_share, rga_waitgraph_t *g, rga_error_t *err)
{
    bool story = min_share < 0.0;
    if (!story && !(min_share <= 1.0))
        return rga_error_set(err, RGA_ERR_ARGUMENT, "--min-share must be between 0 and 1");
    rga_rootcauses_t rc;
    rga_status_t st = rga_rootcauses_build_flags(r, NULL, RGA_RC_EDGES, &rc, err);
    if (st != RGA_OK)
        return st;
    builder_t b;
    if (builder_open(&b, r, g, by, kinds) != 0 || add_root_edges(&b, r, filter, by, &rc) != 0 ||
        prune(&b, r, story, min_share) != 0) {
        st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory building the wait graph");
        rga_waitgraph_free(g);
    } else {
        g->roots = true;
    }
    builder_close(&b);
    rga_rootcauses_free(&rc);
    return st;
}

void
rga_waitgraph_free(rga_waitgraph_t *g)
{
    free(g->nodes);
    free(g->edges);
    memset(g, 0, sizeof(*g));
}
