/* metrics_text.c — a summed metrics set (metrics_internal.h) written as the
 * Prometheus text exposition 0.0.4 or as OpenMetrics 1.0 text.
 *
 * The families and their order are fixed (docs/metrics.md lists them).
 * Series come in their label text's byte order, so the same files always
 * give the same bytes. Seconds are written as exact decimals of the
 * nanosecond integers; a blocked series appears for `unknown` always and
 * for another cause once it is nonzero. The two formats differ only where
 * OpenMetrics requires it: a counter family's TYPE, UNIT and HELP name it
 * without `_total`, seconds families have a UNIT line, and `# EOF` ends
 * the text. It does NOT read files (metrics_file.c, metrics_dir.c).
 */
#include "metrics_internal.h"

#include <inttypes.h>
#include <string.h>

static const char *const cause_names[RPERF_CAUSE_COUNT] = RPERF_CAUSE_NAMES;
static const char *const drop_names[RPERF_METRICS_DROPS] = RPERF_METRICS_DROP_NAMES;
static const int64_t wait_bounds[RPERF_METRICS_WAIT_BOUNDS] = RPERF_METRICS_WAIT_BOUNDS_NS;
static const int ratio_bounds[RPERF_METRICS_RATIO_BOUNDS] = RPERF_METRICS_RATIO_BOUNDS_PERMILLE;

const char *
rga_metrics_content_type(unsigned flags)
{
    return flags & RGA_METRICS_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                           : "text/plain; version=0.0.4; charset=utf-8";
}

/* value / 10^digits as the shortest exact decimal. */
static void
decimal(int64_t value, int digits, char *buf, size_t size)
{
    int64_t scale = 1;
    for (int i = 0; i < digits; i++)
        scale *= 10;
    int64_t whole = value / scale, frac = value % scale;
    if (frac == 0) {
        snprintf(buf, size, "%" PRId64, whole);
        return;
    }
    while (frac % 10 == 0) {
        frac /= 10;
        digits--;
    }
    snprintf(buf, size, "%" PRId64 ".%0*" PRId64, whole, digits, frac);
}

void
rga_metrics_seconds(int64_t ns, char *buf, size_t size)
{
    decimal(ns, 9, buf, size);
}

typedef struct family {
    const char *name; /* without _total */
    const char *type;
    const char *unit; /* NULL: none */
    const char *help;
} family_t;

static void
header(FILE *out, const family_t *f, bool om)
{
    bool counter = strcmp(f->type, "counter") == 0;
    const char *suffix = counter && !om ? "_total" : "";
    fprintf(out, "# HELP %s%s %s\n# TYPE %s%s %s\n", f->name, suffix, f->help, f->name, suffix, f->type);
    if (om && f->unit)
        fprintf(out, "# UNIT %s %s\n", f->name, f->unit);
}

/* name{labels,extra} value; labels and extra may be empty. */
static void
sample(FILE *out, const char *name, const char *suffix, const char *labels, const char *extra, const char *value)
{
    if (labels[0] || extra[0])
        fprintf(out, "%s%s{%s%s%s} %s\n", name, suffix, labels, labels[0] && extra[0] ? "," : "", extra, value);
    else
        fprintf(out, "%s%s %s\n", name, suffix, value);
}

static void
seconds_sample(FILE *out, const char *name, const char *labels, const char *extra, int64_t ns)
{
    char v[32];
    rga_metrics_seconds(ns, v, sizeof(v));
    sample(out, name, "_total", labels, extra, v);
}

static void
int_sample(FILE *out, const char *name, const char *suffix, const char *labels, const char *extra, int64_t n)
{
    char v[24];
    snprintf(v, sizeof(v), "%" PRId64, n);
    sample(out, name, suffix, labels, extra, v);
}

/* The blocked series of one label text: unknown always, others when nonzero. */
static void
blocked_samples(FILE *out, const char *name, const char *labels, const int64_t *ns)
{
    for (int c = 0; c < RPERF_CAUSE_COUNT; c++) {
        if (c != RPERF_CAUSE_UNKNOWN && ns[c] == 0)
            continue;
        char cause[32];
        snprintf(cause, sizeof(cause), "cause=\"%s\"", cause_names[c]);
        seconds_sample(out, name, labels, cause, ns[c]);
    }
}

static const family_t unit_families[] = {
    {"rperf_wall_seconds", "counter", "seconds",
     "Wall-clock time of finished units of work (requests, jobs), from the thread becoming runnable to the "
     "response written."},
    {"rperf_running_seconds", "counter", "seconds", "Time the units' threads held the GVL, GC excluded."},
    {"rperf_gvl_wait_seconds", "counter", "seconds",
     "Time the units' threads waited for the GVL: before the app, in it and while the response was written."},
    {"rperf_blocked_seconds", "counter", "seconds",
     "Time the units' threads were blocked (IO, sleep, locks, C code without the GVL), by cause."},
    {"rperf_gc_seconds", "counter", "seconds", "GC time on the units' threads."},
};

static const family_t wait_histogram = {"rperf_unit_gvl_wait_seconds", "histogram", "seconds",
                                        "GVL wait of one unit of work."};
static const family_t ratio_histogram = {
    "rperf_unit_gvl_wait_ratio", "histogram", "ratio",
    "GVL wait share of one unit of work: its GVL wait over its wall-clock time."};

static const family_t process_families[] = {
    {"rperf_process_running_seconds", "counter", "seconds",
     "Time all threads of the processes held the GVL, GC excluded."},
    {"rperf_process_gvl_wait_seconds", "counter", "seconds",
     "Time all threads of the processes waited for the GVL."},
    {"rperf_process_blocked_seconds", "counter", "seconds",
     "Time all threads of the processes were blocked, by cause."},
    {"rperf_process_gc_seconds", "counter", "seconds", "GC time on all threads of the processes."},
};

static const family_t threads_family = {"rperf_threads", "gauge", NULL, "Threads alive in the live processes."};
static const family_t dropped_family = {"rperf_dropped", "counter", NULL,
                                        "Events the profiler could not record, by what was dropped."};
static const family_t folded_family = {
    "rperf_label_sets_folded", "counter", NULL,
    "Units of work whose label set was folded into the other bucket by the cardinality cap."};
static const family_t unmeasured_family = {"rperf_units_unmeasured", "counter", NULL,
                                           "Units of work without numbers: the profiler was not running."};
static const family_t files_family = {
    "rperf_metrics_files", "gauge", NULL,
    "Metrics files in the directory: live processes, dead ones not folded yet, and unreadable ones skipped."};

static void
histogram(FILE *out, const rga_metrics_set_t *set, const family_t *f, bool om, bool ratio)
{
    header(out, f, om);
    for (size_t i = 0; i < set->n; i++) {
        const rga_metrics_series_t *s = &set->series[i];
        const int64_t *buckets = ratio ? s->row.ratio_buckets : s->row.wait_buckets;
        int nbounds = ratio ? RPERF_METRICS_RATIO_BOUNDS : RPERF_METRICS_WAIT_BOUNDS;
        int64_t cumulative = 0;
        for (int b = 0; b <= nbounds; b++) {
            char bound[32], le[40];
            if (b == nbounds)
                snprintf(bound, sizeof(bound), "+Inf");
            else if (ratio)
                decimal(ratio_bounds[b], 3, bound, sizeof(bound));
            else
                rga_metrics_seconds(wait_bounds[b], bound, sizeof(bound));
            snprintf(le, sizeof(le), "le=\"%s\"", bound);
            cumulative += buckets[b];
            int_sample(out, f->name, "_bucket", s->key, le, cumulative);
        }
        char v[32];
        if (ratio)
            decimal(s->row.ratio_sum_ppm, 6, v, sizeof(v));
        else
            rga_metrics_seconds(s->row.gvl_wait_ns, v, sizeof(v));
        sample(out, f->name, "_sum", s->key, "", v);
        int_sample(out, f->name, "_count", s->key, "", s->row.count);
    }
}

static void
unit_families_text(FILE *out, const rga_metrics_set_t *set, bool om)
{
    for (size_t k = 0; k < sizeof(unit_families) / sizeof(unit_families[0]); k++) {
        const family_t *f = &unit_families[k];
        header(out, f, om);
        for (size_t i = 0; i < set->n; i++) {
            const rga_metrics_row_t *r = &set->series[i].row;
            const char *l = set->series[i].key;
            switch (k) {
            case 0: seconds_sample(out, f->name, l, "", r->wall_ns); break;
            case 1: seconds_sample(out, f->name, l, "", r->running_ns); break;
            case 2: seconds_sample(out, f->name, l, "", r->gvl_wait_ns); break;
            case 3: blocked_samples(out, f->name, l, r->blocked_ns); break;
            default: seconds_sample(out, f->name, l, "", r->gc_ns); break;
            }
        }
    }
    histogram(out, set, &wait_histogram, om, false);
    histogram(out, set, &ratio_histogram, om, true);
}

static void
process_text(FILE *out, const rga_metrics_set_t *set, bool om)
{
    const rga_metrics_process_t *p = &set->process;
    const int64_t totals[] = {p->running_ns, p->gvl_wait_ns, 0, p->gc_ns};
    for (size_t k = 0; k < sizeof(process_families) / sizeof(process_families[0]); k++) {
        header(out, &process_families[k], om);
        if (k == 2)
            blocked_samples(out, process_families[k].name, "", p->blocked_ns);
        else
            seconds_sample(out, process_families[k].name, "", "", totals[k]);
    }
    header(out, &threads_family, om);
    int_sample(out, threads_family.name, "", "", "", p->threads);
    header(out, &dropped_family, om);
    for (int d = 0; d < RPERF_METRICS_DROPS; d++) {
        char l[64];
        snprintf(l, sizeof(l), "what=\"%s\"", drop_names[d]);
        int_sample(out, dropped_family.name, "_total", "", l, p->dropped[d]);
    }
    header(out, &folded_family, om);
    int_sample(out, folded_family.name, "_total", "", "", p->label_sets_folded);
    header(out, &unmeasured_family, om);
    int_sample(out, unmeasured_family.name, "_total", "", "", p->units_unmeasured);
    header(out, &files_family, om);
    int_sample(out, files_family.name, "", "", "state=\"live\"", set->files_live);
    int_sample(out, files_family.name, "", "", "state=\"dead\"", set->files_dead);
    int_sample(out, files_family.name, "", "", "state=\"skipped\"", set->files_skipped);
}

rga_status_t
rga_metrics_set_render(const rga_metrics_set_t *set, unsigned flags, FILE *out, rga_error_t *err)
{
    if (set->merged != set->n)
        return rga_error_set(err, RGA_ERR_ARGUMENT, "the set was not merged");
    bool om = flags & RGA_METRICS_OPENMETRICS;
    unit_families_text(out, set, om);
    process_text(out, set, om);
    if (om)
        fputs("# EOF\n", out);
    if (ferror(out))
        return rga_error_set(err, RGA_ERR_IO, "write failed");
    return RGA_OK;
}
