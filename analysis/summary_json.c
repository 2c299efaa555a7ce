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

void
rga_json_put(json_t *obj, const char *key, json_t *value, bool *ok)
{
    if (!value || json_object_set_new(obj, key, value) != 0)
        *ok = false;
}

void
rga_json_push(json_t *arr, json_t *value, bool *ok)
{
    if (!value || json_array_append_new(arr, value) != 0)
        *ok = false;
}

json_t *
rga_rc_root_json(const rga_report_t *r, const rga_rc_root_t *root)
{
    char what[80];
    bool has_thread = root->thread >= 0 && (size_t)root->thread < r->n_threads;
    json_t *o = json_pack("{s:s, s:I, s:s, s:s}", "kind", rga_rc_kind_name(root->kind), "thread",
                          (json_int_t)(has_thread ? r->threads[root->thread].seq : 0), "name",
                          has_thread ? r->threads[root->thread].name : "", "what",
                          rga_rc_root_what(root, what, sizeof(what)));
    bool ok = o != NULL;
    if (ok && (root->kind == RGA_RC_BLOCKED || root->kind == RGA_RC_NO_RELEASER || root->kind == RGA_RC_RACTOR))
        rga_json_put(o, "cause", json_string(rga_cause_name(root->cause)), &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *
rga_rc_stacks_json(const rga_report_t *r, const rga_key_table_t *parts, const rga_rc_stacks_t *stacks,
                   const rga_rc_root_t *root, size_t max)
{
    rga_rc_stack_t top[RGA_SUMMARY_ROOT_STACKS];
    if (max > RGA_SUMMARY_ROOT_STACKS)
        max = RGA_SUMMARY_ROOT_STACKS;
    long n = stacks ? rga_rc_top_stacks(parts, stacks, root, top, max) : 0;
    json_t *arr = n >= 0 ? json_array() : NULL;
    bool ok = arr != NULL;
    for (long i = 0; ok && i < n; i++) {
        char text[4096];
        rga_stack_line(r, top[i].stack, 0, text, sizeof(text));
        rga_json_push(arr,
                      json_pack("{s:I, s:I, s:s, s:o}", "stack", (json_int_t)top[i].stack, "ns",
                                (json_int_t)top[i].ns, "text", text, "frames", frames_json(r, top[i].stack)),
                      &ok);
    }
    if (!ok) {
        json_decref(arr);
        return NULL;
    }
    return arr;
}

/* "root_causes": availability (and why not), the roots with their stacks,
 * each waiter's roots, each label set's shares, the counted cuts. */
static json_t *
roots_json(const rga_summary_t *s)
{
    const rga_report_t *r = s->report;
    const rga_rootcauses_t *rc = &s->roots;
    bool ok = true;
    json_t *o = json_object();
    if (!o)
        return NULL;
    rga_json_put(o, "available", json_boolean(rc->available), &ok);
    if (!rc->available) {
        rga_json_put(o, "reason", json_string(rga_summary_no_roots_reason(r)), &ok);
    } else {
        rga_json_put(o, "waited_ns", json_integer(rc->waited_ns), &ok);
        rga_json_put(o, "cuts",
                     json_pack("{s:I, s:I, s:I, s:I, s:i}", "cycles", (json_int_t)rc->cycles, "cycle_ns",
                               (json_int_t)rc->cycle_ns, "depth", (json_int_t)rc->depth_cuts, "depth_ns",
                               (json_int_t)rc->depth_ns, "max_depth", RGA_RC_MAX_DEPTH),
                     &ok);
        json_t *roots = json_array();
        for (size_t i = 0; ok && roots && i < rc->n_roots; i++) {
            const rga_rc_total_t *x = &rc->roots[i];
            json_t *row = rga_rc_root_json(r, &x->root);
            if (row) {
                rga_json_put(row, "ns", json_integer(x->ns), &ok);
                rga_json_put(row, "chain_ns", json_integer(x->chain_ns), &ok);
                rga_json_put(row, "stacks",
                             rga_rc_stacks_json(r, &rc->parts, s->root_stacks, &x->root, RGA_SUMMARY_ROOT_STACKS),
                             &ok);
            }
            rga_json_push(roots, row, &ok);
        }
        rga_json_put(o, "roots", roots, &ok);
        json_t *flows = json_array();
        for (size_t i = 0; ok && flows && i < rc->n_flows; i++) {
            const rga_rc_share_t *x = &rc->flows[i];
            json_t *row = rga_rc_root_json(r, &x->root);
            if (row) {
                rga_json_put(row, "waiter", json_integer(x->key), &ok);
                rga_json_put(row, "wait", json_string(x->wait_state == RGA_STATE_GVL_WAIT ? "gvl" : "blocked"), &ok);
                rga_json_put(row, "ns", json_integer(x->ns), &ok);
            }
            rga_json_push(flows, row, &ok);
        }
        rga_json_put(o, "waiters", flows, &ok);
        json_t *labels = json_array();
        for (size_t i = 0; ok && labels && i < rc->n_labels; i++) {
            const rga_rc_label_t *l = &rc->labels[i];
            json_t *shares = json_array();
            for (size_t k = 0; ok && shares && k < l->n; k++) {
                const rga_rc_share_t *x = &rc->label_shares[l->first + k];
                json_t *row = rga_rc_root_json(r, &x->root);
                if (row) {
                    rga_json_put(row, "own", json_boolean(x->own), &ok);
                    rga_json_put(row, "ns", json_integer(x->ns), &ok);
                }
                rga_json_push(shares, row, &ok);
            }
            rga_json_push(labels,
                          shares ? json_pack("{s:I, s:I, s:o}", "label_set", (json_int_t)l->label_set, "time_ns",
                                             (json_int_t)l->time_ns, "shares", shares)
                                 : NULL,
                          &ok);
        }
        rga_json_put(o, "label_sets", labels, &ok);
    }
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *
rga_summary_to_json(const rga_summary_t *s)
{
    const rga_report_t *r = s->report;
    bool ok = true;
    json_t *root = json_object();
    if (!root)
        return NULL;
    rga_json_put(root, "format", json_string("rperf-gvl-summary"), &ok);
    rga_json_put(root, "version", json_integer(1), &ok);
    rga_json_put(root, "meta",
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
        rga_json_put(dropped, "causes", json_integer(st->dropped_causes), &ok);
        rga_json_put(dropped, "blocked_edges", json_integer(st->dropped_blocked_edges), &ok);
        rga_json_put(dropped, "release_stacks", json_integer(st->dropped_release_stacks), &ok);
    }
    rga_json_put(root, "dropped", dropped, &ok);
    json_t *drops = json_array();
    for (size_t i = 0; drops && i < s->n_drops; i++) {
        const rga_summary_drop_t *d = &s->drops[i];
        json_t *o = json_pack("{s:s, s:I, s:s, s:s, s:I, s:b}", "what", d->what, "dropped", (json_int_t)d->dropped,
                              "unit", d->unit, "effect", d->effect, "ppm", (json_int_t)rga_summary_drop_ppm(d),
                              "material", rga_summary_drop_ppm(d) >= RGA_SUMMARY_DROP_MATERIAL_PPM);
        if (o && d->of > 0)
            rga_json_put(o, "of", json_integer(d->of), &ok);
        rga_json_push(drops, o, &ok);
    }
    rga_json_put(root, "drops", drops, &ok);
    rga_json_put(root, "totals", states_json(s->total_ns, s->total_lifetime_ns), &ok);

    json_t *threads = json_array();
    for (size_t i = 0; threads && i < s->n_threads; i++) {
        const rga_summary_thread_t *t = &s->threads[i];
        json_t *o = states_json(t->state_ns, t->lifetime_ns);
        if (o) {
            rga_json_put(o, "seq", json_integer(t->seq), &ok);
            rga_json_put(o, "name", json_string(t->name), &ok);
            rga_json_put(o, "ractor", json_integer(t->ractor), &ok);
            rga_json_put(o, "exited", json_boolean(t->exited), &ok);
            rga_json_put(o, "acquisitions", json_integer(t->acquisitions), &ok);
            rga_json_put(o, "waits", json_integer(t->waits), &ok);
            if (t->has_causes) {
                rga_json_put(o, "blocked_by_cause", causes_json(t->cause_ns), &ok);
                rga_json_put(o, "release_unknown_ns", json_integer(t->release_unknown_ns), &ok);
            }
        }
        if (!o || json_array_append_new(threads, o) != 0)
            ok = false;
    }
    rga_json_put(root, "threads", threads, &ok);

    json_t *ractors = json_array();
    for (size_t i = 0; ractors && i < s->n_ractors; i++) {
        const rga_summary_ractor_t *rc = &s->ractors[i];
        json_t *o = states_json(rc->state_ns, rc->lifetime_ns);
        if (o) {
            rga_json_put(o, "id", json_integer(rc->id), &ok);
            rga_json_put(o, "main", json_boolean(rc->main), &ok);
            rga_json_put(o, "identified", json_boolean(rc->identified), &ok);
            rga_json_put(o, "threads", json_integer((json_int_t)rc->n_threads), &ok);
        }
        if (!o || json_array_append_new(ractors, o) != 0)
            ok = false;
    }
    rga_json_put(root, "ractors", ractors, &ok);

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
            rga_json_put(o, "label_set", json_integer(l->label_set), &ok);
            rga_json_put(o, "labels", kv, &ok);
            rga_json_put(o, "threads", json_integer((json_int_t)l->n_threads), &ok);
            if (l->has_causes)
                rga_json_put(o, "blocked_by_cause", causes_json(l->cause_ns), &ok);
        } else {
            json_decref(kv);
        }
        if (!o || json_array_append_new(labels, o) != 0)
            ok = false;
    }
    rga_json_put(root, "label_sets", labels, &ok);

    json_t *waiters = json_array();
    for (size_t i = 0; waiters && i < s->n_waiters; i++) {
        const rga_summary_thread_t *t = &s->threads[s->waiters[i]];
        if (json_array_append_new(waiters,
                                  json_pack("{s:I, s:s, s:I, s:I, s:I}", "seq", (json_int_t)t->seq, "name", t->name,
                                            "gvl_wait_ns", (json_int_t)t->state_ns[RGA_STATE_GVL_WAIT], "waits",
                                            (json_int_t)t->waits, "lifetime_ns", (json_int_t)t->lifetime_ns)) != 0)
            ok = false;
    }
    rga_json_put(root, "top_waiters", waiters, &ok);

    json_t *holders = json_array();
    for (size_t i = 0; holders && i < s->n_holders; i++) {
        const rga_summary_holder_t *h = &s->holders[i];
        if (json_array_append_new(holders, json_pack("{s:s, s:I, s:I, s:I}", "kind", rga_holder_kind_name(h->kind),
                                                     "seq", (json_int_t)h->seq, "wait_ns", (json_int_t)h->wait_ns,
                                                     "count", (json_int_t)h->count)) != 0)
            ok = false;
    }
    rga_json_put(root, "top_holders", holders, &ok);
    if (s->has_causes) {
        json_t *releases = json_array();
        for (size_t i = 0; releases && i < s->n_releases; i++) {
            const rga_summary_release_t *x = &s->releases[i];
            if (json_array_append_new(releases,
                                      json_pack("{s:I, s:I, s:s, s:b, s:I, s:I}", "releaser",
                                                (json_int_t)x->releaser, "waiter", (json_int_t)x->waiter, "cause",
                                                rga_cause_name(x->cause), "idle", x->idle, "blocked_ns",
                                                (json_int_t)x->blocked_ns, "count", (json_int_t)x->count)) != 0)
                ok = false;
        }
        rga_json_put(root, "top_releasers", releases, &ok);
        json_t *methods = json_array();
        for (size_t i = 0; methods && i < s->n_methods; i++) {
            const rga_blocked_method_t *m = s->methods[i];
            if (json_array_append_new(methods,
                                      json_pack("{s:I, s:s, s:s, s:I, s:I}", "thread", (json_int_t)m->thread,
                                                "cause", rga_cause_name(m->cause), "method", m->method, "blocked_ns",
                                                (json_int_t)m->blocked_ns, "count", (json_int_t)m->count)) != 0)
                ok = false;
        }
        rga_json_put(root, "blocked_methods", methods, &ok);
        rga_json_put(root, "top_release_stacks", stacks_json(s, s->release_stacks, s->n_release_stacks), &ok);
    }
    rga_json_put(root, "root_causes", roots_json(s), &ok);
    rga_json_put(root, "top_wait_stacks", stacks_json(s, s->wait_stacks, s->n_wait_stacks), &ok);
    rga_json_put(root, "top_blame_stacks", stacks_json(s, s->blame_stacks, s->n_blame_stacks), &ok);
    if (!ok) {
        json_decref(root);
        return NULL;
    }
    return root;
}

rga_status_t
rga_json_write(json_t *o, FILE *out, const char *what, rga_error_t *err)
{
    if (!o)
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory building %s", what);
    int rc = json_dumpf(o, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (rc != 0 || fputc('\n', out) == EOF || ferror(out))
        return rga_error_set(err, RGA_ERR_IO, "write error: %s", strerror(errno));
    return RGA_OK;
}

rga_status_t
rga_summary_write_json(const rga_summary_t *s, FILE *out, rga_error_t *err)
{
    return rga_json_write(rga_summary_to_json(s), out, "the JSON summary", err);
}
