/* main.c — the rperf-gvl command line: option parsing, loading and merging
 * the reports named on the command line, and writing the requested views.
 * The `record` and `metrics` subcommands are in record.c and metrics_cmd.c;
 * what they share is in cli.h.
 *
 * All analysis is in the library (rga.h); the CLI only talks to the user:
 * it is the one place that prints errors (prefixed "rperf-gvl:") and picks
 * exit codes. It is not compiled into the Ruby extension.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "metrics_cmd.h"
#include "output.h"
#include "record.h"
#include "rga.h"
#include "rperf_limits.h"
#include "units.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Options with one job each, as data: a view of the report (to standard
 * output, or to the file they name when `file`), or one word of a list
 * kept in a string field of the view options. */
typedef struct table_option {
    int opt;
    const char *view; /* NULL for a word of a list */
    bool file;
    const char *name;
    const char *words[5]; /* NULL after the last */
    size_t field;         /* offsetof(rga_view_opts_t, the field) */
} table_option_t;

static const table_option_t table_options[] = {
    {OPT_SUMMARY, "summary", false, NULL, {NULL}, 0},
    {OPT_TIMELINE, "timeline", false, NULL, {NULL}, 0},
    {OPT_JSON, "json", false, NULL, {NULL}, 0},
    {OPT_SVG, "svg", true, NULL, {NULL}, 0},
    {OPT_PNG, "png", true, NULL, {NULL}, 0},
    {OPT_PERFETTO, "perfetto", true, NULL, {NULL}, 0},
    {OPT_PPROF, "pprof", true, NULL, {NULL}, 0},
    {OPT_SPEEDSCOPE, "speedscope", true, NULL, {NULL}, 0},
    {OPT_HTML, "html", true, NULL, {NULL}, 0},
    {OPT_STATE, NULL, false, "state", {"running", "gvl_wait", "blocked", "gc"}, offsetof(rga_view_opts_t, state)},
    {OPT_BY, NULL, false, "by", {"thread", "label", "ractor"}, offsetof(rga_view_opts_t, by)},
    {OPT_EDGES, NULL, false, "edges", {"gvl", "blocked", "all"}, offsetof(rga_view_opts_t, edges)},
    {OPT_BLAME, NULL, false, "blame", {"direct", "root"}, offsetof(rga_view_opts_t, blame)},
};

static const table_option_t *
table_option_of(int opt)
{
    for (size_t i = 0; i < sizeof(table_options) / sizeof(table_options[0]); i++)
        if (table_options[i].opt == opt)
            return &table_options[i];
    return NULL;
}

/* Sets the option's field to `arg` when it is one of its words; else the
 * usage error names them all ("--by x: expected thread, label or ractor"). */
static int
set_choice(cli_t *cli, const table_option_t *choice, const char *arg)
{
    size_t n = 0;
    while (n < sizeof(choice->words) / sizeof(choice->words[0]) && choice->words[n])
        n++;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(arg, choice->words[i]) == 0) {
            *(const char **)((char *)&cli->opts + choice->field) = arg;
            return EXIT_OK;
        }
    }
    char expected[128] = "";
    for (size_t i = 0; i < n; i++) {
        const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
        size_t used = strlen(expected);
        snprintf(expected + used, sizeof(expected) - used, "%s%s", sep, choice->words[i]);
    }
    char message[160];
    snprintf(message, sizeof(message), "--%s %%s: expected %s", choice->name, expected);
    return fail_usage(message, arg);
}

/* The options that choose what part of a report the views show (threads,
 * Ractors, labels, a time window, roots, a critical path). Returns
 * NOT_SELECTION for any other option, else EXIT_OK or the usage error. */
#define NOT_SELECTION (-2)

static int
apply_selection(cli_t *cli, int c)
{
    long v;
    switch (c) {
    case OPT_ROOT_FRAMES:
        if (!(cli->opts.roots = parse_root_frames(optarg)))
            return fail_usage("--root-frames %s: expected thread, label or thread,label", optarg);
        break;
    case OPT_CRITICAL_PATH:
        if (!*optarg || (strncmp(optarg, "label=", 6) == 0 && (!strchr(optarg + 6, '=') || optarg[6] == '=')))
            return fail_usage("--critical-path %s: expected a thread (seq or name) or label=KEY=VALUE", optarg);
        if (cli->opts.critical_path)
            return fail_usage("%s", "--critical-path can be given once");
        cli->opts.critical_path = optarg;
        break;
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
    default: return NOT_SELECTION;
    }
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
        const table_option_t *t = table_option_of(c);
        if (t) {
            rc = t->view ? add_job(cli, t->view, t->file ? optarg : NULL) : set_choice(cli, t, optarg);
            continue;
        }
        int selected = apply_selection(cli, c);
        if (selected != NOT_SELECTION) {
            if (selected != EXIT_OK)
                return selected;
            continue;
        }
        switch (c) {
        case OPT_DOT: {
            const char *path = optarg;
            /* "--dot FILE" (no '='): take FILE when it names a graph file. */
            if (!path && optind < argc && (ends_with(argv[optind], ".dot") || ends_with(argv[optind], ".gv")))
                path = argv[optind++];
            rc = add_job(cli, "dot", path);
            break;
        }
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
        case 'o': cli->output = optarg; break;
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
        return record_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "metrics") == 0)
        return metrics_main(argc - 1, argv + 1);
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
            say("warning: the report has no samples; %s is an empty profile", path ? path : "the output");
        }
    }
    rga_report_free(report);
    return rc;
}
