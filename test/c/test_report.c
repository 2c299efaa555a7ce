/* test_report.c — the report loader: a known report read field by field, and
 * every class of bad input rejected with a code, a position and a path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "rga_test_util.h"

static rga_status_t
load_text(const char *text, rga_error_t *err)
{
    rga_report_t *r = NULL;
    rga_status_t st = rga_report_load_buffer(text, strlen(text), "in.json", &r, err);
    if (st == RGA_OK)
        rga_report_free(r);
    else
        assert_null(r);
    return st;
}

static void
expect_error(const char *text, rga_status_t code, const char *path, const char *reason_part)
{
    rga_error_t err;
    rga_status_t st = load_text(text, &err);
    char line[700];
    rga_error_format(&err, line, sizeof(line));
    if (st != code)
        fail_msg("expected %s, got %s: %s", rga_status_name(code), rga_status_name(st), line);
    if (path && strcmp(err.path, path) != 0)
        fail_msg("expected path %s, got %s (%s)", path, err.path, line);
    if (reason_part && !strstr(err.reason, reason_part))
        fail_msg("expected reason containing \"%s\": %s", reason_part, line);
    assert_non_null(strstr(line, "in.json"));
}

static void
test_loads_known_report(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(rga_test_small_report);
    assert_int_equal(r->version, 1);
    assert_string_equal(r->meta.program, "app.rb");
    assert_int_equal(r->meta.start_monotonic_ns, 1000);
    assert_int_equal(r->meta.duration_ns, 1000);
    assert_int_equal(r->n_ractors, 2);
    assert_int_equal(r->n_threads, 3);
    assert_int_equal(r->n_intervals, 11);
    assert_int_equal(r->n_edges, 3);
    assert_int_equal(r->n_stacks, 3);
    assert_int_equal(r->stacks[1].depth, 3);
    assert_int_equal(r->stack_frames[r->stacks[1].first], RGA_FRAME_GVL_WAIT);
    long t2 = rga_report_thread_index(r, 2);
    assert_true(t2 >= 0);
    assert_string_equal(r->threads[t2].name, "worker-a");
    assert_int_equal(r->threads[t2].state_ns[RGA_STATE_GVL_WAIT], 400);
    assert_true(r->threads[t2].exited);
    assert_int_equal(rga_report_thread_index(r, 99), -1);
    /* Intervals point at thread indices once loaded. */
    assert_int_equal(r->threads[r->intervals[2].thread_index].seq, 2);
    /* Label pairs are sorted by key whatever the input order. */
    assert_string_equal(rga_report_label_value(r, 2, "tenant"), "x");
    long l2 = rga_report_label_set_index(r, 2);
    assert_string_equal(r->label_sets[l2].keys[0], "endpoint");
    assert_null(rga_report_label_value(r, 1, "tenant"));
    assert_int_equal(r->edges[1].holder_kind, RGA_HOLDER_GC);
    rga_report_free(r);
}

static void
test_missing_and_unreadable_file(void **state)
{
    (void)state;
    rga_report_t *r = NULL;
    rga_error_t err;
    assert_int_equal(rga_report_load_file("/nonexistent/report.json", &r, &err), RGA_ERR_IO);
    assert_null(r);
    assert_string_equal(err.file, "/nonexistent/report.json");
    assert_non_null(strstr(err.reason, "No such file"));
    assert_int_equal(rga_report_load_file("/", &r, &err), RGA_ERR_IO);
}

static void
test_not_json(void **state)
{
    (void)state;
    expect_error("", RGA_ERR_SYNTAX, "", "empty");
    expect_error("hello", RGA_ERR_SYNTAX, "", "expected '{'");
    expect_error("[1,2]", RGA_ERR_SYNTAX, "", "expected '{'");
    expect_error("{\"format\" 1}", RGA_ERR_SYNTAX, "", "':'");
    expect_error("{\"format\":\"rperf-gvl-report\",}", RGA_ERR_SYNTAX, "", NULL);
    char *trailing = malloc(strlen(rga_test_small_report) + 8);
    strcpy(trailing, rga_test_small_report);
    strcat(trailing, "{}");
    expect_error(trailing, RGA_ERR_SYNTAX, "", "after the report");
    free(trailing);
}

/* Every prefix of a valid report is an error (never a crash or success), and
 * JSON syntax errors carry a line and column. */
static void
test_every_truncation_fails(void **state)
{
    (void)state;
    const char *text = rga_test_small_report;
    size_t len = strlen(text);
    size_t last_nonspace = len;
    while (last_nonspace > 0 && (text[last_nonspace - 1] == '\n' || text[last_nonspace - 1] == ' '))
        last_nonspace--;
    for (size_t n = 0; n < last_nonspace; n++) {
        rga_report_t *r = NULL;
        rga_error_t err;
        rga_status_t st = rga_report_load_buffer(text, n, "cut.json", &r, &err);
        if (st == RGA_OK)
            fail_msg("prefix of %zu bytes loaded", n);
        assert_null(r);
        if (st == RGA_ERR_SYNTAX && n > 0)
            assert_true(err.line >= 1 && err.column >= 1);
    }
}

static void
test_syntax_error_position(void **state)
{
    (void)state;
    /* Break the meta line; expect that line and the column of the bad token. */
    char *bad = rga_test_replace(rga_test_small_report, "\"pid\":77", "\"pid\":7 7");
    const char *at = strstr(bad, "7 7");
    long want_line = 1;
    const char *line_start = bad;
    for (const char *p = bad; p < at; p++)
        if (*p == '\n') {
            want_line++;
            line_start = p + 1;
        }
    long col = (long)(at - line_start) + 1;
    rga_error_t err;
    assert_int_equal(load_text(bad, &err), RGA_ERR_SYNTAX);
    assert_int_equal(err.line, want_line);
    /* jansson reports the column where the bad token ends, within a few columns. */
    assert_true(err.column >= col && err.column <= col + 4);
    char line[600];
    rga_error_format(&err, line, sizeof(line));
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "in.json:%ld:%ld:", want_line, err.column);
    assert_memory_equal(line, prefix, strlen(prefix));
    free(bad);
}

static void
test_wrong_version_and_format(void **state)
{
    (void)state;
    char *v2 = rga_test_replace(rga_test_small_report, "\"version\":1", "\"version\":2");
    expect_error(v2, RGA_ERR_VERSION, "version", "unsupported report version 2 (this reader supports 1)");
    free(v2);
    char *fmt = rga_test_replace(rga_test_small_report, "rperf-gvl-report", "something-else");
    expect_error(fmt, RGA_ERR_VERSION, "format", "not an rperf-gvl report");
    free(fmt);
    char *vs = rga_test_replace(rga_test_small_report, "\"version\":1", "\"version\":\"1\"");
    expect_error(vs, RGA_ERR_SCHEMA, "version", "expected an integer");
    free(vs);
    char *nov = rga_test_replace(rga_test_small_report, "\"version\":1,", "");
    expect_error(nov, RGA_ERR_SCHEMA, "version", "missing");
    free(nov);
}

static void
test_wrong_field_types(void **state)
{
    (void)state;
    char *s = rga_test_replace(rga_test_small_report, "\"gvl_wait_ns\":400", "\"gvl_wait_ns\":\"400\"");
    expect_error(s, RGA_ERR_SCHEMA, "threads[1].gvl_wait_ns", "expected an integer, got a string");
    free(s);
    s = rga_test_replace(rga_test_small_report, "\"gvl_wait_ns\":400", "\"gvl_wait_ns\":400.5");
    expect_error(s, RGA_ERR_SCHEMA, "threads[1].gvl_wait_ns", "real number");
    free(s);
    s = rga_test_replace(rga_test_small_report, "\"threads\":[", "\"threads\":{\"a\":1},\"x\":[");
    expect_error(s, RGA_ERR_SCHEMA, "threads", "expected an array, got an object");
    free(s);
    s = rga_test_replace(rga_test_small_report, "[1,0,0,300,0,0]", "[1,0,0,300,0]");
    expect_error(s, RGA_ERR_SCHEMA, "intervals[0]", "expected 6 items");
    free(s);
    s = rga_test_replace(rga_test_small_report, "[1,0,0,300,0,0]", "[1,7,0,300,0,0]");
    expect_error(s, RGA_ERR_SCHEMA, "intervals[0][1]", "out of range");
    free(s);
    s = rga_test_replace(rga_test_small_report, "\"holder_kind\":\"gc\"", "\"holder_kind\":\"ghost\"");
    expect_error(s, RGA_ERR_SCHEMA, "edges[1].holder_kind", NULL);
    free(s);
    s = rga_test_replace(rga_test_small_report, "\"labels\":{\"endpoint\":\"a\"}", "\"labels\":{\"endpoint\":3}");
    expect_error(s, RGA_ERR_SCHEMA, "label_sets[1].labels.endpoint", "strings");
    free(s);
    s = rga_test_replace(rga_test_small_report, "\"meta\":{", "\"meta\":{\"x\":1,\"duration_ns\":\"a\",");
    expect_error(s, RGA_ERR_SYNTAX, NULL, "duplicate"); /* jansson rejects duplicate keys */
    free(s);
    s = rga_test_replace(rga_test_small_report, "\"duration_ns\":1000", "\"duration_ns\":0");
    expect_error(s, RGA_ERR_SCHEMA, "meta.duration_ns", ">= 1");
    free(s);
    s = rga_test_replace(rga_test_small_report, "\"ractors\":", "\"threads\":[],\"ractors\":");
    expect_error(s, RGA_ERR_SCHEMA, "threads", "duplicate key");
    free(s);
}

static void
test_negative_and_huge_numbers(void **state)
{
    (void)state;
    char *s = rga_test_replace(rga_test_small_report, "\"gvl_wait_ns\":400", "\"gvl_wait_ns\":-5");
    expect_error(s, RGA_ERR_SCHEMA, "threads[1].gvl_wait_ns", "negative value -5");
    free(s);
    s = rga_test_replace(rga_test_small_report, "[2,2,100,300,2,2]", "[2,2,300,100,2,2]");
    expect_error(s, RGA_ERR_SCHEMA, "intervals[2][3]", "end_ns < start_ns");
    free(s);
    s = rga_test_replace(rga_test_small_report, "\"wait_ns\":300", "\"wait_ns\":99999999999999999999");
    expect_error(s, RGA_ERR_SYNTAX, "", "too big");
    free(s);
    s = rga_test_replace(rga_test_small_report, "\"last_seen_ns\":900", "\"last_seen_ns\":50");
    expect_error(s, RGA_ERR_SCHEMA, "threads[1].last_seen_ns", "first_seen");
    free(s);
    s = rga_test_replace(rga_test_small_report, "[1,0,0,300,0,0]", "[99999999999,0,0,300,0,0]");
    expect_error(s, RGA_ERR_SCHEMA, "intervals[0][0]", "out of range");
    free(s);
}

static void
test_inconsistent_ids(void **state)
{
    (void)state;
    char *s = rga_test_replace(rga_test_small_report, "[1,0,0,300,0,0]", "[9,0,0,300,0,0]");
    expect_error(s, RGA_ERR_REFERENCE, "intervals[0][0]", "thread seq 9 is not in the report");
    free(s);
    s = rga_test_replace(rga_test_small_report, "[1,0,0,300,0,0]", "[1,0,0,300,0,3]");
    expect_error(s, RGA_ERR_REFERENCE, "intervals[0][5]", "stack id 3");
    free(s);
    s = rga_test_replace(rga_test_small_report, "[1,0,0,300,0,0]", "[1,0,0,300,5,0]");
    expect_error(s, RGA_ERR_REFERENCE, "intervals[0][4]", "label set id 5");
    free(s);
    s = rga_test_replace(rga_test_small_report, "\"waiter\":2", "\"waiter\":4");
    expect_error(s, RGA_ERR_REFERENCE, "edges[0].waiter", "thread seq 4");
    free(s);
    s = rga_test_replace(rga_test_small_report, "\"holder\":1,", "\"holder\":8,");
    expect_error(s, RGA_ERR_REFERENCE, "edges[0].holder", "thread seq 8");
    free(s);
    s = rga_test_replace(rga_test_small_report, "[[4,5],", "[[4,6],");
    expect_error(s, RGA_ERR_REFERENCE, "stacks[0][1]", "frame id 6");
    free(s);
    s = rga_test_replace(rga_test_small_report, "[[0,700,1,0]", "[[3,700,1,0]");
    expect_error(s, RGA_ERR_REFERENCE, "samples[0][0]", "stack id 3");
    free(s);
    s = rga_test_replace(rga_test_small_report, "\"ractor\":2,\"first_seen_ns\"", "\"ractor\":5,\"first_seen_ns\"");
    expect_error(s, RGA_ERR_REFERENCE, "threads[2].ractor", "Ractor id 5");
    free(s);
    s = rga_test_replace(rga_test_small_report, "[[0,1,0,300]]", "[[0,6,0,300]]");
    expect_error(s, RGA_ERR_REFERENCE, "blame[0][1]", "thread seq 6");
    free(s);
    s = rga_test_replace(rga_test_small_report, "{\"seq\":3,", "{\"seq\":2,");
    expect_error(s, RGA_ERR_SCHEMA, NULL, "duplicate seq 2");
    free(s);
}

static void
test_unknown_keys_ignored(void **state)
{
    (void)state;
    char *s = rga_test_replace(rga_test_small_report, "\"minor\":0,", "\"minor\":3,\"future\":{\"a\":[1,2,{}]},");
    rga_report_t *r = rga_test_load(s);
    assert_int_equal(r->minor, 3);
    rga_report_free(r);
    free(s);
}

static char *
write_gzip(const char *text, size_t len)
{
    char *tmpl = rga_test_tempfile("rga_gz");
    assert_non_null(tmpl);
    gzFile gz = gzopen(tmpl, "wb");
    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, text, (unsigned)len), (int)len);
    assert_int_equal(gzclose(gz), Z_OK);
    return tmpl;
}

static void
test_gzip(void **state)
{
    (void)state;
    char *path = write_gzip(rga_test_small_report, strlen(rga_test_small_report));
    rga_report_t *r = NULL;
    rga_error_t err;
    assert_int_equal(rga_report_load_file(path, &r, &err), RGA_OK);
    assert_int_equal(r->n_threads, 3);
    rga_report_free(r);
    /* Truncated gzip data: an I/O class error, not a crash. */
    size_t len;
    char *gz = rga_test_slurp(path, &len);
    assert_non_null(gz);
    assert_int_equal(rga_report_load_buffer(gz, len / 2, "half.gz", &r, &err), RGA_ERR_IO);
    assert_non_null(strstr(err.reason, "gzip"));
    free(gz);
    unlink(path);
    free(path);
}

static void
test_synthetic_report_loads(void **state)
{
    (void)state;
    char *path = rga_test_generate("--threads 12 --ractors 3 --labels 6 --slices 500");
    assert_non_null(path);
    rga_report_t *r = NULL;
    rga_error_t err;
    assert_int_equal(rga_report_load_file(path, &r, &err), RGA_OK);
    assert_int_equal(r->n_threads, 12);
    assert_int_equal(r->n_ractors, 3);
    assert_true(r->n_intervals > 500);
    /* Conservation holds in synthetic reports: states sum to lifetime. */
    for (size_t i = 0; i < r->n_threads; i++) {
        const rga_thread_t *t = &r->threads[i];
        int64_t sum = 0;
        for (int s = 0; s < RGA_STATE_COUNT; s++)
            sum += t->state_ns[s];
        assert_int_equal(sum, t->last_seen_ns - t->first_seen_ns);
    }
    rga_report_free(r);
    unlink(path);
    free(path);
}

/* The integer-tuple fast path must give exactly what jansson gives. */
static void
assert_same_model(const rga_report_t *a, const rga_report_t *b)
{
    assert_int_equal(a->n_intervals, b->n_intervals);
    assert_memory_equal(a->intervals, b->intervals, a->n_intervals * sizeof(*a->intervals));
    assert_int_equal(a->n_samples, b->n_samples);
    assert_memory_equal(a->samples, b->samples, a->n_samples * sizeof(*a->samples));
    assert_int_equal(a->n_blame, b->n_blame);
    assert_memory_equal(a->blame, b->blame, a->n_blame * sizeof(*a->blame));
    assert_int_equal(a->n_stacks, b->n_stacks);
    assert_memory_equal(a->stacks, b->stacks, a->n_stacks * sizeof(*a->stacks));
    assert_int_equal(a->n_stack_frames, b->n_stack_frames);
    assert_memory_equal(a->stack_frames, b->stack_frames, a->n_stack_frames * sizeof(int64_t));
}

static void
test_fast_path_matches_jansson(void **state)
{
    (void)state;
    char *path = rga_test_generate("--threads 5 --ractors 2 --labels 3 --slices 300 --seed 9");
    assert_non_null(path);
    rga_report_t *fast = NULL, *slow = NULL;
    rga_error_t err;
    assert_int_equal(rga_report_load_file_flags(path, 0, &fast, &err), RGA_OK);
    assert_int_equal(rga_report_load_file_flags(path, RGA_LOAD_JANSSON_ONLY, &slow, &err), RGA_OK);
    assert_same_model(fast, slow);
    rga_report_free(fast);
    rga_report_free(slow);
    unlink(path);
    free(path);

    /* Element spellings at the edge of the fast path: both loaders agree on
     * the outcome, the error and (when valid) the values. */
    static const char *const spellings[] = {
        "[1,0,0,300,0,0]",
        "[ 1 , 0 ,\n0,300 ,0,0 ]",
        "[1,0,-0,300,0,0]",
        "[01,0,0,300,0,0]",
        "[1,0,0,300.0,0,0]",
        "[1,0,0,3e2,0,0]",
        "[1,0,0,3E2,0,0]",
        "[1,0,0,300,0,0,]",
        "[1,0,0,300,0]",
        "[1,0,0,300,0,0,7]",
        "[1,0,0,99999999999999999999,0,0]",
        "[1,0,0,123456789012345678,0,0]",
        "[1,0,0,1234567890123456789,0,0]",
        "[1,0,0,-300,0,0]",
        "[1,0,\"0\",300,0,0]",
        "[1,0,0,300,0,0",
        "[1,0,0,300,0,-1]",
        "[1,0,0,300,0,-2]",
        "[1,,0,300,0,0]",
        "[1 0,0,300,0,0]",
        "[]",
        "{}",
        "[1,0,0,+3,0,0]",
        "[1,0,0,300,0,0]]",
        "[1,0,0,300,0,0] ",
        "[1,0,0,300,0,00]",
        "[1,0,0,9223372036854775807,0,0]",
        "[1,0,-1,300,0,0]",
        "[1,0,0,300,4294967296,0]",
    };
    for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
        char *text = rga_test_replace(rga_test_small_report, "[1,0,0,300,0,0]", spellings[i]);
        rga_error_t e1, e2;
        rga_status_t s1 = rga_report_load_buffer_flags(text, strlen(text), "d", 0, &fast, &e1);
        rga_status_t s2 = rga_report_load_buffer_flags(text, strlen(text), "d", RGA_LOAD_JANSSON_ONLY, &slow, &e2);
        if (s1 != s2)
            fail_msg("%s: fast %s, jansson %s", spellings[i], rga_status_name(s1), rga_status_name(s2));
        if (s1 == RGA_OK) {
            assert_same_model(fast, slow);
            rga_report_free(fast);
            rga_report_free(slow);
        } else {
            assert_string_equal(e1.reason, e2.reason);
            assert_string_equal(e1.path, e2.path);
            assert_int_equal(e1.line, e2.line);
            assert_int_equal(e1.column, e2.column);
        }
        free(text);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loads_known_report),
        cmocka_unit_test(test_missing_and_unreadable_file),
        cmocka_unit_test(test_not_json),
        cmocka_unit_test(test_every_truncation_fails),
        cmocka_unit_test(test_syntax_error_position),
        cmocka_unit_test(test_wrong_version_and_format),
        cmocka_unit_test(test_wrong_field_types),
        cmocka_unit_test(test_negative_and_huge_numbers),
        cmocka_unit_test(test_inconsistent_ids),
        cmocka_unit_test(test_unknown_keys_ignored),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_synthetic_report_loads),
        cmocka_unit_test(test_fast_path_matches_jansson),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
