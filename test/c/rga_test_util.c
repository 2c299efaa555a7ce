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

/* Appends printf output to a growing buffer. */
static void
put(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
        va_end(ap);
        assert_true(n >= 0);
        if ((size_t)n < *cap - *len) {
            *len += (size_t)n;
            return;
        }
        *cap = (*cap + (size_t)n) * 2;
        *buf = realloc(*buf, *cap);
        assert_non_null(*buf);
    }
}

char *
rga_test_timeline(const rga_test_thread_t *threads, size_t n_threads, const rga_test_interval_t *ivs,
                  size_t n_intervals, const char *extra)
{
    static const char *const states[] = {"running_ns", "gvl_wait_ns", "blocked_ns", "gc_mark_ns", "gc_sweep_ns"};
    const long long MS = 1000000;
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    assert_non_null(buf);
    int max_label = 0, max_ractor = 1;
    long long end = 1;
    for (size_t i = 0; i < n_intervals; i++) {
        if (ivs[i].label_set > max_label)
            max_label = ivs[i].label_set;
        if (ivs[i].end > end)
            end = ivs[i].end;
    }
    for (size_t t = 0; t < n_threads; t++)
        if (threads[t].ractor > max_ractor)
            max_ractor = threads[t].ractor;
    put(&buf, &len, &cap,
        "{\"format\":\"rperf-gvl-report\",\"version\":1,\"minor\":1,\n"
        " \"meta\":{\"tool\":\"rperf-gvl\",\"tool_version\":\"0.1.0\",\"ruby_version\":\"3.3.8\",\"pid\":7,"
        "\"program\":\"chain.rb\",\"mode\":\"wall\",\"frequency\":1000,\"start_time_ns\":1,"
        "\"start_monotonic_ns\":1000,\"duration_ns\":%lld,\"sequence\":0},\n \"stats\":{},\n",
        end * MS);
    if (extra)
        put(&buf, &len, &cap, " %s\n", extra);
    put(&buf, &len, &cap, " \"ractors\":[");
    for (int r = 1; r <= max_ractor; r++)
        put(&buf, &len, &cap, "%s{\"id\":%d,\"main\":%s}", r > 1 ? "," : "", r, r == 1 ? "true" : "false");
    put(&buf, &len, &cap, "],\n \"label_sets\":[{\"id\":0,\"labels\":{}}");
    for (int l = 1; l <= max_label; l++)
        put(&buf, &len, &cap, ",{\"id\":%d,\"labels\":{\"req\":\"%d\"}}", l, l);
    put(&buf, &len, &cap, "],\n \"threads\":[");
    for (size_t t = 0; t < n_threads; t++) {
        long long st[5] = {0}, first = -1, last = 0;
        long long by_cause[RGA_CAUSE_COUNT] = {0};
        for (size_t i = 0; i < n_intervals; i++) {
            if (ivs[i].thread != threads[t].seq)
                continue;
            st[ivs[i].state] += (ivs[i].end - ivs[i].start) * MS;
            if (ivs[i].state == RGA_STATE_BLOCKED)
                by_cause[ivs[i].cause ? rga_cause_from_name(ivs[i].cause) : 0] += (ivs[i].end - ivs[i].start) * MS;
            if (first < 0 || ivs[i].start < first)
                first = ivs[i].start;
            if (ivs[i].end > last)
                last = ivs[i].end;
        }
        if (first < 0)
            first = 0;
        put(&buf, &len, &cap,
            "%s\n  {\"seq\":%d,\"name\":\"%s\",\"ractor\":%d,\"first_seen_ns\":%lld,\"last_seen_ns\":%lld,"
            "\"exited\":false,\"running_ns\":%lld,\"gvl_wait_ns\":%lld,\"blocked_ns\":%lld,\"gc_mark_ns\":%lld,"
            "\"gc_sweep_ns\":%lld,\"acquisitions\":1,\"waits\":0,\"blocked_by_cause\":{",
            t ? "," : "", threads[t].seq, threads[t].name, threads[t].ractor, first * MS, last * MS, st[0], st[1],
            st[2], st[3], st[4]);
        bool any = false;
        for (int c = 0; c < RGA_CAUSE_COUNT; c++)
            if (by_cause[c]) {
                put(&buf, &len, &cap, "%s\"%s\":%lld", any ? "," : "", rga_cause_name(c), by_cause[c]);
                any = true;
            }
        put(&buf, &len, &cap, "}}");
    }
    put(&buf, &len, &cap, "],\n \"label_totals\":[");
    bool first_row = true;
    for (size_t t = 0; t < n_threads; t++)
        for (int l = 0; l <= max_label; l++) {
            long long st[5] = {0};
            bool any = false;
            for (size_t i = 0; i < n_intervals; i++)
                if (ivs[i].thread == threads[t].seq && ivs[i].label_set == l) {
                    st[ivs[i].state] += (ivs[i].end - ivs[i].start) * MS;
                    any = true;
                }
            if (!any)
                continue;
            put(&buf, &len, &cap, "%s\n  {\"thread\":%d,\"label_set\":%d", first_row ? "" : ",", threads[t].seq, l);
            for (int k = 0; k < 5; k++)
                put(&buf, &len, &cap, ",\"%s\":%lld", states[k], st[k]);
            put(&buf, &len, &cap, "}");
            first_row = false;
        }
    put(&buf, &len, &cap, "],\n \"intervals\":[");
    for (size_t i = 0; i < n_intervals; i++)
        put(&buf, &len, &cap, "%s\n  [%d,%d,%lld,%lld,%d,-1]", i ? "," : "", ivs[i].thread, ivs[i].state,
            ivs[i].start * MS, ivs[i].end * MS, ivs[i].label_set);
    put(&buf, &len, &cap, "],\n \"causes\":[");
    for (int c = 0; c < RGA_CAUSE_COUNT; c++)
        put(&buf, &len, &cap, "%s\"%s\"", c ? "," : "", rga_cause_name(c));
    put(&buf, &len, &cap, "],\n \"interval_causes\":[");
    first_row = true;
    for (size_t i = 0; i < n_intervals; i++) {
        if (ivs[i].state != RGA_STATE_BLOCKED || !ivs[i].cause)
            continue;
        put(&buf, &len, &cap, "%s[%d,%lld,%d,%d]", first_row ? "" : ",", ivs[i].thread, ivs[i].start * MS,
            rga_cause_from_name(ivs[i].cause), ivs[i].releaser);
        first_row = false;
    }
    put(&buf, &len, &cap, "],\n \"edges\":[]}\n");
    return buf;
}

rga_report_t *
rga_test_load_fixture(const char *name)
{
    char path[1024];
    size_t len;
    snprintf(path, sizeof(path), "%s/%s", RGA_FIXTURES, name);
    char *text = rga_test_slurp(path, &len);
    if (!text)
        fail_msg("cannot read %s", path);
    rga_report_t *r = rga_test_load(text);
    free(text);
    return r;
}

char *
rga_test_render(const rga_report_t *r, const char *view, const rga_view_opts_t *opts)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    rga_view_opts_t none = {0};
    rga_error_t err;
    rga_status_t st = rga_render_report(r, view, opts ? opts : &none, out, &err);
    fclose(out);
    if (st != RGA_OK)
        fail_msg("%s: %s", view, err.reason);
    return buf;
}
