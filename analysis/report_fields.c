/* report_fields.c — typed reads of one report element's fields, and the
 * errors that say where a bad one sits (report_fields.h). It does NOT walk
 * the report's text or know any section's fields.
 */
#include "report_fields.h"
#include "grow_array.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
rga_load_line_col(const char *text, size_t offset, long *line, long *column)
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

rga_status_t
rga_load_fail_at(rga_loader_t *ld, size_t offset, rga_status_t code, const char *path, const char *fmt, ...)
{
    rga_error_t *err = ld->err;
    if (!err)
        return code;
    va_list ap;
    va_start(ap, fmt);
    rga_error_vset(err, code, fmt, ap);
    va_end(ap);
    rga_load_line_col(ld->text, offset > ld->len ? ld->len : offset, &err->line, &err->column);
    snprintf(err->path, sizeof(err->path), "%s", path ? path : "");
    return code;
}

rga_status_t
rga_load_fail_elem(rga_loader_t *ld, const rga_elem_t *e, const char *field, rga_status_t code, const char *what)
{
    char path[128];
    if (field && field[0] == '[')
        snprintf(path, sizeof(path), "%s[%zu]%s", e->array, e->index, field);
    else if (field)
        snprintf(path, sizeof(path), "%s[%zu].%s", e->array, e->index, field);
    else
        snprintf(path, sizeof(path), "%s[%zu]", e->array, e->index);
    return rga_load_fail_at(ld, e->offset, code, path, "%s", what);
}

rga_status_t
rga_load_reserve(rga_loader_t *ld, void **items, size_t *cap, size_t need, size_t size)
{
    if (rperf_grow_array(items, cap, need, size, 16) < 0)
        return rga_error_set(ld->err, RGA_ERR_NOMEM, "out of memory reading the report");
    return RGA_OK;
}

const char *
rga_load_json_kind(const json_t *v)
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
as_int_at(rga_loader_t *ld, const rga_elem_t *e, const char *field, size_t item, const json_t *v, int64_t min,
          int64_t max, int64_t *out)
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
        snprintf(what, sizeof(what), "expected an integer, got %s", rga_load_json_kind(v));
    } else if (json_integer_value(v) < min) {
        json_int_t x = json_integer_value(v);
        snprintf(what, sizeof(what), "%s %" PRId64 " (must be >= %" PRId64 ")",
                 x < 0 ? "negative value" : "value too small", (int64_t)x, min);
    } else {
        snprintf(what, sizeof(what), "value %" PRId64 " out of range (max %" PRId64 ")",
                 (int64_t)json_integer_value(v), max);
    }
    return rga_load_fail_elem(ld, e, field, RGA_ERR_SCHEMA, what);
}

rga_status_t
rga_load_as_int(rga_loader_t *ld, const rga_elem_t *e, const char *field, const json_t *v, int64_t min, int64_t max,
                int64_t *out)
{
    return as_int_at(ld, e, field, 0, v, min, max, out);
}

static rga_status_t
obj_int(rga_loader_t *ld, const rga_elem_t *e, const json_t *obj, const rga_field_t *f, int64_t *out)
{
    const json_t *v = json_object_get(obj, f->key);
    if (!v && !f->required) {
        *out = f->absent;
        return RGA_OK;
    }
    return rga_load_as_int(ld, e, f->key, v, f->min, f->max, out);
}

static rga_status_t
obj_bool(rga_loader_t *ld, const rga_elem_t *e, const json_t *obj, const char *key, bool required, bool *out)
{
    const json_t *v = json_object_get(obj, key);
    if (!v && required)
        return rga_load_fail_elem(ld, e, key, RGA_ERR_SCHEMA, "missing required key");
    if (!v) {
        *out = false;
        return RGA_OK;
    }
    if (!json_is_boolean(v)) {
        char what[96];
        snprintf(what, sizeof(what), "expected a boolean, got %s", rga_load_json_kind(v));
        return rga_load_fail_elem(ld, e, key, RGA_ERR_SCHEMA, what);
    }
    *out = json_is_true(v);
    return RGA_OK;
}

/* A JSON string as a C string. A string may hold "\u0000" (a label value
 * the program set, loaded with JSON_ALLOW_NUL): it is written as the four
 * characters \x00, as the text views show control bytes, so that "a\u0000b"
 * neither ends at the NUL (and so equals "a") nor merges with "a\u0000c".
 * NULL when out of memory. */
char *
rga_load_text_dup(const json_t *v)
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
obj_str(rga_loader_t *ld, const rga_elem_t *e, const json_t *obj, const char *key, bool required, char **out)
{
    const json_t *v = json_object_get(obj, key);
    if (!v && required)
        return rga_load_fail_elem(ld, e, key, RGA_ERR_SCHEMA, "missing required key");
    if (v && !json_is_string(v)) {
        char what[96];
        snprintf(what, sizeof(what), "expected a string, got %s", rga_load_json_kind(v));
        return rga_load_fail_elem(ld, e, key, RGA_ERR_SCHEMA, what);
    }
    *out = v ? rga_load_text_dup(v) : strdup("");
    if (!*out)
        return rga_error_set(ld->err, RGA_ERR_NOMEM, "out of memory reading the report");
    return RGA_OK;
}

rga_status_t
rga_load_need_object(rga_loader_t *ld, const rga_elem_t *e, const json_t *v)
{
    if (json_is_object(v))
        return RGA_OK;
    char what[96];
    snprintf(what, sizeof(what), "expected an object, got %s", rga_load_json_kind(v));
    return rga_load_fail_elem(ld, e, NULL, RGA_ERR_SCHEMA, what);
}

/* A tuple element: an array of exactly n integers. */
rga_status_t
rga_load_need_tuple(rga_loader_t *ld, const rga_elem_t *e, const rga_tuple_t *t, size_t n)
{
    char what[96];
    if (t->json && !json_is_array(t->json)) {
        snprintf(what, sizeof(what), "expected an array of %zu integers, got %s", n, rga_load_json_kind(t->json));
        return rga_load_fail_elem(ld, e, NULL, RGA_ERR_SCHEMA, what);
    }
    if (t->n != n) {
        snprintf(what, sizeof(what), "expected %zu items, got %zu", n, t->n);
        return rga_load_fail_elem(ld, e, NULL, RGA_ERR_SCHEMA, what);
    }
    return RGA_OK;
}

rga_status_t
rga_load_tuple_int(rga_loader_t *ld, const rga_elem_t *e, const rga_tuple_t *t, size_t i, int64_t min, int64_t max,
                   int64_t *out)
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

static const char *const state_keys[RGA_STATE_COUNT] = {"running_ns", "gvl_wait_ns", "blocked_ns", "gc_mark_ns",
                                                        "gc_sweep_ns"};

/* A cause name (blocked_edges, blocked_methods): required string; a name
 * this reader does not know reads as other. */
static rga_status_t
obj_cause(rga_loader_t *ld, const rga_elem_t *e, const json_t *obj, const char *key, uint8_t *out)
{
    const json_t *v = json_object_get(obj, key);
    if (!v)
        return rga_load_fail_elem(ld, e, key, RGA_ERR_SCHEMA, "missing required key");
    if (!json_is_string(v))
        return rga_load_fail_elem(ld, e, key, RGA_ERR_SCHEMA, "expected a cause name (a string)");
    *out = (uint8_t)rga_cause_from_name(json_string_value(v));
    return RGA_OK;
}

/* Optional `blocked_by_cause` of a thread or label_totals row: cause name ->
 * ns. Unknown names add up under other, so their sum must fit. */
static rga_status_t
obj_cause_ns(rga_loader_t *ld, const rga_elem_t *e, const json_t *obj, int64_t *cause_ns, bool *has)
{
    const json_t *m = json_object_get(obj, "blocked_by_cause");
    memset(cause_ns, 0, RGA_CAUSE_COUNT * sizeof(int64_t));
    *has = m != NULL;
    if (!m)
        return RGA_OK;
    if (!json_is_object(m))
        return rga_load_fail_elem(ld, e, "blocked_by_cause", RGA_ERR_SCHEMA,
                                  "expected an object of cause name -> ns");
    const char *name;
    const json_t *val;
    json_object_foreach((json_t *)m, name, val)
    {
        char field[96];
        snprintf(field, sizeof(field), "blocked_by_cause.%s", name);
        int64_t ns;
        TRY(rga_load_as_int(ld, e, field, val, 0, INT64_MAX, &ns));
        int c = rga_cause_from_name(name);
        if (__builtin_add_overflow(cause_ns[c], ns, &cause_ns[c]))
            return rga_load_fail_elem(ld, e, field, RGA_ERR_SCHEMA,
                                      "value too large: the causes' sum exceeds 2^63-1");
    }
    return RGA_OK;
}


rga_status_t
rga_load_fields(rga_loader_t *ld, const rga_elem_t *e, const json_t *v, const rga_field_t *fields, size_t n,
                void *row)
{
    TRY(rga_load_need_object(ld, e, v));
    for (size_t i = 0; i < n; i++) {
        const rga_field_t *f = &fields[i];
        void *slot = (char *)row + f->off;
        switch (f->kind) {
        case RGA_FIELD_INT: TRY(obj_int(ld, e, v, f, slot)); break;
        case RGA_FIELD_BOOL:
            *(bool *)slot = f->absent != 0;
            if (f->required || json_object_get(v, f->key))
                TRY(obj_bool(ld, e, v, f->key, true, slot));
            break;
        case RGA_FIELD_STR: TRY(obj_str(ld, e, v, f->key, f->required, slot)); break;
        case RGA_FIELD_CAUSE: TRY(obj_cause(ld, e, v, f->key, slot)); break;
        case RGA_FIELD_STATES:
            for (int s = 0; s < RGA_STATE_COUNT; s++) {
                rga_field_t state = {state_keys[s], RGA_FIELD_INT, 0, 0, true, 0, INT64_MAX, 0};
                TRY(obj_int(ld, e, v, &state, (int64_t *)slot + s));
            }
            break;
        case RGA_FIELD_CAUSE_NS: TRY(obj_cause_ns(ld, e, v, slot, (bool *)((char *)row + f->aux))); break;
        }
    }
    return RGA_OK;
}

rga_status_t
rga_load_tuple(rga_loader_t *ld, const rga_elem_t *e, const rga_tuple_t *t, const rga_tuple_item_t *items, size_t n,
               void *row)
{
    TRY(rga_load_need_tuple(ld, e, t, n));
    for (size_t i = 0; i < n; i++)
        TRY(rga_load_tuple_int(ld, e, t, i, items[i].min, items[i].max, (int64_t *)((char *)row + items[i].off)));
    return RGA_OK;
}
