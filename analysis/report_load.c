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
 * One exception, for speed: elements of the integer-tuple arrays (intervals,
 * samples, blame, stacks, interval_causes) that are plain `[int,int,...]` are
 * read by fast_tuple() below, which accepts only a strict subset of what
 * jansson accepts and hands everything else to jansson (RGA_LOAD_JANSSON_ONLY
 * turns it off; see docs/performance.md for what it buys).
 *
 * Each key's value or element goes to its converter (report_sections.c),
 * which checks it on its own; ids that point into other arrays are checked
 * afterwards by report_validate.c, because keys may come in any order. Its
 * bytes come from report_input.c. It does not print, and does not keep any
 * jansson value after loading.
 */
#include "report.h"
#include "report_input.h"
#include "report_internal.h"
#include "report_sections.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the scanner between jansson values ------------------------------------ */

static void
skip_ws(rga_loader_t *ld)
{
    while (ld->pos < ld->len) {
        char c = ld->text[ld->pos];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
            break;
        ld->pos++;
    }
}

static rga_status_t
expect(rga_loader_t *ld, char c, const char *where)
{
    skip_ws(ld);
    if (ld->pos >= ld->len)
        return rga_load_fail_at(ld, ld->pos, RGA_ERR_SYNTAX, NULL,
                                "unexpected end of input (truncated JSON?): expected '%c' %s", c, where);
    if (ld->text[ld->pos] != c)
        return rga_load_fail_at(ld, ld->pos, RGA_ERR_SYNTAX, NULL, "expected '%c' %s", c, where);
    ld->pos++;
    return RGA_OK;
}

/* Parses the next JSON value with jansson; on a syntax error maps jansson's
 * line/column (relative to ld->pos) to the whole text. */
static json_t *
next_value(rga_loader_t *ld, rga_status_t *status)
{
    skip_ws(ld);
    json_error_t je;
    /* JSON_ALLOW_NUL: a label may hold "\u0000" (the writer escapes it); the
     * report must load, and the C views show such a string up to the NUL. */
    json_t *v = json_loadb(ld->text + ld->pos, ld->len - ld->pos,
                           JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
    if (!v) {
        long base_line, base_col;
        rga_load_line_col(ld->text, ld->pos, &base_line, &base_col);
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
load_array(rga_loader_t *ld, const rga_section_t *sec)
{
    const char *key = sec->key;
    skip_ws(ld);
    size_t start = ld->pos;
    if (ld->pos < ld->len && ld->text[ld->pos] != '[') {
        /* Not an array: let jansson parse it so the message names its type. */
        rga_status_t st;
        json_t *v = next_value(ld, &st);
        if (!v)
            return st;
        st = rga_load_fail_at(ld, start, RGA_ERR_SCHEMA, key, "expected an array, got %s", rga_load_json_kind(v));
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
        rga_elem_t e = {key, index, ld->pos};
        rga_status_t st;
        int64_t vals[FAST_TUPLE_MAX];
        size_t n, end;
        if (sec->each_tuple && !ld->jansson_only && fast_tuple(ld->text, ld->len, ld->pos, vals, &n, &end)) {
            ld->pos = end;
            rga_tuple_t t = {NULL, vals, n};
            st = sec->each_tuple(ld, sec, &e, &t);
        } else {
            json_t *v = next_value(ld, &st);
            if (!v)
                return st;
            if (sec->each) {
                st = sec->each(ld, sec, &e, v);
            } else {
                rga_tuple_t t = {v, NULL, json_is_array(v) ? json_array_size(v) : 0};
                st = sec->each_tuple(ld, sec, &e, &t);
            }
            json_decref(v);
        }
        if (st != RGA_OK)
            return st;
        skip_ws(ld);
        if (ld->pos >= ld->len)
            return rga_load_fail_at(ld, ld->pos, RGA_ERR_SYNTAX, key,
                                    "unexpected end of input (truncated JSON?) inside the array");
        char c = ld->text[ld->pos++];
        if (c == ']')
            return RGA_OK;
        if (c != ',')
            return rga_load_fail_at(ld, ld->pos - 1, RGA_ERR_SYNTAX, key, "expected ',' or ']' after an element");
    }
}

/* One top-level value that is not an array: section NULL for a key this
 * reader does not know. */
static rga_status_t
load_value(rga_loader_t *ld, const rga_section_t *section, size_t offset)
{
    rga_status_t st;
    json_t *v = next_value(ld, &st);
    if (!v)
        return st;
    rga_elem_t e = {"", 0, offset};
    switch (section ? section->bit : 0) {
    case RGA_K_FORMAT:
        if (!json_is_string(v) || strcmp(json_string_value(v), "rperf-gvl-report") != 0)
            st = rga_load_fail_at(ld, offset, RGA_ERR_VERSION, "format",
                                  "not an rperf-gvl report (expected \"rperf-gvl-report\")");
        break;
    case RGA_K_VERSION:
        if (!json_is_integer(v))
            st = rga_load_fail_at(ld, offset, RGA_ERR_SCHEMA, "version", "expected an integer, got %s",
                                  rga_load_json_kind(v));
        else if (json_integer_value(v) != 1)
            st = rga_load_fail_at(ld, offset, RGA_ERR_VERSION, "version",
                                  "unsupported report version %" PRId64 " (this reader supports 1)",
                                  (int64_t)json_integer_value(v));
        else
            ld->r->version = 1;
        break;
    case RGA_K_MINOR:
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            st = rga_load_fail_at(ld, offset, RGA_ERR_SCHEMA, "minor", "expected a non-negative integer");
        else
            ld->r->minor = (int64_t)json_integer_value(v);
        break;
    default:
        /* An unknown key is parsed (so it must be valid JSON) and ignored. */
        if (section && section->value)
            st = section->value(ld, section, &e, v);
        break;
    }
    json_decref(v);
    return st;
}

static rga_status_t
load_top(rga_loader_t *ld)
{
    skip_ws(ld);
    if (ld->pos >= ld->len)
        return rga_load_fail_at(ld, ld->pos, RGA_ERR_SYNTAX, NULL, "empty input (not JSON)");
    if (ld->text[ld->pos] != '{')
        return rga_load_fail_at(ld, ld->pos, RGA_ERR_SYNTAX, NULL, "not a JSON object: expected '{'");
    ld->pos++;
    skip_ws(ld);
    if (ld->pos < ld->len && ld->text[ld->pos] == '}') {
        ld->pos++;
    } else {
        for (;;) {
            skip_ws(ld);
            size_t key_offset = ld->pos;
            if (ld->pos >= ld->len)
                return rga_load_fail_at(ld, ld->pos, RGA_ERR_SYNTAX, NULL,
                                        "unexpected end of input (truncated JSON?)");
            if (ld->text[ld->pos] != '"')
                return rga_load_fail_at(ld, ld->pos, RGA_ERR_SYNTAX, NULL, "expected a string key");
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
            const rga_section_t *sec = NULL;
            for (size_t i = 0; i < rga_n_sections && !sec; i++)
                if (strcmp(rga_sections[i].key, key) == 0)
                    sec = &rga_sections[i];
            if (sec && (ld->seen & sec->bit))
                return rga_load_fail_at(ld, key_offset, RGA_ERR_SCHEMA, key, "duplicate key");
            if (sec)
                ld->seen |= sec->bit;
            if (sec && (sec->each || sec->each_tuple)) {
                TRY(load_array(ld, sec));
                if (sec->bit == RGA_K_INTERVALS) {
                    ld->r->intervals_text_offset = value_offset;
                    ld->r->intervals_text_length = ld->pos - value_offset;
                }
            } else {
                TRY(load_value(ld, sec, value_offset));
            }
            skip_ws(ld);
            if (ld->pos >= ld->len)
                return rga_load_fail_at(ld, ld->pos, RGA_ERR_SYNTAX, NULL,
                                        "unexpected end of input (truncated JSON?)");
            char c = ld->text[ld->pos++];
            if (c == '}')
                break;
            if (c != ',')
                return rga_load_fail_at(ld, ld->pos - 1, RGA_ERR_SYNTAX, NULL,
                                        "expected ',' or '}' in the report object");
        }
    }
    skip_ws(ld);
    if (ld->pos != ld->len)
        return rga_load_fail_at(ld, ld->pos, RGA_ERR_SYNTAX, NULL, "unexpected data after the report object");
    for (size_t i = 0; i < rga_n_sections; i++) {
        if ((rga_sections[i].bit & RGA_K_REQUIRED) && !(ld->seen & rga_sections[i].bit)) {
            rga_error_set(ld->err, RGA_ERR_SCHEMA, "missing required key");
            if (ld->err)
                snprintf(ld->err->path, sizeof(ld->err->path), "%s", rga_sections[i].key);
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
    rga_loader_t ld;
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
