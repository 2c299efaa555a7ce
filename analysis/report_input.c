/*
 * report_input.c — a report's bytes: a file or standard input read whole,
 * gzip inflated within a cap (report_input.h states the rules).
 *
 * It does NOT parse JSON (report_load.c) and does NOT print.
 */
#include "report_input.h"
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

/* Refuse to inflate beyond this: a gzip bomb must not take the machine down. */
static size_t max_inflated = RGA_MAX_INFLATED_DEFAULT;

void
rga_report_set_max_inflated(size_t bytes)
{
    __atomic_store_n(&max_inflated, bytes ? bytes : RGA_MAX_INFLATED_DEFAULT, __ATOMIC_RELAXED);
}

size_t
rga_report_max_inflated(void)
{
    return __atomic_load_n(&max_inflated, __ATOMIC_RELAXED);
}

bool
rga_input_is_gzip(const char *data, size_t len)
{
    return len >= 2 && (unsigned char)data[0] == 0x1f && (unsigned char)data[1] == 0x8b;
}

/* JSON text holds no control byte but whitespace, and a report starts with
 * '{': inflated bytes are checked as they come, so a bomb of zeros or of
 * anything but a report stops at its first chunk, not at the size cap. */
static rga_status_t
check_inflated(const char *buf, size_t from, size_t to, bool *started, rga_error_t *err)
{
    for (size_t i = from; i < to; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
            return rga_error_set(err, RGA_ERR_SYNTAX,
                                 "gzip content is not JSON text: control byte 0x%02x at inflated offset %zu", c, i);
        if (!*started && c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            if (c != '{')
                return rga_error_set(err, RGA_ERR_SYNTAX, "gzip content is not a JSON object: it starts with '%c'",
                                     c);
            *started = true;
        }
    }
    return RGA_OK;
}

rga_status_t
rga_input_inflate(const char *data, size_t len, char **out, size_t *out_len, rga_error_t *err)
{
    const size_t limit = rga_report_max_inflated();
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
        return rga_error_set(err, RGA_ERR_NOMEM, "cannot initialise zlib");
    size_t cap = len < limit / 4 ? len * 4 + 4096 : limit;
    if (cap > limit)
        cap = limit;
    size_t used = 0;
    bool started = false; /* the first non-blank byte was seen (and was '{') */
    char *buf = malloc(cap + 1);
    rga_status_t st = RGA_OK;
    if (!buf) {
        st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory inflating the report");
        goto fail;
    }
    zs.next_in = (Bytef *)data;
    size_t remaining = len;
    for (;;) {
        if (used == cap) {
            if (cap >= limit) {
                st = rga_error_set(err, RGA_ERR_IO, "gzip data inflates beyond the limit of %zu bytes", limit);
                goto fail;
            }
            size_t ncap = cap > limit / 2 ? limit : cap * 2;
            char *p = realloc(buf, ncap + 1);
            if (!p) {
                st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory inflating the report");
                goto fail;
            }
            buf = p;
            cap = ncap;
        }
        uInt in_chunk = remaining > (1u << 30) ? (1u << 30) : (uInt)remaining;
        uInt out_chunk = (cap - used) > (1u << 30) ? (1u << 30) : (uInt)(cap - used);
        zs.avail_in = in_chunk;
        zs.next_out = (Bytef *)buf + used;
        zs.avail_out = out_chunk;
        int zr = inflate(&zs, Z_NO_FLUSH);
        remaining -= in_chunk - zs.avail_in;
        size_t before = used;
        used += out_chunk - zs.avail_out;
        st = check_inflated(buf, before, used, &started, err);
        if (st != RGA_OK)
            goto fail;
        if (zr == Z_STREAM_END) {
            if (remaining == 0)
                break;
            /* Concatenated gzip members are one file (gzip -c a b > c); anything else is not gzip. */
            if (!rga_input_is_gzip((const char *)zs.next_in, remaining)) {
                st = rga_error_set(err, RGA_ERR_IO, "%zu bytes of unexpected data after the gzip stream", remaining);
                goto fail;
            }
            inflateReset(&zs);
            continue;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            st = rga_error_set(err, RGA_ERR_IO, "bad gzip data: %s", zs.msg ? zs.msg : "corrupt stream");
            goto fail;
        }
        if (zr == Z_BUF_ERROR && remaining == 0 && zs.avail_out > 0) {
            st = rga_error_set(err, RGA_ERR_IO, "truncated gzip data");
            goto fail;
        }
    }
    inflateEnd(&zs);
    *out = buf;
    *out_len = used;
    return RGA_OK;
fail:
    inflateEnd(&zs);
    free(buf);
    return st;
}

rga_status_t
rga_input_read(const char *path, char **out, size_t *out_len, rga_error_t *err)
{
    *out = NULL;
    *out_len = 0;
    bool from_stdin = strcmp(path, "-") == 0;
    FILE *f = from_stdin ? stdin : fopen(path, "rb");
    if (!f)
        return rga_error_set(err, RGA_ERR_IO, "cannot open: %s", strerror(errno));
    char *buf = NULL;
    size_t cap = 0, used = 0;
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        return rga_error_set(err, RGA_ERR_IO, "is a directory");
    }
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0)
        cap = (size_t)sb.st_size + 1;
    rga_status_t st = RGA_OK;
    for (;;) {
        if (used == cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            char *p = realloc(buf, ncap);
            if (!p) {
                st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory reading the file");
                goto done;
            }
            buf = p;
            cap = ncap;
        }
        if (!buf) {
            buf = malloc(cap);
            if (!buf) {
                st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory reading the file");
                goto done;
            }
        }
        size_t n = fread(buf + used, 1, cap - used, f);
        used += n;
        if (n == 0) {
            if (ferror(f))
                st = rga_error_set(err, RGA_ERR_IO, "read error: %s", strerror(errno));
            break;
        }
    }
done:
    if (!from_stdin)
        fclose(f);
    if (st != RGA_OK) {
        free(buf);
        return st;
    }
    *out = buf;
    *out_len = used;
    return RGA_OK;
}
