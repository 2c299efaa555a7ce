/* profile_model.c — selected samples and frames grouped into functions (see
 * profile_model.h). Writes nothing. */
#include "profile_model.h"
#include "grow_array.h"
#include "intern.h"
#include "rootcause.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_FRAME_NAME "[no Ruby frame]"

/* Groups frames into functions by (label, path); the interned key's id is
 * the function index, since ids are dense in order of first sight. */
static rga_status_t
group_functions(rga_profile_t *p, const rga_report_t *r, rga_error_t *err)
{
    rga_intern_t keys;
    rga_intern_init(&keys);
    rga_status_t st = RGA_OK;
    char *key = NULL;
    size_t key_cap = 0;
    p->frame_function = calloc(r->n_frames ? r->n_frames : 1, sizeof(*p->frame_function));
    p->functions = calloc(r->n_frames + 1, sizeof(*p->functions));
    if (!p->frame_function || !p->functions)
        goto nomem;
    for (size_t i = 0; i < r->n_frames; i++) {
        const rga_frame_t *f = &r->frames[i];
        size_t llen = strlen(f->label), plen = strlen(f->path);
        if (llen + plen + 1 > key_cap) {
            key_cap = (llen + plen + 1) * 2;
            char *grown = realloc(key, key_cap);
            if (!grown)
                goto nomem;
            key = grown;
        }
        memcpy(key, f->label, llen);
        key[llen] = '\0'; /* labels hold no NUL byte, so the key splits at it */
        memcpy(key + llen + 1, f->path, plen);
        size_t id = rga_intern_bytes(&keys, key, llen + plen + 1);
        if (id == (size_t)-1)
            goto nomem;
        p->frame_function[i] = (uint32_t)id;
        if (id == p->n_functions) {
            p->functions[id] = (rga_profile_function_t){f->label, f->path, i <= RGA_FRAME_GC_SWEEP};
            p->n_functions++;
        }
    }
    goto done;
nomem:
    st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory building the profile");
done:
    free(key);
    rga_intern_free(&keys);
    return st;
}

/* Growing list of owned rows. */
typedef struct rows {
    rga_sample_t *rows;
    size_t n, cap;
    bool failed;
} rows_t;

static void
add_row(rows_t *x, int64_t stack, int64_t ns, int64_t thread, int64_t label_set)
{
    if (x->failed || ns <= 0 || stack < 0)
        return;
    if (rperf_grow_array((void **)&x->rows, &x->cap, x->n + 1, sizeof(*x->rows), 64) < 0) {
        x->failed = true;
        return;
    }
    x->rows[x->n++] = (rga_sample_t){stack, ns, thread, label_set};
}

typedef struct root_rows {
    rows_t *rows;
    int64_t thread, label_set;
} root_rows_t;

static void
add_root_stack(int64_t stack, int64_t ns, void *arg)
{
    root_rows_t *x = arg;
    add_row(x->rows, stack, ns, x->thread, x->label_set);
}

/* The blame rows of a weighted profile. */
static rga_status_t
blame_rows(const rga_report_t *r, rga_profile_weight_t weight, rows_t *x, rga_error_t *err)
{
    if (weight == RGA_WEIGHT_DIRECT) {
        for (size_t i = 0; i < r->n_blame; i++)
            add_row(x, r->blame[i].stack, r->blame[i].blame_ns, r->blame[i].holder, r->blame[i].label_set);
        for (size_t i = 0; i < r->n_blocked_edges; i++) {
            const rga_blocked_edge_t *e = &r->blocked_edges[i];
            add_row(x, e->releaser_stack, e->blocked_ns, e->releaser, e->releaser_label_set);
        }
        return RGA_OK;
    }
    rga_rootcauses_t rc;
    rga_rc_stacks_t *stacks = NULL;
    rga_status_t st = rga_rootcauses_build(r, NULL, &rc, err);
    if (st == RGA_OK && rc.available)
        st = rga_rc_stacks_build(r, &stacks, err);
    for (size_t i = 0; st == RGA_OK && stacks && i < rc.parts.n; i++) {
        const rga_key_entry_t *e = &rc.parts.entries[i];
        rga_rc_root_t root = {(uint8_t)(e->key[0] & 0xff), (uint8_t)((e->key[0] >> 8) & 0xff), (int32_t)e->key[1],
                              e->key[2]};
        if (root.thread < 0)
            continue;
        root_rows_t rr = {x, r->threads[root.thread].seq, e->key[2]};
        rga_rc_stacks_split(stacks, &root, e->sum[0], add_root_stack, &rr);
    }
    rga_rc_stacks_free(stacks);
    rga_rootcauses_free(&rc);
    return st;
}

rga_status_t
rga_profile_build(const rga_report_t *r, const rga_filter_t *filter, rga_profile_t *out, rga_error_t *err)
{
    return rga_profile_build_weighted(r, filter, RGA_WEIGHT_SAMPLES, out, err);
}

rga_status_t
rga_profile_build_weighted(const rga_report_t *r, const rga_filter_t *filter, rga_profile_weight_t weight,
                           rga_profile_t *out, rga_error_t *err)
{
    memset(out, 0, sizeof(*out));
    out->report = r;
    out->max_depth = 1;
    out->period_ns = r->meta.frequency > 0 ? 1000000000 / r->meta.frequency : 1000000;
    if (out->period_ns <= 0)
        out->period_ns = 1;
    rga_status_t st = group_functions(out, r, err);
    if (st != RGA_OK) {
        rga_profile_free(out);
        return st;
    }
    const rga_sample_t *rows = r->samples;
    size_t n_rows = r->n_samples;
    out->weight = (int)weight;
    if (weight != RGA_WEIGHT_SAMPLES) {
        rows_t x = {NULL, 0, 0, false};
        st = blame_rows(r, weight, &x, err);
        out->owned = x.rows;
        if (st == RGA_OK && x.failed)
            st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory building the profile");
        if (st != RGA_OK) {
            rga_profile_free(out);
            return st;
        }
        rows = x.rows;
        n_rows = x.n;
    }
    out->samples = calloc(n_rows ? n_rows : 1, sizeof(*out->samples));
    if (!out->samples) {
        rga_profile_free(out);
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory building the profile");
    }
    bool empty_stack = false;
    for (size_t i = 0; i < n_rows; i++) {
        const rga_sample_t *s = &rows[i];
        if (filter && !rga_filter_sample(filter, r, s))
            continue;
        out->samples[out->n_samples++] = s;
        out->total_ns = rga_weight_add(out->total_ns, s->weight_ns);
        size_t depth = r->stacks[s->stack].depth;
        empty_stack |= depth == 0;
        if (depth > out->max_depth)
            out->max_depth = depth;
    }
    if (empty_stack)
        out->functions[out->n_functions++] = (rga_profile_function_t){NO_FRAME_NAME, "", true};
    return RGA_OK;
}

void
rga_profile_free(rga_profile_t *p)
{
    free(p->samples);
    free(p->owned);
    free(p->frame_function);
    free(p->functions);
    memset(p, 0, sizeof(*p));
}

size_t
rga_profile_stack(const rga_profile_t *p, const rga_sample_t *s, uint32_t *buf)
{
    const rga_report_t *r = p->report;
    const rga_stack_t *st = &r->stacks[s->stack];
    if (st->depth == 0) {
        buf[0] = (uint32_t)(p->n_functions - 1); /* the placeholder is added last, only when needed */
        return 1;
    }
    /* The report stores leaf first; profiles read root first. */
    for (uint32_t i = 0; i < st->depth; i++)
        buf[i] = p->frame_function[r->stack_frames[st->first + st->depth - 1 - i]];
    return st->depth;
}

int64_t
rga_profile_sample_count(const rga_profile_t *p, int64_t weight_ns)
{
    /* Rounded to the nearest period without computing weight + period / 2, which could overflow. */
    int64_t n = weight_ns / p->period_ns + (weight_ns % p->period_ns >= (p->period_ns + 1) / 2);
    return n > 0 ? n : 1;
}

const char *
rga_profile_thread_name(const rga_thread_t *t, char *buf, size_t size)
{
    if (t->name && *t->name)
        snprintf(buf, size, "%s", t->name);
    else
        snprintf(buf, size, "#%lld", (long long)t->seq);
    return buf;
}

const char *
rga_profile_thread_title(const rga_thread_t *t, char *buf, size_t size)
{
    if (t->name && *t->name)
        snprintf(buf, size, "%s (#%lld, Ractor %lld)", t->name, (long long)t->seq, (long long)t->ractor);
    else
        snprintf(buf, size, "#%lld (Ractor %lld)", (long long)t->seq, (long long)t->ractor);
    return buf;
}

int64_t
rga_weight_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}
