/* test_pprof_reader.c — Go's own pprof reader (`go tool pprof`, Debian's
 * golang-go) reads the profiles this library writes. On a synthetic report
 * with several threads, Ractors and label sets, `-raw` must list exactly the
 * report's samples: the same stacks (function names, leaf first) with the
 * same weights per thread and per label set, as integers. `-tagfocus` on a
 * label must select exactly the samples of the label sets carrying it.
 * The expected side is computed from the report tables, not from our model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rga.h"
#include "rga_test_util.h"

#define MAX_LOCATIONS 4096

typedef struct entry {
    char key[2048]; /* "seq|k=v,k=v|leaf;...;root" */
    int64_t weight;
} entry_t;

typedef struct entries {
    entry_t *e;
    size_t n;
} entries_t;

static void
add(entries_t *list, const char *key, int64_t weight)
{
    for (size_t i = 0; i < list->n; i++)
        if (strcmp(list->e[i].key, key) == 0) {
            list->e[i].weight += weight;
            return;
        }
    list->e = realloc(list->e, (list->n + 1) * sizeof(*list->e));
    snprintf(list->e[list->n].key, sizeof(list->e[list->n].key), "%s", key);
    list->e[list->n++].weight = weight;
}

static int
cmp_entry(const void *a, const void *b)
{
    return strcmp(((const entry_t *)a)->key, ((const entry_t *)b)->key);
}

/* Runs go tool pprof with args on path; returns its stdout (malloc'd). */
static char *
go_pprof(const char *args, const char *path)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "go tool pprof %s '%s' 2>/dev/null", args, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    size_t got;
    while ((got = fread(out + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (len + 1 == cap)
            out = realloc(out, cap *= 2);
    }
    out[len] = '\0';
    int status = pclose(p);
    if (status != 0)
        fail_msg("go tool pprof %s exited with %d (is golang-go installed?)", args, status);
    return out;
}

/* Parses `-raw` text: samples with their labels, resolved through the
 * Locations section, into entries keyed like expected(). */
static entries_t
parse_raw(char *text)
{
    static char names[MAX_LOCATIONS][256];
    char *loc = strstr(text, "\nLocations\n");
    assert_non_null(loc);
    *loc = '\0';
    for (char *save = NULL, *line = strtok_r(loc + 11, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        /* "    12: 0x0 M=1 NAME FILE:LINE:COL s=0": NAME may hold spaces, FILE not. */
        long id = strtol(line, NULL, 10);
        char *m = strstr(line, " M=1 ");
        char *s0 = strstr(line, " s=0");
        if (id <= 0 || id >= MAX_LOCATIONS || !m || !s0)
            continue;
        *s0 = '\0';
        char *file = strrchr(m + 5, ' ');
        assert_non_null(file);
        *file = '\0';
        snprintf(names[id], sizeof(names[id]), "%s", m + 5);
    }
    entries_t list = {0};
    char *samples = strstr(text, "\nSamples:\n");
    assert_non_null(samples);
    char key_stack[1536] = "", labels[512] = "", seq[256] = "";
    int64_t weight = -1;
    char *save = NULL;
    strtok_r(samples + 10, "\n", &save); /* the sample-type header line */
    for (char *line = strtok_r(NULL, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
        long long count, w;
        int used = 0;
        bool sample_line = line && sscanf(line, " %lld %lld:%n", &count, &w, &used) == 2;
        if ((!line || sample_line) && weight >= 0) {
            char key[2048];
            snprintf(key, sizeof(key), "%s|%s|%s", seq, labels, key_stack);
            add(&list, key, weight);
            weight = -1;
        }
        if (!line)
            break;
        if (sample_line) {
            weight = w;
            key_stack[0] = labels[0] = seq[0] = '\0';
            char *p = line + used;
            for (char *tok = strtok(p, " "); tok; tok = strtok(NULL, " ")) {
                size_t at = strlen(key_stack);
                snprintf(key_stack + at, sizeof(key_stack) - at, "%s%s", at ? ";" : "", names[atol(tok)]);
            }
            continue;
        }
        /* Label lines: key:[value] pairs; values may hold spaces. */
        for (char *p = line; (p = strstr(p, ":[")) != NULL;) {
            char *k = p;
            while (k > line && k[-1] != ' ')
                k--;
            char *v = p + 2, *end = strstr(v, "]");
            assert_non_null(end);
            char kbuf[128], vbuf[256];
            snprintf(kbuf, sizeof(kbuf), "%.*s", (int)(p - k), k);
            snprintf(vbuf, sizeof(vbuf), "%.*s", (int)(end - v), v);
            if (strcmp(kbuf, "thread_seq") == 0) {
                snprintf(seq, sizeof(seq), "%s", vbuf);
            } else if (strcmp(kbuf, "thread") && strcmp(kbuf, "ractor")) {
                size_t at = strlen(labels); /* pprof lists keys sorted, as the report does */
                snprintf(labels + at, sizeof(labels) - at, "%s%s=%s", at ? "," : "", kbuf, vbuf);
            }
            p = end;
        }
    }
    qsort(list.e, list.n, sizeof(*list.e), cmp_entry);
    return list;
}

/* The same entries from the report tables; only label sets holding
 * key=value when key is not NULL. */
static entries_t
expected(const rga_report_t *r, const char *key, const char *value)
{
    entries_t list = {0};
    for (size_t i = 0; i < r->n_samples; i++) {
        const rga_sample_t *s = &r->samples[i];
        const char *v = key ? rga_report_label_value(r, s->label_set, key) : NULL;
        if (key && !(v && strcmp(v, value) == 0))
            continue;
        char stack[1536] = "", labels[512] = "", k[2048];
        const rga_stack_t *st = &r->stacks[s->stack];
        for (uint32_t d = 0; d < st->depth; d++) {
            size_t at = strlen(stack);
            snprintf(stack + at, sizeof(stack) - at, "%s%s", d ? ";" : "",
                     r->frames[r->stack_frames[st->first + d]].label);
        }
        if (st->depth == 0)
            snprintf(stack, sizeof(stack), "[no Ruby frame]");
        const rga_label_set_t *ls = &r->label_sets[rga_report_label_set_index(r, s->label_set)];
        for (size_t j = 0; j < ls->n_labels; j++) {
            size_t at = strlen(labels);
            snprintf(labels + at, sizeof(labels) - at, "%s%s=%s", j ? "," : "", ls->keys[j], ls->values[j]);
        }
        snprintf(k, sizeof(k), "%lld|%s|%s", (long long)s->thread, labels, stack);
        add(&list, k, s->weight_ns);
    }
    qsort(list.e, list.n, sizeof(*list.e), cmp_entry);
    return list;
}

static void
assert_same(const entries_t *got, const entries_t *want)
{
    assert_true(want->n > 0);
    for (size_t i = 0; i < got->n && i < want->n; i++) {
        assert_string_equal(got->e[i].key, want->e[i].key);
        assert_int_equal(got->e[i].weight, want->e[i].weight);
    }
    assert_int_equal(got->n, want->n);
}

static char *workdir;

static int
setup(void **state)
{
    (void)state;
    /* go wants a writable HOME and build cache; no network is used. */
    const char *tmp = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof(tmpl), "%s/rga_go_XXXXXX", tmp && *tmp ? tmp : P_tmpdir);
    if (!mkdtemp(tmpl))
        return -1;
    workdir = strdup(tmpl);
    char cache[600];
    snprintf(cache, sizeof(cache), "%s/gocache", workdir);
    setenv("HOME", workdir, 1);
    setenv("GOCACHE", cache, 1);
    setenv("GOPROXY", "off", 1);
    setenv("GOTOOLCHAIN", "local", 1);
    setenv("PPROF_TMPDIR", workdir, 1);
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    char cmd[700];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", workdir);
    if (system(cmd) != 0)
        return -1;
    free(workdir);
    return 0;
}

static char *
write_pprof(const rga_report_t *r)
{
    char *out = NULL;
    size_t len = 0;
    rga_error_t err;
    assert_int_equal(rga_render_loaded(r, "pprof", NULL, &out, &len, &err), RGA_OK);
    char *path = rga_test_tempfile("rga_pprof");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(out, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    free(out);
    return path;
}

static void
test_raw_matches_report(void **state)
{
    (void)state;
    char *report = rga_test_generate("--threads 6 --ractors 2 --labels 4 --slices 300 --seed 21");
    assert_non_null(report);
    rga_report_t *r = NULL;
    rga_error_t err;
    assert_int_equal(rga_report_load_file(report, &r, &err), RGA_OK);
    char *path = write_pprof(r);

    char *raw = go_pprof("-raw", path);
    entries_t got = parse_raw(raw), want = expected(r, NULL, NULL);
    assert_true(want.n > 100);
    assert_same(&got, &want);
    free(got.e);
    free(want.e);
    free(raw);

    /* -tagfocus on each label of one label set (anchored: pprof matches a regexp). */
    const rga_label_set_t *ls = NULL;
    for (size_t i = 0; i < r->n_label_sets && !ls; i++)
        if (r->label_sets[i].n_labels > 0)
            ls = &r->label_sets[i];
    assert_non_null(ls);
    for (size_t j = 0; j < ls->n_labels; j++) {
        char args[512];
        snprintf(args, sizeof(args), "-raw '-tagfocus=%s=^%s$'", ls->keys[j], ls->values[j]);
        raw = go_pprof(args, path);
        got = parse_raw(raw);
        want = expected(r, ls->keys[j], ls->values[j]);
        assert_same(&got, &want);
        free(got.e);
        free(want.e);
        free(raw);
    }
    unlink(path);
    free(path);
    rga_report_free(r);
    unlink(report);
    free(report);
}

/* Ruby names look like demangled C++ to pprof ("<main>", "block (2 levels)
 * in <main>"); its text views must still show them whole. */
static void
test_ruby_names_kept_whole(void **state)
{
    (void)state;
    static const char report[] =
        "{\"format\":\"rperf-gvl-report\",\"version\":1,\"minor\":0,"
        "\"meta\":{\"tool\":\"rperf-gvl\",\"tool_version\":\"0\",\"ruby_version\":\"3.3.8\",\"pid\":1,"
        "\"program\":\"a.rb\",\"mode\":\"wall\",\"frequency\":1000,\"start_time_ns\":1,"
        "\"start_monotonic_ns\":0,\"duration_ns\":10,\"sequence\":0},\"stats\":{},"
        "\"ractors\":[{\"id\":1,\"main\":true}],\"threads\":[{\"seq\":1,\"name\":\"main\",\"native_id\":1,"
        "\"ractor\":1,\"first_seen_ns\":0,\"last_seen_ns\":10,\"exited\":false,\"running_ns\":10,"
        "\"gvl_wait_ns\":0,\"blocked_ns\":0,\"gc_mark_ns\":0,\"gc_sweep_ns\":0,\"acquisitions\":1,\"waits\":0}],"
        "\"label_sets\":[{\"id\":0,\"labels\":{}}],\"label_totals\":[],"
        "\"frames\":[[\"<GVL>\",\"[GVL blocked]\"],[\"<GVL>\",\"[GVL wait]\"],[\"<GC>\",\"[GC marking]\"],"
        "[\"<GC>\",\"[GC sweeping]\"],[\"a.rb\",\"block (2 levels) in <main>\"],[\"a.rb\",\"<main>\"],"
        "[\"a.rb\",\"Hash#each<T>\"]],"
        "\"stacks\":[[4,6,5]],\"samples\":[[0,5000000,1,0]],\"intervals\":[],\"edges\":[],\"blame\":[]}";
    rga_report_t *r = rga_test_load(report);
    char *path = write_pprof(r);
    char *top = go_pprof("-top", path);
    assert_non_null(strstr(top, "block (2 levels) in <main>"));
    assert_non_null(strstr(top, "  <main>\n"));
    assert_non_null(strstr(top, "Hash#each<T>"));
    free(top);
    unlink(path);
    free(path);
    rga_report_free(r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_raw_matches_report),
                                       cmocka_unit_test(test_ruby_names_kept_whole)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
