/* metrics_set.c — metrics files added up into one set (metrics_internal.h):
 * the label sets of every file made exposition label texts, rows with the
 * same text summed, the processes' counters summed and their gauges taken
 * from live processes only. The set as a file is the aggregate of dead
 * processes. It does NOT read directories (metrics_dir.c) nor write the
 * exposition (metrics_text.c).
 *
 * Label names become valid Prometheus names here: bytes outside
 * [A-Za-z0-9_] become '_', a leading digit gets a '_' before it, and the
 * names the exposition uses itself (kind, cause, le, quantile, what,
 * state), the target labels Prometheus adds (job, instance) and names
 * starting with "__" get "label_" before them. Of two labels whose names
 * are equal after that, the first in name order is kept.
 */
#include "metrics_internal.h"

#include <stdlib.h>
#include <string.h>

/* At most this many series in a set (before merging equal ones). */
#define SET_MAX_SERIES (4L * RPERF_METRICS_MAX_ROWS)

rga_metrics_set_t *
rga_metrics_set_new(void)
{
    return calloc(1, sizeof(rga_metrics_set_t));
}

void
rga_metrics_set_free(rga_metrics_set_t *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->n; i++) {
        free(set->series[i].key);
        rga_metrics_row_free(&set->series[i].row);
    }
    free(set->series);
    free(set);
}

/* ---- label text ------------------------------------------------------------------ */

typedef struct buf {
    char *p;
    size_t n, cap;
    bool failed;
} buf_t;

static void
put(buf_t *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 128;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void
puts_(buf_t *b, const char *s)
{
    put(b, s, strlen(s));
}

/* A label value between quotes: backslash, quote and newline escaped; a
 * NUL byte (which no reader takes) as U+FFFD. */
static void
put_value(buf_t *b, const char *v, size_t n)
{
    put(b, "\"", 1);
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        const char *esc = v[i] == '\\'   ? "\\\\"
                          : v[i] == '"'  ? "\\\""
                          : v[i] == '\n' ? "\\n"
                          : v[i] == '\0' ? "\xEF\xBF\xBD"
                                         : NULL;
        if (!esc)
            continue;
        put(b, v + from, i - from);
        puts_(b, esc);
        from = i + 1;
    }
    put(b, v + from, n - from);
    put(b, "\"", 1);
}

/* The exposition's own label names, and those Prometheus gives every
 * series of a target itself. */
static const char *const own_names[] = {"kind", "cause", "le", "quantile", "what", "state", "job", "instance"};

/* The Prometheus name of a program's label name (malloc'd). */
static char *
label_name(const char *name)
{
    buf_t b = {0};
    bool own = strncmp(name, "__", 2) == 0;
    for (size_t i = 0; i < sizeof(own_names) / sizeof(own_names[0]); i++)
        own |= strcmp(name, own_names[i]) == 0;
    if (own)
        puts_(&b, "label_");
    else if (name[0] >= '0' && name[0] <= '9')
        puts_(&b, "_");
    for (const char *s = name; *s; s++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        put(&b, ok ? s : "_", 1);
    }
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

typedef struct named {
    char *name;
    const rga_metrics_label_t *label;
} named_t;

static int
by_name(const void *a, const void *b)
{
    const named_t *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    /* Equal names: the program's own name order decides which is kept. */
    return c ? c : strcmp(x->label->name, y->label->name);
}

/* `kind="...",name="..."` of a row (malloc'd), or NULL when out of memory. */
static char *
label_text(const rga_metrics_row_t *r)
{
    buf_t b = {0};
    puts_(&b, "kind=");
    put_value(&b, r->kind, strlen(r->kind));
    named_t *names = calloc(r->n_labels ? r->n_labels : 1, sizeof(*names));
    bool ok = names != NULL;
    for (size_t i = 0; ok && i < r->n_labels; i++) {
        names[i].label = &r->labels[i];
        ok = (names[i].name = label_name(r->labels[i].name)) != NULL;
    }
    if (ok) {
        qsort(names, r->n_labels, sizeof(*names), by_name);
        for (size_t i = 0; i < r->n_labels; i++) {
            if (i > 0 && strcmp(names[i].name, names[i - 1].name) == 0)
                continue;
            puts_(&b, ",");
            puts_(&b, names[i].name);
            puts_(&b, "=");
            put_value(&b, names[i].label->value, names[i].label->value_len);
        }
    }
    for (size_t i = 0; names && i < r->n_labels; i++)
        free(names[i].name);
    free(names);
    if (!ok || b.failed) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* ---- adding ---------------------------------------------------------------------- */

static bool
copy_row(rga_metrics_row_t *dst, const rga_metrics_row_t *src)
{
    *dst = *src;
    dst->labels = calloc(src->n_labels ? src->n_labels : 1, sizeof(*dst->labels));
    dst->n_labels = 0;
    dst->kind = strdup(src->kind);
    if (!dst->labels || !dst->kind)
        return false;
    for (size_t i = 0; i < src->n_labels; i++) {
        rga_metrics_label_t *l = &dst->labels[i];
        l->name = strdup(src->labels[i].name);
        l->value = malloc(src->labels[i].value_len + 1);
        l->value_len = src->labels[i].value_len;
        dst->n_labels++;
        if (!l->name || !l->value)
            return false;
        memcpy(l->value, src->labels[i].value, l->value_len + 1);
    }
    return true;
}

static bool
add_ints(int64_t *dst, const int64_t *src, size_t n)
{
    bool overflow = false;
    for (size_t i = 0; i < n; i++)
        overflow |= __builtin_add_overflow(dst[i], src[i], &dst[i]);
    return !overflow;
}

static bool
add_row(rga_metrics_row_t *dst, const rga_metrics_row_t *src)
{
    int64_t a[5] = {dst->count, dst->wall_ns, dst->running_ns, dst->gvl_wait_ns, dst->gc_ns};
    const int64_t b[5] = {src->count, src->wall_ns, src->running_ns, src->gvl_wait_ns, src->gc_ns};
    bool ok = add_ints(a, b, 5) && add_ints(dst->blocked_ns, src->blocked_ns, RPERF_CAUSE_COUNT) &&
              add_ints(dst->wait_buckets, src->wait_buckets, RPERF_METRICS_WAIT_BOUNDS + 1) &&
              add_ints(dst->ratio_buckets, src->ratio_buckets, RPERF_METRICS_RATIO_BOUNDS + 1) &&
              add_ints(&dst->ratio_sum_ppm, &src->ratio_sum_ppm, 1);
    dst->count = a[0], dst->wall_ns = a[1], dst->running_ns = a[2], dst->gvl_wait_ns = a[3], dst->gc_ns = a[4];
    return ok;
}

static int
by_key(const void *a, const void *b)
{
    return strcmp(((const rga_metrics_series_t *)a)->key, ((const rga_metrics_series_t *)b)->key);
}

bool
rga_metrics_set_compact(rga_metrics_set_t *set)
{
    if (set->merged == set->n)
        return true;
    qsort(set->series, set->n, sizeof(*set->series), by_key);
    size_t out = 0;
    bool ok = true;
    for (size_t i = 0; i < set->n; i++) {
        rga_metrics_series_t *s = &set->series[i];
        if (out > 0 && strcmp(set->series[out - 1].key, s->key) == 0) {
            ok &= add_row(&set->series[out - 1].row, &s->row);
            free(s->key);
            rga_metrics_row_free(&s->row);
        } else {
            set->series[out++] = *s;
        }
    }
    set->n = set->merged = out;
    return ok;
}

static rga_status_t
add_process(rga_metrics_set_t *set, const rga_metrics_process_t *p, bool live, rga_error_t *err)
{
    rga_metrics_process_t *d = &set->process;
    int64_t a[6] = {d->running_ns, d->gvl_wait_ns, d->gc_ns, d->label_sets_folded, d->units_unmeasured, d->threads};
    const int64_t b[6] = {p->running_ns,        p->gvl_wait_ns,      p->gc_ns,
                          p->label_sets_folded, p->units_unmeasured, live ? p->threads : 0};
    if (!add_ints(a, b, 6) || !add_ints(d->blocked_ns, p->blocked_ns, RPERF_CAUSE_COUNT) ||
        !add_ints(d->dropped, p->dropped, RPERF_METRICS_DROPS))
        return rga_error_set(err, RGA_ERR_SCHEMA, "the processes' totals overflow 64 bits");
    d->running_ns = a[0], d->gvl_wait_ns = a[1], d->gc_ns = a[2], d->label_sets_folded = a[3];
    d->units_unmeasured = a[4], d->threads = a[5];
    return RGA_OK;
}

rga_status_t
rga_metrics_set_add(rga_metrics_set_t *set, const rga_metrics_file_t *f, bool live, rga_error_t *err)
{
    rga_status_t st = add_process(set, &f->process, live, err);
    if (st != RGA_OK)
        return st;
    for (size_t i = 0; i < f->n_rows; i++) {
        if (set->n == set->cap) {
            if (!rga_metrics_set_compact(set))
                return rga_error_set(err, RGA_ERR_SCHEMA, "a series' totals overflow 64 bits");
            if (set->n * 2 > set->cap || set->cap == 0) {
                size_t cap = set->cap ? set->cap * 2 : 64;
                if (cap > (size_t)SET_MAX_SERIES)
                    return rga_error_set(err, RGA_ERR_SCHEMA, "more than %ld label sets", SET_MAX_SERIES);
                rga_metrics_series_t *p = realloc(set->series, cap * sizeof(*p));
                if (!p)
                    return rga_error_set(err, RGA_ERR_NOMEM, "out of memory");
                set->series = p;
                set->cap = cap;
            }
        }
        rga_metrics_series_t *s = &set->series[set->n];
        memset(s, 0, sizeof(*s));
        bool ok = (s->key = label_text(&f->rows[i])) != NULL;
        ok = ok && copy_row(&s->row, &f->rows[i]);
        set->n++;
        if (!ok)
            return rga_error_set(err, RGA_ERR_NOMEM, "out of memory");
    }
    if (!rga_metrics_set_compact(set))
        return rga_error_set(err, RGA_ERR_SCHEMA, "a series' totals overflow 64 bits");
    return RGA_OK;
}

void
rga_metrics_set_count_files(rga_metrics_set_t *set, int64_t live, int64_t dead, int64_t skipped)
{
    set->files_live = live;
    set->files_dead = dead;
    set->files_skipped = skipped;
}

rga_status_t
rga_metrics_set_to_file(const rga_metrics_set_t *set, rga_metrics_file_t **out, rga_error_t *err)
{
    *out = NULL;
    if (set->merged != set->n || set->n > RPERF_METRICS_MAX_ROWS)
        return rga_error_set(err, RGA_ERR_SCHEMA, "%zu label sets: more than a file holds (%d)", set->n,
                             RPERF_METRICS_MAX_ROWS);
    rga_metrics_file_t *f = calloc(1, sizeof(*f));
    if (!f || !(f->rows = calloc(set->n ? set->n : 1, sizeof(*f->rows)))) {
        free(f);
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory");
    }
    f->process = set->process;
    f->process.threads = 0;
    for (size_t i = 0; i < set->n; i++) {
        bool ok = copy_row(&f->rows[i], &set->series[i].row);
        f->n_rows++;
        if (!ok) {
            rga_metrics_file_free(f);
            return rga_error_set(err, RGA_ERR_NOMEM, "out of memory");
        }
    }
    *out = f;
    return RGA_OK;
}
