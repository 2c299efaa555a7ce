/*
 * log_numbers.c — a log line's numbers as text (log_numbers.h). Integer
 * arithmetic only: the same text as Rperf::Log::Format.format_float(ns /
 * 1e6) without going through a Float.
 */
#include "log_numbers.h"

#include <string.h>

/* Digits of v (>= 0) into buf; returns their count. */
static size_t
put_uint(uint64_t v, char *buf)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

size_t
rperf_log_ms(int64_t ns, char *buf)
{
    if (ns < 500) {
        buf[0] = '0';
        return 1;
    }
    uint64_t us = ((uint64_t)ns + 500) / 1000;
    size_t n = put_uint(us / 1000, buf);
    unsigned frac = (unsigned)(us % 1000);
    if (frac) {
        char digits[3] = {(char)('0' + frac / 100), (char)('0' + frac / 10 % 10), (char)('0' + frac % 10)};
        size_t keep = digits[2] != '0' ? 3 : digits[1] != '0' ? 2 : 1;
        buf[n++] = '.';
        memcpy(buf + n, digits, keep);
        n += keep;
    }
    return n;
}

size_t
rperf_log_integer(int64_t v, char *buf)
{
    if (v >= 0)
        return put_uint((uint64_t)v, buf);
    buf[0] = '-';
    return 1 + put_uint(-(uint64_t)v, buf + 1); /* unsigned negation: INT64_MIN too */
}

size_t
rperf_log_number(int64_t v, int ms, char *buf)
{
    if (v < 0)
        v = 0;
    return ms ? rperf_log_ms(v, buf) : put_uint((uint64_t)v, buf);
}

static VALUE
append_numbers(int argc, VALUE *argv, VALUE self)
{
    (void)self;
    if (argc < 3)
        rb_raise(rb_eArgError, "_c_append_numbers(out, ms, keys, *values)");
    VALUE out = argv[0];
    int ms = RTEST(argv[1]);
    VALUE keys = argv[2];
    Check_Type(out, T_STRING);
    Check_Type(keys, T_ARRAY);
    long n = argc - 3;
    if (RARRAY_LEN(keys) < n)
        rb_raise(rb_eArgError, "%ld values but %ld keys", n, RARRAY_LEN(keys));
    /* Every argument is checked before anything is appended. */
    int64_t values[16];
    if (n > (long)(sizeof(values) / sizeof(values[0])))
        rb_raise(rb_eArgError, "at most %zu values", sizeof(values) / sizeof(values[0]));
    for (long i = 0; i < n; i++) {
        Check_Type(RARRAY_AREF(keys, i), T_STRING);
        if (!RB_INTEGER_TYPE_P(argv[3 + i]))
            rb_raise(rb_eTypeError, "value %ld is not an Integer", i);
        values[i] = NUM2LL(argv[3 + i]);
    }
    char buf[RPERF_LOG_NUMBER_MAX];
    for (long i = 0; i < n; i++) {
        rb_str_buf_append(out, RARRAY_AREF(keys, i));
        rb_str_cat(out, buf, (long)rperf_log_number(values[i], ms, buf));
    }
    return out;
}

void
rperf_log_numbers_define(VALUE mRperf)
{
    rb_define_module_function(mRperf, "_c_append_numbers", append_numbers, -1);
}
