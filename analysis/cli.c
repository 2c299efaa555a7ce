/* cli.c — what the two parts of the rperf-gvl command line share (see
 * cli.h): the help text, the one way to print a message, the exit code of a
 * library status, and small parsers of option values. It reads no report and
 * runs no program. CLI-only: not compiled into the Ruby extension.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "term_text.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

const char progname[] = "rperf-gvl";

void
usage(FILE *out)
{
    fprintf(out,
            "Usage: %s [OPTION]... REPORT...\n"
            "       %s record [-o FILE] [--html FILE] [--frequency N] -- COMMAND [ARG]...\n"
            "       %s metrics [--openmetrics] [-o FILE] DIR   (see %s metrics --help)\n"
            "Show where a Ruby program loses time to the GVL, blocking and GC.\n"
            "Several REPORTs (a snapshot series of one process) are merged on one time axis.\n"
            "A REPORT of - is read from standard input.\n"
            "\n"
            "Views (default: the summary on standard output):\n"
            "      --summary            per thread/Ractor/label tables, top waiters, holders, stacks\n"
            "      --timeline           per-thread contention timeline in the terminal\n"
            "      --json               the summary as JSON\n"
            "      --dot[=FILE]         wait graph in Graphviz DOT (standard output without FILE)\n"
            "      --svg FILE           wait graph rendered as SVG\n"
            "      --png FILE           wait graph rendered as PNG\n"
            "      --perfetto FILE      Chrome trace-event JSON for the Perfetto UI\n"
            "      --pprof FILE         samples as a gzip'd pprof profile (go tool pprof, Pyroscope)\n"
            "      --collapsed[=FILE]   folded stacks for flame graphs (standard output without FILE)\n"
            "      --speedscope FILE    speedscope JSON, one profile per thread\n"
            "      --top                self and cumulative time per function (flat view)\n"
            "      --html FILE          one self-contained interactive page (opens offline)\n"
            "      --critical-path THREAD|label=KEY=VALUE\n"
            "                           what the thread's or label's time went to, wait chains\n"
            "                           followed to their root (with --json: as JSON)\n"
            "  -o, --output FILE        write the standard-output view to FILE\n"
            "\n"
            "Filters and shaping:\n"
            "      --thread N|NAME      only this thread (seq or Thread#name)\n"
            "      --ractor N           only threads of Ractor N\n"
            "      --label KEY=VALUE    only time under this label (repeatable; all must match)\n"
            "      --state STATE        profile views: only samples in running, gvl_wait, blocked or gc\n"
            "      --root-frames thread,label  folded stacks: the thread and/or label set as root frames\n"
            "      --by thread|label|ractor   wait-graph nodes (default thread)\n"
            "      --edges gvl|blocked|all    wait-graph edges: GVL waits (default), release edges of\n"
            "                           blocked threads (waiter -> the thread that woke it), or both\n"
            "      --blame direct|root  wait graph: edges to the root of each wait chain (root);\n"
            "                           profile views: the stacks that made others wait, directly\n"
            "                           (blame and release stacks) or at the chains' roots\n"
            "      --min-share F        keep wait-graph edges of at least F of all wait (0..1; 0 keeps\n"
            "                           every edge); default: the largest, up to 80%% of it, at most 12\n"
            "      --from T, --to T     timeline/perfetto/critical-path window, e.g. 10ms, 1.5s, 200us\n"
            "      --width N            timeline columns (default: terminal width)\n"
            "      --top N              rows of the top tables (summary: default 10; --top view: 20)\n"
            "      --ascii              timeline with ASCII glyphs\n"
            "      --color=WHEN         auto (default), always or never\n"
            "      --jansson-only       parse every element with jansson (slower; for comparison)\n"
            "      --max-inflated SIZE  largest inflated size of a gzip report (default 1G)\n"
            "\n"
            "      --help               show this help and exit\n"
            "      --version            show the version and exit\n"
            "\n"
            "Exit status: 0 ok, 2 bad input report, 64 usage error, 70 internal/render error,\n"
            "74 output error; record passes the program's exit status through (74 when the\n"
            "report could not be written).\n",
            progname, progname, progname, progname);
}

/* Messages echo file names, arguments and report text: control bytes are
 * escaped so that none reaches the terminal. */
void
say(const char *fmt, ...)
{
    char raw[2048], line[4 * sizeof(raw)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    fflush(stdout); /* what stdout holds comes first when both go to one log */
    fprintf(stderr, "%s: %s\n", progname, rga_term_escape(raw, line, sizeof(line)));
}

int
fail_usage(const char *fmt, const char *arg)
{
    char what[1024];
    snprintf(what, sizeof(what), fmt, arg);
    say("%s", what);
    fprintf(stderr, "Try '%s --help' for more information.\n", progname);
    return EXIT_USAGE;
}

/* getopt's own messages name argv[0] (a full path); they are off
 * (opterr = 0, optstring starting with ':') and these say the same. */
int
fail_option(int c, char **argv)
{
    char text[8];
    const char *opt = argv[optind - 1];
    if (optopt > 0 && optopt < 128 && strncmp(opt, "--", 2) != 0) {
        snprintf(text, sizeof(text), "-%c", optopt);
        opt = text;
    }
    if (c == ':')
        return fail_usage("option '%s' needs a value", opt);
    return fail_usage("unrecognized option '%s'", opt);
}

int
report_error(const rga_error_t *err)
{
    char line[1024];
    rga_error_format(err, line, sizeof(line));
    say("%s", line);
    return 0;
}

int
exit_for(rga_status_t st, bool input)
{
    switch (st) {
    case RGA_OK: return EXIT_OK;
    case RGA_ERR_ARGUMENT: return input ? EXIT_BAD_INPUT : EXIT_USAGE;
    case RGA_ERR_IO: return input ? EXIT_BAD_INPUT : EXIT_IO;
    case RGA_ERR_SYNTAX:
    case RGA_ERR_VERSION:
    case RGA_ERR_SCHEMA:
    case RGA_ERR_REFERENCE:
    case RGA_ERR_MISSING: return EXIT_BAD_INPUT;
    default: return EXIT_SOFTWARE;
    }
}

bool
use_color(const char *when, int fd)
{
    if (strcmp(when, "always") == 0)
        return true;
    if (strcmp(when, "never") == 0)
        return false;
    const char *term = getenv("TERM");
    return isatty(fd) && !getenv("NO_COLOR") && !(term && strcmp(term, "dumb") == 0);
}

int
terminal_width(void)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 40)
        return ws.ws_col;
    const char *cols = getenv("COLUMNS");
    if (cols && atoi(cols) > 40)
        return atoi(cols);
    return 100;
}

bool
parse_long(const char *text, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

bool
ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}
