/* term_text.c — escaping and display width of terminal text (see term_text.h).
 * Decodes UTF-8 itself (strict: no overlongs, no surrogates, at most
 * U+10FFFF); knows nothing about reports or tables. */
#include "term_text.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Decodes one character at s; returns its length in bytes, or 0 when the
 * bytes there are not valid UTF-8. */
static size_t
decode(const unsigned char *s, uint32_t *cp)
{
    unsigned char c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t n;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2, v = c & 0x1F, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, v = c & 0x0F, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, v = c & 0x07, min = 0x10000;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return n;
}

static bool
is_control(uint32_t cp)
{
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
        return true;
    /* Bidirectional controls reorder what follows on the line (U+202E shows
     * "evil\u202Etxt.exe" as "evilexe.txt"); line and paragraph separators
     * break it. */
    return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

typedef struct range {
    uint32_t lo, hi;
} range_t;

/* East Asian Wide (W) and Fullwidth (F) blocks, and the emoji blocks
 * terminals draw two columns wide. */
static const range_t wide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B}, {0x2329, 0x232A},   {0x23E9, 0x23EC},   {0x23F0, 0x23F0},
    {0x23F3, 0x23F3},   {0x25FD, 0x25FE}, {0x2614, 0x2615},   {0x2648, 0x2653},   {0x267F, 0x267F},
    {0x2693, 0x2693},   {0x26A1, 0x26A1}, {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},
    {0x26CE, 0x26CE},   {0x26D4, 0x26D4}, {0x26EA, 0x26EA},   {0x26F2, 0x26F3},   {0x26F5, 0x26F5},
    {0x26FA, 0x26FA},   {0x26FD, 0x26FD}, {0x2705, 0x2705},   {0x270A, 0x270B},   {0x2728, 0x2728},
    {0x274C, 0x274C},   {0x274E, 0x274E}, {0x2753, 0x2755},   {0x2757, 0x2757},   {0x2795, 0x2797},
    {0x27B0, 0x27B0},   {0x27BF, 0x27BF}, {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},
    {0x2E80, 0x303E},   {0x3041, 0x33FF}, {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},
    {0xA960, 0xA97F},   {0xAC00, 0xD7A3}, {0xF900, 0xFAFF},   {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},
    {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6}, {0x1F300, 0x1F64F}, {0x1F900, 0x1F9FF}, {0x20000, 0x2FFFD},
    {0x30000, 0x3FFFD},
};

/* Combining marks, zero-width spaces and joiners, direction marks, variation selectors. */
static const range_t zero[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF}, {0x200B, 0x200F},
    {0x202A, 0x202E}, {0x2060, 0x2064}, {0x20D0, 0x20FF}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF},
};

static bool
in_ranges(uint32_t cp, const range_t *r, size_t n)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp > r[mid].hi)
            lo = mid + 1;
        else if (cp < r[mid].lo)
            hi = mid;
        else
            return true;
    }
    return false;
}

static size_t
char_width(uint32_t cp)
{
    if (in_ranges(cp, zero, sizeof(zero) / sizeof(zero[0])))
        return 0;
    return in_ranges(cp, wide, sizeof(wide) / sizeof(wide[0])) ? 2 : 1;
}

char *
rga_term_escape(const char *src, char *dst, size_t size)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t used = 0;
    while (*s) {
        uint32_t cp;
        size_t n = decode(s, &cp);
        if (n == 0 || is_control(cp)) {
            /* Every byte of the character (one when invalid) as \xNN. */
            size_t k = n ? n : 1;
            if (used + 4 * k + 1 > size)
                break;
            for (size_t i = 0; i < k; i++)
                used += (size_t)snprintf(dst + used, size - used, "\\x%02x", s[i]);
            s += k;
        } else {
            if (used + n + 1 > size)
                break;
            memcpy(dst + used, s, n);
            used += n;
            s += n;
        }
    }
    if (size > 0)
        dst[used] = '\0';
    return dst;
}

size_t
rga_text_width(const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t w = 0;
    while (*s) {
        uint32_t cp;
        size_t n = decode(s, &cp);
        w += n ? char_width(cp) : 1;
        s += n ? n : 1;
    }
    return w;
}

size_t
rga_text_prefix_bytes(const char *text, size_t max_bytes)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t bytes = 0;
    while (s[bytes]) {
        uint32_t cp;
        size_t n = decode(s + bytes, &cp);
        if (n == 0 || bytes + n > max_bytes)
            break; /* a character cut short, or no room for the next */
        bytes += n;
    }
    return bytes;
}

size_t
rga_text_prefix(const char *text, size_t cols)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t w = 0, bytes = 0;
    while (s[bytes]) {
        uint32_t cp;
        size_t n = decode(s + bytes, &cp);
        size_t cw = n ? char_width(cp) : 1;
        if (w + cw > cols)
            break;
        w += cw;
        bytes += n ? n : 1;
    }
    return bytes;
}
