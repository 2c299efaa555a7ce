/* main.c — the rperf-gvl command line: option parsing, loading and merging
 * the reports named on the command line, writing the requested views, and
 * the `record` subcommand that runs a Ruby program under the profiler.
 *
 * All analysis is in the library (rga.h); this file only talks to the user:
 * it is the one place that prints errors (prefixed "rperf-gvl:") and picks
 * exit codes. It is not compiled into the Ruby extension.
 */
#define _GNU_SOURCE
#include "output.h"
#include "rga.h"
#include "rperf_limits.h"
#include "term_text.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Exit codes (documented in docs/cli.md and the man page). 64/70/74 follow sysexits.h. */
enum {
    EXIT_OK = 0,
    EXIT_BAD_INPUT = 2, /* a report is missing, unreadable, not JSON or invalid */
    EXIT_USAGE = 64,    /* bad command line */
    EXIT_SOFTWARE = 70, /* rendering failed, out of memory */
    EXIT_IO = 74,       /* an output file could not be written */
    EXIT_NOEXEC = 127   /* record: the program could not be started */
};

#ifndef RPERF_GVL_SOURCE_LIBDIR
#define RPERF_GVL_SOURCE_LIBDIR ""
#endif

#define MAX_OUTPUTS 16
#define MAX_LABELS 32

typedef struct job {
    const char *view;
    const char *path; /* NULL = stdout */
} job_t;

typedef struct cli {
    rga_view_opts_t opts;
    const char *labels[MAX_LABELS];
    job_t jobs[MAX_OUTPUTS];
    size_t n_jobs;
    const char *color; /* auto|always|never */
    const char *output;
    unsigned load_flags;
} cli_t;

static const char *progname = "rperf-gvl";

static void
usage(FILE *out)
{
    fprintf(out,
            "Usage: %s [OPTION]... REPORT...\n"
            "       %s record [-o FILE] [--html FILE] [--frequency N] -- COMMAND [ARG]...\n"
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
            "74 output error; record passes the program's exit status through.\n",
            progname, progname);
}

/* Prints one "rperf-gvl: ..." line on stderr. Messages echo file names,
 * arguments and report text: control bytes are escaped so that none reaches
 * the terminal. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
say(const char *fmt, ...)
{
    char raw[2048], line[4 * sizeof(raw)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", progname, rga_term_escape(raw, line, sizeof(line)));
}

static int
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
static int
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

static int
report_error(const rga_error_t *err)
{
    char line[1024];
    rga_error_format(err, line, sizeof(line));
    say("%s", line);
    return 0;
}

static int
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

static bool
use_color(const char *when, int fd)
{
    if (strcmp(when, "always") == 0)
        return true;
    if (strcmp(when, "never") == 0)
        return false;
    const char *term = getenv("TERM");
    return isatty(fd) && !getenv("NO_COLOR") && !(term && strcmp(term, "dumb") == 0);
}

static int
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

static bool
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

static bool
ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* ---- record ------------------------------------------------------------------------ */

#ifndef RPERF_GVL_SOURCE_EXTDIR
#define RPERF_GVL_SOURCE_EXTDIR ""
#endif

static bool
file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* The directory holding rperf/autorecord.rb: $RPERF_GVL_LIBDIR, ../lib next to
 * this executable, or the source tree's lib/ this binary was built from. In
 * the last case *from_build is set: the extension then comes from the build
 * tree too (an installed gem finds its own). */
static bool
find_libdir(char *buf, size_t size, bool *from_build)
{
    char probe[PATH_MAX + 32];
    *from_build = false;
    const char *env = getenv("RPERF_GVL_LIBDIR");
    if (env && *env) {
        snprintf(buf, size, "%s", env);
        return true;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            int n1 = snprintf(probe, sizeof(probe), "%s/../lib/rperf/autorecord.rb", exe);
            if (n1 > 0 && (size_t)n1 < sizeof(probe) && file_exists(probe)) {
                int n2 = snprintf(buf, size, "%s/../lib", exe);
                return n2 > 0 && (size_t)n2 < size;
            }
        }
    }
    if (RPERF_GVL_SOURCE_LIBDIR[0]) {
        snprintf(buf, size, "%s", RPERF_GVL_SOURCE_LIBDIR);
        *from_build = true;
        return true;
    }
    return false;
}

/* Prepends dirs (':'-separated) to the search path variable name. */
static bool
prepend_path(const char *name, const char *dirs)
{
    const char *old = getenv(name);
    size_t len = strlen(dirs) + (old ? strlen(old) : 0) + 2;
    char *value = malloc(len);
    if (!value)
        return false;
    snprintf(value, len, "%s%s%s", dirs, old && *old ? ":" : "", old && *old ? old : "");
    int rc = setenv(name, value, 1);
    free(value);
    return rc == 0;
}

/* Where record's report goes. The program writes a temporary file that this
 * run created (in the output's directory, so the rename is atomic); it
 * replaces the output only once the program is done. A device or FIFO
 * output is never replaced: the report is copied into it. */
typedef struct record_target {
    char path[PATH_MAX];     /* absolute output path */
    char tmp[PATH_MAX + 64]; /* what the program writes */
    bool in_place;           /* output is a device/FIFO: copy into it */
} record_target_t;

static int
record_target_fail(const char *output, const char *what, int errnum)
{
    say("%s: cannot write the report: %s%s%s", output, what, errnum ? ": " : "", errnum ? strerror(errnum) : "");
    return EXIT_IO;
}

/* Checks that the output can be written before the program starts, and
 * creates the temporary (same ending as the output, so .gz stays gzip). */
static int
record_target_open(record_target_t *t, const char *output)
{
    memset(t, 0, sizeof(*t));
    int n;
    if (output[0] != '/') {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof(cwd)))
            return record_target_fail(output, "cannot read the current directory", errno);
        n = snprintf(t->path, sizeof(t->path), "%s/%s", cwd, output);
    } else {
        n = snprintf(t->path, sizeof(t->path), "%s", output);
    }
    if (n < 0 || (size_t)n >= sizeof(t->path))
        return record_target_fail(output, "path too long", 0);
    struct stat sb;
    bool exists = stat(t->path, &sb) == 0;
    if (!exists && errno != ENOENT)
        return record_target_fail(output, "cannot inspect it", errno);
    if (exists && S_ISDIR(sb.st_mode))
        return record_target_fail(output, "is a directory", 0);
    if (exists && access(t->path, W_OK) != 0)
        return record_target_fail(output, "not writable", errno);
    t->in_place = exists && !S_ISREG(sb.st_mode);
    const char *ending = ends_with(output, ".gz") ? ".json.gz" : ".json";
    size_t suffix_len = strlen(ending);
    if (t->in_place) {
        const char *tmpdir = getenv("TMPDIR");
        n = snprintf(t->tmp, sizeof(t->tmp), "%s/rperf-gvl-XXXXXX%s", tmpdir && *tmpdir ? tmpdir : "/tmp", ending);
    } else {
        char real[PATH_MAX];
        const char *final = exists && realpath(t->path, real) ? real : t->path;
        if (final == real)
            snprintf(t->path, sizeof(t->path), "%s", real); /* a link: replace its target */
        const char *slash = strrchr(final, '/');
        n = snprintf(t->tmp, sizeof(t->tmp), "%.*s/.rperf-gvl-XXXXXX-%s", (int)(slash - final), final, slash + 1);
        suffix_len = 1 + strlen(slash + 1);
    }
    if (n < 0 || (size_t)n >= sizeof(t->tmp))
        return record_target_fail(output, "path too long", 0);
    int fd = mkstemps(t->tmp, (int)suffix_len);
    if (fd < 0) {
        int saved = errno;
        t->tmp[0] = '\0';
        return record_target_fail(output,
                                  t->in_place ? "cannot create a temporary file"
                                              : "cannot create a file in its directory",
                                  saved);
    }
    /* mkstemps makes 0600; the report gets the mode a plain create (or the replaced file) would have. */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, exists && !t->in_place ? (sb.st_mode & 07777) : (0666 & ~mask));
    close(fd);
    return EXIT_OK;
}

/* Puts the finished report at the output: rename, or copy into a device. */
static int
record_target_commit(record_target_t *t, const char *output)
{
    if (!t->in_place) {
        if (rename(t->tmp, t->path) != 0)
            return record_target_fail(output, "cannot move the report into place", errno);
        t->tmp[0] = '\0';
        return EXIT_OK;
    }
    FILE *in = fopen(t->tmp, "rb"), *out = in ? fopen(t->path, "wb") : NULL;
    int saved = errno;
    bool failed = !in || !out;
    char buf[65536];
    size_t n;
    while (!failed && (n = fread(buf, 1, sizeof(buf), in)) > 0)
        failed = fwrite(buf, 1, n, out) != n;
    if (!failed)
        failed = ferror(in) != 0;
    if (failed)
        saved = errno;
    if (out && fclose(out) != 0 && !failed) {
        failed = true;
        saved = errno;
    }
    if (in)
        fclose(in);
    return failed ? record_target_fail(output, "write failed", saved) : EXIT_OK;
}

static void
record_target_close(record_target_t *t)
{
    if (t->tmp[0])
        unlink(t->tmp);
    t->tmp[0] = '\0';
}

/* Signals record passes on to the program: whoever stops `record` means the
 * program. One the terminal sent (si_code SI_KERNEL) reached the program's
 * process group already and is not sent twice. */
static const int forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define N_FORWARDED (sizeof(forwarded_signals) / sizeof(forwarded_signals[0]))
static volatile sig_atomic_t record_child;

static void
forward_signal(int sig, siginfo_t *info, void *context)
{
    (void)context;
    int saved = errno;
    if (record_child > 0 && (!info || info->si_code != SI_KERNEL))
        kill((pid_t)record_child, sig);
    errno = saved;
}

static int
cmd_record(int argc, char **argv)
{
    const char *output = "report.json";
    const char *frequency = NULL;
    const char *color = "auto";
    const char *html = NULL;
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"html", required_argument, NULL, 'H'},
        {"frequency", required_argument, NULL, 'F'},
        {"color", required_argument, NULL, 'C'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+:o:", longopts, NULL)) != -1) {
        long v;
        switch (c) {
        case 'o': output = optarg; break;
        case 'H': html = optarg; break;
        case 'F':
            if (!parse_long(optarg, RPERF_FREQUENCY_MIN, RPERF_FREQUENCY_MAX, &v))
                return fail_usage("--frequency %s: expected an integer from " RPERF_STR(
                                      RPERF_FREQUENCY_MIN) " to " RPERF_STR(RPERF_FREQUENCY_MAX) " (Hz)",
                                  optarg);
            frequency = optarg;
            break;
        case 'C':
            if (strcmp(optarg, "auto") && strcmp(optarg, "always") && strcmp(optarg, "never"))
                return fail_usage("--color %s: expected auto, always or never", optarg);
            color = optarg;
            break;
        case 'h': usage(stdout); return EXIT_OK;
        default: return fail_option(c, argv);
        }
    }
    if (optind >= argc)
        return fail_usage("%s", "record: no command given (record [-o FILE] -- ruby app.rb)");
    char libdir[PATH_MAX];
    bool from_build;
    if (!find_libdir(libdir, sizeof(libdir), &from_build)) {
        say("cannot find the rperf library directory; set RPERF_GVL_LIBDIR");
        return EXIT_USAGE;
    }
    record_target_t target;
    int rc = record_target_open(&target, output);
    if (rc != EXIT_OK)
        return rc;
    /* The page's file is checked (and its temporary made) before the program
     * runs, like the report's: a run is never lost to an unwritable path. */
    rga_output_t page;
    bool have_page = false;
    if (html) {
        rga_error_t perr;
        memset(&perr, 0, sizeof(perr));
        rga_status_t pst = rga_output_open(&page, html, &perr);
        if (pst != RGA_OK) {
            report_error(&perr);
            record_target_close(&target);
            return exit_for(pst, false);
        }
        if (page.fp && page.kind != 1)
            fcntl(fileno(page.fp), F_SETFD, FD_CLOEXEC); /* not the program's to inherit */
        have_page = true;
    }
    /* RUBYLIB, not -I in RUBYOPT: RUBYOPT splits on spaces. A binary run from
     * its build tree loads the extension it was built with. */
    char dirs[2 * PATH_MAX + 2];
    if (from_build && RPERF_GVL_SOURCE_EXTDIR[0])
        snprintf(dirs, sizeof(dirs), "%s:%s", libdir, RPERF_GVL_SOURCE_EXTDIR);
    else
        snprintf(dirs, sizeof(dirs), "%s", libdir);
    const char *old = getenv("RUBYOPT");
    size_t len = (old ? strlen(old) : 0) + 32;
    char *rubyopt = malloc(len);
    if (!rubyopt || !prepend_path("RUBYLIB", dirs)) {
        free(rubyopt);
        record_target_close(&target);
        if (have_page)
            rga_output_discard(&page);
        return EXIT_SOFTWARE;
    }
    snprintf(rubyopt, len, "-rrperf/autorecord%s%s", old && *old ? " " : "", old ? old : "");
    setenv("RUBYOPT", rubyopt, 1);
    free(rubyopt);
    setenv("RPERF_GVL_OUTPUT", target.tmp, 1);
    if (frequency)
        setenv("RPERF_GVL_FREQUENCY", frequency, 1);

    /* Forward signals (those not ignored when record started: nohup stays
     * nohup). Blocked across fork so none is lost before the pid is known. */
    struct sigaction old_act[N_FORWARDED], fwd = {0};
    sigset_t block, old_mask;
    sigemptyset(&block);
    fwd.sa_sigaction = forward_signal;
    fwd.sa_flags = SA_SIGINFO;
    sigemptyset(&fwd.sa_mask);
    for (size_t i = 0; i < N_FORWARDED; i++) {
        sigaction(forwarded_signals[i], NULL, &old_act[i]);
        sigaddset(&block, forwarded_signals[i]);
    }
    sigprocmask(SIG_BLOCK, &block, &old_mask);
    for (size_t i = 0; i < N_FORWARDED; i++)
        if (old_act[i].sa_handler != SIG_IGN)
            sigaction(forwarded_signals[i], &fwd, NULL);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        say("fork: %s", strerror(errno));
        record_target_close(&target);
        if (have_page)
            rga_output_discard(&page);
        return EXIT_SOFTWARE;
    }
    if (pid == 0) {
        for (size_t i = 0; i < N_FORWARDED; i++)
            sigaction(forwarded_signals[i], &old_act[i], NULL);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        execvp(argv[optind], &argv[optind]);
        say("cannot run %s: %s", argv[optind], strerror(errno));
        _exit(EXIT_NOEXEC);
    }
    record_child = pid;
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    record_child = 0; /* reaped: the pid may be reused */
    int child_exit = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    struct stat sb;
    if (stat(target.tmp, &sb) != 0 || sb.st_size == 0) {
        record_target_close(&target);
        if (have_page)
            rga_output_discard(&page);
        if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_NOEXEC)
            return EXIT_NOEXEC;
        say("the program wrote no report (not a Ruby program, or it ended without running at_exit); %s was "
            "not written (exit status %d)",
            output, child_exit);
        return child_exit;
    }
    rga_error_t err;
    rga_report_t *r = NULL;
    rga_status_t st = rga_report_load_file(target.tmp, &r, &err);
    /* The program's report is kept even when it does not load: it is the data. */
    rc = record_target_commit(&target, output);
    record_target_close(&target);
    if (st == RGA_OK) {
        rga_view_opts_t opts = {0};
        opts.color = use_color(color, STDOUT_FILENO);
        opts.columns = terminal_width();
        fflush(stdout);
        st = rga_render_report(r, "summary", &opts, stdout, &err);
        if (rc == EXIT_OK)
            say("report written to %s", output);
        if (have_page) {
            rga_error_t perr;
            memset(&perr, 0, sizeof(perr));
            rga_view_opts_t page_opts = {0};
            rga_status_t pst = rga_render_report(r, "html", &page_opts, page.fp, &perr);
            if (pst == RGA_OK) {
                pst = rga_output_close(&page, NULL, NULL, &perr);
            } else {
                rga_output_discard(&page);
            }
            have_page = false;
            if (pst == RGA_OK) {
                say("page written to %s", html);
            } else {
                report_error(&perr);
                if (rc == EXIT_OK)
                    rc = exit_for(pst, false);
            }
        }
        rga_report_free(r);
    } else {
        snprintf(err.file, sizeof(err.file), "%s", output);
    }
    if (have_page)
        rga_output_discard(&page); /* the report did not load: no page */
    if (st != RGA_OK) {
        report_error(&err);
        return child_exit ? child_exit : exit_for(st, true);
    }
    return child_exit ? child_exit : rc;
}

/* ---- analysis ------------------------------------------------------------------------ */

enum {
    OPT_SUMMARY = 256,
    OPT_TIMELINE,
    OPT_JSON,
    OPT_DOT,
    OPT_SVG,
    OPT_PNG,
    OPT_PERFETTO,
    OPT_THREAD,
    OPT_RACTOR,
    OPT_LABEL,
    OPT_BY,
    OPT_EDGES,
    OPT_MIN_SHARE,
    OPT_FROM,
    OPT_TO,
    OPT_WIDTH,
    OPT_TOP,
    OPT_ASCII,
    OPT_COLOR,
    OPT_HELP,
    OPT_VERSION,
    OPT_JANSSON_ONLY,
    OPT_PPROF,
    OPT_COLLAPSED,
    OPT_SPEEDSCOPE,
    OPT_STATE,
    OPT_ROOT_FRAMES,
    OPT_HTML,
    OPT_MAX_INFLATED,
    OPT_CRITICAL_PATH,
    OPT_BLAME
};

static bool
all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/* "thread", "label" or "thread,label" (either order) → RGA_ROOT_* bits; 0 on junk. */
static unsigned
parse_root_frames(const char *text)
{
    unsigned roots = 0;
    char buf[64];
    snprintf(buf, sizeof(buf), "%s", text);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (strcmp(tok, "thread") == 0)
            roots |= RGA_ROOT_THREAD;
        else if (strcmp(tok, "label") == 0)
            roots |= RGA_ROOT_LABEL;
        else
            return 0;
    }
    return roots;
}


/* A byte count: digits with an optional K, M or G (powers of 1024). */
static bool
parse_size(const char *text, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || text[0] == '-')
        return false;
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10, end++;
    else if (*end == 'M' || *end == 'm')
        shift = 20, end++;
    else if (*end == 'G' || *end == 'g')
        shift = 30, end++;
    if (*end || v == 0 || v > (SIZE_MAX >> shift))
        return false;
    *out = (size_t)v << shift;
    return true;
}

static int
add_job(cli_t *cli, const char *view, const char *path)
{
    if (cli->n_jobs == MAX_OUTPUTS)
        return fail_usage("%s", "too many outputs");
    cli->jobs[cli->n_jobs++] = (job_t){view, path};
    return EXIT_OK;
}

static int
parse_args(cli_t *cli, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"summary", no_argument, NULL, OPT_SUMMARY},
        {"timeline", no_argument, NULL, OPT_TIMELINE},
        {"json", no_argument, NULL, OPT_JSON},
        {"dot", optional_argument, NULL, OPT_DOT},
        {"svg", required_argument, NULL, OPT_SVG},
        {"png", required_argument, NULL, OPT_PNG},
        {"perfetto", required_argument, NULL, OPT_PERFETTO},
        {"html", required_argument, NULL, OPT_HTML},
        {"output", required_argument, NULL, 'o'},
        {"thread", required_argument, NULL, OPT_THREAD},
        {"ractor", required_argument, NULL, OPT_RACTOR},
        {"label", required_argument, NULL, OPT_LABEL},
        {"by", required_argument, NULL, OPT_BY},
        {"edges", required_argument, NULL, OPT_EDGES},
        {"min-share", required_argument, NULL, OPT_MIN_SHARE},
        {"from", required_argument, NULL, OPT_FROM},
        {"to", required_argument, NULL, OPT_TO},
        {"width", required_argument, NULL, OPT_WIDTH},
        {"top", optional_argument, NULL, OPT_TOP},
        {"pprof", required_argument, NULL, OPT_PPROF},
        {"collapsed", optional_argument, NULL, OPT_COLLAPSED},
        {"speedscope", required_argument, NULL, OPT_SPEEDSCOPE},
        {"state", required_argument, NULL, OPT_STATE},
        {"root-frames", required_argument, NULL, OPT_ROOT_FRAMES},
        {"ascii", no_argument, NULL, OPT_ASCII},
        {"color", optional_argument, NULL, OPT_COLOR},
        {"colour", optional_argument, NULL, OPT_COLOR},
        {"help", no_argument, NULL, OPT_HELP},
        {"version", no_argument, NULL, OPT_VERSION},
        {"jansson-only", no_argument, NULL, OPT_JANSSON_ONLY},
        {"max-inflated", required_argument, NULL, OPT_MAX_INFLATED},
        {"critical-path", required_argument, NULL, OPT_CRITICAL_PATH},
        {"blame", required_argument, NULL, OPT_BLAME},
        {NULL, 0, NULL, 0},
    };
    int c, rc = EXIT_OK;
    long v;
    opterr = 0;
    while (rc == EXIT_OK && (c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_SUMMARY: rc = add_job(cli, "summary", NULL); break;
        case OPT_TIMELINE: rc = add_job(cli, "timeline", NULL); break;
        case OPT_JSON: rc = add_job(cli, "json", NULL); break;
        case OPT_DOT: {
            const char *path = optarg;
            /* "--dot FILE" (no '='): take FILE when it names a graph file. */
            if (!path && optind < argc && (ends_with(argv[optind], ".dot") || ends_with(argv[optind], ".gv")))
                path = argv[optind++];
            rc = add_job(cli, "dot", path);
            break;
        }
        case OPT_SVG: rc = add_job(cli, "svg", optarg); break;
        case OPT_PNG: rc = add_job(cli, "png", optarg); break;
        case OPT_PERFETTO: rc = add_job(cli, "perfetto", optarg); break;
        case OPT_PPROF: rc = add_job(cli, "pprof", optarg); break;
        case OPT_SPEEDSCOPE: rc = add_job(cli, "speedscope", optarg); break;
        case OPT_COLLAPSED: {
            const char *path = optarg;
            /* "--collapsed FILE" (no '='): take FILE when it names a folded-stack file. */
            if (!path && optind < argc &&
                (ends_with(argv[optind], ".collapsed") || ends_with(argv[optind], ".folded") ||
                 ends_with(argv[optind], ".txt")))
                path = argv[optind++];
            rc = add_job(cli, "collapsed", path);
            break;
        }
        case OPT_STATE:
            if (strcmp(optarg, "running") && strcmp(optarg, "gvl_wait") && strcmp(optarg, "blocked") &&
                strcmp(optarg, "gc"))
                return fail_usage("--state %s: expected running, gvl_wait, blocked or gc", optarg);
            cli->opts.state = optarg;
            break;
        case OPT_ROOT_FRAMES:
            if (!(cli->opts.roots = parse_root_frames(optarg)))
                return fail_usage("--root-frames %s: expected thread, label or thread,label", optarg);
            break;
        case OPT_HTML: rc = add_job(cli, "html", optarg); break;
        case OPT_CRITICAL_PATH:
            if (!*optarg || (strncmp(optarg, "label=", 6) == 0 && (!strchr(optarg + 6, '=') || optarg[6] == '=')))
                return fail_usage("--critical-path %s: expected a thread (seq or name) or label=KEY=VALUE", optarg);
            if (cli->opts.critical_path)
                return fail_usage("%s", "--critical-path can be given once");
            cli->opts.critical_path = optarg;
            break;
        case OPT_BLAME:
            if (strcmp(optarg, "direct") && strcmp(optarg, "root"))
                return fail_usage("--blame %s: expected direct or root", optarg);
            cli->opts.blame = optarg;
            break;
        case 'o': cli->output = optarg; break;
        case OPT_THREAD: cli->opts.thread = optarg; break;
        case OPT_RACTOR:
            if (!parse_long(optarg, 1, LONG_MAX, &v))
                return fail_usage("--ractor %s: expected a Ractor id (a positive integer)", optarg);
            cli->opts.ractor = v;
            break;
        case OPT_LABEL:
            if (!strchr(optarg, '=') || optarg[0] == '=')
                return fail_usage("--label %s: expected KEY=VALUE", optarg);
            if (cli->opts.n_labels == MAX_LABELS)
                return fail_usage("%s", "too many --label options");
            cli->labels[cli->opts.n_labels++] = optarg;
            break;
        case OPT_BY:
            if (strcmp(optarg, "thread") && strcmp(optarg, "label") && strcmp(optarg, "ractor"))
                return fail_usage("--by %s: expected thread, label or ractor", optarg);
            cli->opts.by = optarg;
            break;
        case OPT_EDGES:
            if (strcmp(optarg, "gvl") && strcmp(optarg, "blocked") && strcmp(optarg, "all"))
                return fail_usage("--edges %s: expected gvl, blocked or all", optarg);
            cli->opts.edges = optarg;
            break;
        case OPT_MIN_SHARE: {
            char *end;
            double d = strtod(optarg, &end);
            if (end == optarg || *end || !(d >= 0.0 && d <= 1.0))
                return fail_usage("--min-share %s: expected a fraction between 0 and 1", optarg);
            cli->opts.min_share = d;
            cli->opts.min_share_set = 1;
            break;
        }
        case OPT_FROM:
            if (!rga_parse_duration(optarg, &cli->opts.from_ns))
                return fail_usage("--from %s: expected a duration such as 10ms, 1.5s or 250us", optarg);
            break;
        case OPT_TO:
            if (!rga_parse_duration(optarg, &cli->opts.to_ns) || cli->opts.to_ns == 0)
                return fail_usage("--to %s: expected a positive duration such as 10ms, 1.5s or 250us", optarg);
            break;
        case OPT_WIDTH:
            if (!parse_long(optarg, 1, 10000, &v))
                return fail_usage("--width %s: expected an integer from 1 to 10000", optarg);
            cli->opts.width = (int)v;
            break;
        case OPT_TOP: {
            /* "--top" alone is the flat view; "--top N" / "--top=N" the rows of the top tables. */
            const char *rows = optarg;
            if (!rows && optind < argc && all_digits(argv[optind]))
                rows = argv[optind++];
            if (!rows) {
                rc = add_job(cli, "top", NULL);
                break;
            }
            if (!parse_long(rows, 1, 1000000, &v))
                return fail_usage("--top %s: expected a positive integer", rows);
            cli->opts.top = (size_t)v;
            break;
        }
        case OPT_ASCII: cli->opts.ascii = 1; break;
        case OPT_JANSSON_ONLY: cli->load_flags |= RGA_LOAD_JANSSON_ONLY; break;
        case OPT_MAX_INFLATED: {
            size_t bytes;
            if (!parse_size(optarg, &bytes))
                return fail_usage("--max-inflated %s: expected a size such as 512M or 4G", optarg);
            rga_report_set_max_inflated(bytes);
            break;
        }
        case OPT_COLOR:
            if (!optarg)
                cli->color = "always";
            else if (strcmp(optarg, "auto") && strcmp(optarg, "always") && strcmp(optarg, "never"))
                return fail_usage("--color=%s: expected auto, always or never", optarg);
            else
                cli->color = optarg;
            break;
        case 'h':
        case OPT_HELP: usage(stdout); return -1;
        case OPT_VERSION: printf("rperf-gvl %s\n", RGA_VERSION); return -1;
        default: return fail_option(c, argv);
        }
    }
    if (cli->opts.to_ns > 0 && cli->opts.to_ns <= cli->opts.from_ns)
        return fail_usage("%s", "--to must be after --from");
    cli->opts.labels = cli->labels;
    return rc;
}

/* An output that is one of the inputs would be replaced by a view of itself:
 * refused before anything is read (exit 2, the input is bad for this run). */
static int
refuse_output_over_input(const cli_t *cli, const char *const *inputs, size_t n_inputs)
{
    for (size_t i = 0; i <= cli->n_jobs; i++) {
        const char *out = i < cli->n_jobs ? cli->jobs[i].path : cli->output;
        struct stat so;
        if (!out || strcmp(out, "-") == 0 || stat(out, &so) != 0)
            continue;
        for (size_t k = 0; k < n_inputs; k++) {
            struct stat si;
            if (stat(inputs[k], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
                say("%s: the output is the input report %s; refusing to overwrite it", out, inputs[k]);
                return EXIT_BAD_INPUT;
            }
        }
    }
    return EXIT_OK;
}

int
main(int argc, char **argv)
{
    const char *max_inflated = getenv("RPERF_GVL_MAX_INFLATED");
    if (max_inflated && *max_inflated) {
        size_t bytes;
        if (!parse_size(max_inflated, &bytes))
            return fail_usage("RPERF_GVL_MAX_INFLATED=%s: expected a size such as 512M or 4G", max_inflated);
        rga_report_set_max_inflated(bytes);
    }
    if (argc > 1 && strcmp(argv[1], "record") == 0)
        return cmd_record(argc - 1, argv + 1);
    cli_t cli;
    memset(&cli, 0, sizeof(cli));
    cli.color = "auto";
    int rc = parse_args(&cli, argc, argv);
    if (rc < 0)
        return EXIT_OK;
    if (rc != EXIT_OK)
        return rc;
    if (optind >= argc)
        return fail_usage("%s", "no report given");

    /* --critical-path is a view of its own: text, or JSON in place of the summary's. */
    if (cli.opts.critical_path) {
        size_t json = cli.n_jobs;
        for (size_t i = 0; i < cli.n_jobs; i++)
            if (strcmp(cli.jobs[i].view, "json") == 0)
                json = i;
        if (json < cli.n_jobs)
            cli.jobs[json].view = "critical_path_json";
        else if ((rc = add_job(&cli, "critical_path", NULL)) != EXIT_OK)
            return rc;
    }
    size_t stdout_jobs = 0;
    for (size_t i = 0; i < cli.n_jobs; i++)
        stdout_jobs += cli.jobs[i].path == NULL;
    if (cli.n_jobs == 0) {
        add_job(&cli, "summary", NULL);
        stdout_jobs = 1;
    }
    /* Options that only shape views not asked for would be silently ignored: refuse them. */
    bool profile_job = false, collapsed_job = false, graph_job = false;
    for (size_t i = 0; i < cli.n_jobs; i++) {
        profile_job |= rga_view_is_profile(cli.jobs[i].view);
        collapsed_job |= strcmp(cli.jobs[i].view, "collapsed") == 0;
        graph_job |= strcmp(cli.jobs[i].view, "dot") == 0 || strcmp(cli.jobs[i].view, "svg") == 0 ||
                     strcmp(cli.jobs[i].view, "png") == 0;
    }
    if (cli.opts.blame && !profile_job && !graph_job)
        return fail_usage("%s", "--blame applies to the wait graph (--dot, --svg, --png) and the profile views "
                                "(--pprof, --collapsed, --speedscope, --top)");
    if (cli.opts.state && !profile_job)
        return fail_usage("%s", "--state applies to the profile views (--pprof, --collapsed, --speedscope, --top)");
    if (cli.opts.roots && !collapsed_job)
        return fail_usage("%s", "--root-frames applies to --collapsed");
    if (cli.output && stdout_jobs == 0)
        return fail_usage("%s",
                          "-o/--output applies to a standard-output view (--summary, --timeline, --json, --dot, "
                          "--top, --collapsed)");
    if (stdout_jobs > 1)
        return fail_usage("%s", "more than one view for standard output (--summary, --timeline, --json, --dot, "
                                "--top, --collapsed without FILE, --critical-path): give one, and write the others "
                                "to files");

    size_t n_reports = (size_t)(argc - optind);
    size_t n_stdin = 0;
    for (size_t i = 0; i < n_reports; i++)
        n_stdin += strcmp(argv[optind + (int)i], "-") == 0;
    if (n_stdin > 1)
        return fail_usage("%s", "- (standard input) can be given once");
    rc = refuse_output_over_input(&cli, (const char *const *)&argv[optind], n_reports);
    if (rc != EXIT_OK)
        return rc;
    rga_report_t **reports = calloc(n_reports, sizeof(*reports));
    if (!reports)
        return EXIT_SOFTWARE;
    rga_error_t err;
    rga_status_t st = RGA_OK;
    rga_report_t *report = NULL;
    for (size_t i = 0; i < n_reports && st == RGA_OK; i++)
        st = rga_report_load_file_flags(argv[optind + (int)i], cli.load_flags, &reports[i], &err);
    if (st == RGA_OK && n_reports == 1) {
        report = reports[0];
        reports[0] = NULL;
    } else if (st == RGA_OK) {
        st = rga_report_merge(reports, n_reports, &report, &err);
    }
    for (size_t i = 0; i < n_reports; i++)
        rga_report_free(reports[i]);
    free(reports);
    if (st != RGA_OK) {
        report_error(&err);
        return exit_for(st, true);
    }

    rc = EXIT_OK;
    for (size_t i = 0; i < cli.n_jobs && rc == EXIT_OK; i++) {
        const job_t *job = &cli.jobs[i];
        const char *path = job->path ? job->path : cli.output;
        rga_output_t out;
        st = rga_output_open(&out, path, &err);
        if (st != RGA_OK) {
            report_error(&err);
            rc = exit_for(st, false);
            break;
        }
        rga_view_opts_t opts = cli.opts;
        opts.color = out.kind == 1 && use_color(cli.color, STDOUT_FILENO);
        if (opts.width == 0)
            opts.width = terminal_width() - 32;
        opts.columns = terminal_width();
        rga_error_clear(&err);
        errno = 0;
        rga_status_t wst = rga_render_report(report, job->view, &opts, out.fp, &err);
        int write_errno = errno;
        if (wst != RGA_OK && ferror(out.fp)) {
            /* A writer that failed because its stream did: an output error, whatever it said. */
            rga_output_discard(&out);
            snprintf(err.file, sizeof(err.file), "%s", out.path);
            err.line = err.column = 0;
            err.path[0] = '\0';
            st = rga_error_set(&err, RGA_ERR_IO, "write failed: %s", strerror(write_errno ? write_errno : EIO));
        } else if (wst != RGA_OK) {
            rga_output_discard(&out);
            st = wst;
        } else {
            st = rga_output_close(&out, NULL, NULL, &err);
        }
        if (st != RGA_OK) {
            report_error(&err);
            rc = exit_for(st, false);
        } else if (rga_view_is_profile(job->view) && report->n_samples == 0) {
            fprintf(stderr, "%s: warning: the report has no samples; %s is an empty profile\n", progname,
                    path ? path : "the output");
        }
    }
    rga_report_free(report);
    return rc;
}
