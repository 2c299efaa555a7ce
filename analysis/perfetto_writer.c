/* perfetto_writer.c — streaming trace-event JSON (see perfetto_writer.h).
 *
 * The document frame ({"traceEvents":[ ... ]}) is written by hand around
 * jansson-serialised events; no DOM of the whole trace is ever built. With
 * blocked causes (report minor 1) a blocked slice is named "blocked: <cause>"
 * and carries cause, releaser ("name #seq") and releaser_seq in its args.
 */
#include "perfetto_writer.h"
#include "summary.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* Compact, and 15 significant digits: µs with ns precision for runs up to ~11 days, without binary noise. */
#define DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(15))

static int
emit(FILE *out, json_t *event, bool *first)
{
    if (!event)
        return -1;
    if (!*first)
        fputs(",\n", out);
    *first = false;
    int rc = json_dumpf(event, out, DUMP_FLAGS);
    json_decref(event);
    return rc;
}

static json_t *
labels_json(const rga_report_t *r, int64_t label_set)
{
    json_t *args = json_object();
    long li = rga_report_label_set_index(r, label_set);
    if (args && li >= 0) {
        const rga_label_set_t *ls = &r->label_sets[li];
        for (size_t j = 0; j < ls->n_labels; j++)
            json_object_set_new(args, ls->keys[j], json_string(ls->values[j]));
    }
    return args;
}

/* A blocked slice's cause and, when known, the thread that woke it. 0, or
 * -1 when out of memory. */
static int
add_cause_args(const rga_report_t *r, size_t interval, json_t *args)
{
    const rga_interval_t *iv = &r->intervals[interval];
    if (json_object_set_new(args, "cause", json_string(rga_cause_name(iv->cause))) != 0)
        return -1;
    const rga_interval_cause_t *row = rga_report_interval_cause(r, interval);
    if (!row || row->releaser == 0)
        return 0;
    long ti = rga_report_thread_index(r, row->releaser);
    char name[160];
    if (ti >= 0 && r->threads[ti].name[0])
        snprintf(name, sizeof(name), "%s #%lld", r->threads[ti].name, (long long)row->releaser);
    else
        snprintf(name, sizeof(name), "thread #%lld", (long long)row->releaser);
    if (json_object_set_new(args, "releaser", json_string(name)) != 0 ||
        json_object_set_new(args, "releaser_seq", json_integer(row->releaser)) != 0)
        return -1;
    return 0;
}

rga_status_t
rga_perfetto_write(const rga_report_t *r, const rga_filter_t *filter, int64_t from_ns, int64_t to_ns, FILE *out,
                   rga_error_t *err)
{
    bool first = true;
    int rc = 0;
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":", out);
    json_t *other = json_pack("{s:s, s:s, s:s, s:I, s:I}", "tool", "rperf-gvl", "program", r->meta.program,
                              "ruby_version", r->meta.ruby_version, "pid", (json_int_t)r->meta.pid,
                              "dropped_intervals", (json_int_t)r->stats.dropped_intervals);
    if (!other || json_dumpf(other, out, DUMP_FLAGS) != 0)
        rc = -1;
    json_decref(other);
    fputs(",\"traceEvents\":[\n", out);
    for (size_t i = 0; i < r->n_ractors && rc == 0; i++) {
        char name[64];
        rga_ractor_name(r, r->ractors[i].id, name, sizeof(name));
        rc = emit(out,
                  json_pack("{s:s, s:s, s:I, s:I, s:{s:s}}", "name", "process_name", "ph", "M", "pid",
                            (json_int_t)r->ractors[i].id, "tid", (json_int_t)0, "args", "name", name),
                  &first);
        if (rc == 0)
            rc = emit(out,
                      json_pack("{s:s, s:s, s:I, s:I, s:{s:I}}", "name", "process_sort_index", "ph", "M", "pid",
                                (json_int_t)r->ractors[i].id, "tid", (json_int_t)0, "args", "sort_index",
                                (json_int_t)r->ractors[i].id),
                      &first);
    }
    for (size_t i = 0; i < r->n_threads && rc == 0; i++) {
        if (!rga_filter_thread_index(filter, i))
            continue;
        const rga_thread_t *t = &r->threads[i];
        char name[160];
        if (t->name[0])
            snprintf(name, sizeof(name), "%s #%lld", t->name, (long long)t->seq);
        else
            snprintf(name, sizeof(name), "thread #%lld", (long long)t->seq);
        rc = emit(out,
                  json_pack("{s:s, s:s, s:I, s:I, s:{s:s}}", "name", "thread_name", "ph", "M", "pid",
                            (json_int_t)t->ractor, "tid", (json_int_t)t->seq, "args", "name", name),
                  &first);
        if (rc == 0)
            rc = emit(out,
                      json_pack("{s:s, s:s, s:I, s:I, s:{s:I}}", "name", "thread_sort_index", "ph", "M", "pid",
                                (json_int_t)t->ractor, "tid", (json_int_t)t->seq, "args", "sort_index",
                                (json_int_t)t->seq),
                      &first);
    }
    for (size_t i = 0; i < r->n_intervals && rc == 0; i++) {
        const rga_interval_t *iv = &r->intervals[i];
        if (!rga_filter_thread_index(filter, iv->thread_index) || !rga_filter_label_set(filter, r, iv->label_set))
            continue;
        if (iv->end_ns < from_ns || (to_ns > 0 && iv->start_ns > to_ns))
            continue;
        const rga_thread_t *t = &r->threads[iv->thread_index];
        json_t *args = labels_json(r, iv->label_set);
        if (args && iv->stack >= 0) {
            char text[512];
            rga_stack_text(r, iv->stack, 6, text, sizeof(text));
            json_object_set_new(args, "stack", json_string(text));
        }
        char name[64];
        snprintf(name, sizeof(name), "%s", rga_state_name(iv->state));
        if (args && r->has_causes && iv->state == RGA_STATE_BLOCKED && add_cause_args(r, i, args) != 0) {
            json_decref(args);
            args = NULL;
        }
        if (r->has_causes && iv->state == RGA_STATE_BLOCKED)
            snprintf(name, sizeof(name), "blocked: %s", rga_cause_name(iv->cause));
        if (!args) {
            rc = -1;
            break;
        }
        rc = emit(out,
                  json_pack("{s:s, s:s, s:s, s:f, s:f, s:I, s:I, s:o}", "name", name, "cat", "gvl", "ph", "X", "ts",
                            (double)iv->start_ns / 1000.0, "dur", (double)(iv->end_ns - iv->start_ns) / 1000.0,
                            "pid", (json_int_t)t->ractor, "tid", (json_int_t)t->seq, "args", args),
                  &first);
    }
    fputs("\n]}\n", out);
    /* json_dumpf fails when its stream does: that is a write error, not a serialisation one. */
    if (ferror(out))
        return rga_error_set(err, RGA_ERR_IO, "write failed: %s", strerror(errno));
    if (rc != 0)
        return rga_error_set(err, RGA_ERR_NOMEM, "cannot serialise a trace event");
    return RGA_OK;
}
