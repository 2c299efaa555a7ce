/* rga_test_util.c — see rga_test_util.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rga_test_util.h"

/* Two Ractors; Ractor 1 has threads 1 (main) and 2 (worker-a), Ractor 2 has 3.
 * Thread 2 waited 300 on thread 1 and 100 on GC; thread 1 waited 50 on
 * hand-off. Label set 1 = {endpoint: a}, 2 = {endpoint: b, tenant: x}. */
const char rga_test_small_report[] =
    "{\"format\":\"rperf-gvl-report\",\"version\":1,\"minor\":0,\n"
    " \"meta\":{\"tool\":\"rperf-gvl\",\"tool_version\":\"0.1.0\",\"ruby_version\":\"3.3.8\",\"pid\":77,\n"
    "  \"program\":\"app.rb\",\"mode\":\"wall\",\"frequency\":1000,\"start_time_ns\":5,\n"
    "  \"start_monotonic_ns\":1000,\"duration_ns\":1000,\"sequence\":0},\n"
    " \"stats\":{\"dropped_intervals\":0},\n"
    " \"ractors\":[{\"id\":1,\"main\":true},{\"id\":2,\"main\":false}],\n"
    " \"threads\":[\n"
    "  {\"seq\":1,\"name\":\"main\",\"native_id\":1,\"ractor\":1,\"first_seen_ns\":0,\"last_seen_ns\":1000,\n"
    "   \"exited\":false,\"running_ns\":600,\"gvl_wait_ns\":50,\"blocked_ns\":250,\"gc_mark_ns\":60,\"gc_sweep_ns\":40,\n"
    "   \"acquisitions\":3,\"waits\":1},\n"
    "  {\"seq\":2,\"name\":\"worker-a\",\"native_id\":2,\"ractor\":1,\"first_seen_ns\":100,\"last_seen_ns\":900,\n"
    "   \"exited\":true,\"running_ns\":200,\"gvl_wait_ns\":400,\"blocked_ns\":200,\"gc_mark_ns\":0,\"gc_sweep_ns\":0,\n"
    "   \"acquisitions\":2,\"waits\":4},\n"
    "  {\"seq\":3,\"name\":\"\",\"native_id\":3,\"ractor\":2,\"first_seen_ns\":0,\"last_seen_ns\":500,\n"
    "   \"exited\":false,\"running_ns\":500,\"gvl_wait_ns\":0,\"blocked_ns\":0,\"gc_mark_ns\":0,\"gc_sweep_ns\":0,\n"
    "   \"acquisitions\":1,\"waits\":0}],\n"
    " \"label_sets\":[{\"id\":0,\"labels\":{}},{\"id\":1,\"labels\":{\"endpoint\":\"a\"}},\n"
    "   {\"id\":2,\"labels\":{\"tenant\":\"x\",\"endpoint\":\"b\"}}],\n"
    " \"label_totals\":[\n"
    "  {\"thread\":1,\"label_set\":0,\"running_ns\":600,\"gvl_wait_ns\":50,\"blocked_ns\":250,\"gc_mark_ns\":60,\"gc_sweep_ns\":40},\n"
    "  {\"thread\":2,\"label_set\":1,\"running_ns\":150,\"gvl_wait_ns\":300,\"blocked_ns\":0,\"gc_mark_ns\":0,\"gc_sweep_ns\":0},\n"
    "  {\"thread\":2,\"label_set\":2,\"running_ns\":50,\"gvl_wait_ns\":100,\"blocked_ns\":200,\"gc_mark_ns\":0,\"gc_sweep_ns\":0},\n"
    "  {\"thread\":3,\"label_set\":0,\"running_ns\":500,\"gvl_wait_ns\":0,\"blocked_ns\":0,\"gc_mark_ns\":0,\"gc_sweep_ns\":0}],\n"
    " \"frames\":[[\"<GVL>\",\"[GVL blocked]\"],[\"<GVL>\",\"[GVL wait]\"],[\"<GC>\",\"[GC marking]\"],\n"
    "   [\"<GC>\",\"[GC sweeping]\"],[\"app.rb:3\",\"Object#work\"],[\"app.rb:9\",\"<main>\"]],\n"
    " \"stacks\":[[4,5],[1,4,5],[0,5]],\n"
    " \"samples\":[[0,700,1,0],[1,300,2,1],[1,100,2,2],[2,250,1,0]],\n"
    " \"intervals\":[[1,0,0,300,0,0],[3,0,0,500,0,-1],[2,2,100,300,2,2],[1,3,300,360,0,-1],\n"
    "   [1,4,360,400,0,-1],[2,1,300,400,2,1],[1,0,400,700,0,0],[2,1,400,700,1,1],[1,1,700,750,0,-1],\n"
    "   [2,0,700,900,1,0],[1,2,750,1000,0,2]],\n"
    " \"edges\":[{\"ractor\":1,\"waiter\":2,\"holder_kind\":\"thread\",\"holder\":1,\"waiter_label_set\":1,\n"
    "   \"holder_label_set\":0,\"wait_ns\":300,\"count\":1},\n"
    "  {\"ractor\":1,\"waiter\":2,\"holder_kind\":\"gc\",\"holder\":0,\"waiter_label_set\":2,\n"
    "   \"holder_label_set\":0,\"wait_ns\":100,\"count\":1},\n"
    "  {\"ractor\":1,\"waiter\":1,\"holder_kind\":\"handoff\",\"holder\":0,\"waiter_label_set\":0,\n"
    "   \"holder_label_set\":0,\"wait_ns\":50,\"count\":1}],\n"
    " \"blame\":[[0,1,0,300]]}\n";

char *
rga_test_tempfile(const char *prefix)
{
    const char *dir = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof(path), "%s/%s_XXXXXX", dir && *dir ? dir : P_tmpdir, prefix);
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    close(fd);
    return strdup(path);
}

char *
rga_test_generate(const char *args)
{
    char *tmpl = rga_test_tempfile("rga_gen");
    if (!tmpl)
        return NULL;
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "%s %s -o %s", RGA_GEN_REPORT, args, tmpl);
    if (system(cmd) != 0) {
        unlink(tmpl);
        free(tmpl);
        return NULL;
    }
    return tmpl;
}

char *
rga_test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = (size_t)n;
    }
    return buf;
}

char *
rga_test_replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at)
        fail_msg("the text has no \"%s\"", from);
    size_t head = (size_t)(at - text);
    char *out = malloc(strlen(text) - strlen(from) + strlen(to) + 1);
    assert_non_null(out);
    memcpy(out, text, head);
    strcpy(out + head, to);
    strcat(out, at + strlen(from));
    return out;
}

rga_report_t *
rga_test_load(const char *text)
{
    rga_report_t *r = NULL;
    rga_error_t err;
    rga_status_t st = rga_report_load_buffer(text, strlen(text), "test", &r, &err);
    if (st != RGA_OK) {
        char line[600];
        rga_error_format(&err, line, sizeof(line));
        fail_msg("load failed: %s", line);
    }
    return r;
}

rga_report_t *
rga_test_load_generated(const char *args)
{
    char *path = rga_test_generate(args);
    assert_non_null(path);
    rga_report_t *r = NULL;
    rga_error_t err;
    rga_status_t st = rga_report_load_file(path, &r, &err);
    unlink(path);
    free(path);
    if (st != RGA_OK) {
        char line[600];
        rga_error_format(&err, line, sizeof(line));
        fail_msg("load of a generated report failed: %s", line);
    }
    return r;
}
