/* collapsed_writer.c — folded stack lines (see collapsed_writer.h).
 *
 * Each selected sample becomes its line's text; the texts are sorted so that
 * equal ones sit together and are merged on output. Memory is the text of
 * the lines, which is at most the selected stacks' names.
 */
#include "collapsed_writer.h"
#include "summary.h"
#include "term_text.h"

#include <stdlib.h>
#include <string.h>

typedef struct line {
    char *text;
    int64_t weight;
} line_t;

typedef struct text_buf {
    char *s;
    size_t len, cap;
    bool nomem;
} text_buf_t;

/* Appends name as the text views show it (rga_term_escape: no control
 * byte, so no newline either), with ';', which would split the frame,
 * written ':'. */
static void
put_frame(text_buf_t *b, const char *raw)
{
    size_t rn = strlen(raw);
    char small[256];
    char *name = 4 * rn + 1 <= sizeof(small) ? small : malloc(4 * rn + 1);
    if (!name) {
        b->nomem = true;
        return;
    }
    rga_term_escape(raw, name, 4 * rn + 1);
    size_t n = strlen(name);
    if (b->len + n + 2 > b->cap) {
        size_t cap = (b->len + n + 2) * 2;
        char *grown = realloc(b->s, cap);
        if (!grown) {
            b->nomem = true;
            if (name != small)
                free(name);
            return;
        }
        b->s = grown;
        b->cap = cap;
    }
    if (b->len)
        b->s[b->len++] = ';';
    for (size_t i = 0; i < n; i++)
        b->s[b->len++] = name[i] == ';' ? ':' : name[i];
    b->s[b->len] = '\0';
    if (name != small)
        free(name);
}

static int
cmp_line(const void *a, const void *b)
{
    return strcmp(((const line_t *)a)->text, ((const line_t *)b)->text);
}

rga_status_t
rga_collapsed_write(const rga_profile_t *p, const rga_collapsed_opts_t *opts, FILE *out, rga_error_t *err)
{
    static const rga_collapsed_opts_t none = {false, false};
    if (!opts)
        opts = &none;
    const rga_report_t *r = p->report;
    line_t *lines = calloc(p->n_samples ? p->n_samples : 1, sizeof(*lines));
    uint32_t *stack = calloc(p->max_depth, sizeof(*stack));
    size_t n = 0;
    rga_status_t st = RGA_OK;
    if (!lines || !stack)
        goto nomem;
    for (size_t i = 0; i < p->n_samples; i++) {
        const rga_sample_t *s = p->samples[i];
        if (s->weight_ns == 0)
            continue;
        text_buf_t b = {0};
        char name[512];
        if (opts->thread_root) {
            long ti = rga_report_thread_index(r, s->thread);
            if (ti >= 0)
                put_frame(&b, rga_profile_thread_title(&r->threads[ti], name, sizeof(name)));
        }
        if (opts->label_root)
            put_frame(&b, rga_label_set_text(r, s->label_set, name, sizeof(name)));
        size_t depth = rga_profile_stack(p, s, stack);
        for (size_t d = 0; d < depth; d++)
            put_frame(&b, p->functions[stack[d]].name);
        if (b.nomem) {
            free(b.s);
            goto nomem;
        }
        lines[n++] = (line_t){b.s, s->weight_ns};
    }
    qsort(lines, n, sizeof(*lines), cmp_line);
    for (size_t i = 0; i < n;) {
        int64_t weight = 0;
        size_t j = i;
        for (; j < n && strcmp(lines[j].text, lines[i].text) == 0; j++)
            weight = rga_weight_add(weight, lines[j].weight);
        fprintf(out, "%s %lld\n", lines[i].text, (long long)weight);
        i = j;
    }
    if (ferror(out))
        st = rga_error_set(err, RGA_ERR_IO, "writing the folded stacks failed");
    goto done;
nomem:
    st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory writing the folded stacks");
done:
    for (size_t i = 0; i < n; i++)
        free(lines[i].text);
    free(lines);
    free(stack);
    return st;
}
