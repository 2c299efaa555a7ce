/* summary_text.c — the human-readable summary (default view of the CLI).
 *
 * Formats an rga_summary_t as aligned tables with readable units; colour
 * (ANSI) only when asked. Computes nothing beyond percentages.
 */
#include "stack_text.h"
#include "summary.h"
#include "table.h"
#include "units.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define C_RED "\033[31m"
#define C_YELLOW "\033[33m"
#define C_DIM "\033[2m"

static const char *
wait_color(int64_t wait, int64_t whole)
{
    if (whole <= 0)
        return NULL;
    double share = (double)wait / (double)whole;
    return share >= 0.20 ? C_RED : share >= 0.05 ? C_YELLOW : NULL;
}

static void
heading(FILE *out, const char *title, bool color)
{
    fprintf(out, "\n%s%s%s\n", color ? "\033[1;4m" : "", title, color ? "\033[0m" : "");
}


static int
add_state_row(rga_table_t *t, const char *first, const char *second, int64_t lifetime, const int64_t *state_ns,
              bool color)
{
    char life[32], run[32], wait[32], blk[32], gc[32], pct[32];
    rga_format_duration(lifetime, life, sizeof(life));
    rga_format_duration(state_ns[RGA_STATE_RUNNING], run, sizeof(run));
    rga_format_duration(state_ns[RGA_STATE_GVL_WAIT], wait, sizeof(wait));
    rga_format_duration(state_ns[RGA_STATE_BLOCKED], blk, sizeof(blk));
    rga_format_duration(rga_summary_gc_ns(state_ns), gc, sizeof(gc));
    rga_format_percent(state_ns[RGA_STATE_GVL_WAIT], lifetime, pct, sizeof(pct));
    const char *cells[] = {first, second, life, run, wait, blk, gc, pct};
    return rga_table_add(t, cells, color ? wait_color(state_ns[RGA_STATE_GVL_WAIT], lifetime) : NULL);
}

static const rga_summary_ractor_t *
ractor_row(const rga_summary_t *s, int64_t id)
{
    for (size_t i = 0; i < s->n_ractors; i++)
        if (s->ractors[i].id == id)
            return &s->ractors[i];
    return NULL;
}

static int
write_threads(const rga_summary_t *s, FILE *out, bool color)
{
    const rga_report_t *r = s->report;
    heading(out, "Threads", color);
    rga_table_t t;
    if (rga_table_init(&t, 9,
                       (const char *const[]){"thread", "ractor", "lifetime", "running", "GVL wait", "blocked", "GC",
                                             "wait %", ""}) != 0)
        return -1;
    rga_table_left(&t, 8);
    int rc = 0;
    for (size_t i = 0; i < s->n_threads && rc == 0; i++) {
        const rga_summary_thread_t *th = &s->threads[i];
        char name[160], ractor[32], life[32], run[32], wait[32], blk[32], gc[32], pct[32];
        rga_thread_label(r, th->seq, name, sizeof(name));
        if (ractor_row(s, th->ractor) && !ractor_row(s, th->ractor)->identified)
            snprintf(ractor, sizeof(ractor), "?");
        else
            snprintf(ractor, sizeof(ractor), "%lld", (long long)th->ractor);
        rga_format_duration(th->lifetime_ns, life, sizeof(life));
        rga_format_duration(th->state_ns[RGA_STATE_RUNNING], run, sizeof(run));
        rga_format_duration(th->state_ns[RGA_STATE_GVL_WAIT], wait, sizeof(wait));
        rga_format_duration(th->state_ns[RGA_STATE_BLOCKED], blk, sizeof(blk));
        rga_format_duration(rga_summary_gc_ns(th->state_ns), gc, sizeof(gc));
        rga_format_percent(th->state_ns[RGA_STATE_GVL_WAIT], th->lifetime_ns, pct, sizeof(pct));
        const char *cells[] = {name, ractor, life, run, wait, blk, gc, pct, th->exited ? "exited" : ""};
        rc = rga_table_add(&t, cells, color ? wait_color(th->state_ns[RGA_STATE_GVL_WAIT], th->lifetime_ns) : NULL);
    }
    if (rc == 0) {
        char life[32], run[32], wait[32], blk[32], gc[32], pct[32];
        const char *cells[] = {"total",
                               "",
                               rga_format_duration(s->total_lifetime_ns, life, sizeof(life)),
                               rga_format_duration(s->total_ns[RGA_STATE_RUNNING], run, sizeof(run)),
                               rga_format_duration(s->total_ns[RGA_STATE_GVL_WAIT], wait, sizeof(wait)),
                               rga_format_duration(s->total_ns[RGA_STATE_BLOCKED], blk, sizeof(blk)),
                               rga_format_duration(rga_summary_gc_ns(s->total_ns), gc, sizeof(gc)),
                               rga_format_percent(s->total_ns[RGA_STATE_GVL_WAIT], s->total_lifetime_ns, pct,
                                                  sizeof(pct)),
                               ""};
        rc = rga_table_add(&t, cells, color ? "\033[1m" : NULL);
    }
    if (rc == 0)
        rga_table_print(&t, out, 2, color);
    rga_table_free(&t);
    return rc;
}

static int
write_ractors(const rga_summary_t *s, FILE *out, bool color)
{
    heading(out, "Ractors", color);
    rga_table_t t;
    if (rga_table_init(&t, 8,
                       (const char *const[]){"ractor", "threads", "thread time", "running", "GVL wait", "blocked",
                                             "GC", "wait %"}) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < s->n_ractors && rc == 0; i++) {
        const rga_summary_ractor_t *rc_ = &s->ractors[i];
        if (rc_->n_threads == 0)
            continue;
        char id[48], n[24];
        if (rc_->identified)
            snprintf(id, sizeof(id), "%lld%s", (long long)rc_->id, rc_->main ? " (main)" : "");
        else
            snprintf(id, sizeof(id), "? (unidentified)");
        snprintf(n, sizeof(n), "%zu", rc_->n_threads);
        rc = add_state_row(&t, id, n, rc_->lifetime_ns, rc_->state_ns, color);
    }
    if (rc == 0)
        rga_table_print(&t, out, 2, color);
    rga_table_free(&t);
    return rc;
}

static int
write_labels(const rga_summary_t *s, FILE *out, bool color)
{
    if (s->n_labels == 0)
        return 0;
    heading(out, "Label sets", color);
    rga_table_t t;
    if (rga_table_init(&t, 8,
                       (const char *const[]){"labels", "threads", "time", "running", "GVL wait", "blocked", "GC",
                                             "wait %"}) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < s->n_labels && rc == 0; i++) {
        const rga_summary_label_t *l = &s->labels[i];
        char raw[256], text[256], n[24];
        int64_t time = 0;
        for (int k = 0; k < RGA_STATE_COUNT; k++)
            time += l->state_ns[k];
        rga_term_escape(rga_label_set_text(s->report, l->label_set, raw, sizeof(raw)), text, sizeof(text));
        snprintf(n, sizeof(n), "%zu", l->n_threads);
        rc = add_state_row(&t, text, n, time, l->state_ns, color);
    }
    if (rc == 0)
        rga_table_print(&t, out, 2, color);
    rga_table_free(&t);
    return rc;
}

static int
write_waiters(const rga_summary_t *s, FILE *out, bool color, size_t top)
{
    heading(out, "Top waiters (GVL wait)", color);
    if (s->n_waiters == 0) {
        fprintf(out, "  no thread waited for the GVL\n");
        return 0;
    }
    rga_table_t t;
    if (rga_table_init(&t, 5, (const char *const[]){"thread", "GVL wait", "waits", "mean wait", "of lifetime"}) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < s->n_waiters && i < top && rc == 0; i++) {
        const rga_summary_thread_t *th = &s->threads[s->waiters[i]];
        char name[160], wait[32], waits[32], mean[32], pct[32];
        int64_t w = th->state_ns[RGA_STATE_GVL_WAIT];
        rga_thread_label(s->report, th->seq, name, sizeof(name));
        rga_format_duration(w, wait, sizeof(wait));
        snprintf(waits, sizeof(waits), "%lld", (long long)th->waits);
        if (th->waits > 0)
            rga_format_duration(w / th->waits, mean, sizeof(mean));
        else
            snprintf(mean, sizeof(mean), "-");
        rga_format_percent(w, th->lifetime_ns, pct, sizeof(pct));
        const char *cells[] = {name, wait, waits, mean, pct};
        rc = rga_table_add(&t, cells, color ? wait_color(w, th->lifetime_ns) : NULL);
    }
    if (rc == 0)
        rga_table_print(&t, out, 2, color);
    rga_table_free(&t);
    return rc;
}

static int
write_holders(const rga_summary_t *s, FILE *out, bool color, size_t top)
{
    heading(out, "Top holders (who made others wait)", color);
    if (s->n_holders == 0) {
        fprintf(out, "  no wait-graph edges\n");
        return 0;
    }
    rga_table_t t;
    if (rga_table_init(&t, 4, (const char *const[]){"holder", "caused wait", "share", "waits"}) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < s->n_holders && i < top && rc == 0; i++) {
        const rga_summary_holder_t *h = &s->holders[i];
        char name[160], wait[32], share[32], count[32];
        if (h->kind == RGA_HOLDER_THREAD)
            rga_thread_label(s->report, h->seq, name, sizeof(name));
        else if (h->kind == RGA_HOLDER_GC)
            snprintf(name, sizeof(name), "[GC]");
        else if (h->kind == RGA_HOLDER_HANDOFF)
            snprintf(name, sizeof(name), "[hand-off latency]");
        else
            snprintf(name, sizeof(name), "[unknown]");
        rga_format_duration(h->wait_ns, wait, sizeof(wait));
        rga_format_percent(h->wait_ns, s->total_edge_wait_ns, share, sizeof(share));
        snprintf(count, sizeof(count), "%lld", (long long)h->count);
        const char *cells[] = {name, wait, share, count};
        rc = rga_table_add(&t, cells, NULL);
    }
    if (rc == 0)
        rga_table_print(&t, out, 2, color);
    rga_table_free(&t);
    return rc;
}

/* A cause and its time, for listing one row's causes largest first. */
typedef struct cause_time {
    int cause;
    int64_t ns;
} cause_time_t;

static int
cmp_cause_time(const void *a, const void *b)
{
    const cause_time_t *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? 1 : -1;
    return x->cause - y->cause;
}

/* Adds one row per nonzero cause of cause_ns (largest first) under the
 * name, which only the first row shows. */
static int
add_cause_rows(rga_table_t *t, const char *name, int64_t blocked_ns, const int64_t *cause_ns)
{
    cause_time_t list[RGA_CAUSE_COUNT];
    size_t n = 0;
    for (int c = 0; c < RGA_CAUSE_COUNT; c++)
        if (cause_ns[c] > 0)
            list[n++] = (cause_time_t){c, cause_ns[c]};
    qsort(list, n, sizeof(list[0]), cmp_cause_time);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char blocked[32], time[32], share[32];
        rga_format_duration(blocked_ns, blocked, sizeof(blocked));
        rga_format_duration(list[i].ns, time, sizeof(time));
        rga_format_percent(list[i].ns, blocked_ns, share, sizeof(share));
        const char *cells[] = {i == 0 ? name : "", i == 0 ? blocked : "", rga_cause_name(list[i].cause), time,
                               share};
        rc = rga_table_add(t, cells, NULL);
    }
    return rc;
}

static const char *const cause_header[] = {"", "blocked", "cause", "time", "of blocked"};

/* Blocked time by cause per thread and per label set (report minor 1). */
static int
write_causes(const rga_summary_t *s, FILE *out, bool color)
{
    if (!s->has_causes)
        return 0;
    heading(out, "Blocked by cause (per thread)", color);
    rga_table_t t;
    const char *header[5];
    memcpy(header, cause_header, sizeof(header));
    header[0] = "thread";
    if (rga_table_init(&t, 5, header) != 0)
        return -1;
    rga_table_left(&t, 2);
    int rc = 0;
    size_t rows = 0;
    for (size_t i = 0; i < s->n_threads && rc == 0; i++) {
        const rga_summary_thread_t *th = &s->threads[i];
        if (!th->has_causes || th->state_ns[RGA_STATE_BLOCKED] == 0)
            continue;
        char name[160];
        rga_thread_label(s->report, th->seq, name, sizeof(name));
        rc = add_cause_rows(&t, name, th->state_ns[RGA_STATE_BLOCKED], th->cause_ns);
        rows++;
    }
    if (rc == 0 && rows)
        rga_table_print(&t, out, 2, color);
    else if (rc == 0)
        fprintf(out, "  no thread was blocked\n");
    rga_table_free(&t);
    if (rc != 0 || s->n_labels == 0)
        return rc;
    heading(out, "Blocked by cause (per label set)", color);
    header[0] = "labels";
    if (rga_table_init(&t, 5, header) != 0)
        return -1;
    rga_table_left(&t, 2);
    rows = 0;
    for (size_t i = 0; i < s->n_labels && rc == 0; i++) {
        const rga_summary_label_t *l = &s->labels[i];
        if (!l->has_causes || l->state_ns[RGA_STATE_BLOCKED] == 0)
            continue;
        char raw[256], text[256];
        rga_term_escape(rga_label_set_text(s->report, l->label_set, raw, sizeof(raw)), text, sizeof(text));
        rc = add_cause_rows(&t, text, l->state_ns[RGA_STATE_BLOCKED], l->cause_ns);
        rows++;
    }
    if (rc == 0 && rows)
        rga_table_print(&t, out, 2, color);
    else if (rc == 0)
        fprintf(out, "  no label set was blocked\n");
    rga_table_free(&t);
    return rc;
}

/* The leaf methods threads were blocked in under the cause `other`; no
 * section when there are none (the common case: every wait recognised). */
static int
write_other_methods(const rga_summary_t *s, FILE *out, bool color, size_t top)
{
    size_t others = 0;
    for (size_t i = 0; s->has_causes && i < s->n_methods; i++)
        others += s->methods[i]->cause == RGA_CAUSE_OTHER;
    if (!others)
        return 0;
    heading(out, "Blocked in other methods", color);
    rga_table_t t;
    if (rga_table_init(&t, 4, (const char *const[]){"thread", "method", "blocked", "times"}) != 0)
        return -1;
    rga_table_left(&t, 1);
    int rc = 0;
    size_t shown = 0;
    for (size_t i = 0; i < s->n_methods && shown < top && rc == 0; i++) {
        const rga_blocked_method_t *m = s->methods[i];
        if (m->cause != RGA_CAUSE_OTHER)
            continue;
        char name[160], method[256], time[32], count[32];
        rga_thread_label(s->report, m->thread, name, sizeof(name));
        rga_term_escape(m->method, method, sizeof(method));
        rga_format_duration(m->blocked_ns, time, sizeof(time));
        snprintf(count, sizeof(count), "%lld", (long long)m->count);
        const char *cells[] = {name, method, time, count};
        rc = rga_table_add(&t, cells, NULL);
        shown++;
    }
    if (rc == 0)
        rga_table_print(&t, out, 2, color);
    rga_table_free(&t);
    return rc;
}

/* Release edges: which thread woke which blocked thread, by cause. */
/* The releasers table of the waits that delayed work (idle false) or of
 * idle workers waiting for work (idle true). */
static int
write_releasers_of(const rga_summary_t *s, FILE *out, bool color, size_t top, bool idle)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_releases; i++)
        n += s->releases[i].idle == idle;
    if (idle && n == 0)
        return 0;
    heading(out,
            idle ? "Idle workers woken for work (unlabelled waits in a labelled report)"
                 : "Top releasers (who woke blocked threads)",
            color);
    if (n == 0) {
        fprintf(out, "  no release edges\n");
        return 0;
    }
    rga_table_t t;
    if (rga_table_init(&t, 5, (const char *const[]){"releaser", "waiter", "cause", "blocked", "wakes"}) != 0)
        return -1;
    rga_table_left(&t, 1);
    rga_table_left(&t, 2);
    int rc = 0;
    for (size_t i = 0, shown = 0; i < s->n_releases && shown < top && rc == 0; i++) {
        const rga_summary_release_t *x = &s->releases[i];
        if (x->idle != idle)
            continue;
        shown++;
        char releaser[160], waiter[160], time[32], count[32];
        if (x->releaser)
            rga_thread_label(s->report, x->releaser, releaser, sizeof(releaser));
        else
            snprintf(releaser, sizeof(releaser), "[no releaser found]");
        rga_thread_label(s->report, x->waiter, waiter, sizeof(waiter));
        rga_format_duration(x->blocked_ns, time, sizeof(time));
        if (x->releaser)
            snprintf(count, sizeof(count), "%lld", (long long)x->count);
        else
            snprintf(count, sizeof(count), "-");
        const char *cells[] = {releaser, waiter, x->releaser ? rga_cause_name(x->cause) : "mutex/condvar/queue/join",
                               time, count};
        rc = rga_table_add(&t, cells, NULL);
    }
    if (rc == 0)
        rga_table_print(&t, out, 2, color);
    rga_table_free(&t);
    return rc;
}

/* Waits that delayed work first; idle pools' waits for work apart, after
 * them, so they never crowd out the ones that matter. */
static int
write_releasers(const rga_summary_t *s, FILE *out, bool color, size_t top)
{
    if (!s->has_causes)
        return 0;
    int rc = write_releasers_of(s, out, color, top, false);
    return rc == 0 ? write_releasers_of(s, out, color, top, true) : rc;
}

/* A note when root causes cannot be shown or were cut somewhere. */
static void
roots_note(const rga_summary_t *s, FILE *out)
{
    const rga_rootcauses_t *rc = &s->roots;
    if (!rc->available) {
        fprintf(out, "  %s\n", rga_summary_no_roots_reason(s->report));
        return;
    }
    if (s->report->stats.dropped_intervals > 0)
        fprintf(out, "  the timeline dropped %lld intervals: chains through them end in \"no data\"\n",
                (long long)s->report->stats.dropped_intervals);
    if (rc->cycles || rc->depth_cuts) {
        char a[32], b[32];
        fprintf(out, "  chains cut: %lld at a cycle (%s), %lld deeper than %d hops (%s)\n", (long long)rc->cycles,
                rga_format_duration(rc->cycle_ns, a, sizeof(a)), (long long)rc->depth_cuts, RGA_RC_MAX_DEPTH,
                rga_format_duration(rc->depth_ns, b, sizeof(b)));
    }
}

/* Root causes: every wait (GVL and releasable blocks) followed along its
 * chain; "via others" is what reached the root through another waiting thread. */
static int
write_roots(const rga_summary_t *s, FILE *out, bool color, size_t top, size_t columns)
{
    const rga_rootcauses_t *rc = &s->roots;
    heading(out, "Root causes (who, at the end of each wait chain, made threads wait: GVL and locks)", color);
    if (!rc->available || rc->n_roots == 0) {
        if (rc->available)
            fprintf(out, "  no thread waited\n");
        roots_note(s, out);
        return 0;
    }
    rga_table_t t;
    if (rga_table_init(&t, 6,
                       (const char *const[]){"root", "what", "caused wait", "share", "via others",
                                             "stack (leaf first)"}) != 0)
        return -1;
    rga_table_left(&t, 1);
    rga_table_left(&t, 5);
    int rc_ = 0;
    for (size_t i = 0; i < rc->n_roots && i < top && rc_ == 0; i++) {
        const rga_rc_total_t *x = &rc->roots[i];
        char who[160], what[64], time[32], share[32], via[32], stack[512] = "";
        rga_rc_root_who(s->report, &x->root, who, sizeof(who));
        rga_rc_root_what(&x->root, what, sizeof(what));
        rga_format_duration(x->ns, time, sizeof(time));
        rga_format_percent(x->ns, rc->waited_ns, share, sizeof(share));
        rga_format_percent(x->chain_ns, x->ns, via, sizeof(via));
        rga_rc_stack_t st;
        long n = rga_rc_top_stacks(&rc->parts, s->root_stacks, &x->root, &st, 1);
        if (n < 0) {
            rc_ = -1;
            break;
        }
        size_t width = columns > 100 ? columns - 70 : 30;
        if (n == 1)
            rga_stack_line_keep(s->report, st.stack, width, 3, stack, sizeof(stack));
        const char *cells[] = {who, what, time, share, via, stack};
        rc_ = rga_table_add(&t, cells, NULL);
    }
    if (rc_ == 0)
        rga_table_print(&t, out, 2, color);
    rga_table_free(&t);
    if (rc_ == 0)
        roots_note(s, out);
    return rc_;
}

/* Each label set's time by root: its critical path's shares. */
static int
write_label_paths(const rga_summary_t *s, FILE *out, bool color, size_t top)
{
    const rga_rootcauses_t *rc = &s->roots;
    if (!rc->available || rc->n_labels == 0)
        return 0;
    heading(out, "Critical path by label set (its time by root cause, wait chains followed)", color);
    rga_table_t t;
    if (rga_table_init(&t, 6, (const char *const[]){"labels", "time", "root", "what", "time", "share"}) != 0)
        return -1;
    rga_table_left(&t, 2);
    rga_table_left(&t, 3);
    int rc_ = 0;
    for (size_t i = 0; i < rc->n_labels && i < top && rc_ == 0; i++) {
        const rga_rc_label_t *l = &rc->labels[i];
        char raw[256], text[256], total[32];
        rga_term_escape(rga_label_set_text(s->report, l->label_set, raw, sizeof(raw)), text, sizeof(text));
        rga_format_duration(l->time_ns, total, sizeof(total));
        for (size_t k = 0; k < l->n && k < 3 && rc_ == 0; k++) {
            const rga_rc_share_t *x = &rc->label_shares[l->first + k];
            char who[160], what[96], time[32], share[32];
            rga_rc_root_who(s->report, &x->root, who, sizeof(who));
            rga_rc_root_what(&x->root, what, sizeof(what) - 16);
            if (x->own) /* the label set's own thread, no wait on another */
                strcat(what, " (own time)");
            rga_format_duration(x->ns, time, sizeof(time));
            rga_format_percent(x->ns, l->time_ns, share, sizeof(share));
            const char *cells[] = {k == 0 ? text : "", k == 0 ? total : "", who, what, time, share};
            rc_ = rga_table_add(&t, cells, NULL);
        }
    }
    if (rc_ == 0)
        rga_table_print(&t, out, 2, color);
    rga_table_free(&t);
    return rc_;
}

/* A stack table row: one displayed line and the time of every stack that
 * shows as that line. */
typedef struct stack_row {
    char *text;
    int64_t ns;
} stack_row_t;

static int
cmp_row_text(const void *a, const void *b)
{
    return strcmp(((const stack_row_t *)a)->text, ((const stack_row_t *)b)->text);
}

static int
cmp_row_time(const void *a, const void *b)
{
    const stack_row_t *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? 1 : -1;
    return strcmp(x->text, y->text);
}

/* Renders every stack of list as a line and merges equal lines, so rows
 * that would read the same become one row holding their summed time.
 * Returns the rows, by time desc, or NULL (out of memory). */
static stack_row_t *
stack_rows(const rga_summary_t *s, const rga_summary_stack_t *list, size_t n, size_t width, size_t keep,
           size_t *n_rows)
{
    stack_row_t *rows = calloc(n, sizeof(*rows));
    if (!rows)
        return NULL;
    size_t made = 0;
    for (; made < n; made++) {
        char text[1024];
        rga_stack_line_keep(s->report, list[made].stack, width, keep, text, sizeof(text));
        rows[made].text = strdup(text);
        rows[made].ns = list[made].ns;
        if (!rows[made].text)
            break;
    }
    if (made < n) {
        for (size_t i = 0; i < made; i++)
            free(rows[i].text);
        free(rows);
        return NULL;
    }
    qsort(rows, n, sizeof(*rows), cmp_row_text);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (kept > 0 && strcmp(rows[kept - 1].text, rows[i].text) == 0) {
            rows[kept - 1].ns += rows[i].ns;
            free(rows[i].text);
        } else {
            rows[kept++] = rows[i];
        }
    }
    qsort(rows, kept, sizeof(*rows), cmp_row_time);
    *n_rows = kept;
    return rows;
}

static int
write_stacks(const rga_summary_t *s, FILE *out, bool color, size_t top, size_t columns, size_t keep,
             const char *title, const char *empty, const rga_summary_stack_t *list, size_t n)
{
    heading(out, title, color);
    if (n == 0) {
        fprintf(out, "  %s\n", empty);
        return 0;
    }
    int64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += list[i].ns;
    /* The stack column gets what the indent, time and share columns leave. */
    const size_t other_cols = 2 + 7 + 2 + 6 + 2, min_stack_cols = 40;
    size_t width = columns > other_cols + min_stack_cols ? columns - other_cols : min_stack_cols;
    size_t n_rows = 0;
    stack_row_t *rows = stack_rows(s, list, n, width, keep, &n_rows);
    if (!rows)
        return -1;
    rga_table_t t;
    int rc = rga_table_init(&t, 3, (const char *const[]){"time", "share", "stack (leaf first)"});
    if (rc == 0) {
        t.left[0] = false;
        rga_table_left(&t, 2);
        for (size_t i = 0; i < n_rows && i < top && rc == 0; i++) {
            char time[32], share[32];
            rga_format_duration(rows[i].ns, time, sizeof(time));
            rga_format_percent(rows[i].ns, total, share, sizeof(share));
            const char *cells[] = {time, share, rows[i].text};
            rc = rga_table_add(&t, cells, NULL);
        }
        if (rc == 0)
            rga_table_print(&t, out, 2, color);
        rga_table_free(&t);
    }
    for (size_t i = 0; i < n_rows; i++)
        free(rows[i].text);
    free(rows);
    return rc;
}

/* "1.2%", "0.04%", "<0.01%": a small drop keeps a digit that says how small. */
static char *
format_ppm(int64_t ppm, char *buf, size_t size)
{
    if (ppm >= 1000)
        snprintf(buf, size, "%.1f%%", (double)ppm / 1e4);
    else if (ppm >= 100)
        snprintf(buf, size, "%.2f%%", (double)ppm / 1e4);
    else
        snprintf(buf, size, "<0.01%%");
    return buf;
}

/* Each drop with its share of its kind: "incomplete" only when one is
 * material (summary.h), so one lost edge in a day of requests reads as such. */
static void
write_drops(const rga_summary_t *s, FILE *out, bool color)
{
    if (s->n_drops == 0)
        return;
    if (s->drops_material)
        fprintf(out, "%sincomplete report: the profiler's bounded tables dropped%s\n", color ? C_YELLOW : "",
                color ? "\033[0m" : "");
    else
        fprintf(out, "dropped, under %d%% of each kind (the figures hold):\n",
                RGA_SUMMARY_DROP_MATERIAL_PPM / 10000);
    for (size_t i = 0; i < s->n_drops; i++) {
        const rga_summary_drop_t *d = &s->drops[i];
        char share[32];
        format_ppm(rga_summary_drop_ppm(d), share, sizeof(share));
        if (d->of > 0)
            fprintf(out, "  %-15s %lld of %lld %s (%s): %s\n", d->what, (long long)d->dropped, (long long)d->of,
                    d->unit, share, d->effect);
        else
            fprintf(out, "  %-15s %lld %s (at most %s of blocked time): %s\n", d->what, (long long)d->dropped,
                    d->unit, share, d->effect);
    }
}

static void
write_header(const rga_summary_t *s, FILE *out, bool color)
{
    const rga_report_t *r = s->report;
    char dur[32], program[512], ruby[64], mode[32];
    rga_term_escape(r->meta.program, program, sizeof(program));
    rga_term_escape(r->meta.ruby_version, ruby, sizeof(ruby));
    rga_term_escape(r->meta.mode, mode, sizeof(mode));
    size_t identified = 0, unidentified_threads = 0, other_ractor_threads = 0;
    for (size_t i = 0; i < s->n_ractors; i++) {
        if (s->ractors[i].identified)
            identified++;
        else
            unidentified_threads += s->ractors[i].n_threads;
        if (!s->ractors[i].main)
            other_ractor_threads += s->ractors[i].n_threads;
    }
    fprintf(out, "%srperf-gvl summary%s: %s (pid %lld, ruby %s, %s mode, %lld Hz), %s, %zu threads, %zu Ractors",
            color ? "\033[1m" : "", color ? "\033[0m" : "", program[0] ? program : "(unknown program)",
            (long long)r->meta.pid, ruby[0] ? ruby : "?", mode[0] ? mode : "?", (long long)r->meta.frequency,
            rga_format_duration(r->meta.duration_ns, dur, sizeof(dur)), r->n_threads, identified);
    if (unidentified_threads)
        fprintf(out, " (and %zu thread%s whose Ractor was not identified)", unidentified_threads,
                unidentified_threads == 1 ? "" : "s");
    fputc('\n', out);
    /* Ruby 3.3 and 3.4 let a GC hook see only its own Ractor's GC, and a
     * hook added outside the main Ractor would switch off its TracePoints. */
    if (other_ractor_threads)
        fprintf(out, "GC run by threads outside the main Ractor counts as their running time "
                     "(docs/contention.md, \"Limits worth knowing\")\n");
    write_drops(s, out, color);
}

rga_status_t
rga_summary_write_text(const rga_summary_t *s, FILE *out, const rga_summary_text_opts_t *opts, rga_error_t *err)
{
    bool color = opts && opts->color;
    size_t top = (opts && opts->top) ? opts->top : 10;
    size_t columns = (opts && opts->columns) ? opts->columns : 100;
    write_header(s, out, color);
    int rc = write_threads(s, out, color);
    if (rc == 0)
        rc = write_ractors(s, out, color);
    if (rc == 0)
        rc = write_labels(s, out, color);
    if (rc == 0)
        rc = write_causes(s, out, color);
    if (rc == 0)
        rc = write_other_methods(s, out, color, top);
    if (rc == 0)
        rc = write_waiters(s, out, color, top);
    if (rc == 0)
        rc = write_holders(s, out, color, top);
    if (rc == 0)
        rc = write_releasers(s, out, color, top);
    if (rc == 0)
        rc = write_roots(s, out, color, top, columns);
    if (rc == 0)
        rc = write_label_paths(s, out, color, top);
    if (rc == 0)
        rc = write_stacks(s, out, color, top, columns, 1, "Top wait stacks (where threads waited for the GVL)",
                          "no samples in GVL wait", s->wait_stacks, s->n_wait_stacks);
    if (rc == 0)
        rc = write_stacks(s, out, color, top, columns, 1, "Top blame stacks (what ran while others waited)",
                          "no blame data", s->blame_stacks, s->n_blame_stacks);
    /* Only reports whose writer samples the releasers' stacks have them.
     * Their leaf is the releasing method (Mutex#unlock, Queue#push): its
     * caller is always shown too, the code that held the lock. */
    if (rc == 0 && s->has_causes && s->n_release_stacks > 0)
        rc = write_stacks(s, out, color, top, columns, 2,
                          "Top release stacks (what releasers ran when they woke a waiter)",
                          "no releaser stack sampled", s->release_stacks, s->n_release_stacks);
    if (rc != 0)
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory writing the summary");
    if (ferror(out))
        return rga_error_set(err, RGA_ERR_IO, "write error: %s", strerror(errno));
    return RGA_OK;
}
