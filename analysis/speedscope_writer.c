/* speedscope_writer.c — speedscope file format (see speedscope_writer.h).
 *
 * Samples are grouped by thread with one counting pass (no per-thread scan
 * of all samples), then each thread's profile is one jansson object.
 */
#include "speedscope_writer.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"
#define DUMP_FLAGS (JSON_COMPACT | JSON_ENSURE_ASCII)

static json_t *
frames_json(const rga_profile_t *p)
{
    json_t *frames = json_array();
    for (size_t i = 0; frames && i < p->n_functions; i++) {
        const rga_profile_function_t *f = &p->functions[i];
        json_t *frame = f->synthetic || !*f->file ? json_pack("{s:s}", "name", f->name)
                                                  : json_pack("{s:s,s:s}", "name", f->name, "file", f->file);
        if (!frame || json_array_append_new(frames, frame) != 0) {
            json_decref(frames);
            return NULL;
        }
    }
    return frames;
}

/* The sampled profile of one thread: samples order[from..to). */
static json_t *
thread_json(const rga_profile_t *p, const rga_thread_t *t, const size_t *order, size_t from, size_t to,
            uint32_t *stack)
{
    char title[512];
    json_t *samples = json_array(), *weights = json_array();
    int64_t total = 0;
    bool ok = samples && weights;
    for (size_t i = from; ok && i < to; i++) {
        const rga_sample_t *s = p->samples[order[i]];
        size_t depth = rga_profile_stack(p, s, stack);
        json_t *ids = json_array();
        for (size_t d = 0; ids && d < depth; d++)
            if (json_array_append_new(ids, json_integer(stack[d])) != 0) {
                json_decref(ids);
                ids = NULL;
            }
        ok = ids && json_array_append_new(samples, ids) == 0 &&
             json_array_append_new(weights, json_integer(s->weight_ns)) == 0;
        total = rga_weight_add(total, s->weight_ns);
    }
    if (!ok) {
        json_decref(samples);
        json_decref(weights);
        return NULL;
    }
    return json_pack("{s:s,s:s,s:s,s:I,s:I,s:o,s:o}", "type", "sampled", "name",
                     rga_profile_thread_title(t, title, sizeof(title)), "unit", "nanoseconds", "startValue",
                     (json_int_t)0, "endValue", (json_int_t)total, "samples", samples, "weights", weights);
}

rga_status_t
rga_speedscope_write(const rga_profile_t *p, FILE *out, rga_error_t *err)
{
    const rga_report_t *r = p->report;
    size_t *first = calloc(r->n_threads + 1, sizeof(*first));
    size_t *order = calloc(p->n_samples ? p->n_samples : 1, sizeof(*order));
    uint32_t *stack = calloc(p->max_depth, sizeof(*stack));
    json_t *frames = frames_json(p);
    rga_status_t st = RGA_OK;
    if (!first || !order || !stack || !frames) {
        st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory writing the speedscope profile");
        goto done;
    }
    /* Counting sort of the samples by thread index, stable in report order. */
    for (size_t i = 0; i < p->n_samples; i++)
        first[rga_report_thread_index(r, p->samples[i]->thread) + 1]++;
    for (size_t t = 0; t < r->n_threads; t++)
        first[t + 1] += first[t];
    size_t *next = calloc(r->n_threads + 1, sizeof(*next));
    if (!next) {
        st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory writing the speedscope profile");
        goto done;
    }
    memcpy(next, first, (r->n_threads + 1) * sizeof(*next));
    for (size_t i = 0; i < p->n_samples; i++)
        order[next[rga_report_thread_index(r, p->samples[i]->thread)]++] = i;
    free(next);

    fputs("{\"$schema\":\"" SPEEDSCOPE_SCHEMA "\",\"shared\":{\"frames\":", out);
    if (json_dumpf(frames, out, DUMP_FLAGS) != 0)
        st = rga_error_set(err, RGA_ERR_IO, "writing the speedscope profile failed");
    fputs("},\"profiles\":[", out);
    bool first_profile = true;
    for (size_t t = 0; st == RGA_OK && t < r->n_threads; t++) {
        if (first[t] == first[t + 1])
            continue;
        json_t *profile = thread_json(p, &r->threads[t], order, first[t], first[t + 1], stack);
        if (!profile) {
            st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory writing the speedscope profile");
            break;
        }
        if (!first_profile)
            fputc(',', out);
        first_profile = false;
        if (json_dumpf(profile, out, DUMP_FLAGS) != 0)
            st = rga_error_set(err, RGA_ERR_IO, "writing the speedscope profile failed");
        json_decref(profile);
    }
    json_t *name = json_string(r->meta.program && *r->meta.program ? r->meta.program : "rperf-gvl profile");
    fputs("],\"name\":", out);
    if (!name || json_dumpf(name, out, JSON_ENCODE_ANY | DUMP_FLAGS) != 0)
        st = st != RGA_OK ? st : rga_error_set(err, RGA_ERR_IO, "writing the speedscope profile failed");
    json_decref(name);
    fputs(",\"activeProfileIndex\":0,\"exporter\":\"rperf-gvl\"}\n", out);
    if (st == RGA_OK && ferror(out))
        st = rga_error_set(err, RGA_ERR_IO, "writing the speedscope profile failed");
done:
    json_decref(frames);
    free(first);
    free(order);
    free(stack);
    return st;
}
