/* test_profiles.c — the profile outputs on reports with known numbers: the
 * model's selection (filters, --state, the empty-stack placeholder, frames
 * grouped into functions), folded stacks read back by a reader written here,
 * the flat/cumulative rows (recursion counted once), speedscope's structure
 * read back with jansson, and the pprof bytes decoded with protobuf-c. The
 * same outputs on synthetic reports must conserve the report's sample total.
 * (go tool pprof reads our files in test_pprof_reader.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "collapsed_writer.h"
#include "profile.pb-c.h"
#include "profile_model.h"
#include "rga.h"
#include "rga_test_util.h"
#include "top_text.h"

/* Threads 1 (main, Ractor 1) and 2 (unnamed, Ractor 2). Frames: 4 = work,
 * 5 = <main>, 6 = a frame whose label holds ';', 7 = a second frame id of
 * "work" in the same file (one function). Stack 0 = work < <main>; 1 = [GVL
 * wait] < work < <main>; 2 = work < work(7) < work < <main> (recursion);
 * 3 = empty; 4 = [GC marking] < odd;name; 5 = [GVL blocked] < <main>. */
static const char known_report[] =
    "{\"format\":\"rperf-gvl-report\",\"version\":1,\"minor\":0,"
    "\"meta\":{\"tool\":\"rperf-gvl\",\"tool_version\":\"0.1.0\",\"ruby_version\":\"3.3.8\",\"pid\":9,"
    "\"program\":\"k.rb\",\"mode\":\"cpu\",\"frequency\":100,\"start_time_ns\":1700000000000000000,"
    "\"start_monotonic_ns\":0,\"duration_ns\":100000000,\"sequence\":0},"
    "\"stats\":{},\"ractors\":[{\"id\":1,\"main\":true},{\"id\":2,\"main\":false}],"
    "\"threads\":["
    "{\"seq\":1,\"name\":\"main\",\"native_id\":1,\"ractor\":1,\"first_seen_ns\":0,\"last_seen_ns\":100,"
    "\"exited\":false,\"running_ns\":100,\"gvl_wait_ns\":0,\"blocked_ns\":0,\"gc_mark_ns\":0,\"gc_sweep_ns\":0,"
    "\"acquisitions\":1,\"waits\":0},"
    "{\"seq\":2,\"name\":\"\",\"native_id\":2,\"ractor\":2,\"first_seen_ns\":0,\"last_seen_ns\":100,"
    "\"exited\":false,\"running_ns\":100,\"gvl_wait_ns\":0,\"blocked_ns\":0,\"gc_mark_ns\":0,\"gc_sweep_ns\":0,"
    "\"acquisitions\":1,\"waits\":0}],"
    "\"label_sets\":[{\"id\":0,\"labels\":{}},{\"id\":1,\"labels\":{\"endpoint\":\"GET /a\"}}],"
    "\"label_totals\":[],"
    "\"frames\":[[\"<GVL>\",\"[GVL blocked]\"],[\"<GVL>\",\"[GVL wait]\"],[\"<GC>\",\"[GC marking]\"],"
    "[\"<GC>\",\"[GC sweeping]\"],[\"k.rb\",\"work\"],[\"k.rb\",\"<main>\"],[\"k.rb\",\"odd;name\"],"
    "[\"k.rb\",\"work\"]],"
    "\"stacks\":[[4,5],[1,4,5],[4,7,4,5],[],[2,6],[0,5]],"
    "\"samples\":[[0,1000,1,0],[1,200,1,1],[2,300,2,1],[3,50,2,0],[4,70,1,0],[5,400,2,0],[0,5,2,1]],"
    "\"intervals\":[],\"edges\":[],\"blame\":[]}";

static char *
render(const rga_report_t *r, const char *view, const rga_view_opts_t *opts, size_t *len)
{
    char *out = NULL;
    rga_error_t err;
    int rc = rga_render_loaded(r, view, opts, &out, len, &err);
    if (rc != RGA_OK)
        fail_msg("%s: %s", view, err.reason);
    return out;
}

static int64_t
sample_total(const rga_report_t *r)
{
    int64_t total = 0;
    for (size_t i = 0; i < r->n_samples; i++)
        total += r->samples[i].weight_ns;
    return total;
}

static rga_profile_t
model(const rga_report_t *r, const char *state, const char *thread)
{
    rga_filter_spec_t spec = {thread, 0, NULL, 0, state};
    rga_filter_t f;
    rga_error_t err;
    assert_int_equal(rga_filter_init(&f, r, &spec, &err), RGA_OK);
    rga_profile_t p;
    assert_int_equal(rga_profile_build(r, &f, &p, &err), RGA_OK);
    rga_filter_free(&f);
    return p;
}

static void
test_model_states(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(known_report);
    rga_profile_t all = model(r, NULL, NULL);
    assert_int_equal(all.total_ns, 2025);
    assert_int_equal(all.n_samples, 7);
    /* Frames 4 and 7 (same label and path) are one function; the empty stack
     * adds the placeholder: 4 synthetic + work + <main> + odd;name + 1. */
    assert_int_equal(all.n_functions, 8);
    assert_int_equal(all.frame_function[4], all.frame_function[7]);
    assert_string_equal(all.functions[all.n_functions - 1].name, "[no Ruby frame]");
    assert_int_equal(all.period_ns, 10000000);
    rga_profile_free(&all);

    struct {
        const char *state;
        int64_t total;
        size_t n;
    } cases[] = {{"running", 1000 + 300 + 50 + 5, 4}, {"gvl_wait", 200, 1}, {"blocked", 400, 1}, {"gc", 70, 1}};
    int64_t sum = 0;
    for (size_t i = 0; i < 4; i++) {
        rga_profile_t p = model(r, cases[i].state, NULL);
        assert_int_equal(p.total_ns, cases[i].total);
        assert_int_equal(p.n_samples, cases[i].n);
        sum += p.total_ns;
        rga_profile_free(&p);
    }
    assert_int_equal(sum, 2025); /* the four states partition the samples */

    rga_profile_t t2 = model(r, NULL, "2");
    assert_int_equal(t2.total_ns, 300 + 50 + 400 + 5);
    rga_profile_free(&t2);

    rga_filter_spec_t bad = {NULL, 0, NULL, 0, "sleeping"};
    rga_filter_t f;
    rga_error_t err;
    assert_int_equal(rga_filter_init(&f, r, &bad, &err), RGA_ERR_ARGUMENT);
    assert_non_null(strstr(err.reason, "sleeping"));
    rga_report_free(r);
}

/* ---- folded stacks: a reader --------------------------------------------------- */

typedef struct folded {
    char **stacks; /* "a;b;c" root first */
    int64_t *weights;
    size_t n;
} folded_t;

static folded_t
read_folded(const char *text)
{
    folded_t f = {0};
    char *copy = strdup(text);
    for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *space = strrchr(line, ' ');
        assert_non_null(space);
        *space = '\0';
        char *end;
        long long w = strtoll(space + 1, &end, 10);
        assert_true(*end == '\0' && w > 0);
        f.stacks = realloc(f.stacks, (f.n + 1) * sizeof(*f.stacks));
        f.weights = realloc(f.weights, (f.n + 1) * sizeof(*f.weights));
        f.stacks[f.n] = strdup(line);
        f.weights[f.n++] = w;
    }
    free(copy);
    return f;
}

static void
free_folded(folded_t *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->stacks[i]);
    free(f->stacks);
    free(f->weights);
}

static int64_t
folded_weight(const folded_t *f, const char *stack)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->stacks[i], stack) == 0)
            return f->weights[i];
    return -1;
}

/* The folded text of a report sample, built from the report tables alone. */
static void
expected_stack(const rga_report_t *r, const rga_sample_t *s, char *buf, size_t size)
{
    const rga_stack_t *st = &r->stacks[s->stack];
    buf[0] = '\0';
    if (st->depth == 0)
        snprintf(buf, size, "[no Ruby frame]");
    for (uint32_t i = 0; i < st->depth; i++) {
        const char *label = r->frames[r->stack_frames[st->first + st->depth - 1 - i]].label;
        size_t at = strlen(buf);
        snprintf(buf + at, size - at, "%s%s", i ? ";" : "", label);
        for (char *c = buf + at + (i ? 1 : 0); *c; c++)
            if (*c == ';')
                *c = ':';
    }
}

/* Every distinct stack of the report comes back with the summed weight. */
static void
check_round_trip(const rga_report_t *r)
{
    size_t len;
    char *text = render(r, "collapsed", NULL, &len);
    folded_t f = read_folded(text);
    int64_t total = 0;
    for (size_t i = 0; i < f.n; i++)
        total += f.weights[i];
    assert_int_equal(total, sample_total(r));
    char buf[8192], other[8192];
    for (size_t i = 0; i < r->n_samples; i++) {
        if (r->samples[i].weight_ns == 0)
            continue;
        expected_stack(r, &r->samples[i], buf, sizeof(buf));
        int64_t want = 0;
        for (size_t j = 0; j < r->n_samples; j++) {
            expected_stack(r, &r->samples[j], other, sizeof(other));
            if (strcmp(buf, other) == 0)
                want += r->samples[j].weight_ns;
        }
        assert_int_equal(folded_weight(&f, buf), want);
    }
    free_folded(&f);
    free(text);
}

static void
test_collapsed_known(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(known_report);
    check_round_trip(r);
    size_t len;
    char *text = render(r, "collapsed", NULL, &len);
    folded_t f = read_folded(text);
    assert_int_equal(f.n, 6); /* samples 0 and 6 share a stack */
    assert_int_equal(folded_weight(&f, "<main>;work"), 1005);
    assert_int_equal(folded_weight(&f, "<main>;work;work;work"), 300);
    assert_int_equal(folded_weight(&f, "odd:name;[GC marking]"), 70);
    assert_int_equal(folded_weight(&f, "[no Ruby frame]"), 50);
    free_folded(&f);
    free(text);

    rga_view_opts_t opts = {0};
    opts.roots = RGA_ROOT_THREAD | RGA_ROOT_LABEL;
    text = render(r, "collapsed", &opts, &len);
    f = read_folded(text);
    assert_int_equal(folded_weight(&f, "main (#1, Ractor 1);(no labels);<main>;work"), 1000);
    assert_int_equal(folded_weight(&f, "#2 (Ractor 2);endpoint=GET /a;<main>;work"), 5);
    free_folded(&f);
    free(text);
    rga_report_free(r);
}

static void
test_collapsed_synthetic(void **state)
{
    (void)state;
    char *path = rga_test_generate("--threads 6 --ractors 2 --labels 4 --slices 300 --seed 11");
    assert_non_null(path);
    rga_report_t *r = NULL;
    rga_error_t err;
    assert_int_equal(rga_report_load_file(path, &r, &err), RGA_OK);
    assert_true(r->n_samples > 50);
    check_round_trip(r);
    rga_report_free(r);
    unlink(path);
    free(path);
}

/* ---- top -------------------------------------------------------------------------- */

static const rga_top_row_t *
top_row(const rga_top_t *t, const char *name)
{
    for (size_t i = 0; i < t->n_rows; i++)
        if (strcmp(t->profile->functions[t->rows[i].function].name, name) == 0)
            return &t->rows[i];
    return NULL;
}

static void
test_top_known(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(known_report);
    rga_profile_t p = model(r, NULL, NULL);
    rga_top_t t;
    rga_error_t err;
    assert_int_equal(rga_top_build(&p, &t, &err), RGA_OK);
    assert_int_equal(t.n_threads, 2);
    /* work: leaf of samples 0, 2, 6; in 0, 1, 2 (three times, counted once), 6. */
    assert_int_equal(top_row(&t, "work")->self_ns, 1000 + 300 + 5);
    assert_int_equal(top_row(&t, "work")->cum_ns, 1000 + 200 + 300 + 5);
    assert_int_equal(top_row(&t, "<main>")->self_ns, 0);
    assert_int_equal(top_row(&t, "<main>")->cum_ns, 1000 + 200 + 300 + 400 + 5);
    assert_int_equal(top_row(&t, "[GVL blocked]")->self_ns, 400);
    assert_int_equal(top_row(&t, "[no Ruby frame]")->cum_ns, 50);
    assert_null(top_row(&t, "[GC sweeping]")); /* no time, no row */
    int64_t self = 0;
    for (size_t i = 0; i < t.n_rows; i++) {
        self += t.rows[i].self_ns;
        if (i > 0)
            assert_true(t.rows[i - 1].self_ns >= t.rows[i].self_ns);
    }
    assert_int_equal(self, p.total_ns);
    rga_top_free(&t);
    rga_profile_free(&p);

    size_t len;
    rga_view_opts_t opts = {0};
    opts.top = 2;
    char *text = render(r, "top", &opts, &len);
    assert_non_null(strstr(text, "cpu time 2.02µs over 2 threads, 7 functions (2 shown)"));
    assert_non_null(strstr(text, "work"));
    assert_non_null(strstr(text, "64.4%")); /* 1305 of 2025 */
    assert_null(strstr(text, "odd;name"));  /* beyond the 2 rows */
    free(text);
    rga_report_free(r);
}

/* ---- speedscope ------------------------------------------------------------------- */

static void
test_speedscope_known(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(known_report);
    size_t len;
    char *text = render(r, "speedscope", NULL, &len);
    json_error_t jerr;
    json_t *doc = json_loadb(text, len, 0, &jerr);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "$schema")),
                        "https://www.speedscope.app/file-format-schema.json");
    json_t *frames = json_object_get(json_object_get(doc, "shared"), "frames");
    assert_int_equal(json_array_size(frames), 8);
    json_t *profiles = json_object_get(doc, "profiles");
    assert_int_equal(json_array_size(profiles), 2);
    const char *names[] = {"main (#1, Ractor 1)", "#2 (Ractor 2)"};
    int64_t totals[] = {1000 + 200 + 70, 300 + 50 + 400 + 5};
    for (size_t i = 0; i < 2; i++) {
        json_t *prof = json_array_get(profiles, i);
        assert_string_equal(json_string_value(json_object_get(prof, "type")), "sampled");
        assert_string_equal(json_string_value(json_object_get(prof, "unit")), "nanoseconds");
        assert_string_equal(json_string_value(json_object_get(prof, "name")), names[i]);
        json_t *samples = json_object_get(prof, "samples"), *weights = json_object_get(prof, "weights");
        assert_int_equal(json_array_size(samples), json_array_size(weights));
        int64_t sum = 0;
        for (size_t k = 0; k < json_array_size(weights); k++)
            sum += json_integer_value(json_array_get(weights, k));
        assert_int_equal(sum, totals[i]);
        assert_int_equal(json_integer_value(json_object_get(prof, "endValue")), totals[i]);
    }
    /* Thread 1's first sample: <main> then work, root first. */
    json_t *first = json_array_get(json_object_get(json_array_get(profiles, 0), "samples"), 0);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(frames, (size_t)json_integer_value(json_array_get(first, 0))), "name")),
                        "<main>");
    json_decref(doc);
    free(text);
    rga_report_free(r);
}

/* ---- pprof, decoded with protobuf-c ------------------------------------------------ */

static Perftools__Profiles__Profile *
decode_pprof(const char *gz, size_t len)
{
    z_stream z = {0};
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    size_t cap = 1 << 20, used = 0;
    unsigned char *buf = malloc(cap);
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)len;
    int rc;
    do {
        if (used == cap)
            buf = realloc(buf, cap *= 2);
        z.next_out = buf + used;
        z.avail_out = (uInt)(cap - used);
        rc = inflate(&z, Z_NO_FLUSH);
        used = cap - z.avail_out;
    } while (rc == Z_OK);
    assert_int_equal(rc, Z_STREAM_END);
    inflateEnd(&z);
    Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, used, buf);
    free(buf);
    assert_non_null(p);
    return p;
}

static void
test_pprof_known(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(known_report);
    size_t len;
    char *gz = render(r, "pprof", NULL, &len);
    Perftools__Profiles__Profile *p = decode_pprof(gz, len);
    char **s = p->string_table;
    assert_string_equal(s[0], "");
    assert_int_equal(p->n_sample_type, 2);
    assert_string_equal(s[p->sample_type[0]->type], "samples");
    assert_string_equal(s[p->sample_type[1]->type], "cpu");
    assert_string_equal(s[p->sample_type[1]->unit], "nanoseconds");
    assert_string_equal(s[p->period_type->type], "cpu");
    assert_int_equal(p->period, 10000000);
    assert_int_equal(p->time_nanos, 1700000000000000000LL);
    assert_int_equal(p->duration_nanos, 100000000);
    assert_int_equal(p->n_sample, 7);
    int64_t total = 0;
    for (size_t i = 0; i < p->n_sample; i++) {
        const Perftools__Profiles__Sample *sm = p->sample[i];
        assert_int_equal(sm->n_value, 2);
        assert_int_equal(sm->value[1], r->samples[i].weight_ns);
        assert_int_equal(sm->value[0], 1); /* all far below one 10ms period */
        total += sm->value[1];
        /* Leaf first: the leaf location's function is the report stack's leaf frame label. */
        const rga_stack_t *st = &r->stacks[r->samples[i].stack];
        const char *leaf = st->depth ? r->frames[r->stack_frames[st->first]].label : "[no Ruby frame]";
        uint64_t loc = sm->location_id[0];
        const Perftools__Profiles__Location *l = p->location[loc - 1];
        assert_int_equal(l->id, loc);
        assert_string_equal(s[p->function[l->line[0]->function_id - 1]->name], leaf);
        assert_int_equal(sm->n_location_id, st->depth ? st->depth : 1);
        /* Labels: thread_seq, thread, ractor, then the label set's keys. */
        int64_t seq = -1;
        const char *thread = NULL, *endpoint = NULL;
        for (size_t k = 0; k < sm->n_label; k++) {
            const char *key = s[sm->label[k]->key];
            if (strcmp(key, "thread_seq") == 0)
                seq = sm->label[k]->num;
            else if (strcmp(key, "thread") == 0)
                thread = s[sm->label[k]->str];
            else if (strcmp(key, "endpoint") == 0)
                endpoint = s[sm->label[k]->str];
        }
        assert_int_equal(seq, r->samples[i].thread);
        assert_string_equal(thread, seq == 1 ? "main" : "#2");
        if (r->samples[i].label_set == 1)
            assert_string_equal(endpoint, "GET /a");
        else
            assert_null(endpoint);
    }
    assert_int_equal(total, 2025);
    assert_string_equal(s[p->function[0]->filename], "<GVL>");
    perftools__profiles__profile__free_unpacked(p, NULL);
    free(gz);

    /* A state filter keeps only that state's samples. */
    rga_view_opts_t opts = {0};
    opts.state = "gvl_wait";
    gz = render(r, "pprof", &opts, &len);
    p = decode_pprof(gz, len);
    assert_int_equal(p->n_sample, 1);
    assert_int_equal(p->sample[0]->value[1], 200);
    perftools__profiles__profile__free_unpacked(p, NULL);
    free(gz);
    rga_report_free(r);
}

/* A report without samples: valid empty outputs. */
static void
test_empty(void **state)
{
    (void)state;
    char *path = rga_test_generate("--threads 2 --slices 10 --seed 2");
    size_t n;
    char *text = rga_test_slurp(path, &n);
    char *samples = strstr(text, "\"samples\":[");
    assert_non_null(samples);
    char *end = strstr(samples, "]],");
    assert_non_null(end);
    memmove(samples + 11, end + 1, strlen(end + 1) + 1);
    rga_report_t *r = rga_test_load(text);
    assert_int_equal(r->n_samples, 0);
    size_t len;
    char *gz = render(r, "pprof", NULL, &len);
    Perftools__Profiles__Profile *p = decode_pprof(gz, len);
    assert_int_equal(p->n_sample, 0);
    assert_int_equal(p->n_sample_type, 2);
    perftools__profiles__profile__free_unpacked(p, NULL);
    free(gz);
    char *folded = render(r, "collapsed", NULL, &len);
    assert_int_equal(len, 0);
    free(folded);
    char *ss = render(r, "speedscope", NULL, &len);
    json_error_t jerr;
    json_t *doc = json_loadb(ss, len, 0, &jerr);
    assert_non_null(doc);
    assert_int_equal(json_array_size(json_object_get(doc, "profiles")), 0);
    json_decref(doc);
    free(ss);
    char *top = render(r, "top", NULL, &len);
    assert_non_null(strstr(top, "0 functions"));
    free(top);
    rga_report_free(r);
    free(text);
    unlink(path);
    free(path);
}

/* Replaces the known report's samples with two of weight w (caller frees). */
static char *
with_two_weights(const char *w)
{
    char *text = strdup(known_report);
    char *samples = strstr(text, "\"samples\":[");
    char huge[160];
    snprintf(huge, sizeof(huge), "\"samples\":[[0,%s,1,0],[5,%s,2,0]],", w, w);
    char *rest = strstr(samples, "]],") + 3;
    size_t n = strlen(text) + strlen(huge) + 1;
    char *patched = malloc(n);
    snprintf(patched, n, "%.*s%s%s", (int)(samples - text), text, huge, rest);
    free(text);
    return patched;
}

/* Weights whose total is just below INT64_MAX: every view sums them
 * without overflowing (UBSan would stop the sanitizer build); a total past
 * INT64_MAX is refused when the report is loaded, naming the sample. */
static void
test_huge_weights(void **state)
{
    (void)state;
    char *patched = with_two_weights("4600000000000000000");
    rga_report_t *r = rga_test_load(patched);
    rga_profile_t p = model(r, NULL, NULL);
    assert_int_equal(p.total_ns, 9200000000000000000LL);
    rga_profile_free(&p);
    const char *views[] = {"pprof", "collapsed", "speedscope", "top"};
    for (size_t i = 0; i < 4; i++) {
        size_t len;
        free(render(r, views[i], NULL, &len));
    }
    rga_report_free(r);
    free(patched);

    patched = with_two_weights("9000000000000000000");
    rga_report_t *refused = NULL;
    rga_error_t err;
    memset(&err, 0, sizeof(err));
    assert_int_not_equal(rga_report_load_buffer(patched, strlen(patched), "t", &refused, &err), RGA_OK);
    assert_null(refused);
    assert_non_null(strstr(err.path, "samples[1]"));
    free(patched);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_states),
        cmocka_unit_test(test_collapsed_known),
        cmocka_unit_test(test_collapsed_synthetic),
        cmocka_unit_test(test_top_known),
        cmocka_unit_test(test_speedscope_known),
        cmocka_unit_test(test_pprof_known),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_huge_weights),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
