/* dot_writer.c — building the cgraph graph of the wait graph and writing DOT.
 *
 * Only cgraph is used here (no layout); render.c lays the same graph out
 * with gvc for SVG/PNG. Styling: a node is filled from white to red by its share of all
 * the wait in the graph, so the worst waiter stands out; edge width grows
 * with the edge's share. Release edges (report minor 1, --edges blocked|all)
 * are dashed, coloured by cause and labelled with cause and time.
 */
#include "dot_writer.h"
#include "rootcause.h"
#include "term_text.h"
#include "units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char graphviz_error[512];

static int
capture_error(char *msg)
{
    size_t n = strlen(graphviz_error);
    snprintf(graphviz_error + n, sizeof(graphviz_error) - n, "%s", msg);
    return 0;
}

void
rga_graphviz_quiet(void)
{
    graphviz_error[0] = '\0';
    agseterrf(capture_error);
    agseterr(AGERR); /* errors go to capture_error, nothing to stderr */
    agreseterrors();
}

const char *
rga_graphviz_last_error(void)
{
    size_t n = strlen(graphviz_error);
    while (n > 0 && (graphviz_error[n - 1] == '\n' || graphviz_error[n - 1] == ' '))
        graphviz_error[--n] = '\0';
    /* Our messages say what failed already; drop Graphviz's own prefix. */
    if (strncmp(graphviz_error, "Error: ", 7) == 0)
        return graphviz_error + 7;
    return graphviz_error;
}

static void
set(void *obj, const char *name, const char *value)
{
    agsafeset(obj, (char *)name, (char *)value, "");
}

/* Report text (a thread name, a label set) as part of a Graphviz label,
 * which is an escString: controls and invalid bytes become \xNN as in the
 * text views, then every backslash is doubled. So a name can neither use
 * \N, \G, \n and the like, nor, written by agwrite (which escapes quotes
 * but not backslashes), turn the quote that ends the string into \" and
 * go on as DOT of its own. Cut at an escape boundary to fit. */
static void
dot_label_text(const char *src, char *dst, size_t size)
{
    char shown[4 * sizeof(((rga_wg_node_t *)0)->label)];
    rga_term_escape(src, shown, sizeof(shown));
    size_t o = 0;
    for (const char *p = shown; *p; p++) {
        size_t need = *p == '\\' ? 2 : 1;
        if (o + need >= size)
            break;
        if (*p == '\\')
            dst[o++] = '\\';
        dst[o++] = *p;
    }
    dst[o] = '\0';
}

static const char *
fill_for(double share)
{
    /* Five steps from white to red. */
    static const char *const fills[] = {"#ffffff", "#fde0dd", "#fcbba1", "#fb6a4a", "#de2d26"};
    int i = share >= 0.5 ? 4 : share >= 0.25 ? 3 : share >= 0.10 ? 2 : share > 0.0 ? 1 : 0;
    return fills[i];
}

/* A release edge's colour: one per releasable cause, grey for any other. */
static const char *
cause_color(int cause)
{
    switch (cause) {
    case RGA_CAUSE_MUTEX: return "#d62728";
    case RGA_CAUSE_CONDVAR: return "#9467bd";
    case RGA_CAUSE_QUEUE: return "#1f77b4";
    case RGA_CAUSE_JOIN: return "#2ca02c";
    default: return "#7f7f7f";
    }
}

/* Dashed, coloured by cause, labelled with cause and time; width by its
 * share of all blocked time that has a releaser. */
static void
style_release_edge(Agedge_t *edge, const rga_wg_edge_t *e, int64_t total_blocked_ns)
{
    double share = total_blocked_ns > 0 ? (double)e->wait_ns / (double)total_blocked_ns : 0.0;
    char time[32], label[128], pen[32], ns[32];
    rga_format_duration(e->wait_ns, time, sizeof(time));
    snprintf(label, sizeof(label), "%s %s (%lld wake%s)", rga_cause_name(e->cause), time, (long long)e->count,
             e->count == 1 ? "" : "s");
    snprintf(pen, sizeof(pen), "%.2f", 1.0 + 5.0 * share);
    snprintf(ns, sizeof(ns), "%lld", (long long)e->wait_ns);
    set(edge, "label", label);
    set(edge, "penwidth", pen);
    set(edge, "style", "dashed");
    set(edge, "color", cause_color(e->cause));
    set(edge, "fontcolor", cause_color(e->cause));
    set(edge, "cause", rga_cause_name(e->cause));
    set(edge, "blocked_ns", ns);
}

/* A root edge (--blame root): labelled with what the root was doing, solid
 * for GVL waits, dashed and coloured by the waiter's cause for blocked
 * waits; width by its share of its kind's total. */
static void
style_root_edge(Agedge_t *edge, const rga_wg_edge_t *e, const rga_waitgraph_t *wg)
{
    int64_t total = e->cause < 0 ? wg->total_wait_ns : wg->total_blocked_ns;
    double share = total > 0 ? (double)e->wait_ns / (double)total : 0.0;
    rga_rc_root_t root = {(uint8_t)(e->root & 0xff), (uint8_t)((e->root >> 8) & 0xff), -1, -1};
    char what[96], time[32], label[192], pen[32], ns[32];
    rga_rc_root_what(&root, what, sizeof(what));
    rga_format_duration(e->wait_ns, time, sizeof(time));
    snprintf(label, sizeof(label), "%s: %s %s (%.0f%%)", e->cause < 0 ? "GVL" : rga_cause_name(e->cause), what, time,
             share * 100.0);
    snprintf(pen, sizeof(pen), "%.2f", 1.0 + 6.0 * share);
    snprintf(ns, sizeof(ns), "%lld", (long long)e->wait_ns);
    set(edge, "label", label);
    set(edge, "penwidth", pen);
    set(edge, "root", rga_rc_kind_name(root.kind));
    set(edge, "root_what", what);
    set(edge, "wait_ns", ns);
    if (e->cause >= 0) {
        set(edge, "style", "dashed");
        set(edge, "color", cause_color(e->cause));
        set(edge, "fontcolor", cause_color(e->cause));
        set(edge, "cause", rga_cause_name(e->cause));
    }
}

Agraph_t *
rga_dot_build(const rga_waitgraph_t *wg, rga_error_t *err)
{
    rga_graphviz_quiet();
    Agraph_t *g = agopen("wait_graph", Agdirected, NULL);
    if (!g) {
        rga_error_set(err, RGA_ERR_RENDER, "cgraph: cannot create a graph: %s", rga_graphviz_last_error());
        return NULL;
    }
    char total[32], buf[512];
    rga_format_duration(wg->total_wait_ns, total, sizeof(total));
    char pruned[96] = "";
    if (wg->n_pruned)
        snprintf(pruned, sizeof(pruned), "; %zu smaller edge%s left out (their time is in the node totals)",
                 wg->n_pruned, wg->n_pruned == 1 ? "" : "s");
    if (wg->roots) {
        char blocked[32];
        rga_format_duration(wg->total_blocked_ns, blocked, sizeof(blocked));
        snprintf(buf, sizeof(buf),
                 "Root causes (waiter -> the root of its wait chains): GVL waits %s, blocked waits %s%s", total,
                 blocked, pruned);
    } else if (wg->kinds == RGA_EDGES_GVL) {
        snprintf(buf, sizeof(buf), "GVL wait graph (waiter -> holder), total wait %s%s", total, pruned);
    } else {
        char blocked[32];
        rga_format_duration(wg->total_blocked_ns, blocked, sizeof(blocked));
        snprintf(buf, sizeof(buf), "%s%s; release edges (dashed, waiter -> releaser), total %s%s",
                 wg->kinds == RGA_EDGES_ALL ? "GVL wait (waiter -> holder), total " : "Release graph",
                 wg->kinds == RGA_EDGES_ALL ? total : "", blocked, pruned);
    }
    set(g, "label", buf);
    set(g, "labelloc", "t");
    set(g, "rankdir", "LR");
    set(g, "fontname", "Helvetica");
    agattr(g, AGNODE, "shape", "box");
    agattr(g, AGNODE, "style", "rounded,filled");
    agattr(g, AGNODE, "fillcolor", "#ffffff");
    agattr(g, AGNODE, "fontname", "Helvetica");
    agattr(g, AGNODE, "penwidth", "1");
    agattr(g, AGEDGE, "fontname", "Helvetica");
    agattr(g, AGEDGE, "penwidth", "1");
    agattr(g, AGEDGE, "label", "");

    Agnode_t **nodes = calloc(wg->n_nodes ? wg->n_nodes : 1, sizeof(Agnode_t *));
    if (!nodes)
        goto nomem;
    for (size_t i = 0; i < wg->n_nodes; i++) {
        const rga_wg_node_t *n = &wg->nodes[i];
        Agraph_t *parent = g;
        if (n->ractor > 0 &&
            (n->kind == RGA_NODE_THREAD || n->kind == RGA_NODE_LABEL_SET || n->kind == RGA_NODE_RACTOR) &&
            wg->by != RGA_BY_RACTOR) {
            char cname[64], clabel[64];
            snprintf(cname, sizeof(cname), "cluster_ractor_%lld", (long long)n->ractor);
            parent = agsubg(g, cname, 1);
            if (!parent)
                goto nomem;
            rga_ractor_name(wg->report, n->ractor, clabel, sizeof(clabel));
            set(parent, "label", clabel);
            set(parent, "style", "dashed");
        }
        char id[64];
        static const char *const prefix[] = {"t", "l", "r", "gc", "handoff", "unknown"};
        if (n->kind == RGA_NODE_GC || n->kind == RGA_NODE_HANDOFF || n->kind == RGA_NODE_UNKNOWN)
            snprintf(id, sizeof(id), "%s", prefix[n->kind]);
        else
            snprintf(id, sizeof(id), "%s%lld", prefix[n->kind], (long long)n->key);
        Agnode_t *node = agnode(parent, id, 1);
        if (!node)
            goto nomem;
        nodes[i] = node;
        char waited[32], caused[32], running[32], blocked[32], gc[32], name[2 * sizeof(n->label)];
        dot_label_text(n->label, name, sizeof(name));
        rga_format_duration(n->wait_ns, waited, sizeof(waited));
        rga_format_duration(n->caused_ns, caused, sizeof(caused));
        rga_format_duration(n->state_ns[RGA_STATE_RUNNING], running, sizeof(running));
        rga_format_duration(n->state_ns[RGA_STATE_BLOCKED], blocked, sizeof(blocked));
        rga_format_duration(n->state_ns[RGA_STATE_GC_MARK] + n->state_ns[RGA_STATE_GC_SWEEP], gc, sizeof(gc));
        if (n->kind == RGA_NODE_GC || n->kind == RGA_NODE_HANDOFF || n->kind == RGA_NODE_UNKNOWN) {
            snprintf(buf, sizeof(buf), "%s\\ncaused %s", name, caused);
            set(node, "shape", "ellipse");
            set(node, "fillcolor", n->kind == RGA_NODE_GC ? "#fff2b3" : "#e8e8e8");
        } else {
            /* GVL waits are only counted from GVL edges: a release graph
             * alone would show "waited 0" for threads that did wait. */
            int used = (wg->kinds & RGA_EDGES_GVL)
                           ? snprintf(buf, sizeof(buf), "%s\\nrunning %s, blocked %s, GC %s\\nwaited %s, caused %s",
                                      name, running, blocked, gc, waited, caused)
                           : snprintf(buf, sizeof(buf), "%s\\nrunning %s, blocked %s, GC %s", name, running, blocked,
                                      gc);
            if ((wg->kinds & RGA_EDGES_BLOCKED) && used > 0 && (size_t)used < sizeof(buf)) {
                char on[32], released[32];
                rga_format_duration(n->blocked_ns, on, sizeof(on));
                rga_format_duration(n->released_ns, released, sizeof(released));
                snprintf(buf + used, sizeof(buf) - (size_t)used,
                         wg->roots ? "\\nblocked waits %s, root of others' %s"
                                   : "\\nblocked until woken %s, released %s",
                         on, released);
            }
            /* Filled by the wait it suffered: GVL wait, or blocked time in a release graph. */
            double share = wg->kinds == RGA_EDGES_BLOCKED
                               ? (wg->total_blocked_ns > 0 ? (double)n->blocked_ns / (double)wg->total_blocked_ns
                                                           : 0.0)
                               : (wg->total_wait_ns > 0 ? (double)n->wait_ns / (double)wg->total_wait_ns : 0.0);
            set(node, "fillcolor", fill_for(share));
        }
        /* A holder's border grows with the wait it caused: the culprits stand out. */
        if (wg->total_wait_ns > 0 && n->caused_ns > 0) {
            char pen[32];
            snprintf(pen, sizeof(pen), "%.2f", 1.0 + 5.0 * (double)n->caused_ns / (double)wg->total_wait_ns);
            set(node, "penwidth", pen);
        }
        /* A cut label must not end in half of a doubled backslash. */
        size_t len = strlen(buf), odd = 0;
        while (odd < len && buf[len - 1 - odd] == '\\')
            odd++;
        if (odd % 2)
            buf[len - 1] = '\0';
        set(node, "label", buf);
    }
    for (size_t i = 0; i < wg->n_edges; i++) {
        const rga_wg_edge_t *e = &wg->edges[i];
        char key[32];
        /* A GVL and a release edge, or root edges of several roots, may join the same two nodes. */
        if (e->root >= 0)
            snprintf(key, sizeof(key), "%d/%d", e->cause, e->root);
        else
            snprintf(key, sizeof(key), "%d", e->cause);
        Agedge_t *edge = agedge(g, nodes[e->from], nodes[e->to], e->cause < 0 && e->root < 0 ? NULL : key, 1);
        if (!edge)
            goto nomem;
        if (e->root >= 0) {
            style_root_edge(edge, e, wg);
            continue;
        }
        if (e->cause >= 0) {
            style_release_edge(edge, e, wg->total_blocked_ns);
            continue;
        }
        double share = wg->total_wait_ns > 0 ? (double)e->wait_ns / (double)wg->total_wait_ns : 0.0;
        char wait[32], pen[32], label[96], weight[32];
        rga_format_duration(e->wait_ns, wait, sizeof(wait));
        snprintf(label, sizeof(label), "%s (%.0f%%, %lld wait%s)", wait, share * 100.0, (long long)e->count,
                 e->count == 1 ? "" : "s");
        snprintf(pen, sizeof(pen), "%.2f", 1.0 + 7.0 * share);
        snprintf(weight, sizeof(weight), "%lld", (long long)(1 + share * 100));
        set(edge, "label", label);
        set(edge, "penwidth", pen);
        set(edge, "weight", weight);
        snprintf(label, sizeof(label), "%lld", (long long)e->wait_ns);
        set(edge, "wait_ns", label);
    }
    free(nodes);
    return g;
nomem:
    free(nodes);
    agclose(g);
    rga_error_set(err, RGA_ERR_RENDER, "cgraph failed building the graph: %s", rga_graphviz_last_error());
    return NULL;
}

rga_status_t
rga_dot_write(const rga_waitgraph_t *wg, FILE *out, rga_error_t *err)
{
    Agraph_t *g = rga_dot_build(wg, err);
    if (!g)
        return err ? err->code : RGA_ERR_RENDER;
    int rc = agwrite(g, out);
    agclose(g);
    if (rc != 0 || ferror(out))
        return rga_error_set(err, RGA_ERR_IO, "cannot write the DOT graph");
    return RGA_OK;
}
