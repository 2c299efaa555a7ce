/* table.h — aligned text tables for the terminal views.
 *
 * A table collects rows of cells (copied), then prints them with every column
 * padded to its widest cell (widths are display columns, term_text.h: "µs"
 * is two, a CJK character two). Cells are printed as given: callers escape
 * text that came from a report (rga_term_escape). The first column is left-aligned, the others right-aligned unless
 * rga_table_left() says otherwise. The header row is bold when colour is on.
 * Not thread-safe; free with rga_table_free().
 */
#ifndef RGA_TABLE_H
#define RGA_TABLE_H

#include <stdbool.h>
#include <stdio.h>

#include "term_text.h"

#define RGA_TABLE_MAX_COLS 16

typedef struct rga_table {
    size_t n_cols;
    size_t n_rows, cap_rows;
    char **cells;  /* n_rows * n_cols */
    char **colors; /* per row ANSI colour prefix or NULL, n_rows */
    bool left[RGA_TABLE_MAX_COLS];
} rga_table_t;

/* Starts a table with the header cells (n_cols <= RGA_TABLE_MAX_COLS). Returns 0 or -1 (ENOMEM). */
int rga_table_init(rga_table_t *t, size_t n_cols, const char *const *header);
void rga_table_left(rga_table_t *t, size_t col);
/* Adds a row of n_cols cells; color is an ANSI prefix for the whole row or NULL. Returns 0 or -1. */
int rga_table_add(rga_table_t *t, const char *const *cells, const char *color);
/* Prints with indent spaces before each row. Colour codes only when color is true. */
void rga_table_print(const rga_table_t *t, FILE *out, int indent, bool color);
void rga_table_free(rga_table_t *t);

#endif
