/* top_text.c — self and cumulative time per function (see top_text.h). */
#include "top_text.h"
#include "table.h"
#include "units.h"

#include <stdlib.h>
#include <string.h>

static const rga_profile_function_t *
function_of(const rga_top_t *t, const rga_top_row_t *row)
{
    return &t->profile->functions[row->function];
}

static int
cmp_row(const void *a, const void *b)
{
    const rga_top_row_t *x = a, *y = b;
    if (x->self_ns != y->self_ns)
        return x->self_ns < y->self_ns ? 1 : -1;
    if (x->cum_ns != y->cum_ns)
        return x->cum_ns < y->cum_ns ? 1 : -1;
    return (x->function > y->function) - (x->function < y->function);
}

rga_status_t
rga_top_build(const rga_profile_t *p, rga_top_t *out, rga_error_t *err)
{
    memset(out, 0, sizeof(*out));
    out->profile = p;
    const rga_report_t *r = p->report;
    size_t nf = p->n_functions;
    rga_top_row_t *rows = calloc(nf ? nf : 1, sizeof(*rows));
    size_t *seen_in = calloc(nf ? nf : 1, sizeof(*seen_in)); /* sample index + 1 that last counted it */
    bool *thread_seen = calloc(r->n_threads ? r->n_threads : 1, sizeof(*thread_seen));
    uint32_t *stack = calloc(p->max_depth, sizeof(*stack));
    if (!rows || !seen_in || !thread_seen || !stack) {
        free(rows);
        free(seen_in);
        free(thread_seen);
        free(stack);
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory building the top view");
    }
    for (size_t f = 0; f < nf; f++)
        rows[f].function = (uint32_t)f;
    for (size_t i = 0; i < p->n_samples; i++) {
        const rga_sample_t *s = p->samples[i];
        size_t depth = rga_profile_stack(p, s, stack);
        rows[stack[depth - 1]].self_ns = rga_weight_add(rows[stack[depth - 1]].self_ns, s->weight_ns);
        for (size_t d = 0; d < depth; d++) {
            if (seen_in[stack[d]] == i + 1)
                continue; /* recursion: once per sample */
            seen_in[stack[d]] = i + 1;
            rows[stack[d]].cum_ns = rga_weight_add(rows[stack[d]].cum_ns, s->weight_ns);
        }
        long ti = rga_report_thread_index(r, s->thread);
        if (ti >= 0 && !thread_seen[ti]) {
            thread_seen[ti] = true;
            out->n_threads++;
        }
    }
    size_t n = 0;
    for (size_t f = 0; f < nf; f++)
        if (rows[f].cum_ns > 0)
            rows[n++] = rows[f];
    qsort(rows, n, sizeof(*rows), cmp_row);
    out->rows = rows;
    out->n_rows = n;
    free(seen_in);
    free(thread_seen);
    free(stack);
    return RGA_OK;
}

void
rga_top_free(rga_top_t *t)
{
    free(t->rows);
    memset(t, 0, sizeof(*t));
}

rga_status_t
rga_top_write_text(const rga_top_t *t, size_t max_rows, bool color, FILE *out, rga_error_t *err)
{
    const rga_profile_t *p = t->profile;
    const char *mode = p->report->meta.mode ? p->report->meta.mode : "wall";
    if (max_rows == 0)
        max_rows = 20;
    size_t shown = t->n_rows < max_rows ? t->n_rows : max_rows;
    char total[32], what[64];
    if (p->weight == RGA_WEIGHT_ROOT)
        snprintf(what, sizeof(what), "wait explained at its roots");
    else if (p->weight == RGA_WEIGHT_DIRECT)
        snprintf(what, sizeof(what), "wait caused, directly");
    else
        snprintf(what, sizeof(what), "%s time", mode);
    fprintf(out, "Flat profile: %s %s over %zu thread%s, %zu function%s (%zu shown)\n", what,
            rga_format_duration(p->total_ns, total, sizeof(total)), t->n_threads, t->n_threads == 1 ? "" : "s",
            t->n_rows, t->n_rows == 1 ? "" : "s", shown);
    static const char *const header[] = {"self", "self%", "sum%", "cum", "cum%", "function", "file"};
    rga_table_t table;
    if (rga_table_init(&table, 7, header) != 0)
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory writing the top view");
    rga_table_left(&table, 5);
    rga_table_left(&table, 6);
    int64_t sum = 0;
    rga_status_t st = RGA_OK;
    for (size_t i = 0; i < shown && st == RGA_OK; i++) {
        const rga_top_row_t *row = &t->rows[i];
        const rga_profile_function_t *f = function_of(t, row);
        char self[32], self_pct[16], sum_pct[16], cum[32], cum_pct[16], name[1024], file[1024];
        sum = rga_weight_add(sum, row->self_ns);
        /* Names come from the profiled program: no byte a terminal acts on. */
        rga_term_escape(f->name, name, sizeof(name));
        rga_term_escape(f->synthetic ? "" : f->file, file, sizeof(file));
        const char *cells[7] = {
            rga_format_duration(row->self_ns, self, sizeof(self)),
            rga_format_percent(row->self_ns, p->total_ns, self_pct, sizeof(self_pct)),
            rga_format_percent(sum, p->total_ns, sum_pct, sizeof(sum_pct)),
            rga_format_duration(row->cum_ns, cum, sizeof(cum)),
            rga_format_percent(row->cum_ns, p->total_ns, cum_pct, sizeof(cum_pct)),
            name,
            file,
        };
        if (rga_table_add(&table, cells, NULL) != 0)
            st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory writing the top view");
    }
    if (st == RGA_OK)
        rga_table_print(&table, out, 2, color);
    rga_table_free(&table);
    if (st == RGA_OK && ferror(out))
        st = rga_error_set(err, RGA_ERR_IO, "writing the top view failed");
    return st;
}
