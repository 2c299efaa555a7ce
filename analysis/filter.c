/* filter.c — compiled view filters (see filter.h). Does no output. */
#include "filter.h"

#include <stdlib.h>
#include <string.h>

rga_status_t
rga_filter_init(rga_filter_t *f, const rga_report_t *r, const rga_filter_spec_t *spec, rga_error_t *err)
{
    memset(f, 0, sizeof(*f));
    f->thread_ok = calloc(r->n_threads ? r->n_threads : 1, sizeof(bool));
    f->label_set_ok = calloc(r->n_label_sets ? r->n_label_sets : 1, sizeof(bool));
    rga_status_t st = RGA_OK;
    if (!f->thread_ok || !f->label_set_ok) {
        st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory");
        goto fail;
    }
    f->state = RGA_SAMPLE_ANY;
    const char *state = spec ? spec->state : NULL;
    if (state && *state) {
        static const char *const names[] = {"running", "gvl_wait", "blocked", "gc"};
        for (int i = 0; i < 4; i++)
            if (strcmp(state, names[i]) == 0)
                f->state = (rga_sample_state_t)i;
        if (f->state == RGA_SAMPLE_ANY) {
            st = rga_error_set(err, RGA_ERR_ARGUMENT, "--state %s: expected running, gvl_wait, blocked or gc",
                               state);
            goto fail;
        }
    }
    const char *thread = spec ? spec->thread : NULL;
    long long ractor = spec ? spec->ractor : 0;
    size_t matched = 0;
    for (size_t i = 0; i < r->n_threads; i++) {
        const rga_thread_t *t = &r->threads[i];
        bool ok = true;
        if (thread && *thread) {
            char *end;
            long long seq = strtoll(thread, &end, 10);
            ok = (*end == '\0' && seq == t->seq) || strcmp(thread, t->name) == 0;
        }
        if (ractor > 0 && t->ractor != ractor)
            ok = false;
        f->thread_ok[i] = ok;
        matched += ok;
    }
    if (ractor > 0 && !rga_report_ractor(r, ractor)) {
        st = rga_error_set(err, RGA_ERR_ARGUMENT, "--ractor %lld: the report has no Ractor %lld", ractor, ractor);
        goto fail;
    }
    if (thread && *thread && matched == 0) {
        st = ractor > 0
                 ? rga_error_set(err, RGA_ERR_ARGUMENT, "--thread %s matches no thread of Ractor %lld", thread,
                                 ractor)
                 : rga_error_set(err, RGA_ERR_ARGUMENT, "--thread %s matches no thread in the report", thread);
        goto fail;
    }
    size_t n_labels = spec ? spec->n_labels : 0;
    for (size_t li = 0; li < n_labels; li++) {
        if (!strchr(spec->labels[li], '=')) {
            st = rga_error_set(err, RGA_ERR_ARGUMENT, "--label %s: expected key=value", spec->labels[li]);
            goto fail;
        }
    }
    for (size_t i = 0; i < r->n_label_sets; i++) {
        const rga_label_set_t *ls = &r->label_sets[i];
        bool ok = true;
        for (size_t li = 0; li < n_labels && ok; li++) {
            const char *kv = spec->labels[li];
            size_t klen = (size_t)(strchr(kv, '=') - kv);
            bool found = false;
            for (size_t j = 0; j < ls->n_labels; j++) {
                if (strlen(ls->keys[j]) == klen && strncmp(ls->keys[j], kv, klen) == 0 &&
                    strcmp(ls->values[j], kv + klen + 1) == 0)
                    found = true;
            }
            ok = found;
        }
        f->label_set_ok[i] = ok;
    }
    f->labels_active = n_labels > 0;
    f->active = (thread && *thread) || ractor > 0 || n_labels > 0 || f->state != RGA_SAMPLE_ANY;
    return RGA_OK;
fail:
    rga_filter_free(f);
    return st;
}

void
rga_filter_free(rga_filter_t *f)
{
    free(f->thread_ok);
    free(f->label_set_ok);
    memset(f, 0, sizeof(*f));
}

bool
rga_filter_thread_index(const rga_filter_t *f, size_t index)
{
    return !f->thread_ok || f->thread_ok[index];
}

bool
rga_filter_thread(const rga_filter_t *f, const rga_report_t *r, int64_t seq)
{
    long i = rga_report_thread_index(r, seq);
    return i >= 0 && rga_filter_thread_index(f, (size_t)i);
}

bool
rga_filter_label_set(const rga_filter_t *f, const rga_report_t *r, int64_t label_set_id)
{
    if (!f->labels_active)
        return true;
    long i = rga_report_label_set_index(r, label_set_id);
    return i >= 0 && f->label_set_ok[i];
}

rga_sample_state_t
rga_stack_state(const rga_report_t *r, int64_t stack)
{
    if (stack < 0 || (uint64_t)stack >= r->n_stacks || r->stacks[stack].depth == 0)
        return RGA_SAMPLE_RUNNING;
    switch (r->stack_frames[r->stacks[stack].first]) {
    case RGA_FRAME_GVL_WAIT: return RGA_SAMPLE_GVL_WAIT;
    case RGA_FRAME_GVL_BLOCKED: return RGA_SAMPLE_BLOCKED;
    case RGA_FRAME_GC_MARK:
    case RGA_FRAME_GC_SWEEP: return RGA_SAMPLE_GC;
    default: return RGA_SAMPLE_RUNNING;
    }
}

bool
rga_filter_sample(const rga_filter_t *f, const rga_report_t *r, const rga_sample_t *s)
{
    if (!rga_filter_thread(f, r, s->thread) || !rga_filter_label_set(f, r, s->label_set))
        return false;
    return f->state == RGA_SAMPLE_ANY || rga_stack_state(r, s->stack) == f->state;
}
