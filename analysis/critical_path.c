/* critical_path.c — one thread's or label's critical path (see critical_path.h).
 *
 * The walk is rootcause.c's; this file chooses what to explain (the
 * subject's lifetime or its label's intervals, in the window), merges the
 * pieces into segments, adds up the shares, and writes them.
 */
#include "critical_path.h"
#include "grow_array.h"
#include "stack_text.h"
#include "summary.h"
#include "summary_json.h"
#include "table.h"
#include "units.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct builder {
    rga_critical_path_t *p;
    rga_key_table_t shares;
    size_t cap_segments, cap_hops;
    uint32_t thread; /* the thread being explained */
    bool failed;
} builder_t;

static bool
same_chain(const rga_critical_path_t *p, const rga_cp_segment_t *s, const rga_rc_piece_t *x, uint32_t thread)
{
    if (s->thread != thread || s->end_ns != x->start_ns || s->n_hops != x->n_hops || s->root.kind != x->root.kind ||
        s->root.cause != x->root.cause || s->root.thread != x->root.thread || s->root.label_set != x->root.label_set)
        return false;
    for (size_t i = 0; i < x->n_hops; i++) {
        const rga_rc_hop_t *a = &p->hops[s->first_hop + i], *b = &x->hops[i];
        if (a->thread != b->thread || a->state != b->state || a->cause != b->cause)
            return false;
    }
    return true;
}

static void
on_piece(const rga_rc_piece_t *x, void *arg)
{
    builder_t *b = arg;
    rga_critical_path_t *p = b->p;
    int64_t len = x->end_ns - x->start_ns, key[RGA_KEY_WIDTH];
    p->covered_ns += len;
    if (x->n_hops == 0)
        p->own_ns += len;
    rga_rc_root_key(&x->root, key);
    if (p->stacks && rga_key_table_add(&p->parts, key, len, 0) < 0) /* the stacks' weights, when named */
        b->failed = true;
    key[0] |= (int64_t)(x->n_hops == 0) << 16;
    key[2] = -1;
    if (rga_key_table_add(&b->shares, key, len, 0) < 0)
        b->failed = true;
    rga_cp_segment_t *last = p->n_segments ? &p->segments[p->n_segments - 1] : NULL;
    if (last && same_chain(p, last, x, b->thread)) {
        last->end_ns = x->end_ns;
        return;
    }
    if (rperf_grow_array((void **)&p->segments, &b->cap_segments, p->n_segments + 1, sizeof(*p->segments), 64) < 0 ||
        rperf_grow_array((void **)&p->hops, &b->cap_hops, p->n_hops + x->n_hops, sizeof(*p->hops), 64) < 0) {
        b->failed = true;
        return;
    }
    memcpy(&p->hops[p->n_hops], x->hops, x->n_hops * sizeof(*x->hops));
    p->segments[p->n_segments++] =
        (rga_cp_segment_t){x->start_ns, x->end_ns, b->thread, x->n_hops ? x->hops[0].label_set : x->root.label_set,
                           p->n_hops,   x->n_hops, x->root};
    p->n_hops += x->n_hops;
}

/* Room for about the segments and hops n intervals make (a chain or two
 * each), so that a long path is not copied again and again as it grows. */
static void
reserve(builder_t *b, size_t n)
{
    rga_critical_path_t *p = b->p;
    size_t want = 2 * n + 64;
    if (want > b->cap_segments) {
        rga_cp_segment_t *s = realloc(p->segments, want * sizeof(*s));
        if (s) {
            p->segments = s;
            b->cap_segments = want;
        }
    }
    if (want > b->cap_hops) {
        rga_rc_hop_t *h = realloc(p->hops, want * sizeof(*h));
        if (h) {
            p->hops = h;
            b->cap_hops = want;
        }
    }
}

/* The thread a subject names: its seq, or a name only one thread has. */
static rga_status_t
find_thread(const rga_report_t *r, const char *subject, long *out, rga_error_t *err)
{
    char *end;
    long long seq = strtoll(subject, &end, 10);
    *out = -1;
    if (*subject && *end == '\0' && (*out = rga_report_thread_index(r, seq)) >= 0)
        return RGA_OK;
    size_t named = 0;
    for (size_t i = 0; i < r->n_threads; i++)
        if (strcmp(r->threads[i].name, subject) == 0 && named++ == 0)
            *out = (long)i;
    if (named == 1)
        return RGA_OK;
    if (named > 1)
        return rga_error_set(err, RGA_ERR_ARGUMENT, "--critical-path %s: %zu threads have that name; give a seq",
                             subject, named);
    return rga_error_set(err, RGA_ERR_ARGUMENT, "--critical-path %s: no thread has that seq or name", subject);
}

/* The label sets holding KEY=VALUE: ok[label set index]. How many. */
static size_t
match_labels(const rga_report_t *r, const char *kv, bool *ok)
{
    const char *eq = strchr(kv, '=');
    size_t klen = (size_t)(eq - kv), n = 0;
    for (size_t i = 0; i < r->n_label_sets; i++) {
        const rga_label_set_t *ls = &r->label_sets[i];
        ok[i] = false;
        for (size_t j = 0; j < ls->n_labels && !ok[i]; j++)
            ok[i] = strlen(ls->keys[j]) == klen && strncmp(ls->keys[j], kv, klen) == 0 &&
                    strcmp(ls->values[j], eq + 1) == 0;
        n += ok[i];
    }
    return n;
}

static int
cmp_segment(const void *a, const void *b)
{
    const rga_cp_segment_t *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->thread > y->thread) - (x->thread < y->thread);
}

static const rga_cp_segment_t *order_segments; /* qsort has no context argument */

static int
cmp_order(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = cmp_segment(&order_segments[i], &order_segments[j]);
    return c ? c : (i > j) - (i < j);
}

size_t *
rga_cp_order(const rga_critical_path_t *p, const unsigned char *mark, size_t *n)
{
    size_t *order = malloc((p->n_segments + 1) * sizeof(size_t)), k = 0;
    if (!order)
        return NULL;
    bool sorted = true;
    for (size_t i = 0; i < p->n_segments; i++) {
        if (mark && !mark[i])
            continue;
        sorted = sorted && (k == 0 || cmp_segment(&p->segments[order[k - 1]], &p->segments[i]) <= 0);
        order[k++] = i;
    }
    if (!sorted) {
        order_segments = p->segments;
        qsort(order, k, sizeof(size_t), cmp_order);
        order_segments = NULL;
    }
    *n = k;
    return order;
}

static int
cmp_share(const void *a, const void *b)
{
    const rga_rc_share_t *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? 1 : -1;
    if (x->own != y->own)
        return x->own ? -1 : 1;
    if (x->root.kind != y->root.kind)
        return (int)x->root.kind - (int)y->root.kind;
    if (x->root.thread != y->root.thread)
        return x->root.thread < y->root.thread ? -1 : 1;
    return (int)x->root.cause - (int)y->root.cause;
}

/* The label path: every interval of the matching label sets, in the window,
 * thread by thread (each thread's segments in time order). The intervals
 * are found in one pass over the report and grouped by thread (a stable
 * counting sort keeps each thread's in time order). */
static void
explain_label(builder_t *b, rga_rc_index_t *ix, const bool *ok)
{
    rga_critical_path_t *p = b->p;
    const rga_report_t *r = p->report;
    size_t *first = calloc(r->n_threads + 1, sizeof(size_t)), n = 0;
    for (size_t i = 0; first && i < r->n_intervals; i++) {
        const rga_interval_t *iv = &r->intervals[i];
        long li = rga_report_label_set_index(r, iv->label_set);
        if (li >= 0 && ok[li] && iv->end_ns > p->from_ns && iv->start_ns < p->to_ns) {
            first[iv->thread_index + 1]++;
            n++;
        }
    }
    size_t *list = first ? malloc((n ? n : 1) * sizeof(size_t)) : NULL,
           *fill = list ? calloc(r->n_threads + 1, sizeof(size_t)) : NULL;
    if (!fill) {
        free(first);
        free(list);
        b->failed = true;
        return;
    }
    for (size_t t = 0; t < r->n_threads; t++)
        first[t + 1] += first[t];
    reserve(b, n);
    for (size_t i = 0; i < r->n_intervals; i++) {
        const rga_interval_t *iv = &r->intervals[i];
        long li = rga_report_label_set_index(r, iv->label_set);
        if (li >= 0 && ok[li] && iv->end_ns > p->from_ns && iv->start_ns < p->to_ns)
            list[first[iv->thread_index] + fill[iv->thread_index]++] = i;
    }
    for (size_t t = 0; t < r->n_threads && !b->failed; t++) {
        b->thread = (uint32_t)t;
        for (size_t k = first[t]; k < first[t + 1] && !b->failed; k++)
            rga_rc_explain_interval(ix, list[k], p->from_ns, p->to_ns, on_piece, b);
        p->n_threads += first[t + 1] > first[t];
    }
    free(first);
    free(list);
    free(fill);
}

static rga_status_t
finish(builder_t *b, rga_error_t *err)
{
    rga_critical_path_t *p = b->p;
    for (size_t i = 1; i < p->n_segments; i++) {
        /* A hand-off: the subject's thread, next moment, explained by another thread. */
        const rga_cp_segment_t *a = &p->segments[i - 1], *c = &p->segments[i];
        p->handoffs += a->thread == c->thread && a->end_ns == c->start_ns && a->root.thread != c->root.thread;
    }
    p->shares = calloc(b->shares.n + 1, sizeof(*p->shares));
    if (!p->shares)
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory building the critical path");
    for (size_t i = 0; i < b->shares.n; i++) {
        const rga_key_entry_t *e = &b->shares.entries[i];
        p->shares[i] = (rga_rc_share_t){0,
                                        -1,
                                        (e->key[0] >> 16) != 0,
                                        {(uint8_t)(e->key[0] & 0xff), (uint8_t)((e->key[0] >> 8) & 0xff),
                                         (int32_t)e->key[1], -1},
                                        e->sum[0]};
    }
    p->n_shares = b->shares.n;
    qsort(p->shares, p->n_shares, sizeof(*p->shares), cmp_share);
    return RGA_OK;
}

/* The subject's label sets (ok[label set index]) for a label path. */
static rga_status_t
label_subject(const rga_report_t *r, const rga_cp_spec_t *spec, rga_critical_path_t *p, bool **ok, rga_error_t *err)
{
    *ok = calloc(r->n_label_sets ? r->n_label_sets : 1, sizeof(bool));
    if (!*ok)
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory building the critical path");
    if (spec->label_set_given) {
        long li = rga_report_label_set_index(r, spec->label_set);
        if (li < 0)
            return rga_error_set(err, RGA_ERR_ARGUMENT, "critical path: no label set %lld",
                                 (long long)spec->label_set);
        (*ok)[li] = true;
        rga_label_set_text(r, spec->label_set, p->label, sizeof(p->label));
        return RGA_OK;
    }
    const char *kv = spec->subject + 6;
    if (!strchr(kv, '=') || kv[0] == '=')
        return rga_error_set(err, RGA_ERR_ARGUMENT, "--critical-path %s: expected label=KEY=VALUE", spec->subject);
    snprintf(p->label, sizeof(p->label), "%s", kv);
    if (match_labels(r, kv, *ok) == 0)
        return rga_error_set(err, RGA_ERR_ARGUMENT, "--critical-path %s: no label set has %s", spec->subject, kv);
    return RGA_OK;
}

/* A thread path's window: its lifetime (and intervals) clipped to the spec's. */
static rga_status_t
thread_window(rga_rc_index_t *ix, const rga_report_t *r, const char *subject, rga_critical_path_t *p,
              rga_error_t *err)
{
    const rga_thread_t *th = &r->threads[p->thread];
    int64_t first = th->first_seen_ns, last = th->last_seen_ns;
    size_t n;
    const size_t *list = rga_rc_thread_intervals(ix, (size_t)p->thread, &n);
    if (n > 0) {
        first = r->intervals[list[0]].start_ns < first ? r->intervals[list[0]].start_ns : first;
        last = r->intervals[list[n - 1]].end_ns > last ? r->intervals[list[n - 1]].end_ns : last;
    }
    if (p->from_ns >= last || p->to_ns <= first) {
        char a[32], z[32], f[32], l[32];
        return rga_error_set(err, RGA_ERR_ARGUMENT,
                             "--critical-path %s: the window %s .. %s holds none of its time (%s .. %s)", subject,
                             rga_format_duration(p->from_ns, a, sizeof(a)),
                             rga_format_duration(p->to_ns, z, sizeof(z)), rga_format_duration(first, f, sizeof(f)),
                             rga_format_duration(last, l, sizeof(l)));
    }
    p->from_ns = p->from_ns > first ? p->from_ns : first;
    p->to_ns = p->to_ns < last ? p->to_ns : last;
    return RGA_OK;
}

rga_status_t
rga_critical_path_build_on(rga_rc_index_t *ix, rga_rc_stacks_t *stacks, const rga_report_t *r,
                           const rga_cp_spec_t *spec, rga_critical_path_t *p, rga_error_t *err)
{
    memset(p, 0, sizeof(*p));
    p->report = r;
    p->thread = -1;
    p->stacks = stacks;
    rga_key_table_init(&p->parts);
    const char *subject = spec->subject ? spec->subject : "";
    if (!*subject && !spec->label_set_given)
        return rga_error_set(err, RGA_ERR_ARGUMENT,
                             "--critical-path: expected a thread (seq or name) or label=KEY=VALUE");
    if (r->n_intervals == 0)
        return rga_error_set(err, RGA_ERR_MISSING, "--critical-path %s: %s", subject,
                             rga_summary_no_roots_reason(r));
    p->by_label = spec->label_set_given || strncmp(subject, "label=", 6) == 0;
    p->from_ns = spec->from_ns > 0 ? spec->from_ns : 0;
    p->to_ns = spec->to_ns > 0 ? spec->to_ns : INT64_MAX; /* a thread's: its end; a label's: its last interval's */
    bool *ok = NULL;
    builder_t b = {.p = p};
    rga_key_table_init(&b.shares);
    rga_status_t st;
    if (p->by_label) {
        st = label_subject(r, spec, p, &ok, err);
    } else {
        long t;
        st = find_thread(r, subject, &t, err);
        p->thread = t;
        p->n_threads = 1;
        if (st == RGA_OK)
            st = thread_window(ix, r, subject, p, err);
    }
    if (st != RGA_OK)
        goto done;
    if (p->by_label) {
        explain_label(&b, ix, ok);
        /* A window not given is the label's time: its first interval to its last. */
        for (size_t i = 0; i < p->n_segments; i++) {
            if (i == 0 && spec->from_ns <= 0)
                p->from_ns = p->segments[i].start_ns;
            if (i == 0 && spec->to_ns <= 0)
                p->to_ns = p->segments[i].end_ns;
            if (spec->from_ns <= 0 && p->segments[i].start_ns < p->from_ns)
                p->from_ns = p->segments[i].start_ns;
            if (spec->to_ns <= 0 && p->segments[i].end_ns > p->to_ns)
                p->to_ns = p->segments[i].end_ns;
        }
    } else {
        size_t n;
        rga_rc_thread_intervals(ix, (size_t)p->thread, &n);
        reserve(&b, n);
        b.thread = (uint32_t)p->thread;
        rga_rc_explain(ix, (size_t)p->thread, p->from_ns, p->to_ns, on_piece, &b);
    }
    if (b.failed) {
        st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory building the critical path");
    } else if (p->covered_ns == 0) {
        char a[32], z[32];
        st = rga_error_set(err, RGA_ERR_ARGUMENT,
                           "--critical-path %s: no interval of it lies in the window %s .. %s", subject,
                           rga_format_duration(p->from_ns, a, sizeof(a)),
                           rga_format_duration(p->to_ns, z, sizeof(z)));
    } else {
        st = finish(&b, err);
    }
done:
    rga_key_table_free(&b.shares);
    free(ok);
    if (st != RGA_OK) {
        p->stacks = NULL; /* the caller's */
        rga_critical_path_free(p);
    }
    return st;
}

rga_status_t
rga_critical_path_build(const rga_report_t *r, const rga_cp_spec_t *spec, rga_critical_path_t *p, rga_error_t *err)
{
    memset(p, 0, sizeof(*p));
    if (r->n_intervals == 0) /* said by build_on, before any index is made */
        return rga_critical_path_build_on(NULL, NULL, r, spec, p, err);
    rga_rc_index_t *ix = NULL;
    rga_rc_stacks_t *stacks = NULL;
    rga_status_t st = rga_rc_index_build(r, &ix, err);
    if (st == RGA_OK)
        st = rga_rc_stacks_build(r, &stacks, err);
    if (st == RGA_OK)
        st = rga_critical_path_build_on(ix, stacks, r, spec, p, err);
    if (st == RGA_OK)
        p->owns_stacks = true;
    else
        rga_rc_stacks_free(stacks);
    rga_rc_index_free(ix);
    return st;
}

void
rga_critical_path_free(rga_critical_path_t *p)
{
    free(p->segments);
    free(p->hops);
    free(p->shares);
    rga_key_table_free(&p->parts);
    if (p->owns_stacks)
        rga_rc_stacks_free(p->stacks);
    memset(p, 0, sizeof(*p));
}

/* ---- text ----------------------------------------------------------------------------- */

static const char *
hop_how(const rga_rc_hop_t *h)
{
    return h->state == RGA_STATE_GVL_WAIT ? "GVL" : rga_cause_name(h->cause);
}

char *
rga_cp_segment_text(const rga_critical_path_t *p, const rga_cp_segment_t *s, char *buf, size_t size)
{
    const rga_report_t *r = p->report;
    size_t used = 0;
    char what[96], who[160];
    buf[0] = '\0';
    for (size_t i = 0; i < s->n_hops && used + 1 < size; i++) {
        const rga_rc_hop_t *h = &p->hops[s->first_hop + i];
        int n;
        if (i == 0)
            n = snprintf(buf + used, size - used, "%s", hop_how(h));
        else
            n = snprintf(buf + used, size - used, " → %s %s",
                         rga_thread_label(r, r->threads[h->thread].seq, who, sizeof(who)), hop_how(h));
        used += n > 0 ? (size_t)n : 0;
    }
    rga_rc_root_what(&s->root, what, sizeof(what));
    if (s->n_hops == 0)
        snprintf(buf, size, "%s", what);
    else if (used + 1 < size && s->root.kind == RGA_RC_HANDOFF)
        snprintf(buf + used, size - used, " → hand-off (no GVL holder)");
    else if (used + 1 < size)
        snprintf(buf + used, size - used, " → %s: %s", rga_rc_root_who(r, &s->root, who, sizeof(who)), what);
    return buf;
}

/* The k-th largest of n lengths (k < n), by quickselect: a partial reorder of len. */
static int64_t
kth_largest(int64_t *len, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int64_t pivot = len[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (len[i] > pivot)
                i++;
            while (len[j] < pivot)
                j--;
            if (i <= j) {
                int64_t t = len[i];
                len[i] = len[j];
                len[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return len[k];
    }
    return len[k];
}

unsigned char *
rga_cp_longest(const rga_critical_path_t *p, size_t rows)
{
    size_t n = p->n_segments;
    unsigned char *mark = calloc(n + 1, 1);
    if (!mark)
        return NULL;
    if (n <= rows) {
        memset(mark, 1, n);
        return mark;
    }
    int64_t *len = malloc(n * sizeof(*len));
    if (!len) {
        free(mark);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        len[i] = p->segments[i].end_ns - p->segments[i].start_ns;
    int64_t threshold = rows ? kth_largest(len, n, rows - 1) : INT64_MAX;
    size_t above = 0;
    for (size_t i = 0; i < n; i++)
        above += p->segments[i].end_ns - p->segments[i].start_ns > threshold;
    size_t ties = rows - above; /* the first ones in time order */
    for (size_t i = 0; i < n; i++) {
        int64_t l = p->segments[i].end_ns - p->segments[i].start_ns;
        if (l > threshold || (l == threshold && ties > 0 && ties--))
            mark[i] = 1;
    }
    free(len);
    return mark;
}

static void
subject_text(const rga_critical_path_t *p, char *buf, size_t size)
{
    char name[160], label[512];
    if (p->by_label)
        snprintf(buf, size, "label %s", rga_term_escape(p->label, label, sizeof(label)));
    else
        snprintf(buf, size, "%s",
                 rga_thread_label(p->report, p->report->threads[p->thread].seq, name, sizeof(name)));
}

/* One row of the segment table; the thread column only on a label path. */
static int
add_row(rga_table_t *t, bool label, const char *start, const char *len, const char *who, const char *text,
        const char *color)
{
    const char *cells4[] = {start, len, who, text}, *cells3[] = {start, len, text};
    return rga_table_add(t, label ? cells4 : cells3, color);
}

static int
write_segments(const rga_critical_path_t *p, FILE *out, bool color, size_t rows)
{
    unsigned char *mark = rga_cp_longest(p, rows);
    size_t n_order = 0, *order = rga_cp_order(p, NULL, &n_order);
    rga_table_t t;
    bool label = p->by_label;
    if (!mark || !order ||
        rga_table_init(&t, label ? 4 : 3,
                       label ? (const char *const[]){"start", "length", "thread", "path"}
                             : (const char *const[]){"start", "length", "path"}) != 0) {
        free(mark);
        free(order);
        return -1;
    }
    rga_table_left(&t, label ? 3 : 2);
    if (label)
        rga_table_left(&t, 2);
    int rc = 0;
    size_t skipped = 0;
    int64_t skipped_ns = 0;
    for (size_t k = 0; k <= n_order && rc == 0; k++) {
        size_t i = k < n_order ? order[k] : p->n_segments;
        if (i < p->n_segments && !mark[i]) {
            skipped++;
            skipped_ns += p->segments[i].end_ns - p->segments[i].start_ns;
            continue;
        }
        char start[32], len[32], who[160], text[2048];
        if (skipped) {
            snprintf(text, sizeof(text), "… %zu shorter segment%s", skipped, skipped == 1 ? "" : "s");
            rc = add_row(&t, label, "", rga_format_duration(skipped_ns, len, sizeof(len)), "", text,
                         color ? "\033[2m" : NULL);
            skipped = 0;
            skipped_ns = 0;
        }
        if (i == p->n_segments || rc != 0)
            break;
        const rga_cp_segment_t *s = &p->segments[i];
        rc = add_row(&t, label, rga_format_duration(s->start_ns, start, sizeof(start)),
                     rga_format_duration(s->end_ns - s->start_ns, len, sizeof(len)),
                     rga_thread_label(p->report, p->report->threads[s->thread].seq, who, sizeof(who)),
                     rga_cp_segment_text(p, s, text, sizeof(text)), NULL);
    }
    if (rc == 0)
        rga_table_print(&t, out, 2, color);
    rga_table_free(&t);
    free(mark);
    free(order);
    return rc;
}

static int
write_shares(const rga_critical_path_t *p, FILE *out, bool color, size_t columns)
{
    rga_table_t t;
    if (rga_table_init(&t, 5, (const char *const[]){"root", "what", "time", "share", "stack (leaf first)"}) != 0)
        return -1;
    rga_table_left(&t, 1);
    rga_table_left(&t, 4);
    int rc = 0;
    for (size_t i = 0; i < p->n_shares && rc == 0; i++) {
        const rga_rc_share_t *x = &p->shares[i];
        char who[160], what[96], time[32], share[32], stack[512] = "";
        rga_rc_root_who(p->report, &x->root, who, sizeof(who));
        rga_rc_root_what(&x->root, what, sizeof(what) - 16);
        if (x->own)
            strcat(what, " (own time)");
        rga_format_duration(x->ns, time, sizeof(time));
        rga_format_percent(x->ns, p->covered_ns, share, sizeof(share));
        rga_rc_stack_t st;
        long n = rga_rc_top_stacks(&p->parts, p->stacks, &x->root, &st, 1);
        if (n < 0) {
            rc = -1;
            break;
        }
        if (n == 1)
            rga_stack_line_keep(p->report, st.stack, columns > 100 ? columns - 60 : 40, 3, stack, sizeof(stack));
        const char *cells[] = {who, what, time, share, stack};
        rc = rga_table_add(&t, cells, NULL);
    }
    if (rc == 0)
        rga_table_print(&t, out, 2, color);
    rga_table_free(&t);
    return rc;
}

rga_status_t
rga_critical_path_write_text(const rga_critical_path_t *p, FILE *out, const rga_cp_text_opts_t *opts,
                             rga_error_t *err)
{
    bool color = opts && opts->color;
    size_t rows = opts && opts->rows ? opts->rows : 40, columns = opts && opts->columns ? opts->columns : 100;
    char subject[640], a[32], z[32], len[32], own[32], own_pct[32], behind[32], behind_pct[32];
    subject_text(p, subject, sizeof(subject));
    fprintf(out, "%sCritical path of %s%s, %s .. %s (%s", color ? "\033[1m" : "", subject, color ? "\033[0m" : "",
            rga_format_duration(p->from_ns, a, sizeof(a)), rga_format_duration(p->to_ns, z, sizeof(z)),
            rga_format_duration(p->covered_ns, len, sizeof(len)));
    if (p->by_label)
        fprintf(out, " of thread time on %zu thread%s", p->n_threads, p->n_threads == 1 ? "" : "s");
    fprintf(out, ")\n  own time %s (%s), behind other threads %s (%s), %zu hand-off%s\n",
            rga_format_duration(p->own_ns, own, sizeof(own)),
            rga_format_percent(p->own_ns, p->covered_ns, own_pct, sizeof(own_pct)),
            rga_format_duration(p->covered_ns - p->own_ns, behind, sizeof(behind)),
            rga_format_percent(p->covered_ns - p->own_ns, p->covered_ns, behind_pct, sizeof(behind_pct)),
            p->handoffs, p->handoffs == 1 ? "" : "s");
    fprintf(out, "\n%sSegments%s (in time order; the %zu longest of %zu)\n", color ? "\033[1;4m" : "",
            color ? "\033[0m" : "", p->n_segments < rows ? p->n_segments : rows, p->n_segments);
    int rc = write_segments(p, out, color, rows);
    if (rc == 0) {
        fprintf(out, "\n%sShares by root cause%s (stacks: the root thread's samples in that state)\n",
                color ? "\033[1;4m" : "", color ? "\033[0m" : "");
        rc = write_shares(p, out, color, columns);
    }
    if (rc != 0)
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory writing the critical path");
    if (ferror(out))
        return rga_error_set(err, RGA_ERR_IO, "write error: %s", strerror(errno));
    return RGA_OK;
}

/* ---- JSON ------------------------------------------------------------------------------ */

static json_t *
segment_json(const rga_critical_path_t *p, const rga_cp_segment_t *s, bool *ok)
{
    const rga_report_t *r = p->report;
    json_t *hops = json_array();
    for (size_t i = 0; hops && i < s->n_hops; i++) {
        const rga_rc_hop_t *h = &p->hops[s->first_hop + i];
        rga_json_push(hops,
                      json_pack("{s:I, s:s, s:s}", "thread", (json_int_t)r->threads[h->thread].seq, "name",
                                r->threads[h->thread].name, "wait",
                                h->state == RGA_STATE_GVL_WAIT ? "gvl" : rga_cause_name(h->cause)),
                      ok);
    }
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:o, s:o}", "start_ns", (json_int_t)s->start_ns, "end_ns",
                          (json_int_t)s->end_ns, "thread", (json_int_t)r->threads[s->thread].seq, "label_set",
                          (json_int_t)s->label_set, "hops", hops ? hops : json_null(), "root",
                          rga_rc_root_json(r, &s->root));
    if (!o || !hops)
        *ok = false;
    return o;
}

json_t *
rga_critical_path_to_json(const rga_critical_path_t *p)
{
    const rga_report_t *r = p->report;
    bool ok = true;
    json_t *o = json_object();
    if (!o)
        return NULL;
    rga_json_put(o, "format", json_string("rperf-gvl-critical-path"), &ok);
    rga_json_put(o, "version", json_integer(1), &ok);
    if (p->by_label)
        rga_json_put(o, "subject",
                     json_pack("{s:s, s:s, s:I}", "kind", "label", "label", p->label, "threads",
                               (json_int_t)p->n_threads),
                     &ok);
    else
        rga_json_put(o, "subject",
                     json_pack("{s:s, s:I, s:s}", "kind", "thread", "thread", (json_int_t)r->threads[p->thread].seq,
                               "name", r->threads[p->thread].name),
                     &ok);
    rga_json_put(o, "from_ns", json_integer(p->from_ns), &ok);
    rga_json_put(o, "to_ns", json_integer(p->to_ns), &ok);
    rga_json_put(o, "covered_ns", json_integer(p->covered_ns), &ok);
    rga_json_put(o, "own_ns", json_integer(p->own_ns), &ok);
    rga_json_put(o, "handoffs", json_integer((json_int_t)p->handoffs), &ok);
    size_t n_order = 0, *order = rga_cp_order(p, NULL, &n_order);
    json_t *segments = order ? json_array() : NULL;
    for (size_t i = 0; ok && segments && i < n_order; i++)
        rga_json_push(segments, segment_json(p, &p->segments[order[i]], &ok), &ok);
    free(order);
    rga_json_put(o, "segments", segments, &ok);
    json_t *shares = json_array();
    for (size_t i = 0; ok && shares && i < p->n_shares; i++) {
        const rga_rc_share_t *x = &p->shares[i];
        json_t *row = rga_rc_root_json(r, &x->root);
        if (row) {
            rga_json_put(row, "own", json_boolean(x->own), &ok);
            rga_json_put(row, "ns", json_integer(x->ns), &ok);
            rga_json_put(row, "stacks",
                         rga_rc_stacks_json(r, &p->parts, p->stacks, &x->root, RGA_SUMMARY_ROOT_STACKS), &ok);
        }
        rga_json_push(shares, row, &ok);
    }
    rga_json_put(o, "shares", shares, &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

rga_status_t
rga_critical_path_write_json(const rga_critical_path_t *p, FILE *out, rga_error_t *err)
{
    return rga_json_write(rga_critical_path_to_json(p), out, "the critical path JSON", err);
}
