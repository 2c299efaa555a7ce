/* pprof_writer.c — profile model → profile.proto → gzip (see pprof_writer.h).
 *
 * Messages point into a few arrays allocated once per call (labels shared by
 * every sample of a thread or label set); protobuf-c packs the whole Profile
 * through a ProtobufCBuffer whose append feeds deflate, so no packed copy of
 * the profile is held in memory.
 */
#include "pprof_writer.h"
#include "intern.h"
#include "profile.pb-c.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef Perftools__Profiles__Profile pb_profile_t;
typedef Perftools__Profiles__ValueType pb_value_type_t;
typedef Perftools__Profiles__Sample pb_sample_t;
typedef Perftools__Profiles__Label pb_label_t;
typedef Perftools__Profiles__Mapping pb_mapping_t;
typedef Perftools__Profiles__Location pb_location_t;
typedef Perftools__Profiles__Line pb_line_t;
typedef Perftools__Profiles__Function pb_function_t;

/* Thread labels per sample: thread_seq, thread, ractor. */
#define THREAD_LABELS 3

/* ---- gzip sink ------------------------------------------------------------------ */

typedef struct gzip_sink {
    ProtobufCBuffer base; /* first: protobuf-c calls base.append with &base */
    z_stream z;
    FILE *out;
    int failed; /* 0, or the zlib/stdio failure that stopped the stream */
    unsigned char chunk[1 << 16];
} gzip_sink_t;

static void
sink_run(gzip_sink_t *s, int flush)
{
    int rc;
    do {
        s->z.next_out = s->chunk;
        s->z.avail_out = sizeof(s->chunk);
        rc = deflate(&s->z, flush);
        if (rc == Z_STREAM_ERROR) {
            s->failed = 1;
            return;
        }
        size_t have = sizeof(s->chunk) - s->z.avail_out;
        if (have && fwrite(s->chunk, 1, have, s->out) != have) {
            s->failed = 1;
            return;
        }
    } while (s->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
}

static void
sink_append(ProtobufCBuffer *buffer, size_t len, const uint8_t *data)
{
    gzip_sink_t *s = (gzip_sink_t *)buffer;
    while (len > 0 && !s->failed) {
        uInt part = len > (1u << 30) ? (1u << 30) : (uInt)len;
        s->z.next_in = (Bytef *)data;
        s->z.avail_in = part;
        sink_run(s, Z_NO_FLUSH);
        data += part;
        len -= part;
    }
}

/* ---- building the message -------------------------------------------------------- */

typedef struct pprof_build {
    rga_intern_t strings;
    pb_function_t *functions;
    pb_location_t *locations;
    pb_line_t *lines;
    pb_line_t **line_ptrs;
    pb_function_t **function_ptrs;
    pb_location_t **location_ptrs;
    pb_label_t *thread_labels;     /* THREAD_LABELS per thread index */
    pb_label_t **label_set_labels; /* per label set index */
    pb_sample_t *samples;
    pb_sample_t **sample_ptrs;
    uint64_t *location_ids;  /* all samples' stacks, back to back */
    int64_t *values;         /* 2 per sample */
    pb_label_t **label_ptrs; /* all samples' labels, back to back */
    bool nomem;
} pprof_build_t;

static int64_t
str_id(pprof_build_t *b, const char *s)
{
    size_t id = rga_intern(&b->strings, s);
    if (id == (size_t)-1) {
        b->nomem = true;
        return 0;
    }
    return (int64_t)id;
}

static void
free_build(pprof_build_t *b, const rga_report_t *r)
{
    rga_intern_free(&b->strings);
    free(b->functions);
    free(b->locations);
    free(b->lines);
    free(b->line_ptrs);
    free(b->function_ptrs);
    free(b->location_ptrs);
    free(b->thread_labels);
    if (b->label_set_labels)
        for (size_t i = 0; i < r->n_label_sets; i++)
            free(b->label_set_labels[i]);
    free(b->label_set_labels);
    free(b->samples);
    free(b->sample_ptrs);
    free(b->location_ids);
    free(b->values);
    free(b->label_ptrs);
}

static void
build_functions(pprof_build_t *b, const rga_profile_t *p)
{
    size_t n = p->n_functions;
    b->functions = calloc(n ? n : 1, sizeof(*b->functions));
    b->locations = calloc(n ? n : 1, sizeof(*b->locations));
    b->lines = calloc(n ? n : 1, sizeof(*b->lines));
    b->line_ptrs = calloc(n ? n : 1, sizeof(*b->line_ptrs));
    b->function_ptrs = calloc(n ? n : 1, sizeof(*b->function_ptrs));
    b->location_ptrs = calloc(n ? n : 1, sizeof(*b->location_ptrs));
    if (!b->functions || !b->locations || !b->lines || !b->line_ptrs || !b->function_ptrs || !b->location_ptrs) {
        b->nomem = true;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const rga_profile_function_t *f = &p->functions[i];
        pb_function_t fn = PERFTOOLS__PROFILES__FUNCTION__INIT;
        fn.id = i + 1;
        /* No system_name: pprof then takes the name as final and shows it whole. */
        fn.name = str_id(b, f->name);
        fn.filename = str_id(b, f->file);
        b->functions[i] = fn;
        b->function_ptrs[i] = &b->functions[i];
        pb_line_t line = PERFTOOLS__PROFILES__LINE__INIT;
        line.function_id = i + 1; /* line stays 0: report frames carry no line */
        b->lines[i] = line;
        b->line_ptrs[i] = &b->lines[i];
        pb_location_t loc = PERFTOOLS__PROFILES__LOCATION__INIT;
        loc.id = i + 1;
        loc.mapping_id = 1;
        loc.n_line = 1;
        loc.line = &b->line_ptrs[i];
        b->locations[i] = loc;
        b->location_ptrs[i] = &b->locations[i];
    }
}

static void
build_labels(pprof_build_t *b, const rga_report_t *r)
{
    b->thread_labels = calloc(r->n_threads * THREAD_LABELS + 1, sizeof(*b->thread_labels));
    b->label_set_labels = calloc(r->n_label_sets + 1, sizeof(*b->label_set_labels));
    if (!b->thread_labels || !b->label_set_labels) {
        b->nomem = true;
        return;
    }
    int64_t k_seq = str_id(b, "thread_seq"), k_thread = str_id(b, "thread"), k_ractor = str_id(b, "ractor");
    for (size_t i = 0; i < r->n_threads; i++) {
        const rga_thread_t *t = &r->threads[i];
        char name[256];
        pb_label_t *l = &b->thread_labels[i * THREAD_LABELS];
        pb_label_t init = PERFTOOLS__PROFILES__LABEL__INIT;
        l[0] = l[1] = l[2] = init;
        l[0].key = k_seq;
        l[0].num = t->seq;
        l[1].key = k_thread;
        l[1].str = str_id(b, rga_profile_thread_name(t, name, sizeof(name)));
        l[2].key = k_ractor;
        l[2].num = t->ractor;
    }
    for (size_t i = 0; i < r->n_label_sets; i++) {
        const rga_label_set_t *ls = &r->label_sets[i];
        b->label_set_labels[i] = calloc(ls->n_labels + 1, sizeof(pb_label_t));
        if (!b->label_set_labels[i]) {
            b->nomem = true;
            return;
        }
        for (size_t j = 0; j < ls->n_labels; j++) {
            pb_label_t l = PERFTOOLS__PROFILES__LABEL__INIT;
            l.key = str_id(b, ls->keys[j]);
            l.str = str_id(b, ls->values[j]);
            b->label_set_labels[i][j] = l;
        }
    }
}

static void
build_samples(pprof_build_t *b, const rga_profile_t *p)
{
    const rga_report_t *r = p->report;
    size_t n = p->n_samples, n_locations = 0, n_labels = 0;
    for (size_t i = 0; i < n; i++) {
        const rga_sample_t *s = p->samples[i];
        uint32_t depth = r->stacks[s->stack].depth;
        n_locations += depth ? depth : 1;
        long li = rga_report_label_set_index(r, s->label_set);
        n_labels += THREAD_LABELS + (li >= 0 ? r->label_sets[li].n_labels : 0);
    }
    b->samples = calloc(n ? n : 1, sizeof(*b->samples));
    b->sample_ptrs = calloc(n ? n : 1, sizeof(*b->sample_ptrs));
    b->location_ids = calloc(n_locations ? n_locations : 1, sizeof(*b->location_ids));
    b->values = calloc(2 * n + 1, sizeof(*b->values));
    b->label_ptrs = calloc(n_labels ? n_labels : 1, sizeof(*b->label_ptrs));
    uint32_t *stack = calloc(p->max_depth, sizeof(*stack));
    if (!b->samples || !b->sample_ptrs || !b->location_ids || !b->values || !b->label_ptrs || !stack) {
        free(stack);
        b->nomem = true;
        return;
    }
    uint64_t *loc = b->location_ids;
    pb_label_t **lab = b->label_ptrs;
    for (size_t i = 0; i < n; i++) {
        const rga_sample_t *s = p->samples[i];
        pb_sample_t ps = PERFTOOLS__PROFILES__SAMPLE__INIT;
        size_t depth = rga_profile_stack(p, s, stack);
        ps.n_location_id = depth;
        ps.location_id = loc;
        for (size_t d = 0; d < depth; d++) /* pprof reads leaf first */
            loc[d] = (uint64_t)stack[depth - 1 - d] + 1;
        loc += depth;
        ps.n_value = 2;
        ps.value = &b->values[2 * i];
        ps.value[0] = rga_profile_sample_count(p, s->weight_ns);
        ps.value[1] = s->weight_ns;
        ps.label = lab;
        long ti = rga_report_thread_index(r, s->thread);
        if (ti >= 0)
            for (size_t k = 0; k < THREAD_LABELS; k++)
                *lab++ = &b->thread_labels[(size_t)ti * THREAD_LABELS + k];
        long li = rga_report_label_set_index(r, s->label_set);
        if (li >= 0)
            for (size_t k = 0; k < r->label_sets[li].n_labels; k++)
                *lab++ = &b->label_set_labels[li][k];
        ps.n_label = (size_t)(lab - ps.label);
        b->samples[i] = ps;
        b->sample_ptrs[i] = &b->samples[i];
    }
    free(stack);
}

rga_status_t
rga_pprof_write(const rga_profile_t *p, FILE *out, rga_error_t *err)
{
    const rga_report_t *r = p->report;
    pprof_build_t b;
    memset(&b, 0, sizeof(b));
    rga_intern_init(&b.strings);
    str_id(&b, ""); /* string_table[0] must be "" */
    const char *mode = r->meta.mode && strcmp(r->meta.mode, "cpu") == 0 ? "cpu" : "wall";

    pb_value_type_t types[2] = {PERFTOOLS__PROFILES__VALUE_TYPE__INIT, PERFTOOLS__PROFILES__VALUE_TYPE__INIT};
    types[0].type = str_id(&b, "samples");
    types[0].unit = str_id(&b, "count");
    types[1].type = str_id(&b, mode);
    types[1].unit = str_id(&b, "nanoseconds");
    pb_value_type_t *type_ptrs[2] = {&types[0], &types[1]};
    pb_value_type_t period_type = types[1];

    pb_mapping_t mapping = PERFTOOLS__PROFILES__MAPPING__INIT;
    mapping.id = 1;
    mapping.filename = str_id(&b, "ruby");
    mapping.has_functions = mapping.has_filenames = 1; /* nothing to symbolize */
    pb_mapping_t *mapping_ptr = &mapping;

    char comment[512];
    snprintf(comment, sizeof(comment), "rperf-gvl: %s mode, %lld Hz, pid %lld, %s; lines unknown (0)", mode,
             (long long)r->meta.frequency, (long long)r->meta.pid, r->meta.program ? r->meta.program : "");
    int64_t comment_id = str_id(&b, comment);

    build_functions(&b, p);
    build_labels(&b, r);
    build_samples(&b, p);
    rga_status_t st = RGA_OK;
    if (b.nomem) {
        st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory building the pprof profile");
        goto done;
    }

    pb_profile_t prof = PERFTOOLS__PROFILES__PROFILE__INIT;
    prof.n_sample_type = 2;
    prof.sample_type = type_ptrs;
    prof.n_sample = p->n_samples;
    prof.sample = b.sample_ptrs;
    prof.n_mapping = 1;
    prof.mapping = &mapping_ptr;
    prof.n_location = p->n_functions;
    prof.location = b.location_ptrs;
    prof.n_function = p->n_functions;
    prof.function = b.function_ptrs;
    prof.n_string_table = b.strings.n;
    prof.string_table = b.strings.strs;
    prof.time_nanos = r->meta.start_time_ns;
    prof.duration_nanos = r->meta.duration_ns;
    prof.period_type = &period_type;
    prof.period = p->period_ns;
    prof.n_comment = 1;
    prof.comment = &comment_id;
    prof.default_sample_type = types[1].type;

    gzip_sink_t *sink = calloc(1, sizeof(*sink));
    if (!sink) {
        st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory building the pprof profile");
        goto done;
    }
    sink->base.append = sink_append;
    sink->out = out;
    /* windowBits 15 + 16: a gzip header and trailer, as pprof files have. */
    if (deflateInit2(&sink->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(sink);
        st = rga_error_set(err, RGA_ERR_NOMEM, "zlib: cannot start the gzip stream");
        goto done;
    }
    protobuf_c_message_pack_to_buffer(&prof.base, &sink->base);
    if (!sink->failed) {
        sink->z.next_in = NULL;
        sink->z.avail_in = 0;
        sink_run(sink, Z_FINISH);
    }
    deflateEnd(&sink->z);
    if (sink->failed || ferror(out))
        st = rga_error_set(err, RGA_ERR_IO, "writing the pprof profile failed");
    free(sink);
done:
    free_build(&b, r);
    return st;
}
