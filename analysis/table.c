/* table.c — aligned text tables (see table.h). Knows nothing about reports. */
#include "table.h"

#include <stdlib.h>
#include <string.h>

static int
add_row(rga_table_t *t, const char *const *cells, const char *color)
{
    if (t->n_rows == t->cap_rows) {
        size_t cap = t->cap_rows ? t->cap_rows * 2 : 16;
        char **c = realloc(t->cells, cap * t->n_cols * sizeof(char *));
        if (!c)
            return -1;
        t->cells = c;
        char **k = realloc(t->colors, cap * sizeof(char *));
        if (!k)
            return -1;
        t->colors = k;
        t->cap_rows = cap;
    }
    char **row = &t->cells[t->n_rows * t->n_cols];
    for (size_t i = 0; i < t->n_cols; i++)
        row[i] = NULL;
    t->colors[t->n_rows] = NULL;
    t->n_rows++;
    for (size_t i = 0; i < t->n_cols; i++) {
        row[i] = strdup(cells[i] ? cells[i] : "");
        if (!row[i])
            return -1;
    }
    if (color && !(t->colors[t->n_rows - 1] = strdup(color)))
        return -1;
    return 0;
}

int
rga_table_init(rga_table_t *t, size_t n_cols, const char *const *header)
{
    memset(t, 0, sizeof(*t));
    if (n_cols == 0 || n_cols > RGA_TABLE_MAX_COLS)
        return -1;
    t->n_cols = n_cols;
    t->left[0] = true;
    return add_row(t, header, NULL);
}

void
rga_table_left(rga_table_t *t, size_t col)
{
    if (col < t->n_cols)
        t->left[col] = true;
}

int
rga_table_add(rga_table_t *t, const char *const *cells, const char *color)
{
    return add_row(t, cells, color);
}

void
rga_table_print(const rga_table_t *t, FILE *out, int indent, bool color)
{
    size_t width[RGA_TABLE_MAX_COLS] = {0};
    for (size_t r = 0; r < t->n_rows; r++)
        for (size_t c = 0; c < t->n_cols; c++) {
            size_t w = rga_text_width(t->cells[r * t->n_cols + c]);
            if (w > width[c])
                width[c] = w;
        }
    for (size_t r = 0; r < t->n_rows; r++) {
        /* Stop at the last non-empty cell: no trailing blanks. */
        size_t n_cols = t->n_cols;
        while (n_cols > 1 && t->cells[r * t->n_cols + n_cols - 1][0] == '\0')
            n_cols--;
        fprintf(out, "%*s", indent, "");
        const char *prefix = r == 0 ? "\033[1m" : t->colors[r];
        if (color && prefix)
            fputs(prefix, out);
        for (size_t c = 0; c < n_cols; c++) {
            const char *cell = t->cells[r * t->n_cols + c];
            size_t pad = width[c] - rga_text_width(cell);
            bool last = c + 1 == n_cols;
            if (t->left[c])
                fprintf(out, "%s%*s", cell, last ? 0 : (int)pad, "");
            else
                fprintf(out, "%*s%s", (int)pad, "", cell);
            if (!last)
                fputs("  ", out);
        }
        if (color && prefix)
            fputs("\033[0m", out);
        fputc('\n', out);
    }
}

void
rga_table_free(rga_table_t *t)
{
    for (size_t i = 0; i < t->n_rows * t->n_cols; i++)
        free(t->cells[i]);
    for (size_t i = 0; i < t->n_rows; i++)
        free(t->colors[i]);
    free(t->cells);
    free(t->colors);
    memset(t, 0, sizeof(*t));
}
