/* report_sections.c — report.json's top-level keys and how each element
 * becomes a model row: most sections are a table of fields or tuple items
 * that two generic loaders read (through report_fields.c); the rest have
 * converters of their own (report_sections.h). It does NOT walk the text or check
 * cross-references.
 */
#include "report_sections.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INT_FIELD(type, member, key, required, min, max, absent) \
    { \
        key, RGA_FIELD_INT, offsetof(type, member), 0, required, min, max, absent \
    }
#define REQ(type, member, min) INT_FIELD(type, member, #member, true, min, INT64_MAX, 0)
#define OTHER_FIELD(type, member, key, kind, required, absent) \
    { \
        key, kind, offsetof(type, member), 0, required, 0, 0, absent \
    }
#define STATES(type) \
    { \
        NULL, RGA_FIELD_STATES, offsetof(type, state_ns), 0, true, 0, 0, 0 \
    }
#define CAUSE_NS(type) \
    { \
        "blocked_by_cause", RGA_FIELD_CAUSE_NS, offsetof(type, cause_ns), offsetof(type, has_causes), false, 0, 0, \
            0 \
    }
#define ITEM(type, member, min, max) \
    { \
        offsetof(type, member), min, max \
    }
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Where a section's rows live: its array and count in rga_report_t, its
 * capacity in rga_loader_t, the row's size. */
#define ROWS(type, arr, count, cap) \
    offsetof(rga_report_t, arr), offsetof(rga_report_t, count), offsetof(rga_loader_t, cap), sizeof(type)

/* A zeroed row at the end of a section's array, counted at once so that
 * rga_report_free() frees what its fields own if a later one fails. */
static rga_status_t
new_row(rga_loader_t *ld, const rga_rows_t *rows, void **row)
{
    void **items = (void **)((char *)ld->r + rows->array);
    size_t *count = (size_t *)((char *)ld->r + rows->count);
    TRY(rga_load_reserve(ld, items, (size_t *)((char *)ld + rows->cap), *count + 1, rows->size));
    *row = (char *)*items + *count * rows->size;
    memset(*row, 0, rows->size);
    ++*count;
    return RGA_OK;
}

/* An object element read by its section's field table. */
static rga_status_t
load_object_row(rga_loader_t *ld, const rga_section_t *sec, const rga_elem_t *e, const json_t *v)
{
    void *row;
    TRY(new_row(ld, sec->rows, &row));
    TRY(rga_load_fields(ld, e, v, sec->rows->fields, sec->rows->n, row));
    return sec->rows->check ? sec->rows->check(ld, e, v, row) : RGA_OK;
}

/* An integer-tuple element read by its section's item table. */
static rga_status_t
load_tuple_row(rga_loader_t *ld, const rga_section_t *sec, const rga_elem_t *e, const rga_tuple_t *t)
{
    void *row;
    TRY(new_row(ld, sec->rows, &row));
    return rga_load_tuple(ld, e, t, sec->rows->items, sec->rows->n, row);
}

/* ---- the field tables ----------------------------------------------------------- */

static const rga_field_t ractor_fields[] = {
    REQ(rga_ractor_t, id, 1),
    OTHER_FIELD(rga_ractor_t, main, "main", RGA_FIELD_BOOL, false, 0),
    /* absent in reports before the key existed */
    OTHER_FIELD(rga_ractor_t, identified, "identified", RGA_FIELD_BOOL, false, 1),
};

static const rga_field_t thread_fields[] = {
    INT_FIELD(rga_thread_t, seq, "seq", true, 1, UINT32_MAX, 0),
    OTHER_FIELD(rga_thread_t, name, "name", RGA_FIELD_STR, true, 0),
    INT_FIELD(rga_thread_t, native_id, "native_id", false, 0, INT64_MAX, 0),
    REQ(rga_thread_t, ractor, 1),
    REQ(rga_thread_t, first_seen_ns, 0),
    REQ(rga_thread_t, last_seen_ns, 0),
    OTHER_FIELD(rga_thread_t, exited, "exited", RGA_FIELD_BOOL, true, 0),
    STATES(rga_thread_t),
    REQ(rga_thread_t, acquisitions, 0),
    REQ(rga_thread_t, waits, 0),
    INT_FIELD(rga_thread_t, label_set, "label_set", false, 0, UINT32_MAX, -1),
    CAUSE_NS(rga_thread_t),
    INT_FIELD(rga_thread_t, release_unknown_ns, "release_unknown_ns", false, 0, INT64_MAX, 0),
};

static rga_status_t
check_thread(rga_loader_t *ld, const rga_elem_t *e, const json_t *v, void *row)
{
    (void)v;
    const rga_thread_t *t = row;
    if (t->last_seen_ns < t->first_seen_ns)
        return rga_load_fail_elem(ld, e, "last_seen_ns", RGA_ERR_SCHEMA, "last_seen_ns < first_seen_ns");
    return RGA_OK;
}

static const rga_field_t label_total_fields[] = {
    REQ(rga_label_total_t, thread, 1),
    REQ(rga_label_total_t, label_set, 0),
    STATES(rga_label_total_t),
    CAUSE_NS(rga_label_total_t),
};

static const rga_field_t edge_fields[] = {
    REQ(rga_edge_t, ractor, 1),
    REQ(rga_edge_t, waiter, 1),
    REQ(rga_edge_t, holder, 0),
    REQ(rga_edge_t, waiter_label_set, 0),
    REQ(rga_edge_t, holder_label_set, 0),
    REQ(rga_edge_t, wait_ns, 0),
    REQ(rga_edge_t, count, 0),
};

/* holder_kind: a name of the format's holder kinds; a thread holder has a seq. */
static rga_status_t
check_edge(rga_loader_t *ld, const rga_elem_t *e, const json_t *v, void *row)
{
    static const struct {
        const char *name;
        rga_holder_kind_t kind;
    } kinds[] = {{"thread", RGA_HOLDER_THREAD},
                 {"gc", RGA_HOLDER_GC},
                 {"handoff", RGA_HOLDER_HANDOFF},
                 {"unknown", RGA_HOLDER_UNKNOWN}};
    rga_edge_t *ed = row;
    const json_t *kind = json_object_get(v, "holder_kind");
    if (!kind)
        return rga_load_fail_elem(ld, e, "holder_kind", RGA_ERR_SCHEMA, "missing required key");
    const char *k = json_string_value(kind);
    if (!k)
        return rga_load_fail_elem(ld, e, "holder_kind", RGA_ERR_SCHEMA, "expected a string");
    size_t i = 0;
    while (i < N(kinds) && strcmp(k, kinds[i].name) != 0)
        i++;
    if (i == N(kinds))
        return rga_load_fail_elem(ld, e, "holder_kind", RGA_ERR_SCHEMA,
                                  "expected \"thread\", \"gc\", \"handoff\" or \"unknown\"");
    ed->holder_kind = kinds[i].kind;
    if (ed->holder_kind == RGA_HOLDER_THREAD && ed->holder == 0)
        return rga_load_fail_elem(ld, e, "holder", RGA_ERR_SCHEMA, "a thread holder needs a seq >= 1");
    return RGA_OK;
}

static const rga_field_t blocked_edge_fields[] = {
    REQ(rga_blocked_edge_t, ractor, 1),
    REQ(rga_blocked_edge_t, waiter, 1),
    REQ(rga_blocked_edge_t, releaser, 1),
    OTHER_FIELD(rga_blocked_edge_t, cause, "cause", RGA_FIELD_CAUSE, true, 0),
    REQ(rga_blocked_edge_t, waiter_label_set, 0),
    REQ(rga_blocked_edge_t, releaser_label_set, 0),
    REQ(rga_blocked_edge_t, blocked_ns, 0),
    REQ(rga_blocked_edge_t, count, 0),
    INT_FIELD(rga_blocked_edge_t, releaser_stack, "releaser_stack", false, 0, INT32_MAX, -1),
};

static const rga_field_t blocked_method_fields[] = {
    REQ(rga_blocked_method_t, thread, 1),
    OTHER_FIELD(rga_blocked_method_t, cause, "cause", RGA_FIELD_CAUSE, true, 0),
    OTHER_FIELD(rga_blocked_method_t, method, "method", RGA_FIELD_STR, true, 0),
    REQ(rga_blocked_method_t, blocked_ns, 0),
    REQ(rga_blocked_method_t, count, 0),
};

static const rga_tuple_item_t sample_items[] = {
    ITEM(rga_sample_t, stack, 0, INT32_MAX),
    ITEM(rga_sample_t, weight_ns, 0, INT64_MAX),
    ITEM(rga_sample_t, thread, 1, UINT32_MAX),
    ITEM(rga_sample_t, label_set, 0, UINT32_MAX),
};

static const rga_tuple_item_t blame_items[] = {
    ITEM(rga_blame_t, stack, 0, INT32_MAX),
    ITEM(rga_blame_t, holder, 1, UINT32_MAX),
    ITEM(rga_blame_t, label_set, 0, UINT32_MAX),
    ITEM(rga_blame_t, blame_ns, 0, INT64_MAX),
};

static const rga_tuple_item_t interval_cause_items[] = {
    ITEM(rga_interval_cause_t, thread, 1, UINT32_MAX),
    ITEM(rga_interval_cause_t, start_ns, 0, INT64_MAX),
    ITEM(rga_interval_cause_t, cause_id, 0, INT32_MAX),
    ITEM(rga_interval_cause_t, releaser, 0, UINT32_MAX),
};

#define OBJECT_ROWS(name, type, arr, count, cap, check) \
    static const rga_rows_t name = {ROWS(type, arr, count, cap), name##_fields, NULL, N(name##_fields), check}
#define TUPLE_ROWS(name, type, arr, count, cap) \
    static const rga_rows_t name = {ROWS(type, arr, count, cap), NULL, name##_items, N(name##_items), NULL}
OBJECT_ROWS(ractor, rga_ractor_t, ractors, n_ractors, cap_ractors, NULL);
OBJECT_ROWS(thread, rga_thread_t, threads, n_threads, cap_threads, check_thread);
OBJECT_ROWS(label_total, rga_label_total_t, label_totals, n_label_totals, cap_label_totals, NULL);
OBJECT_ROWS(edge, rga_edge_t, edges, n_edges, cap_edges, check_edge);
OBJECT_ROWS(blocked_edge, rga_blocked_edge_t, blocked_edges, n_blocked_edges, cap_blocked_edges, NULL);
OBJECT_ROWS(blocked_method, rga_blocked_method_t, blocked_methods, n_blocked_methods, cap_blocked_methods, NULL);
TUPLE_ROWS(sample, rga_sample_t, samples, n_samples, cap_samples);
TUPLE_ROWS(blame, rga_blame_t, blame, n_blame, cap_blame);
TUPLE_ROWS(interval_cause, rga_interval_cause_t, interval_causes, n_interval_causes, cap_interval_causes);

/* ---- elements of their own shape ------------------------------------------ */

static int
cmp_label_key(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static rga_status_t
load_label_set(rga_loader_t *ld, const rga_section_t *sec, const rga_elem_t *e, const json_t *v)
{
    (void)sec;
    TRY(rga_load_need_object(ld, e, v));
    TRY(RGA_LOAD_PUSH(ld, label_sets, n_label_sets, cap_label_sets));
    rga_label_set_t *ls = &ld->r->label_sets[ld->r->n_label_sets];
    memset(ls, 0, sizeof(*ls));
    TRY(rga_load_as_int(ld, e, "id", json_object_get(v, "id"), 0, UINT32_MAX, &ls->id));
    const json_t *labels = json_object_get(v, "labels");
    if (!labels)
        return rga_load_fail_elem(ld, e, "labels", RGA_ERR_SCHEMA, "missing required key");
    if (!json_is_object(labels))
        return rga_load_fail_elem(ld, e, "labels", RGA_ERR_SCHEMA, "expected an object of strings");
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
            return rga_load_fail_elem(ld, e, field, RGA_ERR_SCHEMA, "label values must be strings");
        }
        ls->keys[ls->n_labels] = strdup(key);
        ls->values[ls->n_labels] = rga_load_text_dup(val);
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
load_frame(rga_loader_t *ld, const rga_section_t *sec, const rga_elem_t *e, const json_t *v)
{
    (void)sec;
    if (!json_is_array(v) || json_array_size(v) != 2 || !json_is_string(json_array_get(v, 0)) ||
        !json_is_string(json_array_get(v, 1)))
        return rga_load_fail_elem(ld, e, NULL, RGA_ERR_SCHEMA, "expected [\"path\", \"label\"]");
    TRY(RGA_LOAD_PUSH(ld, frames, n_frames, cap_frames));
    rga_frame_t *f = &ld->r->frames[ld->r->n_frames];
    f->path = rga_load_text_dup(json_array_get(v, 0));
    f->label = rga_load_text_dup(json_array_get(v, 1));
    ld->r->n_frames++;
    if (!f->path || !f->label)
        return rga_error_set(ld->err, RGA_ERR_NOMEM, "out of memory reading the report");
    return RGA_OK;
}

static rga_status_t
load_stack(rga_loader_t *ld, const rga_section_t *sec, const rga_elem_t *e, const rga_tuple_t *v)
{
    (void)sec;
    if (v->json && !json_is_array(v->json))
        return rga_load_fail_elem(ld, e, NULL, RGA_ERR_SCHEMA, "expected an array of frame ids");
    size_t depth = v->n;
    if (depth > UINT32_MAX)
        return rga_load_fail_elem(ld, e, NULL, RGA_ERR_SCHEMA, "stack too deep");
    TRY(RGA_LOAD_PUSH(ld, stacks, n_stacks, cap_stacks));
    TRY(rga_load_reserve(ld, (void **)&ld->r->stack_frames, &ld->cap_stack_frames, ld->r->n_stack_frames + depth,
                         sizeof(int64_t)));
    for (size_t i = 0; i < depth; i++)
        TRY(rga_load_tuple_int(ld, e, v, i, 0, INT64_MAX, &ld->r->stack_frames[ld->r->n_stack_frames + i]));
    rga_stack_t *s = &ld->r->stacks[ld->r->n_stacks++];
    memset(s, 0, sizeof(*s));
    s->first = ld->r->n_stack_frames;
    s->depth = (uint32_t)depth;
    ld->r->n_stack_frames += depth;
    return RGA_OK;
}

static rga_status_t
load_interval(rga_loader_t *ld, const rga_section_t *sec, const rga_elem_t *e, const rga_tuple_t *v)
{
    (void)sec;
    TRY(RGA_LOAD_PUSH(ld, intervals, n_intervals, cap_intervals));
    int64_t seq, state, start, end, label_set, stack;
    const int64_t *x = v->vals;
    /* The common case in one test; anything off goes through the checks
     * below, which name the offending item. */
    if (x && v->n == 6 && x[0] >= 1 && x[0] <= UINT32_MAX && x[1] >= 0 && x[1] < RGA_STATE_COUNT && x[2] >= 0 &&
        x[3] >= x[2] && x[4] >= 0 && x[4] <= UINT32_MAX && x[5] >= -1 && x[5] <= INT32_MAX) {
        seq = x[0], state = x[1], start = x[2], end = x[3], label_set = x[4], stack = x[5];
        goto store;
    }
    TRY(rga_load_need_tuple(ld, e, v, 6));
    TRY(rga_load_tuple_int(ld, e, v, 0, 1, UINT32_MAX, &seq));
    TRY(rga_load_tuple_int(ld, e, v, 1, 0, RGA_STATE_COUNT - 1, &state));
    TRY(rga_load_tuple_int(ld, e, v, 2, 0, INT64_MAX, &start));
    TRY(rga_load_tuple_int(ld, e, v, 3, 0, INT64_MAX, &end));
    if (end < start)
        return rga_load_fail_elem(ld, e, "[3]", RGA_ERR_SCHEMA, "end_ns < start_ns (negative duration)");
    TRY(rga_load_tuple_int(ld, e, v, 4, 0, UINT32_MAX, &label_set));
    TRY(rga_load_tuple_int(ld, e, v, 5, -1, INT32_MAX, &stack));
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
load_cause_name(rga_loader_t *ld, const rga_section_t *sec, const rga_elem_t *e, const json_t *v)
{
    (void)sec;
    if (!json_is_string(v))
        return rga_load_fail_elem(ld, e, NULL, RGA_ERR_SCHEMA, "expected a cause name (a string)");
    TRY(RGA_LOAD_PUSH(ld, cause_of_id, n_cause_ids, cap_cause_ids));
    ld->r->cause_of_id[ld->r->n_cause_ids++] = (uint8_t)rga_cause_from_name(json_string_value(v));
    return RGA_OK;
}

/* ---- small top-level values ------------------------------------------------ */

/* An integer member of a top-level object (meta, stats); absent and
 * optional: 0. load_top_ints checks the object, then reads them; errors
 * name a member "meta.pid". */
typedef struct top_int {
    const char *key;
    size_t off;
    bool required;
    int64_t min;
} top_int_t;

static rga_status_t
load_top_ints(rga_loader_t *ld, const rga_elem_t *e, const json_t *v, const char *name, const top_int_t *ints,
              size_t n, void *out)
{
    if (!json_is_object(v))
        return rga_load_fail_at(ld, e->offset, RGA_ERR_SCHEMA, name, "expected an object, got %s",
                                rga_load_json_kind(v));
    for (size_t i = 0; i < n; i++) {
        const json_t *x = json_object_get(v, ints[i].key);
        int64_t *slot = (int64_t *)((char *)out + ints[i].off);
        char path[64];
        snprintf(path, sizeof(path), "%s.%s", name, ints[i].key);
        *slot = 0;
        if (!x && ints[i].required)
            return rga_load_fail_at(ld, e->offset, RGA_ERR_SCHEMA, path, "missing required key");
        if (!x)
            continue;
        if (!json_is_integer(x))
            return rga_load_fail_at(ld, e->offset, RGA_ERR_SCHEMA, path, "expected an integer, got %s",
                                    rga_load_json_kind(x));
        if (json_integer_value(x) < ints[i].min)
            return rga_load_fail_at(ld, e->offset, RGA_ERR_SCHEMA, path, "value %" PRId64 " must be >= %" PRId64,
                                    (int64_t)json_integer_value(x), ints[i].min);
        *slot = (int64_t)json_integer_value(x);
    }
    return RGA_OK;
}

static rga_status_t
load_meta(rga_loader_t *ld, const rga_section_t *sec, const rga_elem_t *e, const json_t *v)
{
    (void)sec;
    static const top_int_t ints[] = {
        {"pid", offsetof(rga_meta_t, pid), true, 0},
        {"frequency", offsetof(rga_meta_t, frequency), false, 0},
        {"start_time_ns", offsetof(rga_meta_t, start_time_ns), false, 0},
        {"start_monotonic_ns", offsetof(rga_meta_t, start_monotonic_ns), true, 0},
        {"duration_ns", offsetof(rga_meta_t, duration_ns), true, 1},
        {"sequence", offsetof(rga_meta_t, sequence), false, 0},
    };
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
    rga_meta_t *m = &ld->r->meta;
    TRY(load_top_ints(ld, e, v, "meta", ints, N(ints), m));
    for (size_t i = 0; i < N(strs); i++) {
        char **slot = (char **)((char *)m + strs[i].off);
        free(*slot);
        *slot = NULL;
        const json_t *s = json_object_get(v, strs[i].key);
        if (s && !json_is_string(s))
            return rga_load_fail_at(ld, e->offset, RGA_ERR_SCHEMA, NULL, "meta.%s: expected a string, got %s",
                                    strs[i].key, rga_load_json_kind(s));
        *slot = s ? rga_load_text_dup(s) : strdup("");
        if (!*slot)
            return rga_error_set(ld->err, RGA_ERR_NOMEM, "out of memory reading the report");
    }
    return RGA_OK;
}

static rga_status_t
load_stats(rga_loader_t *ld, const rga_section_t *sec, const rga_elem_t *e, const json_t *v)
{
    (void)sec;
    static const top_int_t ints[] = {
#define STAT_ENTRY(name, counter) {#name, offsetof(rga_stats_t, name), false, 0},
        RPERF_REPORT_STATS(STAT_ENTRY)
#undef STAT_ENTRY
    };
    return load_top_ints(ld, e, v, "stats", ints, N(ints), &ld->r->stats);
}


/* ---- the top-level keys ----------------------------------------------------- */

const rga_section_t rga_sections[] = {
    {"format", RGA_K_FORMAT, NULL, NULL, NULL, NULL},
    {"version", RGA_K_VERSION, NULL, NULL, NULL, NULL},
    {"minor", RGA_K_MINOR, NULL, NULL, NULL, NULL},
    {"meta", RGA_K_META, NULL, NULL, load_meta, NULL},
    {"stats", RGA_K_STATS, NULL, NULL, load_stats, NULL},
    {"ractors", RGA_K_RACTORS, load_object_row, NULL, NULL, &ractor},
    {"threads", RGA_K_THREADS, load_object_row, NULL, NULL, &thread},
    {"label_sets", RGA_K_LABEL_SETS, load_label_set, NULL, NULL, NULL},
    {"label_totals", RGA_K_LABEL_TOTALS, load_object_row, NULL, NULL, &label_total},
    {"frames", RGA_K_FRAMES, load_frame, NULL, NULL, NULL},
    {"stacks", RGA_K_STACKS, NULL, load_stack, NULL, NULL},
    {"samples", RGA_K_SAMPLES, NULL, load_tuple_row, NULL, &sample},
    {"intervals", RGA_K_INTERVALS, NULL, load_interval, NULL, NULL},
    {"edges", RGA_K_EDGES, load_object_row, NULL, NULL, &edge},
    {"blame", RGA_K_BLAME, NULL, load_tuple_row, NULL, &blame},
    {"causes", RGA_K_CAUSES, load_cause_name, NULL, NULL, NULL},
    {"interval_causes", RGA_K_INTERVAL_CAUSES, NULL, load_tuple_row, NULL, &interval_cause},
    {"blocked_edges", RGA_K_BLOCKED_EDGES, load_object_row, NULL, NULL, &blocked_edge},
    {"blocked_methods", RGA_K_BLOCKED_METHODS, load_object_row, NULL, NULL, &blocked_method},
};
const size_t rga_n_sections = N(rga_sections);
