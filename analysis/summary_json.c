/* summary_json.c — rga_summary_t to JSON via jansson (see summary_json.h). */
#include "summary_json.h"
#include "stack_text.h"

#include <errno.h>
#include <string.h>

static json_t *
states_json(const int64_t *state_ns, int64_t lifetime_ns)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "running_ns", (json_int_t)state_ns[RGA_STATE_RUNNING],
                     "gvl_wait_ns", (json_int_t)state_ns[RGA_STATE_GVL_WAIT], "blocked_ns",
                     (json_int_t)state_ns[RGA_STATE_BLOCKED], "gc_mark_ns", (json_int_t)state_ns[RGA_STATE_GC_MARK],
                     "gc_sweep_ns", (json_int_t)state_ns[RGA_STATE_GC_SWEEP], "lifetime_ns",
                     (json_int_t)lifetime_ns);
}

/* The whole stack, leaf first, as [[path, label], ...]: the text view may
 * cut or merge stacks, the JSON never does. */
static json_t *
frames_json(const rga_report_t *r, int64_t stack)
{
    json_t *arr = json_array();
    if (!arr || stack < 0 || (uint64_t)stack >= r->n_stacks)
        return arr;
    const rga_stack_t *st = &r->stacks[stack];
    for (uint32_t i = 0; i < st->depth; i++) {
        const rga_frame_t *f = &r->frames[r->stack_frames[st->first + i]];
        if (json_array_append_new(arr, json_pack("[s, s]", f->path, f->label)) != 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

static json_t *
stacks_json(const rga_summary_t *s, const rga_summary_stack_t *list, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        char text[4096];
        rga_stack_line(s->report, list[i].stack, 0, text, sizeof(text));
        if (json_array_append_new(arr, json_pack("{s:I, s:I, s:s, s:o}", "stack", (json_int_t)list[i].stack, "ns",
                                                 (json_int_t)list[i].ns, "text", text, "frames",
                                                 frames_json(s->report, list[i].stack))) != 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

/* {cause: ns} of the nonzero causes. */
static json_t *
causes_json(const int64_t *cause_ns)
{
    json_t *o = json_object();
    for (int c = 0; o && c < RGA_CAUSE_COUNT; c++)
        if (cause_ns[c] > 0 && json_object_set_new(o, rga_cause_name(c), json_integer(cause_ns[c])) != 0) {
            json_decref(o);
            return NULL;
        }
    return o;
}

/* Sets key to value (stealing it); records failure instead of returning it,
 * so the builder below reads as a list. */
static void
put(json_t *obj, const char *key, json_t *value, bool *ok)
{
    if (!value || json_object_set_new(obj, key, value) != 0)
        *ok = false;
}

json_t *
rga_summary_to_json(const rga_summary_t *s)
{
    const rga_report_t *r = s->report;
    bool ok = true;
    json_t *root = json_object();
    if (!root)
        return NULL;
    put(root, "format", json_string("rperf-gvl-summary"), &ok);
    put(root, "version", json_integer(1), &ok);
    put(root, "meta",
        json_pack("{s:s, s:s, s:I, s:s, s:I, s:I, s:I}", "program", r->meta.program, "ruby_version",
                  r->meta.ruby_version, "pid", (json_int_t)r->meta.pid, "mode", r->meta.mode, "frequency",
                  (json_int_t)r->meta.frequency, "duration_ns", (json_int_t)r->meta.duration_ns,
                  "start_monotonic_ns", (json_int_t)r->meta.start_monotonic_ns),
        &ok);
    const rga_stats_t *st = &r->stats;
    json_t *dropped = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "samples", (json_int_t)st->dropped_samples,
                                "aggregation", (json_int_t)st->dropped_aggregation, "intervals",
                                (json_int_t)st->dropped_intervals, "edges", (json_int_t)st->dropped_edges, "threads",
                                (json_int_t)st->dropped_threads, "label_sets", (json_int_t)st->dropped_label_sets);
    if (dropped && s->has_causes) {
        put(dropped, "causes", json_integer(st->dropped_causes), &ok);
        put(dropped, "blocked_edges", json_integer(st->dropped_blocked_edges), &ok);
        put(dropped, "release_stacks", json_integer(st->dropped_release_stacks), &ok);
    }
    put(root, "dropped", dropped, &ok);
    put(root, "totals", states_json(s->total_ns, s->total_lifetime_ns), &ok);

    json_t *threads = json_array();
    for (size_t i = 0; threads && i < s->n_threads; i++) {
        const rga_summary_thread_t *t = &s->threads[i];
        json_t *o = states_json(t->state_ns, t->lifetime_ns);
        if (o) {
            put(o, "seq", json_integer(t->seq), &ok);
            put(o, "name", json_string(t->name), &ok);
            put(o, "ractor", json_integer(t->ractor), &ok);
            put(o, "exited", json_boolean(t->exited), &ok);
            put(o, "acquisitions", json_integer(t->acquisitions), &ok);
            put(o, "waits", json_integer(t->waits), &ok);
            if (t->has_causes) {
                put(o, "blocked_by_cause", causes_json(t->cause_ns), &ok);
                put(o, "release_unknown_ns", json_integer(t->release_unknown_ns), &ok);
            }
        }
        if (!o || json_array_append_new(threads, o) != 0)
            ok = false;
    }
    put(root, "threads", threads, &ok);

    json_t *ractors = json_array();
    for (size_t i = 0; ractors && i < s->n_ractors; i++) {
        const rga_summary_ractor_t *rc = &s->ractors[i];
        json_t *o = states_json(rc->state_ns, rc->lifetime_ns);
        if (o) {
            put(o, "id", json_integer(rc->id), &ok);
            put(o, "main", json_boolean(rc->main), &ok);
            put(o, "identified", json_boolean(rc->identified), &ok);
            put(o, "threads", json_integer((json_int_t)rc->n_threads), &ok);
        }
        if (!o || json_array_append_new(ractors, o) != 0)
            ok = false;
    }
    put(root, "ractors", ractors, &ok);

    json_t *labels = json_array();
    for (size_t i = 0; labels && i < s->n_labels; i++) {
        const rga_summary_label_t *l = &s->labels[i];
        int64_t time = 0;
        for (int k = 0; k < RGA_STATE_COUNT; k++)
            time += l->state_ns[k];
        json_t *o = states_json(l->state_ns, time);
        json_t *kv = json_object();
        long li = rga_report_label_set_index(r, l->label_set);
        if (kv && li >= 0)
            for (size_t j = 0; j < r->label_sets[li].n_labels; j++)
                json_object_set_new(kv, r->label_sets[li].keys[j], json_string(r->label_sets[li].values[j]));
        if (o) {
            put(o, "label_set", json_integer(l->label_set), &ok);
            put(o, "labels", kv, &ok);
            put(o, "threads", json_integer((json_int_t)l->n_threads), &ok);
            if (l->has_causes)
                put(o, "blocked_by_cause", causes_json(l->cause_ns), &ok);
        } else {
            json_decref(kv);
        }
        if (!o || json_array_append_new(labels, o) != 0)
            ok = false;
    }
    put(root, "label_sets", labels, &ok);

    json_t *waiters = json_array();
    for (size_t i = 0; waiters && i < s->n_waiters; i++) {
        const rga_summary_thread_t *t = &s->threads[s->waiters[i]];
        if (json_array_append_new(waiters,
                                  json_pack("{s:I, s:s, s:I, s:I, s:I}", "seq", (json_int_t)t->seq, "name", t->name,
                                            "gvl_wait_ns", (json_int_t)t->state_ns[RGA_STATE_GVL_WAIT], "waits",
                                            (json_int_t)t->waits, "lifetime_ns", (json_int_t)t->lifetime_ns)) != 0)
            ok = false;
    }
    put(root, "top_waiters", waiters, &ok);

    json_t *holders = json_array();
    for (size_t i = 0; holders && i < s->n_holders; i++) {
        const rga_summary_holder_t *h = &s->holders[i];
        if (json_array_append_new(holders, json_pack("{s:s, s:I, s:I, s:I}", "kind", rga_holder_kind_name(h->kind),
                                                     "seq", (json_int_t)h->seq, "wait_ns", (json_int_t)h->wait_ns,
                                                     "count", (json_int_t)h->count)) != 0)
            ok = false;
    }
    put(root, "top_holders", holders, &ok);
    if (s->has_causes) {
        json_t *releases = json_array();
        for (size_t i = 0; releases && i < s->n_releases; i++) {
            const rga_summary_release_t *x = &s->releases[i];
            if (json_array_append_new(releases,
                                      json_pack("{s:I, s:I, s:s, s:I, s:I}", "releaser", (json_int_t)x->releaser,
                                                "waiter", (json_int_t)x->waiter, "cause", rga_cause_name(x->cause),
                                                "blocked_ns", (json_int_t)x->blocked_ns, "count",
                                                (json_int_t)x->count)) != 0)
                ok = false;
        }
        put(root, "top_releasers", releases, &ok);
        json_t *methods = json_array();
        for (size_t i = 0; methods && i < s->n_methods; i++) {
            const rga_blocked_method_t *m = s->methods[i];
            if (json_array_append_new(methods,
                                      json_pack("{s:I, s:s, s:s, s:I, s:I}", "thread", (json_int_t)m->thread,
                                                "cause", rga_cause_name(m->cause), "method", m->method, "blocked_ns",
                                                (json_int_t)m->blocked_ns, "count", (json_int_t)m->count)) != 0)
                ok = false;
        }
        put(root, "blocked_methods", methods, &ok);
        put(root, "top_release_stacks", stacks_json(s, s->release_stacks, s->n_release_stacks), &ok);
    }
    put(root, "top_wait_stacks", stacks_json(s, s->wait_stacks, s->n_wait_stacks), &ok);
    put(root, "top_blame_stacks", stacks_json(s, s->blame_stacks, s->n_blame_stacks), &ok);
    if (!ok) {
        json_decref(root);
        return NULL;
    }
    return root;
}

rga_status_t
rga_summary_write_json(const rga_summary_t *s, FILE *out, rga_error_t *err)
{
    json_t *root = rga_summary_to_json(s);
    if (!root)
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory building the JSON summary");
    int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (rc != 0 || fputc('\n', out) == EOF || ferror(out))
        return rga_error_set(err, RGA_ERR_IO, "write error: %s", strerror(errno));
    return RGA_OK;
}
