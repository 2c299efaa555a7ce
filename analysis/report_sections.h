/* report_sections.h — report.json's top-level keys, and for each the
 * converter of its value or of one element of its array into the model.
 *
 * It does NOT walk the text (report_load.c does) nor check ids that point
 * into other sections (report_validate.c does, once all are loaded).
 *
 * Contract
 * - rga_sections[] lists every key the loader knows, rga_n_sections of
 *   them; each has one bit (for duplicate and required-key checks) and at
 *   most one of: each (an array of objects or strings), each_tuple (an
 *   array of integer tuples), value (one object). None: a scalar the loader
 *   reads itself (format, version, minor).
 * - A converter appends to the loader's report and returns RGA_OK, or the
 *   status it set in ld->err. Rows it counted before failing are freed with
 *   the report.
 */
#ifndef RGA_REPORT_SECTIONS_H
#define RGA_REPORT_SECTIONS_H

#include "report_fields.h"

typedef struct rga_section rga_section_t;
typedef rga_status_t (*rga_element_fn)(rga_loader_t *, const rga_section_t *, const rga_elem_t *, const json_t *);
typedef rga_status_t (*rga_tuple_fn)(rga_loader_t *, const rga_section_t *, const rga_elem_t *, const rga_tuple_t *);

/* A section read row by row from a table: where its rows live (offsets of
 * its array and count in rga_report_t, of its capacity in rga_loader_t),
 * the row's size, its object fields or tuple items, and a check of the
 * whole row after them (NULL: none). */
typedef struct rga_rows {
    size_t array, count, cap, size;
    const rga_field_t *fields;
    const rga_tuple_item_t *items;
    size_t n;
    rga_status_t (*check)(rga_loader_t *, const rga_elem_t *, const json_t *, void *row);
} rga_rows_t;

enum rga_section_bit {
    RGA_K_FORMAT = 1u << 0,
    RGA_K_VERSION = 1u << 1,
    RGA_K_MINOR = 1u << 2,
    RGA_K_META = 1u << 3,
    RGA_K_STATS = 1u << 4,
    RGA_K_RACTORS = 1u << 5,
    RGA_K_THREADS = 1u << 6,
    RGA_K_LABEL_SETS = 1u << 7,
    RGA_K_LABEL_TOTALS = 1u << 8,
    RGA_K_FRAMES = 1u << 9,
    RGA_K_STACKS = 1u << 10,
    RGA_K_SAMPLES = 1u << 11,
    RGA_K_INTERVALS = 1u << 12,
    RGA_K_EDGES = 1u << 13,
    RGA_K_BLAME = 1u << 14,
    RGA_K_CAUSES = 1u << 15,
    RGA_K_INTERVAL_CAUSES = 1u << 16,
    RGA_K_BLOCKED_EDGES = 1u << 17,
    RGA_K_BLOCKED_METHODS = 1u << 18
};

/* The keys a report must have. */
#define RGA_K_REQUIRED (RGA_K_FORMAT | RGA_K_VERSION | RGA_K_META | RGA_K_RACTORS | RGA_K_THREADS)

struct rga_section {
    const char *key;
    unsigned bit;
    rga_element_fn each;
    rga_tuple_fn each_tuple;
    rga_element_fn value;
    const rga_rows_t *rows; /* the tables each or each_tuple reads; NULL: a converter of its own */
};

extern const rga_section_t rga_sections[];
extern const size_t rga_n_sections;

#endif
