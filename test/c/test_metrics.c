/* test_metrics.c — the metrics files read, added up and rendered
 * (metrics.h): known numbers in the exposition, hostile label values and
 * names, every way the reader refuses a file, the aggregate written back,
 * and a directory of live and dead processes folded without a counter
 * going backwards. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "metrics.h"
#include "output.h"

/* One file's JSON: pid, start, threads, running ns, then one unit row of
 * kind "request", labels (JSON object text), count, wall, running, wait,
 * gc, blocked io, the index of the wait bucket and of the ratio bucket all
 * its units fall in, and the ratio sum in millionths. */
static char *
file_json(long pid, long start, long threads, long proc_running, const char *labels, long count, long wall,
          long running, long wait, long gc, long blocked_io, int wait_bucket, int ratio_bucket, long ratio_ppm)
{
    char wb[256] = "", rb[128] = "";
    for (int i = 0; i <= RPERF_METRICS_WAIT_BOUNDS; i++)
        snprintf(wb + strlen(wb), sizeof(wb) - strlen(wb), "%s%ld", i ? "," : "", i == wait_bucket ? count : 0);
    for (int i = 0; i <= RPERF_METRICS_RATIO_BOUNDS; i++)
        snprintf(rb + strlen(rb), sizeof(rb) - strlen(rb), "%s%ld", i ? "," : "", i == ratio_bucket ? count : 0);
    char *s = NULL;
    int n = asprintf(&s,
                     "{\"format\":\"rperf-gvl-metrics\",\"version\":1,\"pid\":%ld,\"start_ticks\":%ld,"
                     "\"process\":{\"threads\":%ld,\"running_ns\":%ld,\"gvl_wait_ns\":7,\"gc_ns\":0,"
                     "\"blocked_ns\":[1,0,0,0,0,0,0,0,0,0],\"dropped\":[0,2,0,0,0,0],\"label_sets_folded\":3,"
                     "\"units_unmeasured\":0},\"units\":[{\"kind\":\"request\",\"labels\":%s,\"count\":%ld,"
                     "\"wall_ns\":%ld,\"running_ns\":%ld,\"gvl_wait_ns\":%ld,\"gc_ns\":%ld,"
                     "\"blocked_ns\":[0,%ld,0,0,0,0,0,0,0,0],\"gvl_wait_buckets\":[%s],"
                     "\"gvl_wait_ratio_buckets\":[%s],\"gvl_wait_ratio_sum_ppm\":%ld}]}\n",
                     pid, start, threads, proc_running, labels, count, wall, running, wait, gc, blocked_io, wb, rb,
                     ratio_ppm);
    assert_true(n > 0);
    return s;
}

static rga_metrics_file_t *
parse_ok(const char *text)
{
    rga_metrics_file_t *f = NULL;
    rga_error_t err;
    rga_status_t st = rga_metrics_parse(text, strlen(text), "t.json", &f, &err);
    if (st != RGA_OK) {
        char line[600];
        rga_error_format(&err, line, sizeof(line));
        fail_msg("parse: %s", line);
    }
    return f;
}

/* The exposition of files (live) as a malloc'd string. */
static char *
render_files(rga_metrics_file_t **files, size_t n, unsigned flags)
{
    rga_metrics_set_t *set = rga_metrics_set_new();
    rga_error_t err;
    for (size_t i = 0; i < n; i++)
        assert_int_equal(rga_metrics_set_add(set, files[i], true, &err), RGA_OK);
    rga_output_t out;
    assert_int_equal(rga_output_open(&out, RGA_OUTPUT_MEMORY, &err), RGA_OK);
    assert_int_equal(rga_metrics_set_render(set, flags, out.fp, &err), RGA_OK);
    char *text;
    size_t len;
    assert_int_equal(rga_output_close(&out, &text, &len, &err), RGA_OK);
    rga_metrics_set_free(set);
    return text;
}

static void
assert_line(const char *text, const char *line)
{
    char *want;
    assert_true(asprintf(&want, "\n%s\n", line) > 0);
    if (!strstr(text, want))
        fail_msg("missing line: %s\n--- in:\n%s", line, text);
    free(want);
}

/* The line name{labels,extra} value is in text. */
static void
assert_sample(const char *text, const char *name, const char *labels, const char *extra, const char *value)
{
    char *line;
    assert_true(asprintf(&line, "%s{%s%s%s} %s", name, labels, extra[0] ? "," : "", extra, value) > 0);
    assert_line(text, line);
    free(line);
}

static void
test_known_numbers(void **state)
{
    (void)state;
    char *json = file_json(10, 20, 4, 1500000000, "{\"endpoint\":\"GET /users/:id\"}", 3, 30000000, 9000000,
                           20000000, 1000000, 250000, 6, 6, 2000000);
    rga_metrics_file_t *f = parse_ok(json);
    char *text = render_files(&f, 1, 0);
    const char *l = "kind=\"request\",endpoint=\"GET /users/:id\"";
    assert_sample(text, "rperf_wall_seconds_total", l, "", "0.03");
    assert_sample(text, "rperf_gvl_wait_seconds_total", l, "", "0.02");
    assert_sample(text, "rperf_blocked_seconds_total", l, "cause=\"io\"", "0.00025");
    assert_sample(text, "rperf_blocked_seconds_total", l, "cause=\"unknown\"", "0");
    assert_null(strstr(text, "cause=\"sleep\"")); /* zero causes other than unknown are left out */
    /* Bucket 6 (le 0.01) holds all three: cumulative from there on. */
    assert_sample(text, "rperf_unit_gvl_wait_seconds_bucket", l, "le=\"0.005\"", "0");
    assert_sample(text, "rperf_unit_gvl_wait_seconds_bucket", l, "le=\"0.01\"", "3");
    assert_sample(text, "rperf_unit_gvl_wait_seconds_bucket", l, "le=\"+Inf\"", "3");
    assert_sample(text, "rperf_unit_gvl_wait_seconds_sum", l, "", "0.02");
    assert_sample(text, "rperf_unit_gvl_wait_seconds_count", l, "", "3");
    assert_sample(text, "rperf_unit_gvl_wait_ratio_bucket", l, "le=\"0.7\"", "3");
    assert_sample(text, "rperf_unit_gvl_wait_ratio_sum", l, "", "2");
    assert_line(text, "rperf_process_running_seconds_total 1.5");
    assert_line(text, "rperf_process_gvl_wait_seconds_total 0.000000007");
    assert_line(text, "rperf_threads 4");
    assert_line(text, "rperf_dropped_total{what=\"causes\"} 2");
    assert_line(text, "rperf_label_sets_folded_total 3");
    assert_line(text, "# TYPE rperf_gvl_wait_seconds_total counter");
    assert_null(strstr(text, "# EOF"));
    free(text);

    /* OpenMetrics: families named without _total, a UNIT line, # EOF. */
    text = render_files(&f, 1, RGA_METRICS_OPENMETRICS);
    assert_line(text, "# TYPE rperf_gvl_wait_seconds counter");
    assert_line(text, "# UNIT rperf_gvl_wait_seconds seconds");
    assert_line(text, "# UNIT rperf_unit_gvl_wait_ratio ratio");
    assert_sample(text, "rperf_gvl_wait_seconds_total", l, "", "0.02");
    size_t n = strlen(text);
    assert_true(n > 6 && strcmp(text + n - 6, "# EOF\n") == 0);
    free(text);
    rga_metrics_file_free(f);
    free(json);
}

/* Label values from request paths: backslash, quote and newline escaped, a
 * NUL byte as U+FFFD; names made valid; the exposition's own names moved. */
static void
test_hostile_labels(void **state)
{
    (void)state;
    char *json = file_json(1, 0, 1, 0,
                           "{\"endpoint\":\"GET /a\\\"}\\\\\\n x=\\\"1\\u0000\",\"9lives\":\"v\",\"le\":\"x\","
                           "\"__name__\":\"y\",\"k-é\":\"z\",\"job\":\"j\"}",
                           1, 10, 1, 9, 0, 0, 14, 8, 900000);
    rga_metrics_file_t *f = parse_ok(json);
    char *text = render_files(&f, 1, 0);
    assert_line(text,
                "rperf_wall_seconds_total{kind=\"request\",_9lives=\"v\",endpoint=\"GET /a\\\"}\\\\\\n "
                "x=\\\"1\xEF\xBF\xBD\",k___=\"z\",label___name__=\"y\",label_job=\"j\",label_le=\"x\"} 0.00000001");
    free(text);
    rga_metrics_file_free(f);
    free(json);
}

/* Two processes with the same label set are one series; so are label sets
 * that differ only in names that clean to the same name. */
static void
test_series_add_up(void **state)
{
    (void)state;
    char *a = file_json(1, 0, 2, 100, "{\"endpoint\":\"GET /x\"}", 2, 20, 10, 10, 0, 0, 3, 5, 1000000);
    char *b = file_json(2, 0, 3, 200, "{\"endpoint\":\"GET /x\"}", 5, 50, 20, 30, 0, 0, 3, 5, 2500000);
    char *c = file_json(3, 0, 0, 0, "{\"a-b\":\"1\"}", 1, 1, 1, 0, 0, 0, 0, 0, 0);
    char *d = file_json(4, 0, 0, 0, "{\"a.b\":\"1\"}", 1, 1, 1, 0, 0, 0, 0, 0, 0);
    rga_metrics_file_t *f[4] = {parse_ok(a), parse_ok(b), parse_ok(c), parse_ok(d)};
    char *text = render_files(f, 4, 0);
    assert_line(text, "rperf_gvl_wait_seconds_total{kind=\"request\",endpoint=\"GET /x\"} 0.00000004");
    assert_line(text, "rperf_unit_gvl_wait_seconds_count{kind=\"request\",endpoint=\"GET /x\"} 7");
    assert_line(text, "rperf_unit_gvl_wait_ratio_sum{kind=\"request\",endpoint=\"GET /x\"} 3.5");
    assert_line(text, "rperf_unit_gvl_wait_seconds_count{kind=\"request\",a_b=\"1\"} 2");
    assert_line(text, "rperf_threads 5");
    assert_line(text, "rperf_process_running_seconds_total 0.0000003");
    assert_line(text, "rperf_label_sets_folded_total 12");
    /* Each series once. */
    const char *first = strstr(text, "rperf_wall_seconds_total{kind=\"request\",endpoint=\"GET /x\"}");
    assert_non_null(first);
    assert_null(strstr(first + 1, "rperf_wall_seconds_total{kind=\"request\",endpoint=\"GET /x\"}"));
    free(text);
    /* A dead process's gauge is left out, its counters are not. */
    rga_metrics_set_t *set = rga_metrics_set_new();
    rga_error_t err;
    assert_int_equal(rga_metrics_set_add(set, f[0], false, &err), RGA_OK);
    assert_int_equal(rga_metrics_set_add(set, f[1], true, &err), RGA_OK);
    rga_metrics_file_t *agg;
    assert_int_equal(rga_metrics_set_to_file(set, &agg, &err), RGA_OK);
    assert_int_equal(agg->process.threads, 0);
    assert_int_equal(agg->process.running_ns, 300);
    assert_int_equal(agg->n_rows, 1);
    assert_int_equal(agg->rows[0].count, 7);
    rga_metrics_file_free(agg);
    rga_metrics_set_free(set);
    for (int i = 0; i < 4; i++)
        rga_metrics_file_free(f[i]);
    free(a), free(b), free(c), free(d);
}

static void
expect_refused(const char *text, rga_status_t code, const char *reason, const char *path)
{
    rga_metrics_file_t *f = NULL;
    rga_error_t err;
    rga_status_t st = rga_metrics_parse(text, strlen(text), "bad.json", &f, &err);
    char line[600];
    rga_error_format(&err, line, sizeof(line));
    if (st != code || !strstr(line, reason) || (path && strcmp(err.path, path) != 0))
        fail_msg("expected %d '%s' at %s, got %d: %s", code, reason, path ? path : "-", st, line);
    assert_null(f);
    assert_string_equal(err.file, "bad.json");
}

/* Replaces the first `from` in text with `to` (malloc'd). */
static char *
edit(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    assert_non_null(at);
    char *s;
    assert_true(asprintf(&s, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from)) > 0);
    return s;
}

static void
test_bad_files(void **state)
{
    (void)state;
    char *good = file_json(5, 6, 1, 1, "{\"endpoint\":\"GET /\"}", 2, 20, 10, 10, 0, 0, 3, 5, 1000000);
    char buf[64];
    snprintf(buf, sizeof(buf), "%.*s", 40, good);
    expect_refused(buf, RGA_ERR_SYNTAX, "invalid JSON", NULL);
    expect_refused("[]", RGA_ERR_SCHEMA, "expected an object", NULL);
    static const struct {
        const char *from, *to;
        rga_status_t code;
        const char *reason, *path;
    } edits[] = {
        {"\"version\":1", "\"version\":2", RGA_ERR_VERSION, "metrics file version 2; this reader reads version 1",
         "version"},
        {"rperf-gvl-metrics", "rperf-gvl-report", RGA_ERR_VERSION, "not a metrics file", "format"},
        {"\"count\":2", "\"count\":3", RGA_ERR_SCHEMA, "histogram buckets add up to 2 and 2, not the count 3",
         "units[0]"},
        {"\"wall_ns\":20", "\"wall_ns\":-20", RGA_ERR_SCHEMA, "negative value -20", "units[0].wall_ns"},
        {"\"wall_ns\":20", "\"wall_ns\":2.5", RGA_ERR_SCHEMA, "expected an integer", "units[0].wall_ns"},
        {"\"wall_ns\":20", "\"wall_ns\":99999999999999999999", RGA_ERR_SYNTAX, "invalid JSON", NULL},
        {"\"blocked_ns\":[1,0,0,0,0,0,0,0,0,0]", "\"blocked_ns\":[1,0]", RGA_ERR_SCHEMA,
         "expected an array of 10 integers", "process.blocked_ns"},
        {"\"kind\":\"request\"", "\"kind\":\"re\\u0000q\"", RGA_ERR_SCHEMA, "a NUL byte in a name", "units[0].kind"},
        {"\"label_sets_folded\":3,", "", RGA_ERR_SCHEMA, "missing", "process.label_sets_folded"},
        {"\"endpoint\":\"GET /\"", "\"endpoint\":\"GET /\",\"endpoint\":\"x\"", RGA_ERR_SYNTAX, "duplicate", NULL},
        {"\"units\":[", "\"folded\":[\"../etc/passwd\"],\"units\":[", RGA_ERR_SCHEMA, "expected a file name",
         "folded"},
    };
    char *s;
    for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
        s = edit(good, edits[i].from, edits[i].to);
        expect_refused(s, edits[i].code, edits[i].reason, edits[i].path);
        free(s);
    }
    /* 33 labels: one too many. */
    char labels[1024] = "{";
    for (int i = 0; i <= RPERF_METRICS_MAX_LABELS; i++)
        snprintf(labels + strlen(labels), sizeof(labels) - strlen(labels), "%s\"l%d\":\"v\"", i ? "," : "", i);
    strcat(labels, "}");
    s = edit(good, "{\"endpoint\":\"GET /\"}", labels);
    expect_refused(s, RGA_ERR_SCHEMA, "33 labels (at most 32)", "units[0].labels");
    free(s);
    free(good);
}

/* What rga_metrics_write writes reads back to the same exposition. */
static void
test_write_reads_back(void **state)
{
    (void)state;
    char *json = file_json(0, 0, 0, 77, "{\"endpoint\":\"GET /\\u0000\\n\"}", 2, 20, 10, 10, 0, 5, 3, 5, 1000000);
    rga_metrics_file_t *f = parse_ok(json);
    rga_output_t out;
    rga_error_t err;
    assert_int_equal(rga_output_open(&out, RGA_OUTPUT_MEMORY, &err), RGA_OK);
    assert_int_equal(rga_metrics_write(f, out.fp, &err), RGA_OK);
    char *copy;
    size_t len;
    assert_int_equal(rga_output_close(&out, &copy, &len, &err), RGA_OK);
    rga_metrics_file_t *g = parse_ok(copy);
    char *a = render_files(&f, 1, 0), *b = render_files(&g, 1, 0);
    assert_string_equal(a, b);
    free(a), free(b), free(copy), free(json);
    rga_metrics_file_free(f);
    rga_metrics_file_free(g);
}

/* ---- directories ------------------------------------------------------------------- */

static char *
make_dir(void)
{
    char *dir = strdup("/tmp/rga-metrics-XXXXXX");
    const char *tmp = getenv("TMPDIR");
    if (tmp && *tmp) {
        free(dir);
        assert_true(asprintf(&dir, "%s/rga-metrics-XXXXXX", tmp) > 0);
    }
    assert_non_null(mkdtemp(dir));
    return dir;
}

static void
put_file(const char *dir, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static bool
exists(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static void
remove_dir(char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096];
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    if (d)
        closedir(d);
    rmdir(dir);
    free(dir);
}

static rga_status_t
render_dir(const char *dir, unsigned flags, char **text, rga_error_t *err)
{
    rga_output_t out;
    assert_int_equal(rga_output_open(&out, RGA_OUTPUT_MEMORY, err), RGA_OK);
    rga_status_t st = rga_metrics_render_dir(dir, flags, out.fp, err);
    size_t len;
    *text = NULL;
    assert_int_equal(rga_output_close(&out, st == RGA_OK ? text : NULL, &len, NULL), RGA_OK);
    return st;
}

/* The value of the sample that starts a line with `series ` (0 when absent). */
static double
value_of(const char *text, const char *series)
{
    char *want;
    assert_true(asprintf(&want, "\n%s ", series) > 0);
    const char *at = strstr(text, want);
    double v = at ? strtod(at + strlen(want), NULL) : 0;
    free(want);
    return v;
}

/* A pid that is certainly dead: a child that exited and was reaped. */
static long
dead_pid(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    return pid;
}

static const char *const counters[] = {
    "rperf_gvl_wait_seconds_total{kind=\"request\",endpoint=\"GET /x\"}",
    "rperf_unit_gvl_wait_seconds_count{kind=\"request\",endpoint=\"GET /x\"}",
    "rperf_process_running_seconds_total",
    "rperf_label_sets_folded_total",
};

/* This process's start time in clock ticks: the 20th number after the ')'
 * that ends the command name in /proc/self/stat (field 22). */
static long
my_start_ticks(void)
{
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *save = NULL, *tok = strtok_r(strrchr(buf, ')') + 1, " ", &save); /* field 3 */
    for (int field = 4; field <= 22 && tok; field++)
        tok = strtok_r(NULL, " ", &save);
    assert_non_null(tok);
    return strtol(tok, NULL, 10);
}

static void
test_dir_fold_keeps_counters(void **state)
{
    (void)state;
    char *dir = make_dir();
    long me = getpid(), gone = dead_pid(), start = my_start_ticks();
    char live_name[64], dead_name[64], temp_name[80];
    snprintf(live_name, sizeof(live_name), "rperf-%ld-%ld.json", me, start);
    snprintf(dead_name, sizeof(dead_name), "rperf-%ld-0.json", gone);
    snprintf(temp_name, sizeof(temp_name), ".rperf-%ld-0.json.tmp", gone);
    char *live = file_json(me, start, 3, 100, "{\"endpoint\":\"GET /x\"}", 2, 20, 10, 10, 0, 0, 3, 5, 1000000);
    char *dead = file_json(gone, 0, 9, 200, "{\"endpoint\":\"GET /x\"}", 5, 50, 20, 30, 0, 0, 3, 5, 2500000);
    put_file(dir, live_name, live);
    put_file(dir, dead_name, dead);
    put_file(dir, temp_name, "{");
    put_file(dir, "notes.txt", "not ours");

    rga_error_t err;
    char *before, *after, *again;
    assert_int_equal(render_dir(dir, 0, &before, &err), RGA_OK);
    assert_line(before, "rperf_threads 3"); /* the dead process's 9 threads are gone */
    assert_line(before, "rperf_metrics_files{state=\"live\"} 1");
    assert_line(before, "rperf_metrics_files{state=\"dead\"} 1");
    assert_true(exists(dir, dead_name)); /* no fold without the flag */

    assert_int_equal(render_dir(dir, RGA_METRICS_FOLD, &after, &err), RGA_OK);
    assert_false(exists(dir, dead_name));
    assert_false(exists(dir, temp_name));
    assert_true(exists(dir, "rperf-dead.json"));
    assert_true(exists(dir, live_name));
    assert_true(exists(dir, "notes.txt"));
    assert_line(after, "rperf_metrics_files{state=\"dead\"} 0");
    for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
        double b = value_of(before, counters[i]), a = value_of(after, counters[i]);
        if (b <= 0 || a != b)
            fail_msg("%s: %g before the fold, %g after", counters[i], b, a);
    }
    assert_line(after, "rperf_unit_gvl_wait_seconds_count{kind=\"request\",endpoint=\"GET /x\"} 7");

    /* A fold stopped after writing the aggregate: the file it lists is
     * still there, and is neither counted twice nor kept. */
    put_file(dir, dead_name, dead);
    assert_int_equal(render_dir(dir, 0, &again, &err), RGA_OK);
    assert_string_equal(after, again);
    free(again);
    assert_int_equal(render_dir(dir, RGA_METRICS_FOLD, &again, &err), RGA_OK);
    assert_string_equal(after, again);
    assert_false(exists(dir, dead_name));
    free(again);

    /* A file of this pid with another start time is a process that died
     * before this one took its pid: folded. */
    char reused_name[64];
    snprintf(reused_name, sizeof(reused_name), "rperf-%ld-%ld.json", me, start - 1);
    char *reused = file_json(me, start - 1, 5, 1, "{\"endpoint\":\"GET /x\"}", 1, 1, 1, 0, 0, 0, 0, 0, 0);
    put_file(dir, reused_name, reused);
    assert_int_equal(render_dir(dir, RGA_METRICS_FOLD, &again, &err), RGA_OK);
    assert_false(exists(dir, reused_name));
    assert_true(exists(dir, live_name));
    assert_line(again, "rperf_threads 3");
    assert_line(again, "rperf_unit_gvl_wait_seconds_count{kind=\"request\",endpoint=\"GET /x\"} 8");
    free(again);
    free(reused);

    /* A second dead process later: the aggregate grows, nothing goes back. */
    long gone2 = dead_pid();
    snprintf(dead_name, sizeof(dead_name), "rperf-%ld-0.json", gone2);
    char *dead2 = file_json(gone2, 0, 1, 5, "{\"endpoint\":\"GET /y\"}", 1, 5, 5, 0, 0, 0, 0, 0, 0);
    put_file(dir, dead_name, dead2);
    assert_int_equal(render_dir(dir, RGA_METRICS_FOLD, &again, &err), RGA_OK);
    assert_line(again, "rperf_unit_gvl_wait_seconds_count{kind=\"request\",endpoint=\"GET /y\"} 1");
    for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
        assert_true(value_of(again, counters[i]) >= value_of(after, counters[i]));
    free(again);
    free(before), free(after), free(live), free(dead), free(dead2);
    remove_dir(dir);
}

static void
test_dir_errors(void **state)
{
    (void)state;
    rga_error_t err;
    char *text, line[600];
    assert_int_equal(render_dir("/nonexistent/rperf-metrics", 0, &text, &err), RGA_ERR_IO);
    rga_error_format(&err, line, sizeof(line));
    assert_string_equal(line,
                        "/nonexistent/rperf-metrics: cannot read the metrics directory: No such file or directory");
    assert_int_equal(render_dir("/dev/null", 0, &text, &err), RGA_ERR_IO);
    rga_error_format(&err, line, sizeof(line));
    assert_string_equal(line, "/dev/null: not a directory");

    char *dir = make_dir();
    assert_int_equal(render_dir(dir, 0, &text, &err), RGA_OK); /* empty: every family, no series */
    assert_line(text, "rperf_threads 0");
    free(text);
    long me = getpid();
    char name[64];
    snprintf(name, sizeof(name), "rperf-%ld-0.json", me);
    char *good = file_json(me, 0, 1, 1, "{}", 1, 1, 1, 0, 0, 0, 0, 0, 0);
    good[strlen(good) / 2] = '\0'; /* truncated */
    put_file(dir, name, good);
    assert_int_equal(render_dir(dir, RGA_METRICS_FOLD, &text, &err), RGA_ERR_SYNTAX);
    assert_non_null(strstr(err.file, name));
    assert_int_equal(render_dir(dir, RGA_METRICS_SKIP_BAD, &text, &err), RGA_OK);
    assert_line(text, "rperf_metrics_files{state=\"skipped\"} 1");
    free(text);
    /* A file whose content names another process than its name. */
    free(good);
    good = file_json(me + 1, 0, 1, 1, "{}", 1, 1, 1, 0, 0, 0, 0, 0, 0);
    put_file(dir, name, good);
    assert_int_equal(render_dir(dir, 0, &text, &err), RGA_ERR_SCHEMA);
    assert_non_null(strstr(err.reason, "do not match the file's name"));
    /* A broken aggregate is never replaced: the dead files stay, counted. */
    free(good);
    good = file_json(me, 0, 1, 1, "{}", 1, 1, 1, 0, 0, 0, 0, 0, 0);
    put_file(dir, name, good);
    long gone = dead_pid();
    char dead_name[64];
    snprintf(dead_name, sizeof(dead_name), "rperf-%ld-0.json", gone);
    char *dead = file_json(gone, 0, 1, 1, "{}", 1, 1, 1, 0, 0, 0, 0, 0, 0);
    put_file(dir, dead_name, dead);
    put_file(dir, "rperf-dead.json", "{\"format\":");
    assert_int_equal(render_dir(dir, RGA_METRICS_FOLD | RGA_METRICS_SKIP_BAD, &text, &err), RGA_OK);
    assert_true(exists(dir, dead_name));
    assert_line(text, "rperf_unit_gvl_wait_seconds_count{kind=\"request\"} 2");
    free(text), free(good), free(dead);
    remove_dir(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_numbers),    cmocka_unit_test(test_hostile_labels),
        cmocka_unit_test(test_series_add_up),    cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_write_reads_back), cmocka_unit_test(test_dir_fold_keeps_counters),
        cmocka_unit_test(test_dir_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
