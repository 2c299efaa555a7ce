/* units.c — duration formatting and parsing (see units.h). */
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
rga_format_duration(int64_t ns, char *buf, size_t size)
{
    const char *sign = ns < 0 ? "-" : "";
    double v = ns < 0 ? -(double)ns : (double)ns;
    if (ns == 0)
        snprintf(buf, size, "0");
    else if (v < 1e3)
        snprintf(buf, size, "%s%.0fns", sign, v);
    else if (v < 1e6)
        snprintf(buf, size, "%s%.*fµs", sign, v < 1e4 ? 2 : v < 1e5 ? 1 : 0, v / 1e3);
    else if (v < 1e9)
        snprintf(buf, size, "%s%.*fms", sign, v < 1e7 ? 2 : v < 1e8 ? 1 : 0, v / 1e6);
    else if (v < 60e9)
        snprintf(buf, size, "%s%.*fs", sign, v < 1e10 ? 2 : 1, v / 1e9);
    else {
        double secs = v / 1e9;
        long minutes = (long)(secs / 60);
        snprintf(buf, size, "%s%ldm%02lds", sign, minutes, (long)(secs - minutes * 60.0));
    }
    return buf;
}

bool
rga_parse_duration(const char *text, int64_t *ns)
{
    if (!text || !*text || *text == '-' || *text == '+')
        return false;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno != 0 || !isfinite(v) || v < 0)
        return false;
    double scale;
    if (*end == '\0' || strcmp(end, "s") == 0)
        scale = 1e9;
    else if (strcmp(end, "ms") == 0)
        scale = 1e6;
    else if (strcmp(end, "us") == 0 || strcmp(end, "µs") == 0)
        scale = 1e3;
    else if (strcmp(end, "ns") == 0)
        scale = 1;
    else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
        scale = 60e9;
    else
        return false;
    double r = v * scale;
    if (r >= 9.2e18)
        return false;
    *ns = (int64_t)llround(r);
    return true;
}

char *
rga_format_percent(int64_t part, int64_t whole, char *buf, size_t size)
{
    if (whole <= 0)
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.1f%%", 100.0 * (double)part / (double)whole);
    return buf;
}
