/* test_output.c — the rga_render() entry point (every view, errors with
 * positions) and the shared output routine (memory and file give the same bytes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"
#include "rga.h"
#include "rga_test_util.h"

static char *
render(const char *view, const rga_view_opts_t *opts, size_t *len)
{
    char *out = NULL;
    rga_error_t err;
    int rc = rga_render(rga_test_small_report, strlen(rga_test_small_report), view, opts, &out, len, &err);
    if (rc != 0) {
        char line[600];
        rga_error_format(&err, line, sizeof(line));
        fail_msg("view %s: %s", view, line);
    }
    assert_non_null(out);
    assert_int_equal(out[*len], '\0');
    return out;
}

static void
test_every_view(void **state)
{
    (void)state;
    size_t len;
    char *s = render("summary", NULL, &len);
    assert_non_null(strstr(s, "Threads"));
    free(s);
    rga_view_opts_t o = {0};
    o.width = 40;
    s = render("timeline", &o, &len);
    assert_non_null(strstr(s, "legend"));
    free(s);
    s = render("dot", NULL, &len);
    assert_non_null(strstr(s, "digraph"));
    free(s);
    s = render("svg", NULL, &len);
    assert_non_null(strstr(s, "<svg"));
    free(s);
    s = render("png", NULL, &len);
    assert_memory_equal(s, "\x89PNG", 4);
    free(s);
    s = render("json", NULL, &len);
    json_error_t je;
    json_t *j = json_loads(s, 0, &je);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "format")), "rperf-gvl-summary");
    json_decref(j);
    free(s);
    s = render("perfetto", NULL, &len);
    j = json_loads(s, 0, &je);
    assert_non_null(j);
    json_t *events = json_object_get(j, "traceEvents");
    size_t complete = 0, names = 0, i;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        if (strcmp(ph, "X") == 0) {
            complete++;
            /* pid is the Ractor, tid the thread seq. */
            json_int_t tid = json_integer_value(json_object_get(ev, "tid"));
            json_int_t pid = json_integer_value(json_object_get(ev, "pid"));
            assert_int_equal(pid, tid == 3 ? 2 : 1);
        } else if (strcmp(json_string_value(json_object_get(ev, "name")), "thread_name") == 0) {
            names++;
        }
    }
    assert_int_equal(complete, 11);
    assert_int_equal(names, 3);
    /* Labels travel as args. */
    json_t *first_wait = NULL;
    json_array_foreach(events, i, ev) if (strcmp(json_string_value(json_object_get(ev, "name")), "gvl_wait") == 0 &&
                                          !first_wait) first_wait = ev;
    assert_non_null(first_wait);
    assert_string_equal(json_string_value(json_object_get(json_object_get(first_wait, "args"), "tenant")), "x");
    json_decref(j);
    free(s);
}

static void
test_errors(void **state)
{
    (void)state;
    char *out = (char *)1;
    size_t len = 99;
    rga_error_t err;
    assert_int_equal(rga_render(rga_test_small_report, strlen(rga_test_small_report), "pie", NULL, &out, &len, &err),
                     RGA_ERR_ARGUMENT);
    assert_null(out);
    const char *bad = "{\"format\":\"rperf-gvl-report\",\n \"version\":1,\n \"meta\": {\"a\": tru}}";
    assert_int_equal(rga_render(bad, strlen(bad), "summary", NULL, &out, &len, &err), RGA_ERR_SYNTAX);
    assert_null(out);
    char line[600];
    rga_error_format(&err, line, sizeof(line));
    assert_memory_equal(line, "3:", 2); /* no file name: starts with line:column */
    assert_int_equal(rga_render(NULL, 0, "summary", NULL, &out, &len, &err), RGA_ERR_SYNTAX);
    rga_view_opts_t o = {0};
    o.by = "fiber";
    assert_int_equal(rga_render(rga_test_small_report, strlen(rga_test_small_report), "dot", &o, &out, &len, &err),
                     RGA_ERR_ARGUMENT);
    assert_null(out);
}

static void
test_memory_equals_file(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(rga_test_small_report);
    char *path = rga_test_tempfile("rga_out");
    assert_non_null(path);
    const char *views[] = {"summary", "timeline", "dot", "json", "perfetto"};
    for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
        rga_error_t err;
        rga_output_t o;
        assert_int_equal(rga_output_open(&o, path, &err), RGA_OK);
        assert_int_equal(rga_render_report(r, views[v], NULL, o.fp, &err), RGA_OK);
        assert_int_equal(rga_output_close(&o, NULL, NULL, &err), RGA_OK);
        assert_int_equal(rga_output_open(&o, RGA_OUTPUT_MEMORY, &err), RGA_OK);
        assert_int_equal(rga_render_report(r, views[v], NULL, o.fp, &err), RGA_OK);
        char *mem = NULL;
        size_t len = 0;
        assert_int_equal(rga_output_close(&o, &mem, &len, &err), RGA_OK);
        size_t flen;
        char *file = rga_test_slurp(path, &flen);
        assert_int_equal(flen, len);
        assert_memory_equal(file, mem, len);
        free(file);
        free(mem);
    }
    unlink(path);
    free(path);
    rga_error_t err;
    rga_output_t o;
    assert_int_equal(rga_output_open(&o, "/nonexistent-dir/x", &err), RGA_ERR_IO);
    rga_report_free(r);
}

/* A write goes to a temporary beside the file: the file holds its old bytes
 * until the close succeeds, keeps its permissions, and a discarded write
 * leaves it (and its directory) exactly as it was. */
static void
test_file_replaced_only_on_success(void **state)
{
    (void)state;
    char *path = rga_test_tempfile("rga_keep");
    assert_non_null(path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("old", f);
    fclose(f);
    assert_int_equal(chmod(path, 0640), 0);
    rga_error_t err;
    rga_output_t o;
    assert_int_equal(rga_output_open(&o, path, &err), RGA_OK);
    fputs("new", o.fp);
    fflush(o.fp);
    size_t len;
    char *text = rga_test_slurp(path, &len);
    assert_int_equal(len, 3);
    assert_memory_equal(text, "old", 3); /* not truncated while writing */
    free(text);
    char *tmp = strdup(o.tmp_path);
    rga_output_discard(&o);
    assert_int_equal(access(tmp, F_OK), -1);
    text = rga_test_slurp(path, &len);
    assert_memory_equal(text, "old", 3);
    free(text);
    free(tmp);

    assert_int_equal(rga_output_open(&o, path, &err), RGA_OK);
    fputs("new!", o.fp);
    assert_int_equal(rga_output_close(&o, NULL, NULL, &err), RGA_OK);
    text = rga_test_slurp(path, &len);
    assert_int_equal(len, 4);
    assert_memory_equal(text, "new!", 4);
    free(text);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0640);
    unlink(path);
    free(path);
}

/* A device is written in place and survives a failed write. */
static void
test_device_written_in_place(void **state)
{
    (void)state;
    rga_error_t err;
    rga_output_t o;
    assert_int_equal(rga_output_open(&o, "/dev/null", &err), RGA_OK);
    assert_int_equal(o.kind, 3);
    assert_null(o.tmp_path);
    fputs("x", o.fp);
    assert_int_equal(rga_output_close(&o, NULL, NULL, &err), RGA_OK);
    struct stat sb;
    assert_int_equal(stat("/dev/null", &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
    if (access("/dev/full", W_OK) == 0) {
        assert_int_equal(rga_output_open(&o, "/dev/full", &err), RGA_OK);
        for (int i = 0; i < 10000; i++)
            fputs("0123456789", o.fp);
        assert_int_equal(rga_output_close(&o, NULL, NULL, &err), RGA_ERR_IO);
        assert_string_equal(err.file, "/dev/full");
        assert_int_equal(stat("/dev/full", &sb), 0);
        assert_true(S_ISCHR(sb.st_mode));
    }
    assert_int_equal(rga_output_open(&o, "/", &err), RGA_ERR_IO);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_view),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_memory_equals_file),
        cmocka_unit_test(test_file_replaced_only_on_success),
        cmocka_unit_test(test_device_written_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
