/* timeline.c — bucketing intervals and drawing the terminal timeline (see timeline.h).
 *
 * Bucketing is O(intervals + touched buckets). It reads intervals only; the
 * thread totals in threads[] are not used here, so a report with dropped
 * intervals shows gaps rather than invented time.
 */
#include "timeline.h"
#include "term_text.h"
#include "units.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

rga_status_t
rga_timeline_build(const rga_report_t *r, const rga_filter_t *filter, int64_t from_ns, int64_t to_ns,
                   size_t n_buckets, rga_timeline_t *t, rga_error_t *err)
{
    memset(t, 0, sizeof(*t));
    t->report = r;
    if (to_ns <= 0)
        to_ns = rga_report_end_ns(r);
    if (n_buckets == 0)
        return rga_error_set(err, RGA_ERR_ARGUMENT, "timeline width must be at least 1");
    if (from_ns < 0 || to_ns <= from_ns)
        return rga_error_set(err, RGA_ERR_ARGUMENT, "empty time range (--from must be before --to)");
    t->from_ns = from_ns;
    t->to_ns = to_ns;
    t->n_buckets = n_buckets;
    t->row_thread = calloc(r->n_threads ? r->n_threads : 1, sizeof(size_t));
    long *row_of = calloc(r->n_threads ? r->n_threads : 1, sizeof(long));
    if (!t->row_thread || !row_of)
        goto nomem;
    for (size_t i = 0; i < r->n_threads; i++) {
        row_of[i] = -1;
        if (rga_filter_thread_index(filter, i)) {
            row_of[i] = (long)t->n_rows;
            t->row_thread[t->n_rows++] = i;
        }
    }
    t->ns = calloc((t->n_rows ? t->n_rows : 1) * n_buckets * RGA_STATE_COUNT, sizeof(int64_t));
    if (!t->ns)
        goto nomem;
    if (r->has_causes) {
        t->cause_ns = calloc((t->n_rows ? t->n_rows : 1) * n_buckets * RGA_CAUSE_COUNT, sizeof(int64_t));
        if (!t->cause_ns)
            goto nomem;
    }
    /* Bucket b covers [from + span*b/n, from + span*(b+1)/n); computed in
     * long double so a 1 h axis at ns resolution does not overflow. */
    long double span = (long double)(to_ns - from_ns);
    for (size_t i = 0; i < r->n_intervals; i++) {
        const rga_interval_t *iv = &r->intervals[i];
        long row = row_of[iv->thread_index];
        if (row < 0 || !rga_filter_label_set(filter, r, iv->label_set))
            continue;
        int64_t a = iv->start_ns > from_ns ? iv->start_ns : from_ns;
        int64_t b = iv->end_ns < to_ns ? iv->end_ns : to_ns;
        if (b <= a)
            continue;
        size_t first = (size_t)((long double)(a - from_ns) * n_buckets / span);
        if (first >= n_buckets)
            first = n_buckets - 1;
        int64_t *cells = &t->ns[(size_t)row * n_buckets * RGA_STATE_COUNT];
        for (size_t k = first; k < n_buckets; k++) {
            int64_t lo = from_ns + (int64_t)(span * k / n_buckets);
            int64_t hi = k + 1 == n_buckets ? to_ns : from_ns + (int64_t)(span * (k + 1) / n_buckets);
            if (lo >= b)
                break;
            int64_t x = a > lo ? a : lo, y = b < hi ? b : hi;
            if (y > x)
                cells[k * RGA_STATE_COUNT + iv->state] += y - x;
            if (y > x && t->cause_ns && iv->state == RGA_STATE_BLOCKED)
                t->cause_ns[((size_t)row * n_buckets + k) * RGA_CAUSE_COUNT + iv->cause] += y - x;
        }
    }
    free(row_of);
    return RGA_OK;
nomem:
    free(row_of);
    rga_timeline_free(t);
    return rga_error_set(err, RGA_ERR_NOMEM, "out of memory building the timeline");
}

void
rga_timeline_free(rga_timeline_t *t)
{
    free(t->row_thread);
    free(t->ns);
    free(t->cause_ns);
    memset(t, 0, sizeof(*t));
}

int64_t
rga_timeline_ns(const rga_timeline_t *t, size_t row, size_t bucket, int state)
{
    return t->ns[(row * t->n_buckets + bucket) * RGA_STATE_COUNT + (size_t)state];
}

int
rga_timeline_dominant(const rga_timeline_t *t, size_t row, size_t bucket)
{
    int best = RGA_TIMELINE_IDLE;
    int64_t best_ns = 0;
    static const int order[RGA_STATE_COUNT] = {RGA_STATE_GVL_WAIT, RGA_STATE_RUNNING, RGA_STATE_BLOCKED,
                                               RGA_STATE_GC_MARK, RGA_STATE_GC_SWEEP};
    for (int i = 0; i < RGA_STATE_COUNT; i++) {
        int64_t v = rga_timeline_ns(t, row, bucket, order[i]);
        if (v > best_ns) {
            best_ns = v;
            best = order[i];
        }
    }
    return best;
}

int
rga_timeline_cause(const rga_timeline_t *t, size_t row, size_t bucket)
{
    if (!t->cause_ns)
        return -1;
    const int64_t *ns = &t->cause_ns[(row * t->n_buckets + bucket) * RGA_CAUSE_COUNT];
    int best = -1;
    int64_t best_ns = 0;
    for (int c = 0; c < RGA_CAUSE_COUNT; c++)
        if (ns[c] > best_ns) {
            best_ns = ns[c];
            best = c;
        }
    return best;
}

/* A blocked bucket's glyph by cause; unknown keeps the plain blocked glyph. */
static const char cause_glyph[RGA_CAUSE_COUNT] = {0, 'i', 'z', 'm', 'c', 'q', 'j', 'r', 'p', 'o'};

static const char *const glyph_utf8[RGA_STATE_COUNT] = {"█", "▒", "░", "G", "g"};
static const char glyph_ascii[RGA_STATE_COUNT] = {'#', 'W', '.', 'G', 'g'};
static const char *const state_color[RGA_STATE_COUNT] = {"\033[32m", "\033[31m", "\033[34m", "\033[33m", "\033[33m"};
static const char *const state_label[RGA_STATE_COUNT] = {"running", "GVL wait", "blocked", "GC mark", "GC sweep"};

static void
put_glyph(FILE *out, int state, int cause, const rga_timeline_text_opts_t *o)
{
    if (state == RGA_TIMELINE_IDLE) {
        fputc(' ', out);
        return;
    }
    if (o->color)
        fputs(state_color[state], out);
    if (state == RGA_STATE_BLOCKED && cause > 0 && cause < RGA_CAUSE_COUNT)
        fputc(cause_glyph[cause], out);
    else if (o->ascii)
        fputc(glyph_ascii[state], out);
    else
        fputs(glyph_utf8[state], out);
    if (o->color)
        fputs("\033[0m", out);
}

rga_status_t
rga_timeline_write_text(const rga_timeline_t *t, FILE *out, const rga_timeline_text_opts_t *opts, rga_error_t *err)
{
    rga_timeline_text_opts_t o = opts ? *opts : (rga_timeline_text_opts_t){0};
    const rga_report_t *r = t->report;
    char from[32], to[32], bucket[32];
    rga_format_duration(t->from_ns, from, sizeof(from));
    rga_format_duration(t->to_ns, to, sizeof(to));
    rga_format_duration((t->to_ns - t->from_ns) / (int64_t)t->n_buckets, bucket, sizeof(bucket));
    fprintf(out, "GVL timeline %s .. %s, %zu columns of %s (dominant state per column)\n", from, to, t->n_buckets,
            bucket);
    /* Label column: names escaped and cut to 24 display columns so rows stay aligned. */
    int label_w = 6;
    char(*labels)[160] = calloc(t->n_rows ? t->n_rows : 1, sizeof(*labels));
    if (!labels)
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory drawing the timeline");
    for (size_t row = 0; row < t->n_rows; row++) {
        const rga_thread_t *th = &r->threads[t->row_thread[row]];
        char name[128];
        rga_term_escape(th->name, name, sizeof(name));
        if (name[0])
            snprintf(labels[row], sizeof(labels[row]), "%.*s #%lld", (int)rga_text_prefix(name, 24), name,
                     (long long)th->seq);
        else
            snprintf(labels[row], sizeof(labels[row]), "#%lld", (long long)th->seq);
        if (r->n_ractors > 1) {
            size_t n = strlen(labels[row]);
            snprintf(labels[row] + n, sizeof(labels[row]) - n, " r%lld", (long long)th->ractor);
        }
        int w = (int)rga_text_width(labels[row]);
        if (w > label_w)
            label_w = w;
    }
    for (size_t row = 0; row < t->n_rows; row++) {
        fprintf(out, "%s%*s |", labels[row], label_w - (int)rga_text_width(labels[row]), "");
        for (size_t b = 0; b < t->n_buckets; b++) {
            int state = rga_timeline_dominant(t, row, b);
            put_glyph(out, state, state == RGA_STATE_BLOCKED ? rga_timeline_cause(t, row, b) : -1, &o);
        }
        fputs("|\n", out);
    }
    free(labels);
    /* Axis: ticks every ~20 columns with the time at the tick. */
    fprintf(out, "%*s +", label_w, "");
    for (size_t b = 0; b < t->n_buckets; b++)
        fputc(b % 20 == 0 && b > 0 ? '+' : '-', out);
    fputs("+\n", out);
    fprintf(out, "%*s  ", label_w, "");
    size_t col = 0;
    for (size_t b = 0; b < t->n_buckets; b += 20) {
        if (b < col)
            continue;
        char tick[32];
        int64_t at = t->from_ns + (int64_t)((long double)(t->to_ns - t->from_ns) * b / t->n_buckets);
        rga_format_duration(at, tick, sizeof(tick));
        fprintf(out, "%*s%s", (int)(b - col), "", tick);
        col = b + strlen(tick); /* bytes >= columns: never overlaps */
    }
    fputc('\n', out);
    fputs("legend: ", out);
    for (int s = 0; s < RGA_STATE_COUNT; s++) {
        put_glyph(out, s, -1, &o);
        fprintf(out, " %s  ", state_label[s]);
    }
    fputs("(blank: not alive or no interval)\n", out);
    if (t->cause_ns) {
        fputs("blocked by cause: ", out);
        for (int c = 1; c < RGA_CAUSE_COUNT; c++) {
            put_glyph(out, RGA_STATE_BLOCKED, c, &o);
            fprintf(out, " %s%s", rga_cause_name(c), c + 1 < RGA_CAUSE_COUNT ? "  " : "");
        }
        fputs(" (blocked glyph: cause unknown)\n", out);
    }
    if (r->stats.dropped_intervals > 0)
        fprintf(out, "note: %lld intervals were dropped by the profiler; gaps may be missing data\n",
                (long long)r->stats.dropped_intervals);
    if (ferror(out))
        return rga_error_set(err, RGA_ERR_IO, "write error: %s", strerror(errno));
    return RGA_OK;
}
