/* report_fields.h — the report loader's state, and the readers of one
 * element's fields: each reads a typed value, checks its range, and on
 * failure fills the error with the element's JSON path and text position.
 *
 * It does NOT walk the text (report_load.c does) nor know which fields a
 * section has (report_sections.c does). Shared by those two files only.
 *
 * Contract
 * - Every reader returns RGA_OK or the status it set in ld->err (which may
 *   be NULL: then only the status is returned).
 * - Strings are copied with malloc (rga_load_text_dup); the report row that
 *   holds them owns them and rga_report_free() frees them, so a row is
 *   counted in the report before any string of it is read.
 * - Nothing here keeps a jansson value; the caller owns the values it passes.
 */
#ifndef RGA_REPORT_FIELDS_H
#define RGA_REPORT_FIELDS_H

#include "report.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rga_loader {
    const char *text;
    size_t len;
    size_t pos;
    rga_error_t *err;
    rga_report_t *r;
    size_t cap_ractors, cap_threads, cap_label_sets, cap_label_totals, cap_frames, cap_stacks, cap_stack_frames,
        cap_samples, cap_intervals, cap_edges, cap_blame, cap_cause_ids, cap_interval_causes, cap_blocked_edges,
        cap_blocked_methods;
    unsigned seen;     /* bit per top-level key (report_sections.h) */
    bool jansson_only; /* RGA_LOAD_JANSSON_ONLY: no integer-tuple fast path */
} rga_loader_t;

/* A tuple element (intervals, samples, blame, stacks): either the jansson
 * array or the integers the fast path read. */
typedef struct rga_tuple {
    const json_t *json;
    const int64_t *vals;
    size_t n;
} rga_tuple_t;

/* Where the element being converted sits, for error messages. */
typedef struct rga_elem {
    const char *array;
    size_t index;
    size_t offset;
} rga_elem_t;

#define TRY(expr) \
    do { \
        rga_status_t st_ = (expr); \
        if (st_ != RGA_OK) \
            return st_; \
    } while (0)

/* The 1-based line and column of a byte offset in the text. */
void rga_load_line_col(const char *text, size_t offset, long *line, long *column);

/* An error at a text offset with a JSON path (NULL: none). */
rga_status_t rga_load_fail_at(rga_loader_t *ld, size_t offset, rga_status_t code, const char *path, const char *fmt,
                              ...) __attribute__((format(printf, 5, 6)));

/* An error in an element: path "array[i].field", "array[i][k]" when field
 * starts with '[', "array[i]" when field is NULL. */
rga_status_t rga_load_fail_elem(rga_loader_t *ld, const rga_elem_t *e, const char *field, rga_status_t code,
                                const char *what);

/* "an object", "an integer", ...: a value's kind for messages. */
const char *rga_load_json_kind(const json_t *v);

/* Grows *items (of size bytes each) to hold need; RGA_ERR_NOMEM when it
 * cannot. */
rga_status_t rga_load_reserve(rga_loader_t *ld, void **items, size_t *cap, size_t need, size_t size);

#define RGA_LOAD_PUSH(ld, arr, count, cap) \
    rga_load_reserve((ld), (void **)&(ld)->r->arr, &(ld)->cap, (ld)->r->count + 1, sizeof(*(ld)->r->arr))

/* A JSON string as a malloc'd C string; "\u0000" becomes the four
 * characters \x00. NULL when out of memory. */
char *rga_load_text_dup(const json_t *v);

/* v as an integer in [min, max]; field names it (v NULL: missing). */
rga_status_t rga_load_as_int(rga_loader_t *ld, const rga_elem_t *e, const char *field, const json_t *v, int64_t min,
                             int64_t max, int64_t *out);

rga_status_t rga_load_need_object(rga_loader_t *ld, const rga_elem_t *e, const json_t *v);

/* The kinds of field an element's table lists. */
typedef enum rga_field_kind {
    RGA_FIELD_INT,      /* int64_t; absent and optional: `absent` */
    RGA_FIELD_BOOL,     /* bool; absent and optional: `absent` != 0 */
    RGA_FIELD_STR,      /* char * (owned); absent and optional: "" */
    RGA_FIELD_CAUSE,    /* uint8_t cause from a name; unknown names read as other */
    RGA_FIELD_STATES,   /* int64_t[RGA_STATE_COUNT] from the five state keys (key unused) */
    RGA_FIELD_CAUSE_NS, /* int64_t[RGA_CAUSE_COUNT] from an optional blocked_by_cause; aux: its bool */
} rga_field_kind_t;

/* One field of an object element: where it goes in the row (off) and what
 * it accepts. Tables list fields in the order their errors take precedence. */
typedef struct rga_field {
    const char *key;
    rga_field_kind_t kind;
    size_t off, aux;
    bool required;
    int64_t min, max, absent;
} rga_field_t;

/* Checks v is an object and reads its n fields into row (zeroed by the
 * caller). */
rga_status_t rga_load_fields(rga_loader_t *ld, const rga_elem_t *e, const json_t *v, const rga_field_t *fields,
                             size_t n, void *row);

/* One item of a tuple element: an int64_t at off in [min, max]. */
typedef struct rga_tuple_item {
    size_t off;
    int64_t min, max;
} rga_tuple_item_t;

/* Checks the tuple has exactly n integers and reads them into row. */
rga_status_t rga_load_tuple(rga_loader_t *ld, const rga_elem_t *e, const rga_tuple_t *t,
                            const rga_tuple_item_t *items, size_t n, void *row);

/* Item i of a tuple as an integer in [min, max] (the tuple's length checked
 * by the caller). */
rga_status_t rga_load_tuple_int(rga_loader_t *ld, const rga_elem_t *e, const rga_tuple_t *t, size_t i, int64_t min,
                                int64_t max, int64_t *out);

/* Checks that t is an array of exactly n integers. */
rga_status_t rga_load_need_tuple(rga_loader_t *ld, const rga_elem_t *e, const rga_tuple_t *t, size_t n);

#endif
