/* report_model.c — lookups on a loaded rga_report_t and its destructor.
 *
 * Loading lives in report_load.c, checking in report_validate.c, merging in
 * report_merge.c. Everything here is read-only except rga_report_free().
 */
#include "report.h"
#include "term_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
rga_report_free(rga_report_t *r)
{
    if (!r)
        return;
    rga_meta_t *m = &r->meta;
    free(m->tool);
    free(m->tool_version);
    free(m->ruby_version);
    free(m->recording);
    free(m->program);
    free(m->mode);
    for (size_t i = 0; i < r->n_threads; i++)
        free(r->threads[i].name);
    for (size_t i = 0; i < r->n_label_sets; i++) {
        for (size_t j = 0; j < r->label_sets[i].n_labels; j++) {
            free(r->label_sets[i].keys[j]);
            free(r->label_sets[i].values[j]);
        }
        free(r->label_sets[i].keys);
        free(r->label_sets[i].values);
    }
    for (size_t i = 0; i < r->n_frames; i++) {
        free(r->frames[i].path);
        free(r->frames[i].label);
    }
    free(r->ractors);
    free(r->threads);
    free(r->label_sets);
    free(r->label_totals);
    free(r->frames);
    free(r->stacks);
    free(r->stack_frames);
    free(r->samples);
    free(r->intervals);
    free(r->edges);
    free(r->blame);
    for (size_t i = 0; i < r->n_blocked_methods; i++)
        free(r->blocked_methods[i].method);
    free(r->cause_of_id);
    free(r->interval_causes);
    free(r->blocked_edges);
    free(r->blocked_methods);
    free(r);
}

int64_t
rga_report_end_ns(const rga_report_t *r)
{
    int64_t end = r->meta.duration_ns;
    for (size_t i = 0; i < r->n_intervals; i++)
        if (r->intervals[i].end_ns > end)
            end = r->intervals[i].end_ns;
    return end;
}

const rga_ractor_t *
rga_report_ractor(const rga_report_t *r, int64_t id)
{
    for (size_t i = 0; i < r->n_ractors; i++)
        if (r->ractors[i].id == id)
            return &r->ractors[i];
    return NULL;
}

void
rga_ractor_name(const rga_report_t *r, int64_t id, char *buf, size_t size)
{
    const rga_ractor_t *rc = rga_report_ractor(r, id);
    if (rc && !rc->identified)
        snprintf(buf, size, "Ractor ?");
    else
        snprintf(buf, size, "Ractor %lld%s", (long long)id, rc && rc->main ? " (main)" : "");
}

/* The first index of arr[0..n) whose field is not below key, into lo
 * (arr sorted by field): one binary search for every sorted section. */
#define LOWER_BOUND(arr, n, field, key, lo) \
    do { \
        size_t hi_ = (n); \
        (lo) = 0; \
        while ((lo) < hi_) { \
            size_t mid_ = (lo) + (hi_ - (lo)) / 2; \
            if ((arr)[mid_].field < (key)) \
                (lo) = mid_ + 1; \
            else \
                hi_ = mid_; \
        } \
    } while (0)

long
rga_report_thread_index(const rga_report_t *r, int64_t seq)
{
    size_t lo;
    LOWER_BOUND(r->threads, r->n_threads, seq, seq, lo);
    return (lo < r->n_threads && r->threads[lo].seq == seq) ? (long)lo : -1;
}

long
rga_report_label_set_index(const rga_report_t *r, int64_t id)
{
    /* Ids are usually dense 0..n-1: try the direct slot first. */
    if (id >= 0 && (uint64_t)id < r->n_label_sets && r->label_sets[id].id == id)
        return (long)id;
    size_t lo;
    LOWER_BOUND(r->label_sets, r->n_label_sets, id, id, lo);
    return (lo < r->n_label_sets && r->label_sets[lo].id == id) ? (long)lo : -1;
}

const char *
rga_report_label_value(const rga_report_t *r, int64_t label_set, const char *key)
{
    long i = rga_report_label_set_index(r, label_set);
    if (i < 0)
        return NULL;
    const rga_label_set_t *ls = &r->label_sets[i];
    for (size_t j = 0; j < ls->n_labels; j++)
        if (strcmp(ls->keys[j], key) == 0)
            return ls->values[j];
    return NULL;
}

const char *
rga_state_name(int state)
{
    static const char *const names[RGA_STATE_COUNT] = {"running", "gvl_wait", "blocked", "gc_mark", "gc_sweep"};
    return (state >= 0 && state < RGA_STATE_COUNT) ? names[state] : "unknown";
}

const rga_interval_cause_t *
rga_report_interval_cause(const rga_report_t *r, size_t interval)
{
    size_t lo;
    LOWER_BOUND(r->interval_causes, r->n_interval_causes, interval, interval, lo);
    return (lo < r->n_interval_causes && r->interval_causes[lo].interval == interval) ? &r->interval_causes[lo]
                                                                                      : NULL;
}

static const char *const cause_names[RGA_CAUSE_COUNT] = RPERF_CAUSE_NAMES;

const char *
rga_cause_name(int cause)
{
    return (cause >= 0 && cause < RGA_CAUSE_COUNT) ? cause_names[cause] : "unknown";
}

int
rga_cause_from_name(const char *name)
{
    for (int c = 0; c < RGA_CAUSE_COUNT; c++)
        if (strcmp(cause_names[c], name) == 0)
            return c;
    return RGA_CAUSE_OTHER;
}

const char *
rga_holder_kind_name(rga_holder_kind_t kind)
{
    switch (kind) {
    case RGA_HOLDER_THREAD: return "thread";
    case RGA_HOLDER_GC: return "gc";
    case RGA_HOLDER_HANDOFF: return "handoff";
    case RGA_HOLDER_UNKNOWN: return "unknown";
    }
    return "unknown";
}

char *
rga_thread_label(const rga_report_t *r, int64_t seq, char *buf, size_t size)
{
    long i = rga_report_thread_index(r, seq);
    char name[128];
    rga_term_escape(i >= 0 ? r->threads[i].name : "", name, sizeof(name));
    if (name[0])
        snprintf(buf, size, "%s (#%lld)", name, (long long)seq);
    else
        snprintf(buf, size, "#%lld", (long long)seq);
    return buf;
}
