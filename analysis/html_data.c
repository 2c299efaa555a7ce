/* html_data.c — choosing and packing what the HTML page embeds (see html_data.h).
 *
 * Everything is built as jansson values; the intervals go in columns (one
 * array per field, start times delta-coded) because the page reads them as
 * columns and the key names would otherwise be most of the bytes.
 */
#include "html_data.h"
#include "critical_path.h"
#include "intern.h"
#include "summary.h"
#include "summary_json.h"
#include "term_text.h"
#include "waitgraph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct builder {
    const rga_report_t *r;
    const rga_filter_t *filter;
    long *stack_map, *frame_map; /* report id -> embedded index, -1 = not yet */
    json_t *frames, *stacks;
    bool ok;
} builder_t;

/* Appends value (stealing it) and records failure, so builders read as lists. */
static void
push(json_t *arr, json_t *value, bool *ok)
{
    if (!value || json_array_append_new(arr, value) != 0)
        *ok = false;
}

static void
put(json_t *obj, const char *key, json_t *value, bool *ok)
{
    if (!value || json_object_set_new(obj, key, value) != 0)
        *ok = false;
}

/* A text of the report as a page string of at most RGA_HTML_MAX_TEXT bytes
 * and the ellipsis. */
static json_t *
page_text(const char *s)
{
    size_t n = strlen(s);
    if (n <= RGA_HTML_MAX_TEXT)
        return json_string(s);
    char cut[RGA_HTML_MAX_TEXT + sizeof("\u2026")];
    size_t keep = rga_text_prefix_bytes(s, RGA_HTML_MAX_TEXT);
    memcpy(cut, s, keep);
    memcpy(cut + keep, "\u2026", sizeof("\u2026"));
    return json_string(cut);
}

/* Every string in v (the summary's names and labels) through page_text. */
static void
cap_strings(json_t *v, bool *ok)
{
    size_t i;
    const char *key;
    json_t *item;
    void *tmp;
    if (json_is_array(v)) {
        json_array_foreach(v, i, item)
        {
            if (json_is_string(item) && json_string_length(item) > RGA_HTML_MAX_TEXT) {
                if (json_array_set_new(v, i, page_text(json_string_value(item))) != 0)
                    *ok = false;
            } else {
                cap_strings(item, ok);
            }
        }
    } else if (json_is_object(v)) {
        json_object_foreach_safe(v, tmp, key, item)
        {
            if (json_is_string(item) && json_string_length(item) > RGA_HTML_MAX_TEXT) {
                if (json_object_set_new(v, key, page_text(json_string_value(item))) != 0)
                    *ok = false;
            } else {
                cap_strings(item, ok);
            }
        }
    }
}

/* Embedded index of a report stack (-1 for none), adding it and its frames on first use. */
static json_int_t
use_stack(builder_t *b, int64_t stack)
{
    const rga_report_t *r = b->r;
    if (stack < 0 || (uint64_t)stack >= r->n_stacks)
        return -1;
    if (b->stack_map[stack] >= 0)
        return b->stack_map[stack];
    const rga_stack_t *st = &r->stacks[stack];
    json_t *ids = json_array();
    for (uint32_t i = 0; ids && i < st->depth; i++) {
        int64_t f = r->stack_frames[st->first + i];
        if (b->frame_map[f] < 0) {
            b->frame_map[f] = (long)json_array_size(b->frames);
            json_t *frame = json_array();
            push(frame, page_text(r->frames[f].path), &b->ok);
            push(frame, page_text(r->frames[f].label), &b->ok);
            push(b->frames, frame, &b->ok);
        }
        push(ids, json_integer(b->frame_map[f]), &b->ok);
    }
    b->stack_map[stack] = (long)json_array_size(b->stacks);
    push(b->stacks, ids, &b->ok);
    return b->stack_map[stack];
}

static json_t *
samples_json(builder_t *b)
{
    const rga_report_t *r = b->r;
    json_t *rows = json_array();
    for (size_t i = 0; rows && i < r->n_samples; i++) {
        const rga_sample_t *s = &r->samples[i];
        if (!rga_filter_thread(b->filter, r, s->thread) || !rga_filter_label_set(b->filter, r, s->label_set))
            continue;
        push(rows,
             json_pack("[I, I, I, I]", use_stack(b, s->stack), (json_int_t)s->weight_ns, (json_int_t)s->thread,
                       (json_int_t)s->label_set),
             &b->ok);
    }
    return rows;
}

static json_t *
blame_json(builder_t *b)
{
    const rga_report_t *r = b->r;
    json_t *rows = json_array();
    for (size_t i = 0; rows && i < r->n_blame; i++) {
        const rga_blame_t *bl = &r->blame[i];
        if (!rga_filter_thread(b->filter, r, bl->holder) || !rga_filter_label_set(b->filter, r, bl->label_set))
            continue;
        push(rows,
             json_pack("[I, I, I, I]", use_stack(b, bl->stack), (json_int_t)bl->holder, (json_int_t)bl->label_set,
                       (json_int_t)bl->blame_ns),
             &b->ok);
    }
    return rows;
}

/* The wait graph's edges between threads (and GC, hand-off, unknown), the
 * largest max_edges of them; the rest of each waiter's wait becomes one edge
 * to "other", so every waiter's total stays whole. */
static json_t *
edges_json(builder_t *b, size_t max_edges)
{
    rga_waitgraph_t g;
    if (rga_waitgraph_build(b->r, b->filter, RGA_BY_THREAD, 0.0, &g, NULL) != RGA_OK) {
        b->ok = false;
        return NULL;
    }
    static const char *const kind_name[] = {
        [RGA_NODE_THREAD] = "thread", [RGA_NODE_LABEL_SET] = "label", [RGA_NODE_RACTOR] = "ractor",
        [RGA_NODE_GC] = "gc",         [RGA_NODE_HANDOFF] = "handoff", [RGA_NODE_UNKNOWN] = "unknown"};
    json_t *rows = json_array();
    int64_t *other_ns = calloc(g.n_nodes ? g.n_nodes : 1, sizeof(int64_t));
    int64_t *other_count = calloc(g.n_nodes ? g.n_nodes : 1, sizeof(int64_t));
    if (!rows || !other_ns || !other_count)
        b->ok = false;
    for (size_t i = 0; b->ok && i < g.n_edges; i++) {
        const rga_wg_edge_t *e = &g.edges[i];
        if (i >= max_edges) {
            other_ns[e->from] += e->wait_ns;
            other_count[e->from] += e->count;
            continue;
        }
        const rga_wg_node_t *to = &g.nodes[e->to];
        push(rows,
             json_pack("[I, s, I, I, I]", (json_int_t)g.nodes[e->from].key, kind_name[to->kind], (json_int_t)to->key,
                       (json_int_t)e->wait_ns, (json_int_t)e->count),
             &b->ok);
    }
    for (size_t n = 0; b->ok && n < g.n_nodes; n++)
        if (other_ns[n] > 0)
            push(rows,
                 json_pack("[I, s, I, I, I]", (json_int_t)g.nodes[n].key, "other", (json_int_t)0,
                           (json_int_t)other_ns[n], (json_int_t)other_count[n]),
                 &b->ok);
    free(other_ns);
    free(other_count);
    rga_waitgraph_free(&g);
    return rows;
}

static json_t *
label_sets_json(const rga_report_t *r, bool *ok)
{
    json_t *rows = json_array();
    for (size_t i = 0; rows && i < r->n_label_sets; i++) {
        char text[1024];
        rga_label_set_text(r, r->label_sets[i].id, text, sizeof(text));
        json_t *row = json_array();
        push(row, json_integer((json_int_t)r->label_sets[i].id), ok);
        push(row, page_text(text), ok);
        push(rows, row, ok);
    }
    return rows;
}

static int
cmp_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

static bool
interval_passes(const builder_t *b, const rga_interval_t *iv)
{
    return rga_filter_thread_index(b->filter, iv->thread_index) &&
           rga_filter_label_set(b->filter, b->r, iv->label_set);
}

/* Decides which intervals are kept one by one: mark[i] = 1. Returns the
 * number kept, or (size_t)-1 when out of memory. *min_kept_ns receives the
 * shortest duration kept when some were aggregated (0 otherwise). */
static size_t
choose_kept(const builder_t *b, size_t max_kept, int64_t bucket_ns, unsigned char *mark, size_t n_pass,
            int64_t *min_kept_ns)
{
    const rga_report_t *r = b->r;
    *min_kept_ns = 0;
    if (n_pass <= max_kept) {
        for (size_t i = 0; i < r->n_intervals; i++)
            mark[i] = interval_passes(b, &r->intervals[i]);
        return n_pass;
    }
    /* Only intervals of at least a bucket can be told apart at the default
     * zoom; of those, the longest max_kept. */
    size_t n_long = 0;
    for (size_t i = 0; i < r->n_intervals; i++) {
        const rga_interval_t *iv = &r->intervals[i];
        n_long += interval_passes(b, iv) && iv->end_ns - iv->start_ns >= bucket_ns;
    }
    int64_t threshold = bucket_ns;
    size_t ties_allowed = n_long;
    if (n_long > max_kept) {
        int64_t *d = malloc(n_long * sizeof(*d));
        if (!d)
            return (size_t)-1;
        size_t k = 0;
        for (size_t i = 0; i < r->n_intervals; i++) {
            const rga_interval_t *iv = &r->intervals[i];
            if (interval_passes(b, iv) && iv->end_ns - iv->start_ns >= bucket_ns)
                d[k++] = iv->end_ns - iv->start_ns;
        }
        qsort(d, n_long, sizeof(*d), cmp_desc);
        threshold = d[max_kept - 1];
        size_t above = 0;
        while (above < max_kept && d[above] > threshold)
            above++;
        ties_allowed = max_kept - above;
        free(d);
    }
    size_t kept = 0;
    for (size_t i = 0; i < r->n_intervals; i++) {
        const rga_interval_t *iv = &r->intervals[i];
        int64_t dur = iv->end_ns - iv->start_ns;
        mark[i] = 0;
        if (!interval_passes(b, iv) || dur < threshold)
            continue;
        if (dur == threshold) {
            if (ties_allowed == 0)
                continue;
            ties_allowed--;
        }
        mark[i] = 1;
        kept++;
    }
    *min_kept_ns = threshold;
    return kept;
}

/* Bucket k of n over [0, axis): [axis*k/n, axis*(k+1)/n), in long double so
 * hour-long axes at ns resolution do not overflow. */
static void
bucket_bounds(int64_t axis, size_t n, size_t k, int64_t *lo, int64_t *hi)
{
    long double span = (long double)axis;
    *lo = (int64_t)(span * k / n);
    *hi = k + 1 == n ? axis : (int64_t)(span * (k + 1) / n);
}

/* Adds the overlap of [a, b) with each bucket to cells[bucket * STATES + state]. */
static void
add_to_buckets(int64_t *cells, size_t n, int64_t axis, int64_t a, int64_t b, int state)
{
    if (a < 0)
        a = 0;
    if (b > axis)
        b = axis;
    if (b <= a)
        return;
    for (size_t k = (size_t)((long double)a * n / (long double)axis); k < n; k++) {
        int64_t lo, hi;
        bucket_bounds(axis, n, k, &lo, &hi);
        if (lo >= b)
            break;
        int64_t x = a > lo ? a : lo, y = b < hi ? b : hi;
        if (y > x)
            cells[k * RGA_STATE_COUNT + (size_t)state] += y - x;
    }
}

/* One thread's buckets: [seq, [ns per state], [levels per state]]. A state's
 * levels are one character per bucket, base64url digits for 0..63: the
 * share of the bucket spent in that state, in 63rds, rounded, and at least
 * 1 when the state had any time there (so short activity stays visible);
 * "" when the state had none. The page draws the levels; the ns totals are
 * exact. */
static json_t *
bucket_row(int64_t seq, const int64_t *cells, size_t n, int64_t axis, bool *ok)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    json_t *totals = json_array(), *levels = json_array();
    char *text = malloc(n + 1);
    if (!totals || !levels || !text)
        *ok = false;
    for (int st = 0; *ok && st < RGA_STATE_COUNT; st++) {
        int64_t sum = 0;
        for (size_t k = 0; k < n; k++) {
            int64_t ns = cells[k * RGA_STATE_COUNT + (size_t)st], lo, hi;
            bucket_bounds(axis, n, k, &lo, &hi);
            long level = hi > lo ? lroundl((long double)ns * 63 / (long double)(hi - lo)) : 0;
            if (level > 63)
                level = 63;
            if (ns > 0 && level == 0)
                level = 1;
            text[k] = digits[level];
            sum += ns;
        }
        text[n] = '\0';
        push(totals, json_integer(sum), ok);
        push(levels, json_string(sum > 0 ? text : ""), ok);
    }
    free(text);
    json_t *row = *ok ? json_pack("[I, O, O]", (json_int_t)seq, totals, levels) : NULL;
    json_decref(totals);
    json_decref(levels);
    if (!row)
        *ok = false;
    return row;
}

/* The timeline part: "intervals" (kept, columns) and "buckets" (the rest). */
static json_t *
timeline_json(builder_t *b, const rga_html_limits_t *lim, int64_t axis)
{
    const rga_report_t *r = b->r;
    size_t width = lim->width_px;
    int64_t bucket_ns = axis / (int64_t)width > 0 ? axis / (int64_t)width : 1;
    size_t n_pass = 0;
    for (size_t i = 0; i < r->n_intervals; i++)
        n_pass += interval_passes(b, &r->intervals[i]);
    unsigned char *mark = calloc(r->n_intervals ? r->n_intervals : 1, 1);
    int64_t **cells = calloc(r->n_threads ? r->n_threads : 1, sizeof(*cells));
    if (!mark || !cells) {
        free(mark);
        free(cells);
        return NULL;
    }
    int64_t min_kept_ns = 0;
    size_t kept = choose_kept(b, lim->max_intervals, bucket_ns, mark, n_pass, &min_kept_ns);
    json_t *obj = json_object();
    /* Blocked causes (report minor 1) add two columns: cause number and releaser seq (0: none). */
    int n_cols = r->has_causes ? 8 : 6;
    json_t *col[8] = {NULL};
    static const char *const names[8] = {"thread",    "state", "start_delta", "duration",
                                         "label_set", "stack", "cause",       "releaser"};
    for (int c = 0; c < n_cols; c++)
        col[c] = json_array();
    bool ok = kept != (size_t)-1 && obj;
    int64_t prev_start = 0;
    for (size_t i = 0; ok && i < r->n_intervals; i++) {
        const rga_interval_t *iv = &r->intervals[i];
        if (mark[i]) {
            push(col[0], json_integer(r->threads[iv->thread_index].seq), &ok);
            push(col[1], json_integer(iv->state), &ok);
            push(col[2], json_integer(iv->start_ns - prev_start), &ok);
            push(col[3], json_integer(iv->end_ns - iv->start_ns), &ok);
            push(col[4], json_integer(iv->label_set), &ok);
            push(col[5], json_integer(use_stack(b, iv->stack)), &ok);
            if (r->has_causes) {
                const rga_interval_cause_t *row = rga_report_interval_cause(r, i);
                push(col[6], json_integer(iv->cause), &ok);
                push(col[7], json_integer(row ? row->releaser : 0), &ok);
            }
            prev_start = iv->start_ns;
        } else if (interval_passes(b, iv)) {
            int64_t **row = &cells[iv->thread_index];
            if (!*row && !(*row = calloc(width * RGA_STATE_COUNT, sizeof(int64_t)))) {
                ok = false;
                break;
            }
            add_to_buckets(*row, width, axis, iv->start_ns, iv->end_ns, iv->state);
        }
    }
    for (int c = 0; c < n_cols; c++) {
        if (obj)
            put(obj, names[c], col[c], &ok);
        else
            json_decref(col[c]);
    }
    if (obj && r->has_causes) {
        json_t *cause_names = json_array();
        for (int c = 0; cause_names && c < RGA_CAUSE_COUNT; c++)
            push(cause_names, json_string(rga_cause_name(c)), &ok);
        put(obj, "cause_names", cause_names, &ok);
    }
    json_t *rows = json_array();
    for (size_t t = 0; ok && rows && t < r->n_threads; t++) {
        if (!cells[t])
            continue;
        push(rows, bucket_row(r->threads[t].seq, cells[t], width, axis, &ok), &ok);
    }
    if (ok && obj) {
        put(obj, "total", json_integer((json_int_t)n_pass), &ok);
        put(obj, "kept", json_integer((json_int_t)kept), &ok);
        put(obj, "aggregated", json_integer((json_int_t)(n_pass - kept)), &ok);
        put(obj, "min_kept_ns", json_integer(min_kept_ns), &ok);
        put(obj, "buckets",
            json_pack("{s:I, s:I, s:o}", "count", (json_int_t)width, "axis_ns", (json_int_t)axis, "rows", rows),
            &ok);
        rows = NULL;
    }
    json_decref(rows);
    for (size_t t = 0; t < r->n_threads; t++)
        free(cells[t]);
    free(cells);
    free(mark);
    if (!ok) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

/* Critical paths: the shared tables of roots and texts, and one path each. */
typedef struct paths {
    const rga_report_t *r;
    rga_rc_index_t *ix;
    rga_key_table_t roots; /* kind | cause << 8, thread, 0... -> index */
    json_t *root_rows;
    rga_intern_t texts;
    size_t max_segments;
    bool ok;
} paths_t;

static json_int_t
root_index(paths_t *x, const rga_rc_root_t *root)
{
    int64_t key[RGA_KEY_WIDTH] = {(int64_t)root->kind | (int64_t)root->cause << 8, root->thread, 0, 0, 0, 0};
    const rga_key_entry_t *e = rga_key_table_find(&x->roots, key);
    if (e)
        return e->sum[0];
    json_int_t i = (json_int_t)x->roots.n;
    char what[96];
    const rga_report_t *r = x->r;
    if (rga_key_table_add(&x->roots, key, i, 0) < 0)
        x->ok = false;
    push(x->root_rows,
         json_pack("[s, I, s]", rga_rc_kind_name(root->kind),
                   (json_int_t)(root->thread >= 0 ? r->threads[root->thread].seq : 0),
                   rga_rc_root_what(root, what, sizeof(what))),
         &x->ok);
    return i;
}

/* The thread whose lane explains a segment: the root's, or for a hand-off
 * the last thread that waited (for the GVL), or the subject's own. */
static int64_t
segment_lane(const rga_critical_path_t *p, const rga_cp_segment_t *s)
{
    const rga_report_t *r = p->report;
    if (s->root.thread >= 0)
        return r->threads[s->root.thread].seq;
    if (s->n_hops > 0)
        return r->threads[p->hops[s->first_hop + s->n_hops - 1].thread].seq;
    return r->threads[s->thread].seq;
}

static json_t *
path_json(paths_t *x, const rga_cp_spec_t *spec)
{
    rga_critical_path_t p;
    if (rga_critical_path_build_on(x->ix, NULL, x->r, spec, &p, NULL) != RGA_OK)
        return json_null(); /* nothing of it in the timeline */
    unsigned char *keep = rga_cp_longest(&p, x->max_segments);
    json_t *col[6];
    static const char *const names[6] = {"start", "dur", "lane", "root", "text", "thread"};
    for (int c = 0; c < 6; c++)
        col[c] = json_array();
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "from", (json_int_t)p.from_ns, "to", (json_int_t)p.to_ns,
                          "covered", (json_int_t)p.covered_ns, "own", (json_int_t)p.own_ns, "handoffs",
                          (json_int_t)p.handoffs, "segments", (json_int_t)p.n_segments);
    if (!keep || !o)
        x->ok = false;
    int64_t prev = 0;
    size_t kept = 0, *order = keep ? rga_cp_order(&p, keep, &kept) : NULL;
    if (!order)
        x->ok = false;
    for (size_t k = 0; x->ok && k < kept; k++) {
        const rga_cp_segment_t *s = &p.segments[order[k]];
        char text[2048];
        size_t t = rga_intern(&x->texts, rga_cp_segment_text(&p, s, text, sizeof(text)));
        if (t == (size_t)-1)
            x->ok = false;
        push(col[0], json_integer(s->start_ns - prev), &x->ok);
        push(col[1], json_integer(s->end_ns - s->start_ns), &x->ok);
        push(col[2], json_integer(segment_lane(&p, s)), &x->ok);
        push(col[3], json_integer(root_index(x, &s->root)), &x->ok);
        push(col[4], json_integer((json_int_t)t), &x->ok);
        if (p.by_label)
            push(col[5], json_integer(x->r->threads[s->thread].seq), &x->ok);
        prev = s->start_ns;
    }
    free(order);
    json_t *shares = json_array();
    int64_t rest = 0;
    for (size_t i = 0; x->ok && shares && i < p.n_shares; i++) {
        if (i >= RGA_HTML_MAX_PATH_SHARES) {
            rest += p.shares[i].ns;
            continue;
        }
        push(shares,
             json_pack("[I, b, I]", root_index(x, &p.shares[i].root), p.shares[i].own, (json_int_t)p.shares[i].ns),
             &x->ok);
    }
    if (rest > 0 && shares)
        push(shares, json_pack("[i, b, I]", -1, 0, (json_int_t)rest), &x->ok);
    for (int c = 0; c < 6; c++) {
        if (o && (c < 5 || p.by_label))
            put(o, names[c], col[c], &x->ok);
        else
            json_decref(col[c]);
    }
    if (o) {
        put(o, "kept", json_integer((json_int_t)kept), &x->ok);
        put(o, "shares", shares, &x->ok);
    } else {
        json_decref(shares);
    }
    free(keep);
    rga_critical_path_free(&p);
    return o;
}

/* "paths": the listed threads' critical paths and the largest label sets'. */
static json_t *
paths_json(const rga_report_t *r, const rga_filter_t *filter, const rga_summary_t *s, const rga_html_limits_t *lim,
           bool *ok)
{
    if (!s->roots.available)
        return json_pack("{s:b, s:s}", "available", 0, "reason", rga_summary_no_roots_reason(r));
    size_t n_paths = s->roots.n_labels < lim->max_label_paths ? s->roots.n_labels : lim->max_label_paths;
    for (size_t t = 0; t < r->n_threads; t++)
        n_paths += rga_filter_thread_index(filter, t);
    size_t share = n_paths ? lim->max_path_total / n_paths : lim->max_path_segments;
    if (share < 60)
        share = 60;
    paths_t x = {r,   NULL, {0}, json_array(), {0}, share < lim->max_path_segments ? share : lim->max_path_segments,
                 true};
    rga_key_table_init(&x.roots);
    rga_intern_init(&x.texts);
    json_t *threads = json_object(), *labels = json_object();
    if (!x.root_rows || !threads || !labels || rga_rc_index_build(r, &x.ix, NULL) != RGA_OK)
        x.ok = false;
    for (size_t t = 0; x.ok && t < r->n_threads; t++) {
        if (!rga_filter_thread_index(filter, t))
            continue;
        char seq[32];
        snprintf(seq, sizeof(seq), "%lld", (long long)r->threads[t].seq);
        rga_cp_spec_t spec = {seq, 0, 0, false, 0};
        put(threads, seq, path_json(&x, &spec), &x.ok);
    }
    for (size_t i = 0, n = 0; x.ok && i < s->roots.n_labels && n < lim->max_label_paths; i++) {
        int64_t id = s->roots.labels[i].label_set;
        char key[32];
        snprintf(key, sizeof(key), "%lld", (long long)id);
        rga_cp_spec_t spec = {NULL, 0, 0, true, id};
        put(labels, key, path_json(&x, &spec), &x.ok);
        n++;
    }
    json_t *texts = json_array();
    for (size_t i = 0; x.ok && texts && i < x.texts.n; i++)
        push(texts, page_text(rga_intern_str(&x.texts, i)), &x.ok);
    json_t *o = x.ok ? json_pack("{s:b, s:O, s:O, s:O, s:O}", "available", 1, "roots", x.root_rows, "texts", texts,
                                 "threads", threads, "labels", labels)
                     : NULL;
    if (!o)
        *ok = false;
    json_decref(x.root_rows);
    json_decref(texts);
    json_decref(threads);
    json_decref(labels);
    rga_key_table_free(&x.roots);
    rga_intern_free(&x.texts);
    rga_rc_index_free(x.ix);
    return o;
}

/* The summary's root causes as the page uses them: the largest roots, each
 * with its first stack's text. */
static void
trim_roots(json_t *summary, bool *ok)
{
    json_t *rc = json_object_get(summary, "root_causes");
    if (!rc)
        return;
    json_object_del(rc, "waiters");
    json_object_del(rc, "label_sets");
    json_t *roots = json_object_get(rc, "roots");
    while (json_array_size(roots) > RGA_HTML_MAX_ROOTS)
        json_array_remove(roots, json_array_size(roots) - 1);
    size_t i;
    json_t *row;
    json_array_foreach(roots, i, row)
    {
        json_t *stacks = json_object_get(row, "stacks"), *first = json_array_get(stacks, 0);
        json_t *kept = json_array();
        if (first)
            push(kept, json_pack("{s:O}", "text", json_object_get(first, "text")), ok);
        put(row, "stacks", kept, ok);
    }
}

rga_status_t
rga_html_data_build(const rga_report_t *r, const rga_filter_t *filter, const rga_html_limits_t *limits, json_t **out,
                    rga_error_t *err)
{
    *out = NULL;
    rga_html_limits_t lim = limits ? *limits : (rga_html_limits_t){0};
    if (lim.max_intervals == 0)
        lim.max_intervals = RGA_HTML_MAX_INTERVALS;
    if (lim.width_px == 0)
        lim.width_px = RGA_HTML_WIDTH_PX;
    if (lim.max_edges == 0)
        lim.max_edges = RGA_HTML_MAX_EDGES;
    if (lim.max_path_segments == 0)
        lim.max_path_segments = RGA_HTML_MAX_PATH_SEGMENTS;
    if (lim.max_label_paths == 0)
        lim.max_label_paths = RGA_HTML_MAX_LABEL_PATHS;
    if (lim.max_path_total == 0)
        lim.max_path_total = RGA_HTML_MAX_PATH_TOTAL;
    rga_summary_t s;
    rga_status_t st = rga_summary_build(r, filter, &s, err);
    if (st != RGA_OK)
        return st;
    builder_t b = {r, filter, NULL, NULL, json_array(), json_array(), true};
    b.stack_map = malloc((r->n_stacks ? r->n_stacks : 1) * sizeof(long));
    b.frame_map = malloc((r->n_frames ? r->n_frames : 1) * sizeof(long));
    json_t *root = json_object();
    if (!b.stack_map || !b.frame_map || !root || !b.frames || !b.stacks)
        b.ok = false;
    for (size_t i = 0; b.ok && i < r->n_stacks; i++)
        b.stack_map[i] = -1;
    for (size_t i = 0; b.ok && i < r->n_frames; i++)
        b.frame_map[i] = -1;
    /* The axis: the report's interval, or the last interval end when later. */
    int64_t axis = r->meta.duration_ns;
    for (size_t i = 0; i < r->n_intervals; i++)
        if (r->intervals[i].end_ns > axis)
            axis = r->intervals[i].end_ns;
    if (axis <= 0)
        axis = 1;
    if (b.ok) {
        put(root, "format", json_string("rperf-gvl-page"), &b.ok);
        put(root, "version", json_integer(1), &b.ok);
        put(root, "axis_ns", json_integer(axis), &b.ok);
        json_t *summary = rga_summary_to_json(&s);
        trim_roots(summary, &b.ok);
        cap_strings(summary, &b.ok);
        put(root, "summary", summary, &b.ok);
        put(root, "label_sets", label_sets_json(r, &b.ok), &b.ok);
        put(root, "samples", samples_json(&b), &b.ok);
        put(root, "blame", blame_json(&b), &b.ok);
        put(root, "edges", edges_json(&b, lim.max_edges), &b.ok);
        put(root, "intervals", timeline_json(&b, &lim, axis), &b.ok);
        put(root, "paths", paths_json(r, filter, &s, &lim, &b.ok), &b.ok);
        /* Last: the tables above filled them. */
        put(root, "frames", json_incref(b.frames), &b.ok);
        put(root, "stacks", json_incref(b.stacks), &b.ok);
    }
    rga_summary_free(&s);
    json_decref(b.frames);
    json_decref(b.stacks);
    free(b.stack_map);
    free(b.frame_map);
    if (!b.ok) {
        json_decref(root);
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory building the page data");
    }
    *out = root;
    return RGA_OK;
}
