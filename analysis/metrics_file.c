/* metrics_file.c — one per-process metrics file (format version 1,
 * docs/metrics.md) read into the model of metrics.h, checked, and written
 * back (the aggregate of dead processes).
 *
 * Every number is a non-negative integer; a histogram's buckets add up to
 * its row's count; texts are valid UTF-8 (jansson checks it), names have no
 * NUL byte, and sizes stay within metrics_format.h's limits. Anything else
 * is an error naming the file and the JSON path. It does NOT read
 * directories (metrics_dir.c) nor render the exposition (metrics_text.c).
 */
#include "metrics_internal.h"

#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

void
rga_metrics_row_free(rga_metrics_row_t *r)
{
    free(r->kind);
    for (size_t i = 0; i < r->n_labels; i++) {
        free(r->labels[i].name);
        free(r->labels[i].value);
    }
    free(r->labels);
}

void
rga_metrics_file_free(rga_metrics_file_t *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n_rows; i++)
        rga_metrics_row_free(&f->rows[i]);
    free(f->rows);
    for (size_t i = 0; i < f->n_folded; i++)
        free(f->folded[i]);
    free(f->folded);
    free(f);
}

/* ---- reading ----------------------------------------------------------------------- */

typedef struct reader {
    const char *name;
    rga_error_t *err;
    char path[128];
} reader_t;

static rga_status_t bad(reader_t *rd, rga_status_t code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static rga_status_t
bad(reader_t *rd, rga_status_t code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rga_error_vset_at(rd->err, code, rd->name, rd->path, fmt, ap);
    va_end(ap);
    return code;
}

static void at(reader_t *rd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
at(reader_t *rd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rd->path, sizeof(rd->path), fmt, ap);
    va_end(ap);
}

/* A field of a JSON object: one non-negative integer (n == 0) or an array
 * of exactly n of them. */
typedef struct field {
    const char *key;
    int64_t *out;
    size_t n;
} field_t;

static rga_status_t
get_field(reader_t *rd, const json_t *obj, const field_t *f)
{
    const json_t *v = json_object_get(obj, f->key);
    size_t len = strlen(rd->path);
    snprintf(rd->path + len, sizeof(rd->path) - len, "%s%s", len ? "." : "", f->key);
    if (!v)
        return bad(rd, RGA_ERR_SCHEMA, "missing");
    if (f->n == 0) {
        if (!json_is_integer(v))
            return bad(rd, RGA_ERR_SCHEMA, "expected an integer");
        if (json_integer_value(v) < 0)
            return bad(rd, RGA_ERR_SCHEMA, "negative value %lld", (long long)json_integer_value(v));
        *f->out = (int64_t)json_integer_value(v);
    } else {
        if (!json_is_array(v) || json_array_size(v) != f->n)
            return bad(rd, RGA_ERR_SCHEMA, "expected an array of %zu integers", f->n);
        for (size_t i = 0; i < f->n; i++) {
            const json_t *e = json_array_get(v, i);
            if (!json_is_integer(e) || json_integer_value(e) < 0)
                return bad(rd, RGA_ERR_SCHEMA, "element %zu: expected a non-negative integer", i);
            f->out[i] = (int64_t)json_integer_value(e);
        }
    }
    rd->path[len] = '\0';
    return RGA_OK;
}

static rga_status_t
get_fields(reader_t *rd, const json_t *obj, const field_t *fields, size_t n)
{
    rga_status_t st = RGA_OK;
    for (size_t i = 0; i < n && st == RGA_OK; i++)
        st = get_field(rd, obj, &fields[i]);
    return st;
}

/* A copy of a JSON string of at most RPERF_METRICS_MAX_TEXT bytes; a name
 * (nul_ok false) must not hold a NUL byte. */
static rga_status_t
get_text(reader_t *rd, const json_t *v, bool nul_ok, char **out, size_t *out_len)
{
    if (!json_is_string(v))
        return bad(rd, RGA_ERR_SCHEMA, "expected a string");
    size_t n = json_string_length(v);
    const char *s = json_string_value(v);
    if (n > RPERF_METRICS_MAX_TEXT)
        return bad(rd, RGA_ERR_SCHEMA, "text of %zu bytes (at most %d)", n, RPERF_METRICS_MAX_TEXT);
    if (!nul_ok && memchr(s, '\0', n))
        return bad(rd, RGA_ERR_SCHEMA, "a NUL byte in a name");
    char *copy = malloc(n + 1);
    if (!copy)
        return bad(rd, RGA_ERR_NOMEM, "out of memory");
    memcpy(copy, s, n);
    copy[n] = '\0';
    *out = copy;
    if (out_len)
        *out_len = n;
    return RGA_OK;
}

static int64_t
sum(const int64_t *v, size_t n, bool *overflow)
{
    int64_t total = 0;
    for (size_t i = 0; i < n; i++)
        *overflow |= __builtin_add_overflow(total, v[i], &total);
    return total;
}

static rga_status_t
read_labels(reader_t *rd, const json_t *obj, rga_metrics_row_t *r)
{
    size_t len = strlen(rd->path);
    const json_t *labels = json_object_get(obj, "labels");
    snprintf(rd->path + len, sizeof(rd->path) - len, ".labels");
    if (!json_is_object(labels))
        return bad(rd, RGA_ERR_SCHEMA, labels ? "expected an object" : "missing");
    size_t n = json_object_size(labels);
    if (n > RPERF_METRICS_MAX_LABELS)
        return bad(rd, RGA_ERR_SCHEMA, "%zu labels (at most %d)", n, RPERF_METRICS_MAX_LABELS);
    r->labels = calloc(n ? n : 1, sizeof(*r->labels));
    if (!r->labels)
        return bad(rd, RGA_ERR_NOMEM, "out of memory");
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)labels, key, value)
    {
        rga_metrics_label_t *l = &r->labels[r->n_labels];
        size_t key_len = strlen(key);
        if (key_len == 0 || key_len > RPERF_METRICS_MAX_TEXT)
            return bad(rd, RGA_ERR_SCHEMA, "a label name of %zu bytes (1 to %d)", key_len, RPERF_METRICS_MAX_TEXT);
        rga_status_t st = get_text(rd, value, true, &l->value, &l->value_len);
        if (st != RGA_OK)
            return st;
        if (!(l->name = strdup(key)))
            return bad(rd, RGA_ERR_NOMEM, "out of memory");
        r->n_labels++;
    }
    rd->path[len] = '\0';
    return RGA_OK;
}

static rga_status_t
read_row(reader_t *rd, const json_t *obj, rga_metrics_row_t *r)
{
    if (!json_is_object(obj))
        return bad(rd, RGA_ERR_SCHEMA, "expected an object");
    size_t len = strlen(rd->path);
    snprintf(rd->path + len, sizeof(rd->path) - len, ".kind");
    const json_t *kind = json_object_get(obj, "kind");
    rga_status_t st = kind ? get_text(rd, kind, false, &r->kind, NULL) : bad(rd, RGA_ERR_SCHEMA, "missing");
    rd->path[len] = '\0';
    const field_t fields[] = {
        {"count", &r->count, 0},
        {"wall_ns", &r->wall_ns, 0},
        {"running_ns", &r->running_ns, 0},
        {"gvl_wait_ns", &r->gvl_wait_ns, 0},
        {"gc_ns", &r->gc_ns, 0},
        {"blocked_ns", r->blocked_ns, RPERF_CAUSE_COUNT},
        {"gvl_wait_buckets", r->wait_buckets, RPERF_METRICS_WAIT_BOUNDS + 1},
        {"gvl_wait_ratio_buckets", r->ratio_buckets, RPERF_METRICS_RATIO_BOUNDS + 1},
        {"gvl_wait_ratio_sum_ppm", &r->ratio_sum_ppm, 0},
    };
    if (st == RGA_OK)
        st = read_labels(rd, obj, r);
    if (st == RGA_OK)
        st = get_fields(rd, obj, fields, sizeof(fields) / sizeof(fields[0]));
    if (st != RGA_OK)
        return st;
    bool overflow = false;
    int64_t waits = sum(r->wait_buckets, RPERF_METRICS_WAIT_BOUNDS + 1, &overflow);
    int64_t ratios = sum(r->ratio_buckets, RPERF_METRICS_RATIO_BOUNDS + 1, &overflow);
    sum(r->blocked_ns, RPERF_CAUSE_COUNT, &overflow);
    if (overflow)
        return bad(rd, RGA_ERR_SCHEMA, "a sum overflows 64 bits");
    if (waits != r->count || ratios != r->count)
        return bad(rd, RGA_ERR_SCHEMA, "histogram buckets add up to %lld and %lld, not the count %lld",
                   (long long)waits, (long long)ratios, (long long)r->count);
    if (r->ratio_sum_ppm / 1000000 > r->count)
        return bad(rd, RGA_ERR_SCHEMA, "gvl_wait_ratio_sum_ppm above one per unit");
    return RGA_OK;
}

static rga_status_t
read_process(reader_t *rd, const json_t *root, rga_metrics_process_t *p)
{
    const json_t *obj = json_object_get(root, "process");
    at(rd, "process");
    if (!json_is_object(obj))
        return bad(rd, RGA_ERR_SCHEMA, obj ? "expected an object" : "missing");
    const field_t fields[] = {
        {"threads", &p->threads, 0},
        {"running_ns", &p->running_ns, 0},
        {"gvl_wait_ns", &p->gvl_wait_ns, 0},
        {"gc_ns", &p->gc_ns, 0},
        {"blocked_ns", p->blocked_ns, RPERF_CAUSE_COUNT},
        {"dropped", p->dropped, RPERF_METRICS_DROPS},
        {"label_sets_folded", &p->label_sets_folded, 0},
        {"units_unmeasured", &p->units_unmeasured, 0},
    };
    return get_fields(rd, obj, fields, sizeof(fields) / sizeof(fields[0]));
}

/* A folded file name: a plain name in the directory. */
static bool
plain_name(const char *s, size_t n)
{
    return n > 0 && n <= NAME_MAX && !memchr(s, '/', n) && !memchr(s, '\0', n) && strcmp(s, ".") != 0 &&
           strcmp(s, "..") != 0;
}

static rga_status_t
read_folded(reader_t *rd, const json_t *root, rga_metrics_file_t *f)
{
    const json_t *a = json_object_get(root, "folded");
    at(rd, "folded");
    if (!a)
        return RGA_OK;
    if (!json_is_array(a) || json_array_size(a) > RPERF_METRICS_MAX_FOLDED_NAMES)
        return bad(rd, RGA_ERR_SCHEMA, "expected an array of at most %d names", RPERF_METRICS_MAX_FOLDED_NAMES);
    size_t n = json_array_size(a);
    f->folded = calloc(n ? n : 1, sizeof(*f->folded));
    if (!f->folded)
        return bad(rd, RGA_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(a, i);
        if (!json_is_string(v) || !plain_name(json_string_value(v), json_string_length(v)))
            return bad(rd, RGA_ERR_SCHEMA, "element %zu: expected a file name", i);
        if (!(f->folded[i] = strdup(json_string_value(v))))
            return bad(rd, RGA_ERR_NOMEM, "out of memory");
        f->n_folded++;
    }
    return RGA_OK;
}

static rga_status_t
read_root(reader_t *rd, const json_t *root, rga_metrics_file_t *f)
{
    if (!json_is_object(root))
        return bad(rd, RGA_ERR_SCHEMA, "expected an object");
    const json_t *format = json_object_get(root, "format");
    at(rd, "format");
    if (!json_is_string(format) || strcmp(json_string_value(format), RPERF_METRICS_FORMAT_NAME) != 0)
        return bad(rd, RGA_ERR_VERSION, "not a metrics file (format is not \"" RPERF_METRICS_FORMAT_NAME "\")");
    const json_t *version = json_object_get(root, "version");
    at(rd, "version");
    if (!json_is_integer(version))
        return bad(rd, RGA_ERR_VERSION, "missing or not an integer");
    if (json_integer_value(version) != RPERF_METRICS_VERSION)
        return bad(rd, RGA_ERR_VERSION, "metrics file version %lld; this reader reads version %d",
                   (long long)json_integer_value(version), RPERF_METRICS_VERSION);
    at(rd, "%s", "");
    const field_t ids[] = {{"pid", &f->pid, 0}, {"start_ticks", &f->start_ticks, 0}};
    rga_status_t st = get_fields(rd, root, ids, 2);
    if (st == RGA_OK)
        st = read_process(rd, root, &f->process);
    if (st == RGA_OK)
        st = read_folded(rd, root, f);
    if (st != RGA_OK)
        return st;
    const json_t *units = json_object_get(root, "units");
    at(rd, "units");
    if (!json_is_array(units))
        return bad(rd, RGA_ERR_SCHEMA, units ? "expected an array" : "missing");
    size_t n = json_array_size(units);
    if (n > RPERF_METRICS_MAX_ROWS)
        return bad(rd, RGA_ERR_SCHEMA, "%zu rows (at most %d)", n, RPERF_METRICS_MAX_ROWS);
    f->rows = calloc(n ? n : 1, sizeof(*f->rows));
    if (!f->rows)
        return bad(rd, RGA_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        at(rd, "units[%zu]", i);
        f->n_rows++;
        st = read_row(rd, json_array_get(units, i), &f->rows[i]);
        if (st != RGA_OK)
            return st;
    }
    return RGA_OK;
}

rga_status_t
rga_metrics_parse(const char *buf, size_t len, const char *name, rga_metrics_file_t **out, rga_error_t *err)
{
    reader_t rd = {.name = name ? name : "", .err = err};
    *out = NULL;
    if (len > (size_t)RPERF_METRICS_MAX_FILE_BYTES)
        return bad(&rd, RGA_ERR_SCHEMA, "%zu bytes (at most %ld)", len, RPERF_METRICS_MAX_FILE_BYTES);
    json_error_t je;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
    if (!root) {
        rga_status_t st = bad(&rd, RGA_ERR_SYNTAX, "invalid JSON: %s", je.text);
        if (err) {
            err->line = je.line > 0 ? je.line : 0;
            err->column = je.line > 0 && je.column > 0 ? je.column : 0;
        }
        return st;
    }
    rga_metrics_file_t *f = calloc(1, sizeof(*f));
    rga_status_t st = f ? read_root(&rd, root, f) : bad(&rd, RGA_ERR_NOMEM, "out of memory");
    json_decref(root);
    if (st != RGA_OK) {
        rga_metrics_file_free(f);
        return st;
    }
    *out = f;
    return RGA_OK;
}

/* ---- writing ----------------------------------------------------------------------- */

static json_t *
ints(const int64_t *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}

static json_t *
row_json(const rga_metrics_row_t *r)
{
    json_t *labels = json_object();
    for (size_t i = 0; labels && i < r->n_labels; i++)
        json_object_set_new(labels, r->labels[i].name, json_stringn(r->labels[i].value, r->labels[i].value_len));
    return json_pack("{s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:I}", "kind", r->kind, "labels", labels,
                     "count", (json_int_t)r->count, "wall_ns", (json_int_t)r->wall_ns, "running_ns",
                     (json_int_t)r->running_ns, "gvl_wait_ns", (json_int_t)r->gvl_wait_ns, "gc_ns",
                     (json_int_t)r->gc_ns, "blocked_ns", ints(r->blocked_ns, RPERF_CAUSE_COUNT), "gvl_wait_buckets",
                     ints(r->wait_buckets, RPERF_METRICS_WAIT_BOUNDS + 1), "gvl_wait_ratio_buckets",
                     ints(r->ratio_buckets, RPERF_METRICS_RATIO_BOUNDS + 1), "gvl_wait_ratio_sum_ppm",
                     (json_int_t)r->ratio_sum_ppm);
}

rga_status_t
rga_metrics_write(const rga_metrics_file_t *f, FILE *out, rga_error_t *err)
{
    const rga_metrics_process_t *p = &f->process;
    json_t *units = json_array(), *folded = json_array();
    for (size_t i = 0; units && i < f->n_rows; i++)
        json_array_append_new(units, row_json(&f->rows[i]));
    for (size_t i = 0; folded && i < f->n_folded; i++)
        json_array_append_new(folded, json_string(f->folded[i]));
    json_t *process = json_pack("{s:I, s:I, s:I, s:I, s:o, s:o, s:I, s:I}", "threads", (json_int_t)p->threads,
                                "running_ns", (json_int_t)p->running_ns, "gvl_wait_ns", (json_int_t)p->gvl_wait_ns,
                                "gc_ns", (json_int_t)p->gc_ns, "blocked_ns", ints(p->blocked_ns, RPERF_CAUSE_COUNT),
                                "dropped", ints(p->dropped, RPERF_METRICS_DROPS), "label_sets_folded",
                                (json_int_t)p->label_sets_folded, "units_unmeasured",
                                (json_int_t)p->units_unmeasured);
    json_t *root = json_pack("{s:s, s:i, s:I, s:I, s:o, s:o, s:o}", "format", RPERF_METRICS_FORMAT_NAME, "version",
                             RPERF_METRICS_VERSION, "pid", (json_int_t)f->pid, "start_ticks",
                             (json_int_t)f->start_ticks, "process", process, "units", units, "folded", folded);
    /* json_pack steals the references it was given, also when it fails. */
    if (!root || json_array_size(units) != f->n_rows || json_array_size(folded) != f->n_folded) {
        json_decref(root);
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory");
    }
    int rc = json_dumpf(root, out, JSON_COMPACT);
    json_decref(root);
    if (rc != 0 || fputc('\n', out) == EOF)
        return rga_error_set(err, RGA_ERR_IO, "write failed");
    return RGA_OK;
}
