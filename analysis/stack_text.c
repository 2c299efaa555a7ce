/* stack_text.c — the one-line stack rendering of the summary tables (see
 * stack_text.h).
 *
 * Walks the stack once, leaf first, turning each run of equal frames into
 * one item and appending items while they fit the width. Does not merge
 * lines (summary_text.c does) and does not allocate. Frame text is escaped
 * for the terminal (term_text.h).
 */
#include "stack_text.h"
#include "table.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool
is_synthetic(const rga_report_t *r, int64_t frame)
{
    return frame <= RGA_FRAME_GC_SWEEP && r->frames[frame].path[0] == '<';
}

/* Frames are compared by content: merged reports may hold equal frames
 * under different ids. */
static bool
same_frame(const rga_report_t *r, int64_t a, int64_t b)
{
    return a == b || (strcmp(r->frames[a].label, r->frames[b].label) == 0 &&
                      strcmp(r->frames[a].path, r->frames[b].path) == 0);
}

/* Appends text at buf[*used]; false when it did not fit whole. */
static bool
append(char *buf, size_t size, size_t *used, const char *text)
{
    int n = snprintf(buf + *used, size - *used, "%s", text);
    if (n < 0 || (size_t)n >= size - *used) {
        buf[*used] = '\0';
        return false;
    }
    *used += (size_t)n;
    return true;
}

char *
rga_stack_line(const rga_report_t *r, int64_t stack, size_t width, char *buf, size_t size)
{
    return rga_stack_line_keep(r, stack, width, 1, buf, size);
}

char *
rga_stack_line_keep(const rga_report_t *r, int64_t stack, size_t width, size_t keep, char *buf, size_t size)
{
    if (size == 0)
        return buf;
    buf[0] = '\0';
    if (stack < 0 || (uint64_t)stack >= r->n_stacks) {
        snprintf(buf, size, "(no stack)");
        return buf;
    }
    const rga_stack_t *s = &r->stacks[stack];
    /* No frame slots at all (only empty stacks): stack_frames is NULL, and NULL + 0 is undefined. */
    const int64_t *frames = s->depth ? &r->stack_frames[s->first] : NULL;
    static const char more[] = " < …";
    const size_t more_cols = 4;
    size_t used = 0, cols = 0, items = 0;
    const char *last_path = NULL;
    bool left_out = false;
    for (uint32_t i = 0; i < s->depth;) {
        if (is_synthetic(r, frames[i])) {
            i++;
            continue;
        }
        uint32_t run = 1;
        while (i + run < s->depth && same_frame(r, frames[i], frames[i + run]))
            run++;
        const rga_frame_t *f = &r->frames[frames[i]];
        bool show_path = f->path[0] && f->path[0] != '<' && !(last_path && strcmp(last_path, f->path) == 0);
        char count[32] = "";
        if (run > 1)
            snprintf(count, sizeof(count), " ×%u", run);
        char item[768], label[256], path[256];
        rga_term_escape(f->label, label, sizeof(label));
        rga_term_escape(show_path ? f->path : "", path, sizeof(path));
        snprintf(item, sizeof(item), "%s%s%s%s%s%s", items ? " < " : "", label, count, show_path ? " (" : "", path,
                 show_path ? ")" : "");
        size_t item_cols = rga_text_width(item);
        /* Synthetic frames are only leaves: anything after this run is real. */
        bool more_after = i + run < s->depth;
        if (width && items > 0 && items >= keep && cols + item_cols + (more_after ? more_cols : 0) > width) {
            left_out = true;
            break;
        }
        if (!append(buf, size, &used, item)) {
            left_out = items > 0;
            break;
        }
        cols += item_cols;
        items++;
        if (show_path)
            last_path = f->path;
        i += run;
    }
    if (left_out)
        append(buf, size, &used, more);
    if (items == 0) {
        if (s->depth == 0)
            snprintf(buf, size, "(empty stack)");
        else if (frames[0] == RGA_FRAME_GVL_WAIT && is_synthetic(r, frames[0]))
            snprintf(buf, size, "%s", RGA_STACK_GVL_WAIT_ONLY);
        else
            rga_term_escape(r->frames[frames[0]].label, buf, size);
    }
    return buf;
}
