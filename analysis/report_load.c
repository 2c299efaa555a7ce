/* report_load.c — reads report.json text into rga_report_t.
 *
 * jansson does all the JSON parsing. To keep memory proportional to the text
 * rather than to a DOM (a jansson DOM of a 200 MB report needs several GB),
 * this file walks only the top-level object itself: it asks jansson for one
 * value at a time (json_loadb with JSON_DISABLE_EOF_CHECK) — each key, each
 * small value, and each element of the large arrays — and turns each element
 * into a fixed-size record before the next one is parsed. Between values it
 * only skips whitespace and the structural characters ',', ':', '[', ']',
 * '{' and '}'.
 *
 * One exception, for speed: elements of the integer-tuple arrays
 * (intervals, samples, blame, stacks, interval_causes) that are plain `[int,int,...]` are
 * read by fast_tuple() below, which accepts only a strict subset of what
 * jansson accepts and hands everything else to jansson (RGA_LOAD_JANSSON_ONLY
 * turns it off; see docs/performance.md for what it buys).
 *
 * It checks each element on its own (types, ranges, end >= start); ids that
 * point into other arrays are checked afterwards by report_validate.c,
 * because keys may come in any order. Its bytes come from report_input.c.
 * It does not print, and does not keep any jansson value after loading.
 */
#include "report.h"
#include "report_internal.h"
#include "report_input.h"
#include "grow_array.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct loader {
    const char *text;
    size_t len;
    size_t pos;
    rga_error_t *err;
    rga_report_t *r;
    size_t cap_ractors, cap_threads, cap_label_sets, cap_label_totals, cap_frames, cap_stacks, cap_stack_frames,
        cap_samples, cap_intervals, cap_edges, cap_blame, cap_cause_ids, cap_interval_causes, cap_blocked_edges,
        cap_blocked_methods;
    unsigned seen;     /* bit per top-level key, see key_table */
    bool jansson_only; /* RGA_LOAD_JANSSON_ONLY: no integer-tuple fast path */
} loader_t;

/* A tuple element (intervals, samples, blame, stacks): either the jansson
 * array or the integers the fast path read. */
typedef struct tuple {
    const json_t *json;
    const int64_t *vals;
    size_t n;
} tuple_t;

/* Where the element being converted sits, for error messages. */
typedef struct elem {
    const char *array;
    size_t index;
    size_t offset;
} elem_t;

/* ---- positions and errors ------------------------------------------------ */

static void
offset_to_line_col(const char *text, size_t offset, long *line, long *column)
{
    long l = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < offset; i++) {
        if (text[i] == '\n') {
            l++;
            line_start = i + 1;
        }
    }
    *line = l;
    *column = (long)(offset - line_start) + 1;
}

static rga_status_t fail_at(loader_t *ld, size_t offset, rga_status_t code, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static rga_status_t
fail_at(loader_t *ld, size_t offset, rga_status_t code, const char *path, const char *fmt, ...)
{
    rga_error_t *err = ld->err;
    if (!err)
        return code;
    if (offset > ld->len)
        offset = ld->len;
    offset_to_line_col(ld->text, offset, &err->line, &err->column);
    snprintf(err->path, sizeof(err->path), "%s", path ? path : "");
    va_list ap;
    va_start(ap, fmt);
    rga_error_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

static rga_status_t
fail_elem(loader_t *ld, const elem_t *e, const char *field, rga_status_t code, const char *what)
{
    char path[128];
    if (field && field[0] == '[')
        snprintf(path, sizeof(path), "%s[%zu]%s", e->array, e->index, field);
    else if (field)
        snprintf(path, sizeof(path), "%s[%zu].%s", e->array, e->index, field);
    else
        snprintf(path, sizeof(path), "%s[%zu]", e->array, e->index);
    return fail_at(ld, e->offset, code, path, "%s", what);
}

/* ---- growing arrays ------------------------------------------------------- */

static rga_status_t
reserve(loader_t *ld, void **items, size_t *cap, size_t need, size_t size)
{
    if (rperf_grow_array(items, cap, need, size, 16) < 0)
        return rga_error_set(ld->err, RGA_ERR_NOMEM, "out of memory reading the report");
    return RGA_OK;
}

#define PUSH(ld, arr, count, cap) \
    reserve((ld), (void **)&(ld)->r->arr, &(ld)->cap, (ld)->r->count + 1, sizeof(*(ld)->r->arr))

/* ---- the scanner between jansson values ------------------------------------ */

static void
skip_ws(loader_t *ld)
{
    while (ld->pos < ld->len) {
        char c = ld->text[ld->pos];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
            break;
        ld->pos++;
    }
}

static rga_status_t
expect(loader_t *ld, char c, const char *where)
{
    skip_ws(ld);
    if (ld->pos >= ld->len)
        return fail_at(ld, ld->pos, RGA_ERR_SYNTAX, NULL,
                       "unexpected end of input (truncated JSON?): expected '%c' %s", c, where);
    if (ld->text[ld->pos] != c)
        return fail_at(ld, ld->pos, RGA_ERR_SYNTAX, NULL, "expected '%c' %s", c, where);
    ld->pos++;
    return RGA_OK;
}

/* Parses the next JSON value with jansson; on a syntax error maps jansson's
 * line/column (relative to ld->pos) to the whole text. */
static json_t *
next_value(loader_t *ld, rga_status_t *status)
{
    skip_ws(ld);
    json_error_t je;
    /* JSON_ALLOW_NUL: a label may hold "\u0000" (the writer escapes it); the
     * report must load, and the C views show such a string up to the NUL. */
    json_t *v = json_loadb(ld->text + ld->pos, ld->len - ld->pos,
                           JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
    if (!v) {
        long base_line, base_col;
        offset_to_line_col(ld->text, ld->pos, &base_line, &base_col);
        if (ld->err) {
            ld->err->code = RGA_ERR_SYNTAX;
            ld->err->line = base_line + je.line - 1;
            ld->err->column = je.line <= 1 ? base_col + (je.column > 0 ? je.column - 1 : 0) : je.column;
            if (ld->err->column < 1)
                ld->err->column = 1;
            ld->err->path[0] = '\0';
            snprintf(ld->err->reason, sizeof(ld->err->reason), "invalid JSON: %s", je.text);
        }
        *status = RGA_ERR_SYNTAX;
        return NULL;
    }
    ld->pos += (size_t)je.position;
    *status = RGA_OK;
    return v;
}

/* ---- field access ----------------------------------------------------------- */

static const char *
json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "a value";
}

/* Reads an integer in [min, max] from v. The member is named by field, or
 * for tuple items by item (field NULL); the path is only built on failure,
 * since this runs for every number of a large report. */
static rga_status_t
as_int_at(loader_t *ld, const elem_t *e, const char *field, size_t item, const json_t *v, int64_t min, int64_t max,
          int64_t *out)
{
    if (v && json_is_integer(v)) {
        json_int_t x = json_integer_value(v);
        if (x >= min && x <= max) {
            *out = (int64_t)x;
            return RGA_OK;
        }
    }
    char what[160], item_field[24];
    if (!field) {
        snprintf(item_field, sizeof(item_field), "[%zu]", item);
        field = item_field;
    }
    if (!v) {
        snprintf(what, sizeof(what), "missing required key");
    } else if (!json_is_integer(v)) {
        snprintf(what, sizeof(what), "expected an integer, got %s", json_kind(v));
    } else if (json_integer_value(v) < min) {
        json_int_t x = json_integer_value(v);
        snprintf(what, sizeof(what), "%s %" PRId64 " (must be >= %" PRId64 ")",
                 x < 0 ? "negative value" : "value too small", (int64_t)x, min);
    } else {
        snprintf(what, sizeof(what), "value %" PRId64 " out of range (max %" PRId64 ")",
                 (int64_t)json_integer_value(v), max);
    }
    return fail_elem(ld, e, field, RGA_ERR_SCHEMA, what);
}

static rga_status_t
as_int(loader_t *ld, const elem_t *e, const char *field, const json_t *v, int64_t min, int64_t max, int64_t *out)
{
    return as_int_at(ld, e, field, 0, v, min, max, out);
}

static rga_status_t
obj_int(loader_t *ld, const elem_t *e, const json_t *obj, const char *key, bool required, int64_t min, int64_t *out)
{
    const json_t *v = json_object_get(obj, key);
    if (!v && !required) {
        *out = 0;
        return RGA_OK;
    }
    return as_int(ld, e, key, v, min, INT64_MAX, out);
}

static rga_status_t
obj_bool(loader_t *ld, const elem_t *e, const json_t *obj, const char *key, bool required, bool *out)
{
    const json_t *v = json_object_get(obj, key);
    if (!v && required)
        return fail_elem(ld, e, key, RGA_ERR_SCHEMA, "missing required key");
    if (!v) {
        *out = false;
        return RGA_OK;
    }
    if (!json_is_boolean(v)) {
        char what[96];
        snprintf(what, sizeof(what), "expected a boolean, got %s", json_kind(v));
        return fail_elem(ld, e, key, RGA_ERR_SCHEMA, what);
    }
    *out = json_is_true(v);
    return RGA_OK;
}

/* A JSON string as a C string. A string may hold "\u0000" (a label value
 * the program set, loaded with JSON_ALLOW_NUL): it is written as the four
 * characters \x00, as the text views show control bytes, so that "a\u0000b"
 * neither ends at the NUL (and so equals "a") nor merges with "a\u0000c".
 * NULL when out of memory. */
static char *
text_dup(const json_t *v)
{
    const char *s = json_string_value(v);
    size_t len = json_string_length(v), nuls = 0;
    for (size_t i = 0; i < len; i++)
        nuls += s[i] == '\0';
    if (nuls == 0)
        return strdup(s);
    char *out = malloc(len + 3 * nuls + 1);
    if (!out)
        return NULL;
    char *o = out;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\0') {
            memcpy(o, "\\x00", 4);
            o += 4;
        } else {
            *o++ = s[i];
        }
    }
    *o = '\0';
    return out;
}

static rga_status_t
obj_str(loader_t *ld, const elem_t *e, const json_t *obj, const char *key, bool required, char **out)
{
    const json_t *v = json_object_get(obj, key);
    if (!v && required)
        return fail_elem(ld, e, key, RGA_ERR_SCHEMA, "missing required key");
    if (v && !json_is_string(v)) {
        char what[96];
        snprintf(what, sizeof(what), "expected a string, got %s", json_kind(v));
        return fail_elem(ld, e, key, RGA_ERR_SCHEMA, what);
    }
    *out = v ? text_dup(v) : strdup("");
    if (!*out)
        return rga_error_set(ld->err, RGA_ERR_NOMEM, "out of memory reading the report");
    return RGA_OK;
}

static rga_status_t
need_object(loader_t *ld, const elem_t *e, const json_t *v)
{
    if (json_is_object(v))
        return RGA_OK;
    char what[96];
    snprintf(what, sizeof(what), "expected an object, got %s", json_kind(v));
    return fail_elem(ld, e, NULL, RGA_ERR_SCHEMA, what);
}

/* A tuple element: an array of exactly n integers. */
static rga_status_t
need_tuple(loader_t *ld, const elem_t *e, const tuple_t *t, size_t n)
{
    char what[96];
    if (t->json && !json_is_array(t->json)) {
        snprintf(what, sizeof(what), "expected an array of %zu integers, got %s", n, json_kind(t->json));
        return fail_elem(ld, e, NULL, RGA_ERR_SCHEMA, what);
    }
    if (t->n != n) {
        snprintf(what, sizeof(what), "expected %zu items, got %zu", n, t->n);
        return fail_elem(ld, e, NULL, RGA_ERR_SCHEMA, what);
    }
    return RGA_OK;
}

static rga_status_t
tuple_int(loader_t *ld, const elem_t *e, const tuple_t *t, size_t i, int64_t min, int64_t max, int64_t *out)
{
    if (t->json)
        return as_int_at(ld, e, NULL, i, json_array_get(t->json, i), min, max, out);
    int64_t x = t->vals[i];
    if (x >= min && x <= max) {
        *out = x;
        return RGA_OK;
    }
    /* Out of range: let the jansson-value path word the error identically. */
    json_t *v = json_integer((json_int_t)x);
    rga_status_t st = v ? as_int_at(ld, e, NULL, i, v, min, max, out) : RGA_ERR_NOMEM;
    json_decref(v);
    return st;
}

#define TRY(expr) \
    do { \
        rga_status_t st_ = (expr); \
        if (st_ != RGA_OK) \
            return st_; \
    } while (0)

/* ---- elements ------------------------------------------------------------------- */

static const char *const state_keys[RGA_STATE_COUNT] = {"running_ns", "gvl_wait_ns", "blocked_ns", "gc_mark_ns",
                                                        "gc_sweep_ns"};

/* A cause name (blocked_edges, blocked_methods): required string; a name
 * this reader does not know reads as other. */
static rga_status_t
obj_cause(loader_t *ld, const elem_t *e, const json_t *obj, uint8_t *out)
{
    const json_t *v = json_object_get(obj, "cause");
    if (!v)
        return fail_elem(ld, e, "cause", RGA_ERR_SCHEMA, "missing required key");
    if (!json_is_string(v))
        return fail_elem(ld, e, "cause", RGA_ERR_SCHEMA, "expected a cause name (a string)");
    *out = (uint8_t)rga_cause_from_name(json_string_value(v));
    return RGA_OK;
}

/* Optional `blocked_by_cause` of a thread or label_totals row: cause name ->
 * ns. Unknown names add up under other, so their sum must fit. */
static rga_status_t
obj_cause_ns(loader_t *ld, const elem_t *e, const json_t *obj, int64_t *cause_ns, bool *has)
{
    const json_t *m = json_object_get(obj, "blocked_by_cause");
    memset(cause_ns, 0, RGA_CAUSE_COUNT * sizeof(int64_t));
    *has = m != NULL;
    if (!m)
        return RGA_OK;
    if (!json_is_object(m))
        return fail_elem(ld, e, "blocked_by_cause", RGA_ERR_SCHEMA, "expected an object of cause name -> ns");
    const char *name;
    const json_t *val;
    json_object_foreach((json_t *)m, name, val)
    {
        char field[96];
        snprintf(field, sizeof(field), "blocked_by_cause.%s", name);
        int64_t ns;
        TRY(as_int(ld, e, field, val, 0, INT64_MAX, &ns));
        int c = rga_cause_from_name(name);
        if (__builtin_add_overflow(cause_ns[c], ns, &cause_ns[c]))
            return fail_elem(ld, e, field, RGA_ERR_SCHEMA, "value too large: the causes' sum exceeds 2^63-1");
    }
    return RGA_OK;
}

static rga_status_t
load_ractor(loader_t *ld, const elem_t *e, const json_t *v)
{
    TRY(need_object(ld, e, v));
    TRY(PUSH(ld, ractors, n_ractors, cap_ractors));
    rga_ractor_t *rc = &ld->r->ractors[ld->r->n_ractors];
    TRY(obj_int(ld, e, v, "id", true, 1, &rc->id));
    TRY(obj_bool(ld, e, v, "main", false, &rc->main));
    rc->identified = true; /* absent in reports before the key existed */
    if (json_object_get(v, "identified"))
        TRY(obj_bool(ld, e, v, "identified", true, &rc->identified));
    ld->r->n_ractors++;
    return RGA_OK;
}

static rga_status_t
load_thread(loader_t *ld, const elem_t *e, const json_t *v)
{
    TRY(need_object(ld, e, v));
    TRY(PUSH(ld, threads, n_threads, cap_threads));
    rga_thread_t *t = &ld->r->threads[ld->r->n_threads];
    memset(t, 0, sizeof(*t));
    TRY(as_int(ld, e, "seq", json_object_get(v, "seq"), 1, UINT32_MAX, &t->seq));
    TRY(obj_str(ld, e, v, "name", true, &t->name));
    ld->r->n_threads++; /* counted now so that name is freed on a later failure */
    TRY(obj_int(ld, e, v, "native_id", false, 0, &t->native_id));
    TRY(obj_int(ld, e, v, "ractor", true, 1, &t->ractor));
    TRY(obj_int(ld, e, v, "first_seen_ns", true, 0, &t->first_seen_ns));
    TRY(obj_int(ld, e, v, "last_seen_ns", true, 0, &t->last_seen_ns));
    if (t->last_seen_ns < t->first_seen_ns)
        return fail_elem(ld, e, "last_seen_ns", RGA_ERR_SCHEMA, "last_seen_ns < first_seen_ns");
    TRY(obj_bool(ld, e, v, "exited", true, &t->exited));
    for (int s = 0; s < RGA_STATE_COUNT; s++)
        TRY(obj_int(ld, e, v, state_keys[s], true, 0, &t->state_ns[s]));
    TRY(obj_int(ld, e, v, "acquisitions", true, 0, &t->acquisitions));
    TRY(obj_int(ld, e, v, "waits", true, 0, &t->waits));
    t->label_set = -1;
    if (json_object_get(v, "label_set"))
        TRY(as_int(ld, e, "label_set", json_object_get(v, "label_set"), 0, UINT32_MAX, &t->label_set));
    TRY(obj_cause_ns(ld, e, v, t->cause_ns, &t->has_causes));
    TRY(obj_int(ld, e, v, "release_unknown_ns", false, 0, &t->release_unknown_ns));
    return RGA_OK;
}

static int
cmp_label_key(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static rga_status_t
load_label_set(loader_t *ld, const elem_t *e, const json_t *v)
{
    TRY(need_object(ld, e, v));
    TRY(PUSH(ld, label_sets, n_label_sets, cap_label_sets));
    rga_label_set_t *ls = &ld->r->label_sets[ld->r->n_label_sets];
    memset(ls, 0, sizeof(*ls));
    TRY(as_int(ld, e, "id", json_object_get(v, "id"), 0, UINT32_MAX, &ls->id));
    const json_t *labels = json_object_get(v, "labels");
    if (!labels)
        return fail_elem(ld, e, "labels", RGA_ERR_SCHEMA, "missing required key");
    if (!json_is_object(labels))
        return fail_elem(ld, e, "labels", RGA_ERR_SCHEMA, "expected an object of strings");
    size_t n = json_object_size(labels);
    ls->keys = calloc(n ? n : 1, sizeof(char *));
    ls->values = calloc(n ? n : 1, sizeof(char *));
    ld->r->n_label_sets++;
    if (!ls->keys || !ls->values)
        return rga_error_set(ld->err, RGA_ERR_NOMEM, "out of memory reading the report");
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)labels, key, val)
    {
        if (!json_is_string(val)) {
            char field[96];
            snprintf(field, sizeof(field), "labels.%s", key);
            return fail_elem(ld, e, field, RGA_ERR_SCHEMA, "label values must be strings");
        }
        ls->keys[ls->n_labels] = strdup(key);
        ls->values[ls->n_labels] = text_dup(val);
        ls->n_labels++;
        if (!ls->keys[ls->n_labels - 1] || !ls->values[ls->n_labels - 1])
            return rga_error_set(ld->err, RGA_ERR_NOMEM, "out of memory reading the report");
    }
    /* Sort pairs by key so equal sets compare equal (merge) and print stably. */
    for (size_t i = 1; i < ls->n_labels; i++) {
        for (size_t j = i; j > 0 && cmp_label_key(&ls->keys[j - 1], &ls->keys[j]) > 0; j--) {
            char *k = ls->keys[j], *w = ls->values[j];
            ls->keys[j] = ls->keys[j - 1];
            ls->values[j] = ls->values[j - 1];
            ls->keys[j - 1] = k;
            ls->values[j - 1] = w;
        }
    }
    return RGA_OK;
}

static rga_status_t
load_label_total(loader_t *ld, const elem_t *e, const json_t *v)
{
    TRY(need_object(ld, e, v));
    TRY(PUSH(ld, label_totals, n_label_totals, cap_label_totals));
    rga_label_total_t *lt = &ld->r->label_totals[ld->r->n_label_totals];
    memset(lt, 0, sizeof(*lt));
    TRY(obj_int(ld, e, v, "thread", true, 1, &lt->thread));
    TRY(obj_int(ld, e, v, "label_set", true, 0, &lt->label_set));
    for (int s = 0; s < RGA_STATE_COUNT; s++)
        TRY(obj_int(ld, e, v, state_keys[s], true, 0, &lt->state_ns[s]));
    TRY(obj_cause_ns(ld, e, v, lt->cause_ns, &lt->has_causes));
    ld->r->n_label_totals++;
    return RGA_OK;
}

static rga_status_t
load_frame(loader_t *ld, const elem_t *e, const json_t *v)
{
    if (!json_is_array(v) || json_array_size(v) != 2 || !json_is_string(json_array_get(v, 0)) ||
        !json_is_string(json_array_get(v, 1)))
        return fail_elem(ld, e, NULL, RGA_ERR_SCHEMA, "expected [\"path\", \"label\"]");
    TRY(PUSH(ld, frames, n_frames, cap_frames));
    rga_frame_t *f = &ld->r->frames[ld->r->n_frames];
    f->path = text_dup(json_array_get(v, 0));
    f->label = text_dup(json_array_get(v, 1));
    ld->r->n_frames++;
    if (!f->path || !f->label)
        return rga_error_set(ld->err, RGA_ERR_NOMEM, "out of memory reading the report");
    return RGA_OK;
}

static rga_status_t
load_stack(loader_t *ld, const elem_t *e, const tuple_t *v)
{
    if (v->json && !json_is_array(v->json))
        return fail_elem(ld, e, NULL, RGA_ERR_SCHEMA, "expected an array of frame ids");
    size_t depth = v->n;
    if (depth > UINT32_MAX)
        return fail_elem(ld, e, NULL, RGA_ERR_SCHEMA, "stack too deep");
    TRY(PUSH(ld, stacks, n_stacks, cap_stacks));
    TRY(reserve(ld, (void **)&ld->r->stack_frames, &ld->cap_stack_frames, ld->r->n_stack_frames + depth,
                sizeof(int64_t)));
    for (size_t i = 0; i < depth; i++)
        TRY(tuple_int(ld, e, v, i, 0, INT64_MAX, &ld->r->stack_frames[ld->r->n_stack_frames + i]));
    rga_stack_t *s = &ld->r->stacks[ld->r->n_stacks++];
    memset(s, 0, sizeof(*s));
    s->first = ld->r->n_stack_frames;
    s->depth = (uint32_t)depth;
    ld->r->n_stack_frames += depth;
    return RGA_OK;
}

static rga_status_t
load_sample(loader_t *ld, const elem_t *e, const tuple_t *v)
{
    TRY(need_tuple(ld, e, v, 4));
    TRY(PUSH(ld, samples, n_samples, cap_samples));
    rga_sample_t *s = &ld->r->samples[ld->r->n_samples];
    TRY(tuple_int(ld, e, v, 0, 0, INT32_MAX, &s->stack));
    TRY(tuple_int(ld, e, v, 1, 0, INT64_MAX, &s->weight_ns));
    TRY(tuple_int(ld, e, v, 2, 1, UINT32_MAX, &s->thread));
    TRY(tuple_int(ld, e, v, 3, 0, UINT32_MAX, &s->label_set));
    ld->r->n_samples++;
    return RGA_OK;
}

static rga_status_t
load_interval(loader_t *ld, const elem_t *e, const tuple_t *v)
{
    TRY(PUSH(ld, intervals, n_intervals, cap_intervals));
    int64_t seq, state, start, end, label_set, stack;
    const int64_t *x = v->vals;
    /* The common case in one test; anything off goes through the checks
     * below, which name the offending item. */
    if (x && v->n == 6 && x[0] >= 1 && x[0] <= UINT32_MAX && x[1] >= 0 && x[1] < RGA_STATE_COUNT && x[2] >= 0 &&
        x[3] >= x[2] && x[4] >= 0 && x[4] <= UINT32_MAX && x[5] >= -1 && x[5] <= INT32_MAX) {
        seq = x[0], state = x[1], start = x[2], end = x[3], label_set = x[4], stack = x[5];
        goto store;
    }
    TRY(need_tuple(ld, e, v, 6));
    TRY(tuple_int(ld, e, v, 0, 1, UINT32_MAX, &seq));
    TRY(tuple_int(ld, e, v, 1, 0, RGA_STATE_COUNT - 1, &state));
    TRY(tuple_int(ld, e, v, 2, 0, INT64_MAX, &start));
    TRY(tuple_int(ld, e, v, 3, 0, INT64_MAX, &end));
    if (end < start)
        return fail_elem(ld, e, "[3]", RGA_ERR_SCHEMA, "end_ns < start_ns (negative duration)");
    TRY(tuple_int(ld, e, v, 4, 0, UINT32_MAX, &label_set));
    TRY(tuple_int(ld, e, v, 5, -1, INT32_MAX, &stack));
store:;
    rga_interval_t *iv = &ld->r->intervals[ld->r->n_intervals++];
    memset(iv, 0, sizeof(*iv)); /* padding too: models compare with memcmp */
    iv->start_ns = start;
    iv->end_ns = end;
    iv->thread_index = (uint32_t)seq; /* a seq until report_validate.c resolves it */
    iv->label_set = (uint32_t)label_set;
    iv->stack = (int32_t)stack;
    iv->state = (uint8_t)state;
    return RGA_OK;
}

static rga_status_t
load_edge(loader_t *ld, const elem_t *e, const json_t *v)
{
    TRY(need_object(ld, e, v));
    TRY(PUSH(ld, edges, n_edges, cap_edges));
    rga_edge_t *ed = &ld->r->edges[ld->r->n_edges];
    TRY(obj_int(ld, e, v, "ractor", true, 1, &ed->ractor));
    TRY(obj_int(ld, e, v, "waiter", true, 1, &ed->waiter));
    const json_t *kind = json_object_get(v, "holder_kind");
    if (!kind)
        return fail_elem(ld, e, "holder_kind", RGA_ERR_SCHEMA, "missing required key");
    const char *k = json_string_value(kind);
    if (!k)
        return fail_elem(ld, e, "holder_kind", RGA_ERR_SCHEMA, "expected a string");
    if (strcmp(k, "thread") == 0)
        ed->holder_kind = RGA_HOLDER_THREAD;
    else if (strcmp(k, "gc") == 0)
        ed->holder_kind = RGA_HOLDER_GC;
    else if (strcmp(k, "handoff") == 0)
        ed->holder_kind = RGA_HOLDER_HANDOFF;
    else if (strcmp(k, "unknown") == 0)
        ed->holder_kind = RGA_HOLDER_UNKNOWN;
    else
        return fail_elem(ld, e, "holder_kind", RGA_ERR_SCHEMA,
                         "expected \"thread\", \"gc\", \"handoff\" or \"unknown\"");
    TRY(obj_int(ld, e, v, "holder", true, 0, &ed->holder));
    if (ed->holder_kind == RGA_HOLDER_THREAD && ed->holder == 0)
        return fail_elem(ld, e, "holder", RGA_ERR_SCHEMA, "a thread holder needs a seq >= 1");
    TRY(obj_int(ld, e, v, "waiter_label_set", true, 0, &ed->waiter_label_set));
    TRY(obj_int(ld, e, v, "holder_label_set", true, 0, &ed->holder_label_set));
    TRY(obj_int(ld, e, v, "wait_ns", true, 0, &ed->wait_ns));
    TRY(obj_int(ld, e, v, "count", true, 0, &ed->count));
    ld->r->n_edges++;
    return RGA_OK;
}

static rga_status_t
load_blame(loader_t *ld, const elem_t *e, const tuple_t *v)
{
    TRY(need_tuple(ld, e, v, 4));
    TRY(PUSH(ld, blame, n_blame, cap_blame));
    rga_blame_t *b = &ld->r->blame[ld->r->n_blame];
    TRY(tuple_int(ld, e, v, 0, 0, INT32_MAX, &b->stack));
    TRY(tuple_int(ld, e, v, 1, 1, UINT32_MAX, &b->holder));
    TRY(tuple_int(ld, e, v, 2, 0, UINT32_MAX, &b->label_set));
    TRY(tuple_int(ld, e, v, 3, 0, INT64_MAX, &b->blame_ns));
    ld->r->n_blame++;
    return RGA_OK;
}

static rga_status_t
load_cause_name(loader_t *ld, const elem_t *e, const json_t *v)
{
    if (!json_is_string(v))
        return fail_elem(ld, e, NULL, RGA_ERR_SCHEMA, "expected a cause name (a string)");
    TRY(PUSH(ld, cause_of_id, n_cause_ids, cap_cause_ids));
    ld->r->cause_of_id[ld->r->n_cause_ids++] = (uint8_t)rga_cause_from_name(json_string_value(v));
    return RGA_OK;
}

static rga_status_t
load_interval_cause(loader_t *ld, const elem_t *e, const tuple_t *v)
{
    TRY(need_tuple(ld, e, v, 4));
    TRY(PUSH(ld, interval_causes, n_interval_causes, cap_interval_causes));
    rga_interval_cause_t *c = &ld->r->interval_causes[ld->r->n_interval_causes];
    memset(c, 0, sizeof(*c));
    TRY(tuple_int(ld, e, v, 0, 1, UINT32_MAX, &c->thread));
    TRY(tuple_int(ld, e, v, 1, 0, INT64_MAX, &c->start_ns));
    TRY(tuple_int(ld, e, v, 2, 0, INT32_MAX, &c->cause_id));
    TRY(tuple_int(ld, e, v, 3, 0, UINT32_MAX, &c->releaser));
    ld->r->n_interval_causes++;
    return RGA_OK;
}

static rga_status_t
load_blocked_edge(loader_t *ld, const elem_t *e, const json_t *v)
{
    TRY(need_object(ld, e, v));
    TRY(PUSH(ld, blocked_edges, n_blocked_edges, cap_blocked_edges));
    rga_blocked_edge_t *b = &ld->r->blocked_edges[ld->r->n_blocked_edges];
    memset(b, 0, sizeof(*b));
    TRY(obj_int(ld, e, v, "ractor", true, 1, &b->ractor));
    TRY(obj_int(ld, e, v, "waiter", true, 1, &b->waiter));
    TRY(obj_int(ld, e, v, "releaser", true, 1, &b->releaser));
    TRY(obj_cause(ld, e, v, &b->cause));
    TRY(obj_int(ld, e, v, "waiter_label_set", true, 0, &b->waiter_label_set));
    TRY(obj_int(ld, e, v, "releaser_label_set", true, 0, &b->releaser_label_set));
    TRY(obj_int(ld, e, v, "blocked_ns", true, 0, &b->blocked_ns));
    TRY(obj_int(ld, e, v, "count", true, 0, &b->count));
    b->releaser_stack = -1;
    if (json_object_get(v, "releaser_stack"))
        TRY(as_int(ld, e, "releaser_stack", json_object_get(v, "releaser_stack"), 0, INT32_MAX, &b->releaser_stack));
    ld->r->n_blocked_edges++;
    return RGA_OK;
}

static rga_status_t
load_blocked_method(loader_t *ld, const elem_t *e, const json_t *v)
{
    TRY(need_object(ld, e, v));
    TRY(PUSH(ld, blocked_methods, n_blocked_methods, cap_blocked_methods));
    rga_blocked_method_t *m = &ld->r->blocked_methods[ld->r->n_blocked_methods];
    memset(m, 0, sizeof(*m));
    TRY(obj_int(ld, e, v, "thread", true, 1, &m->thread));
    TRY(obj_cause(ld, e, v, &m->cause));
    TRY(obj_str(ld, e, v, "method", true, &m->method));
    ld->r->n_blocked_methods++; /* counted now so that method is freed on a later failure */
    TRY(obj_int(ld, e, v, "blocked_ns", true, 0, &m->blocked_ns));
    TRY(obj_int(ld, e, v, "count", true, 0, &m->count));
    return RGA_OK;
}

/* ---- small top-level values ----------------------------------------------------------- */

static rga_status_t
load_meta(loader_t *ld, const elem_t *e, const json_t *v)
{
    if (!json_is_object(v))
        return fail_at(ld, e->offset, RGA_ERR_SCHEMA, "meta", "expected an object, got %s", json_kind(v));
    rga_meta_t *m = &ld->r->meta;
    /* Paths read "meta.x": reuse elem_t's field path with a pseudo array name. */
    static const struct {
        const char *key;
        size_t off;
    } strs[] = {
        {"tool", offsetof(rga_meta_t, tool)},
        {"tool_version", offsetof(rga_meta_t, tool_version)},
        {"ruby_version", offsetof(rga_meta_t, ruby_version)},
        {"program", offsetof(rga_meta_t, program)},
        {"mode", offsetof(rga_meta_t, mode)},
        {"recording", offsetof(rga_meta_t, recording)},
    };
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
        char **slot = (char **)((char *)m + strs[i].off);
        free(*slot);
        *slot = NULL;
        const json_t *s = json_object_get(v, strs[i].key);
        if (s && !json_is_string(s))
            return fail_at(ld, e->offset, RGA_ERR_SCHEMA, NULL, "meta.%s: expected a string, got %s", strs[i].key,
                           json_kind(s));
        *slot = s ? text_dup(s) : strdup("");
        if (!*slot)
            return rga_error_set(ld->err, RGA_ERR_NOMEM, "out of memory reading the report");
    }
    static const struct {
        const char *key;
        size_t off;
        bool required;
        int64_t min;
    } ints[] = {
        {"pid", offsetof(rga_meta_t, pid), true, 0},
        {"frequency", offsetof(rga_meta_t, frequency), false, 0},
        {"start_time_ns", offsetof(rga_meta_t, start_time_ns), false, 0},
        {"start_monotonic_ns", offsetof(rga_meta_t, start_monotonic_ns), true, 0},
        {"duration_ns", offsetof(rga_meta_t, duration_ns), true, 1},
        {"sequence", offsetof(rga_meta_t, sequence), false, 0},
    };
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        const json_t *x = json_object_get(v, ints[i].key);
        int64_t *slot = (int64_t *)((char *)m + ints[i].off);
        char path[64];
        snprintf(path, sizeof(path), "meta.%s", ints[i].key);
        if (!x) {
            if (ints[i].required)
                return fail_at(ld, e->offset, RGA_ERR_SCHEMA, path, "missing required key");
            *slot = 0;
            continue;
        }
        if (!json_is_integer(x))
            return fail_at(ld, e->offset, RGA_ERR_SCHEMA, path, "expected an integer, got %s", json_kind(x));
        if (json_integer_value(x) < ints[i].min)
            return fail_at(ld, e->offset, RGA_ERR_SCHEMA, path, "value %" PRId64 " must be >= %" PRId64,
                           (int64_t)json_integer_value(x), ints[i].min);
        *slot = (int64_t)json_integer_value(x);
    }
    return RGA_OK;
}

static rga_status_t
load_stats(loader_t *ld, const elem_t *e, const json_t *v)
{
    if (!json_is_object(v))
        return fail_at(ld, e->offset, RGA_ERR_SCHEMA, "stats", "expected an object, got %s", json_kind(v));
    rga_stats_t *s = &ld->r->stats;
    static const struct {
        const char *key;
        size_t off;
    } ints[] = {
#define STAT_ENTRY(name, counter) {#name, offsetof(rga_stats_t, name)},
        RPERF_REPORT_STATS(STAT_ENTRY)
#undef STAT_ENTRY
    };
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        const json_t *x = json_object_get(v, ints[i].key);
        int64_t *slot = (int64_t *)((char *)s + ints[i].off);
        *slot = 0;
        if (!x)
            continue;
        char path[64];
        snprintf(path, sizeof(path), "stats.%s", ints[i].key);
        if (!json_is_integer(x) || json_integer_value(x) < 0)
            return fail_at(ld, e->offset, RGA_ERR_SCHEMA, path, "expected a non-negative integer");
        *slot = (int64_t)json_integer_value(x);
    }
    return RGA_OK;
}

/* ---- the top-level object --------------------------------------------------------------- */

typedef rga_status_t (*element_fn)(loader_t *, const elem_t *, const json_t *);
typedef rga_status_t (*tuple_fn)(loader_t *, const elem_t *, const tuple_t *);

enum key_bit {
    K_FORMAT = 1u << 0,
    K_VERSION = 1u << 1,
    K_MINOR = 1u << 2,
    K_META = 1u << 3,
    K_STATS = 1u << 4,
    K_RACTORS = 1u << 5,
    K_THREADS = 1u << 6,
    K_LABEL_SETS = 1u << 7,
    K_LABEL_TOTALS = 1u << 8,
    K_FRAMES = 1u << 9,
    K_STACKS = 1u << 10,
    K_SAMPLES = 1u << 11,
    K_INTERVALS = 1u << 12,
    K_EDGES = 1u << 13,
    K_BLAME = 1u << 14,
    K_CAUSES = 1u << 15,
    K_INTERVAL_CAUSES = 1u << 16,
    K_BLOCKED_EDGES = 1u << 17,
    K_BLOCKED_METHODS = 1u << 18
};

static const struct {
    const char *key;
    unsigned bit;
    element_fn each;     /* arrays of objects/strings */
    tuple_fn each_tuple; /* arrays of integer tuples; both NULL: a single value */
} key_table[] = {
    {"format", K_FORMAT, NULL, NULL},
    {"version", K_VERSION, NULL, NULL},
    {"minor", K_MINOR, NULL, NULL},
    {"meta", K_META, NULL, NULL},
    {"stats", K_STATS, NULL, NULL},
    {"ractors", K_RACTORS, load_ractor, NULL},
    {"threads", K_THREADS, load_thread, NULL},
    {"label_sets", K_LABEL_SETS, load_label_set, NULL},
    {"label_totals", K_LABEL_TOTALS, load_label_total, NULL},
    {"frames", K_FRAMES, load_frame, NULL},
    {"stacks", K_STACKS, NULL, load_stack},
    {"samples", K_SAMPLES, NULL, load_sample},
    {"intervals", K_INTERVALS, NULL, load_interval},
    {"edges", K_EDGES, load_edge, NULL},
    {"blame", K_BLAME, NULL, load_blame},
    {"causes", K_CAUSES, load_cause_name, NULL},
    {"interval_causes", K_INTERVAL_CAUSES, NULL, load_interval_cause},
    {"blocked_edges", K_BLOCKED_EDGES, load_blocked_edge, NULL},
    {"blocked_methods", K_BLOCKED_METHODS, load_blocked_method, NULL},
};

#define FAST_TUPLE_MAX 64

static bool
is_ws(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The integer-tuple fast path. Reads `[int, int, ...]` at pos where every
 * int is a canonical JSON integer (-?(0|[1-9][0-9]*)) of at most 18 digits,
 * at most FAST_TUPLE_MAX items, whitespace allowed where JSON allows it.
 * Anything else — a real, an exponent, a leading zero, a longer number, a
 * string, a missing comma, the end of input — returns false and the element
 * goes to jansson, which then decides validity and words any error. So this
 * accepts a subset of what jansson accepts, with the same values; the
 * differential tests and the fuzzer check exactly that. */
static bool
fast_tuple(const char *s, size_t len, size_t pos, int64_t *vals, size_t *n, size_t *end)
{
    size_t p = pos, k = 0;
    if (p >= len || s[p] != '[')
        return false;
    p++;
    while (p < len && is_ws(s[p]))
        p++;
    if (p < len && s[p] == ']') {
        *n = 0;
        *end = p + 1;
        return true;
    }
    for (;;) {
        while (p < len && is_ws(s[p]))
            p++;
        if (k == FAST_TUPLE_MAX || p >= len)
            return false;
        bool neg = s[p] == '-';
        if (neg)
            p++;
        if (p >= len || s[p] < '0' || s[p] > '9')
            return false;
        size_t digits_start = p;
        int64_t x = 0;
        if (s[p] == '0') {
            p++;
        } else {
            while (p < len && s[p] >= '0' && s[p] <= '9') {
                if (p - digits_start == 18)
                    return false;
                x = x * 10 + (s[p] - '0');
                p++;
            }
        }
        if (p < len && ((s[p] >= '0' && s[p] <= '9') || s[p] == '.' || s[p] == 'e' || s[p] == 'E'))
            return false;
        vals[k++] = neg ? -x : x;
        while (p < len && is_ws(s[p]))
            p++;
        if (p >= len)
            return false;
        if (s[p] == ',') {
            p++;
            continue;
        }
        if (s[p] != ']')
            return false;
        *n = k;
        *end = p + 1;
        return true;
    }
}

static rga_status_t
load_array(loader_t *ld, const char *key, element_fn each, tuple_fn each_tuple)
{
    skip_ws(ld);
    size_t start = ld->pos;
    if (ld->pos < ld->len && ld->text[ld->pos] != '[') {
        /* Not an array: let jansson parse it so the message names its type. */
        rga_status_t st;
        json_t *v = next_value(ld, &st);
        if (!v)
            return st;
        st = fail_at(ld, start, RGA_ERR_SCHEMA, key, "expected an array, got %s", json_kind(v));
        json_decref(v);
        return st;
    }
    TRY(expect(ld, '[', "to open an array"));
    skip_ws(ld);
    if (ld->pos < ld->len && ld->text[ld->pos] == ']') {
        ld->pos++;
        return RGA_OK;
    }
    for (size_t index = 0;; index++) {
        skip_ws(ld);
        elem_t e = {key, index, ld->pos};
        rga_status_t st;
        int64_t vals[FAST_TUPLE_MAX];
        size_t n, end;
        if (each_tuple && !ld->jansson_only && fast_tuple(ld->text, ld->len, ld->pos, vals, &n, &end)) {
            ld->pos = end;
            tuple_t t = {NULL, vals, n};
            st = each_tuple(ld, &e, &t);
        } else {
            json_t *v = next_value(ld, &st);
            if (!v)
                return st;
            if (each) {
                st = each(ld, &e, v);
            } else {
                tuple_t t = {v, NULL, json_is_array(v) ? json_array_size(v) : 0};
                st = each_tuple(ld, &e, &t);
            }
            json_decref(v);
        }
        if (st != RGA_OK)
            return st;
        skip_ws(ld);
        if (ld->pos >= ld->len)
            return fail_at(ld, ld->pos, RGA_ERR_SYNTAX, key,
                           "unexpected end of input (truncated JSON?) inside the array");
        char c = ld->text[ld->pos++];
        if (c == ']')
            return RGA_OK;
        if (c != ',')
            return fail_at(ld, ld->pos - 1, RGA_ERR_SYNTAX, key, "expected ',' or ']' after an element");
    }
}

static rga_status_t
load_scalar_key(loader_t *ld, unsigned bit, size_t offset)
{
    rga_status_t st;
    json_t *v = next_value(ld, &st);
    if (!v)
        return st;
    elem_t e = {"", 0, offset};
    switch (bit) {
    case K_FORMAT:
        if (!json_is_string(v) || strcmp(json_string_value(v), "rperf-gvl-report") != 0)
            st = fail_at(ld, offset, RGA_ERR_VERSION, "format",
                         "not an rperf-gvl report (expected \"rperf-gvl-report\")");
        break;
    case K_VERSION:
        if (!json_is_integer(v))
            st = fail_at(ld, offset, RGA_ERR_SCHEMA, "version", "expected an integer, got %s", json_kind(v));
        else if (json_integer_value(v) != 1)
            st = fail_at(ld, offset, RGA_ERR_VERSION, "version",
                         "unsupported report version %" PRId64 " (this reader supports 1)",
                         (int64_t)json_integer_value(v));
        else
            ld->r->version = 1;
        break;
    case K_MINOR:
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            st = fail_at(ld, offset, RGA_ERR_SCHEMA, "minor", "expected a non-negative integer");
        else
            ld->r->minor = (int64_t)json_integer_value(v);
        break;
    case K_META: st = load_meta(ld, &e, v); break;
    case K_STATS: st = load_stats(ld, &e, v); break;
    default: break; /* unknown key: parsed (so it must be valid JSON) and ignored */
    }
    json_decref(v);
    return st;
}

static rga_status_t
load_top(loader_t *ld)
{
    skip_ws(ld);
    if (ld->pos >= ld->len)
        return fail_at(ld, ld->pos, RGA_ERR_SYNTAX, NULL, "empty input (not JSON)");
    if (ld->text[ld->pos] != '{')
        return fail_at(ld, ld->pos, RGA_ERR_SYNTAX, NULL, "not a JSON object: expected '{'");
    ld->pos++;
    skip_ws(ld);
    if (ld->pos < ld->len && ld->text[ld->pos] == '}') {
        ld->pos++;
    } else {
        for (;;) {
            skip_ws(ld);
            size_t key_offset = ld->pos;
            if (ld->pos >= ld->len)
                return fail_at(ld, ld->pos, RGA_ERR_SYNTAX, NULL, "unexpected end of input (truncated JSON?)");
            if (ld->text[ld->pos] != '"')
                return fail_at(ld, ld->pos, RGA_ERR_SYNTAX, NULL, "expected a string key");
            rga_status_t st;
            json_t *k = next_value(ld, &st);
            if (!k)
                return st;
            char key[64];
            snprintf(key, sizeof(key), "%s", json_string_value(k));
            json_decref(k);
            TRY(expect(ld, ':', "after an object key"));
            skip_ws(ld);
            size_t value_offset = ld->pos;
            size_t i = 0;
            size_t n_keys = sizeof(key_table) / sizeof(key_table[0]);
            while (i < n_keys && strcmp(key_table[i].key, key) != 0)
                i++;
            if (i < n_keys) {
                if (ld->seen & key_table[i].bit)
                    return fail_at(ld, key_offset, RGA_ERR_SCHEMA, key, "duplicate key");
                ld->seen |= key_table[i].bit;
                if (key_table[i].each || key_table[i].each_tuple) {
                    TRY(load_array(ld, key_table[i].key, key_table[i].each, key_table[i].each_tuple));
                    if (key_table[i].bit == K_INTERVALS) {
                        ld->r->intervals_text_offset = value_offset;
                        ld->r->intervals_text_length = ld->pos - value_offset;
                    }
                } else
                    TRY(load_scalar_key(ld, key_table[i].bit, value_offset));
            } else {
                TRY(load_scalar_key(ld, 0, value_offset));
            }
            skip_ws(ld);
            if (ld->pos >= ld->len)
                return fail_at(ld, ld->pos, RGA_ERR_SYNTAX, NULL, "unexpected end of input (truncated JSON?)");
            char c = ld->text[ld->pos++];
            if (c == '}')
                break;
            if (c != ',')
                return fail_at(ld, ld->pos - 1, RGA_ERR_SYNTAX, NULL, "expected ',' or '}' in the report object");
        }
    }
    skip_ws(ld);
    if (ld->pos != ld->len)
        return fail_at(ld, ld->pos, RGA_ERR_SYNTAX, NULL, "unexpected data after the report object");
    static const struct {
        unsigned bit;
        const char *key;
    } required[] = {{K_FORMAT, "format"},
                    {K_VERSION, "version"},
                    {K_META, "meta"},
                    {K_RACTORS, "ractors"},
                    {K_THREADS, "threads"}};
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
        if (!(ld->seen & required[i].bit)) {
            rga_error_set(ld->err, RGA_ERR_SCHEMA, "missing required key");
            if (ld->err)
                snprintf(ld->err->path, sizeof(ld->err->path), "%s", required[i].key);
            return RGA_ERR_SCHEMA;
        }
    }
    return RGA_OK;
}

rga_status_t
rga_report_load_buffer(const char *data, size_t len, const char *name, rga_report_t **out, rga_error_t *err)
{
    return rga_report_load_buffer_flags(data, len, name, 0, out, err);
}

rga_status_t
rga_report_load_buffer_flags(const char *data, size_t len, const char *name, unsigned flags, rga_report_t **out,
                             rga_error_t *err)
{
    *out = NULL;
    rga_error_clear(err);
    if (err && name)
        snprintf(err->file, sizeof(err->file), "%s", name);
    char *inflated = NULL;
    loader_t ld;
    memset(&ld, 0, sizeof(ld));
    rga_status_t st;
    if (rga_input_is_gzip(data, len)) {
        size_t n = 0;
        st = rga_input_inflate(data, len, &inflated, &n, err);
        if (st != RGA_OK)
            return st;
        data = inflated;
        len = n;
    }
    ld.text = data;
    ld.len = len;
    ld.err = err;
    ld.jansson_only = (flags & RGA_LOAD_JANSSON_ONLY) != 0;
    ld.r = calloc(1, sizeof(rga_report_t));
    if (!ld.r) {
        st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory reading the report");
        goto fail;
    }
    st = load_top(&ld);
    if (st != RGA_OK)
        goto fail;
    st = rga_report_validate(ld.r, err);
    if (st != RGA_OK)
        goto fail;
    free(inflated);
    *out = ld.r;
    return RGA_OK;
fail:
    rga_report_free(ld.r);
    free(inflated);
    return st;
}

rga_status_t
rga_report_load_file(const char *path, rga_report_t **out, rga_error_t *err)
{
    return rga_report_load_file_flags(path, 0, out, err);
}

rga_status_t
rga_report_load_file_flags(const char *path, unsigned flags, rga_report_t **out, rga_error_t *err)
{
    *out = NULL;
    rga_error_clear(err);
    const char *name = strcmp(path, "-") == 0 ? "standard input" : path;
    if (err)
        snprintf(err->file, sizeof(err->file), "%s", name);
    char *buf = NULL;
    size_t len = 0;
    rga_status_t st = rga_input_read(path, &buf, &len, err);
    if (st == RGA_OK)
        st = rga_report_load_buffer_flags(buf ? buf : "", len, name, flags, out, err);
    free(buf);
    return st;
}
