/* record.c — the `rperf-gvl record` subcommand (see record.h): finds the
 * profiler's library, checks the output and creates the temporary file the
 * program writes its report to, runs the program with autorecord loaded,
 * passes signals on, waits, then puts the report at the output and prints
 * its summary (and the HTML page).
 *
 * It does not profile (autorecord and the extension do) and does not write
 * the report (the program does); it reads it back through the library.
 * CLI-only: not compiled into the Ruby extension.
 */
#define _GNU_SOURCE
#include "record.h"
#include "cli.h"
#include "output.h"
#include "rga.h"
#include "rperf_limits.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef RPERF_GVL_SOURCE_LIBDIR
#define RPERF_GVL_SOURCE_LIBDIR ""
#endif
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

#define TMP_NAME_ROOM (NAME_MAX - sizeof(".rperf-gvl-XXXXXX-") + 1) /* bytes left for NAME */

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
        /* ".rperf-gvl-XXXXXX-NAME", NAME cut to fit NAME_MAX (keeping ".gz": autorecord gzips by the name). */
        const char *slash = strrchr(final, '/'), *name = slash + 1;
        const char *gz = strlen(name) > TMP_NAME_ROOM && ends_with(name, ".gz") ? ".gz" : "";
        int head = (int)rga_name_head(name, TMP_NAME_ROOM - strlen(gz));
        n = snprintf(t->tmp, sizeof(t->tmp), "%.*s/.rperf-gvl-XXXXXX-%.*s%s", (int)(slash - final), final, head,
                     name, gz);
        suffix_len = 1 + (size_t)head + strlen(gz);
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

/* The status channel: a SOCK_SEQPACKET socketpair, so autorecord can tell
 * record what became of the report without needing the disk. record keeps
 * one end; the program inherits the other through RPERF_GVL_STATUS_FD
 * ("FD:INODE": autorecord uses the fd only when it is that socket).
 * Messages, one a packet: "started PID" when autorecord loads, then at exit
 * "written PID", "failed PID REASON" or "none PID". */
typedef struct record_channel {
    int fd;       /* record's end; -1 when there is none */
    int child_fd; /* the program's end, open in record until the fork */
    int started;  /* Ruby processes that loaded autorecord */
    int written;  /* reports written */
    bool failed;  /* the last report could not be written */
    char reason[256];
} record_channel_t;

static bool
record_channel_open(record_channel_t *ch)
{
    int sv[2];
    struct stat sb;
    memset(ch, 0, sizeof(*ch));
    ch->fd = ch->child_fd = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return false;
    if (fstat(sv[1], &sb) != 0) {
        close(sv[0]);
        close(sv[1]);
        return false;
    }
    ch->fd = sv[0];
    ch->child_fd = sv[1];
    char value[64];
    snprintf(value, sizeof(value), "%d:%llu", sv[1], (unsigned long long)sb.st_ino);
    return setenv("RPERF_GVL_STATUS_FD", value, 1) == 0;
}

static void
record_channel_message(record_channel_t *ch, const char *msg)
{
    if (strncmp(msg, "started ", 8) == 0) {
        ch->started++;
    } else if (strncmp(msg, "written ", 8) == 0) {
        ch->written++;
        ch->failed = false;
    } else if (strncmp(msg, "failed ", 7) == 0) {
        const char *reason = strchr(msg + 7, ' ');
        ch->failed = true;
        snprintf(ch->reason, sizeof(ch->reason), "%s", reason ? reason + 1 : "unknown error");
    }
}

/* Reads every message waiting, without blocking. */
static void
record_channel_drain(record_channel_t *ch)
{
    char msg[512];
    ssize_t n;
    while (ch->fd >= 0 && (n = recv(ch->fd, msg, sizeof(msg) - 1, MSG_DONTWAIT)) > 0) {
        msg[n] = '\0';
        record_channel_message(ch, msg);
    }
}

static void
record_channel_close(record_channel_t *ch)
{
    if (ch->fd >= 0)
        close(ch->fd);
    if (ch->child_fd >= 0)
        close(ch->child_fd);
    ch->fd = ch->child_fd = -1;
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

/* What the command line asked for. */
typedef struct record_opts {
    const char *output;
    const char *frequency; /* NULL: autorecord's default */
    const char *color;
    const char *html; /* NULL: no page */
    char **command;
} record_opts_t;

/* One run: where the report and the page go. */
typedef struct record_run {
    record_opts_t opts;
    record_target_t target;
    rga_output_t page;
    bool have_page;
    record_channel_t channel;
} record_run_t;

/* Returns EXIT_OK, -1 after --help, or a usage error's code. */
static int
record_parse_args(int argc, char **argv, record_opts_t *o)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"html", required_argument, NULL, 'H'},
        {"frequency", required_argument, NULL, 'F'},
        {"color", required_argument, NULL, 'C'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (record_opts_t){.output = "report.json", .color = "auto"};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+:o:", longopts, NULL)) != -1) {
        long v;
        switch (c) {
        case 'o': o->output = optarg; break;
        case 'H': o->html = optarg; break;
        case 'F':
            if (!parse_long(optarg, RPERF_FREQUENCY_MIN, RPERF_FREQUENCY_MAX, &v))
                return fail_usage("--frequency %s: expected an integer from " RPERF_STR(
                                      RPERF_FREQUENCY_MIN) " to " RPERF_STR(RPERF_FREQUENCY_MAX) " (Hz)",
                                  optarg);
            o->frequency = optarg;
            break;
        case 'C':
            if (strcmp(optarg, "auto") && strcmp(optarg, "always") && strcmp(optarg, "never"))
                return fail_usage("--color %s: expected auto, always or never", optarg);
            o->color = optarg;
            break;
        case 'h': usage(stdout); return -1;
        default: return fail_option(c, argv);
        }
    }
    if (optind >= argc)
        return fail_usage("%s", "record: no command given (record [-o FILE] -- ruby app.rb)");
    o->command = &argv[optind];
    return EXIT_OK;
}

/* Checks the report's and the page's outputs and creates their temporary
 * files, before the program runs: a run is never lost to an unwritable path. */
static int
record_open_outputs(record_run_t *run)
{
    int rc = record_target_open(&run->target, run->opts.output);
    if (rc != EXIT_OK || !run->opts.html)
        return rc;
    rga_error_t perr;
    memset(&perr, 0, sizeof(perr));
    rga_status_t pst = rga_output_open(&run->page, run->opts.html, &perr);
    if (pst != RGA_OK) {
        report_error(&perr);
        record_target_close(&run->target);
        return exit_for(pst, false);
    }
    if (run->page.fp && run->page.kind != 1)
        fcntl(fileno(run->page.fp), F_SETFD, FD_CLOEXEC); /* not the program's to inherit */
    run->have_page = true;
    return EXIT_OK;
}

static void
record_discard_outputs(record_run_t *run)
{
    record_channel_close(&run->channel);
    record_target_close(&run->target);
    if (run->have_page)
        rga_output_discard(&run->page);
    run->have_page = false;
}

/* The program's environment: autorecord on RUBYOPT, the library (and a build
 * tree's extension) on RUBYLIB, the report's temporary, the frequency. */
static int
record_environment(record_run_t *run, const char *libdir, bool from_build)
{
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
        return EXIT_SOFTWARE;
    }
    snprintf(rubyopt, len, "-rrperf/autorecord%s%s", old && *old ? " " : "", old ? old : "");
    setenv("RUBYOPT", rubyopt, 1);
    free(rubyopt);
    setenv("RPERF_GVL_OUTPUT", run->target.tmp, 1);
    if (run->opts.frequency)
        setenv("RPERF_GVL_FREQUENCY", run->opts.frequency, 1);
    if (!record_channel_open(&run->channel)) {
        say("cannot make the status channel: %s", strerror(errno));
        return EXIT_SOFTWARE;
    }
    return EXIT_OK;
}

/* Starts the program with the forwarding handlers installed for the signals
 * not ignored when record started (nohup stays nohup). They are blocked
 * across fork so none is lost before the pid is known. Returns the pid, or
 * -1 (errno set) when fork failed. */
static pid_t
record_start(char **command, record_channel_t *ch)
{
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
    if (pid == 0) {
        for (size_t i = 0; i < N_FORWARDED; i++)
            sigaction(forwarded_signals[i], &old_act[i], NULL);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        fcntl(ch->child_fd, F_SETFD, 0); /* the program's to inherit */
        execvp(command[0], command);
        say("cannot run %s: %s", command[0], strerror(errno));
        _exit(EXIT_NOEXEC);
    }
    int saved = errno;
    if (pid > 0)
        record_child = pid;
    close(ch->child_fd);
    ch->child_fd = -1;
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    errno = saved;
    return pid;
}

/* Waits for the program; returns its wait status. */
static int
record_wait(pid_t pid)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    record_child = 0; /* reaped: the pid may be reused */
    return status;
}

/* The summary on stdout, then the page; returns the page's exit code. */
static int
record_show(record_run_t *run, const rga_report_t *r, bool committed, rga_error_t *err, rga_status_t *st)
{
    rga_view_opts_t opts = {0};
    opts.color = use_color(run->opts.color, STDOUT_FILENO);
    opts.columns = terminal_width();
    fflush(stdout);
    *st = rga_render_report(r, "summary", &opts, stdout, err);
    if (committed)
        say("report written to %s", run->opts.output);
    if (!run->have_page)
        return EXIT_OK;
    rga_error_t perr;
    memset(&perr, 0, sizeof(perr));
    rga_view_opts_t page_opts = {0};
    rga_status_t pst = rga_render_report(r, "html", &page_opts, run->page.fp, &perr);
    if (pst == RGA_OK)
        pst = rga_output_close(&run->page, NULL, NULL, &perr);
    else
        rga_output_discard(&run->page);
    run->have_page = false;
    if (pst == RGA_OK) {
        say("page written to %s", run->opts.html);
        return EXIT_OK;
    }
    report_error(&perr);
    return exit_for(pst, false);
}

/* No report came: says why, as precisely as the channel tells. */
static int
record_no_report(record_run_t *run, int status, int child_exit)
{
    const char *output = run->opts.output;
    const record_channel_t *ch = &run->channel;
    int rc = child_exit;
    if (ch->failed) {
        say("%s: cannot write the report: %s; the program's exit status was %d", output, ch->reason, child_exit);
        rc = EXIT_IO;
    } else if (ch->started) {
        say("the program ended without writing its report (killed, or it ended with exit!); %s was not written "
            "(exit status %d)",
            output, child_exit);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_NOEXEC) {
        rc = EXIT_NOEXEC;
    } else {
        say("the program wrote no report (it did not load the profiler: not a Ruby program?); %s was not "
            "written (exit status %d)",
            output, child_exit);
    }
    record_discard_outputs(run);
    return rc;
}

/* After the program ended: the report into place, its summary and page. */
static int
record_finish(record_run_t *run, int status)
{
    const char *output = run->opts.output;
    int child_exit = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    record_channel_drain(&run->channel);
    struct stat sb;
    if (run->channel.failed || stat(run->target.tmp, &sb) != 0 || sb.st_size == 0)
        return record_no_report(run, status, child_exit);
    rga_error_t err;
    rga_report_t *r = NULL;
    rga_status_t st = rga_report_load_file(run->target.tmp, &r, &err);
    /* The program's report is kept even when it does not load: it is the data. */
    int rc = record_target_commit(&run->target, output);
    record_target_close(&run->target);
    if (st == RGA_OK) {
        int page_rc = record_show(run, r, rc == EXIT_OK, &err, &st);
        if (rc == EXIT_OK)
            rc = page_rc;
        rga_report_free(r);
    } else {
        snprintf(err.file, sizeof(err.file), "%s", output);
    }
    record_discard_outputs(run); /* the report did not load: no page */
    if (st != RGA_OK) {
        report_error(&err);
        if (rc == EXIT_OK && !child_exit)
            rc = exit_for(st, true);
    }
    return rc != EXIT_OK ? rc : child_exit; /* an output not written: 74 whatever the program did */
}

int
record_main(int argc, char **argv)
{
    record_run_t run;
    memset(&run, 0, sizeof(run));
    int rc = record_parse_args(argc, argv, &run.opts);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    char libdir[PATH_MAX];
    bool from_build;
    if (!find_libdir(libdir, sizeof(libdir), &from_build)) {
        say("cannot find the rperf library directory; set RPERF_GVL_LIBDIR");
        return EXIT_USAGE;
    }
    rc = record_open_outputs(&run);
    if (rc != EXIT_OK)
        return rc;
    rc = record_environment(&run, libdir, from_build);
    if (rc != EXIT_OK) {
        record_discard_outputs(&run);
        return rc;
    }
    pid_t pid = record_start(run.opts.command, &run.channel);
    if (pid < 0) {
        say("fork: %s", strerror(errno));
        record_discard_outputs(&run);
        return EXIT_SOFTWARE;
    }
    return record_finish(&run, record_wait(pid));
}
