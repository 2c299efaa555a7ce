/* output.c — FILE* targets for the writers: file, stdout or memory (see
 * output.h). Regular files are written through a temporary in their own
 * directory and renamed into place, so a failed write never truncates or
 * removes anything; devices and FIFOs are written in place and never
 * unlinked. Does not decide exit codes or print. */
#define _GNU_SOURCE
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static rga_status_t
open_failed(rga_output_t *o, rga_error_t *err, int errnum)
{
    if (err)
        snprintf(err->file, sizeof(err->file), "%s", o->path);
    free(o->tmp_path);
    free(o->final_path);
    o->tmp_path = o->final_path = NULL;
    return rga_error_set(err, RGA_ERR_IO, "cannot open for writing: %s", strerror(errnum));
}

size_t
rga_name_head(const char *name, size_t max)
{
    size_t n = strlen(name);
    if (n <= max)
        return n;
    n = max;
    while (n > 0 && ((unsigned char)name[n] & 0xC0) == 0x80) /* inside a character */
        n--;
    return n;
}

/* Creates ".NAME.XXXXXX" beside final with O_EXCL and mode 0666 (minus the
 * umask, like fopen), or mode when replacing a file (keeps its permissions).
 * NAME is cut to fit NAME_MAX; O_EXCL keeps the name unique. */
static int
create_temp(const char *final, mode_t mode, bool keep_mode, char **tmp_out)
{
    const char *slash = strrchr(final, '/');
    size_t dir_len = slash ? (size_t)(slash - final) + 1 : 0;
    const char *base = slash ? slash + 1 : final;
    int base_len = (int)rga_name_head(base, NAME_MAX - 8); /* 8: "." and ".XXXXXX" */
    size_t size = dir_len + (size_t)base_len + 16;
    char *tmp = malloc(size);
    if (!tmp)
        return -1;
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 20) ^ (uint64_t)(uintptr_t)tmp;
    for (int attempt = 0; attempt < 100; attempt++) {
        char suffix[7];
        for (int i = 0; i < 6; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            suffix[i] = digits[(seed >> 33) % (sizeof(digits) - 1)];
        }
        suffix[6] = '\0';
        snprintf(tmp, size, "%.*s.%.*s.%s", (int)dir_len, final, base_len, base, suffix);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            if (keep_mode)
                (void)fchmod(fd, mode & 07777);
            *tmp_out = tmp;
            return fd;
        }
        if (errno != EEXIST)
            break;
    }
    int saved = errno;
    free(tmp);
    errno = saved;
    return -1;
}

rga_status_t
rga_output_open(rga_output_t *o, const char *path, rga_error_t *err)
{
    memset(o, 0, sizeof(*o));
    if (path == RGA_OUTPUT_MEMORY) {
        o->kind = 2;
        o->path = "<memory>";
        o->fp = open_memstream(&o->mem, &o->mem_len);
        if (!o->fp)
            return open_failed(o, err, errno);
        return RGA_OK;
    }
    if (!path || strcmp(path, "-") == 0) {
        o->kind = 1;
        o->path = "standard output";
        o->fp = stdout;
        return RGA_OK;
    }
    o->path = path;
    struct stat sb;
    bool exists = stat(path, &sb) == 0;
    if (!exists && errno != ENOENT)
        return open_failed(o, err, errno);
    struct stat lsb;
    bool dangling = !exists && lstat(path, &lsb) == 0; /* a link to nothing: write through it */
    if (exists && S_ISDIR(sb.st_mode))
        return open_failed(o, err, EISDIR);
    if ((exists && !S_ISREG(sb.st_mode)) || dangling) {
        o->kind = 3;
        o->fp = fopen(path, "wb");
        return o->fp ? RGA_OK : open_failed(o, err, errno);
    }
    if (exists && access(path, W_OK) != 0)
        return open_failed(o, err, errno);
    o->kind = 0;
    /* Replace a link's target, not the link. */
    o->final_path = exists ? realpath(path, NULL) : strdup(path);
    if (!o->final_path)
        return open_failed(o, err, errno);
    int fd = create_temp(o->final_path, sb.st_mode, exists, &o->tmp_path);
    if (fd < 0)
        return open_failed(o, err, errno);
    o->fp = fdopen(fd, "wb");
    if (!o->fp) {
        int saved = errno;
        close(fd);
        unlink(o->tmp_path);
        return open_failed(o, err, saved);
    }
    return RGA_OK;
}

static void
forget_paths(rga_output_t *o)
{
    free(o->tmp_path);
    free(o->final_path);
    o->tmp_path = o->final_path = NULL;
}

void
rga_output_discard(rga_output_t *o)
{
    if (!o->fp)
        return;
    if (o->kind == 1)
        fflush(o->fp);
    else
        fclose(o->fp);
    o->fp = NULL;
    if (o->kind == 0 && o->tmp_path)
        unlink(o->tmp_path);
    forget_paths(o);
    if (o->kind == 2) {
        free(o->mem);
        o->mem = NULL;
    }
}

rga_status_t
rga_output_close(rga_output_t *o, char **buf, size_t *len, rga_error_t *err)
{
    if (!o->fp)
        return RGA_OK;
    bool failed = ferror(o->fp) != 0;
    int saved = errno;
    if (o->kind == 1) {
        failed |= fflush(o->fp) != 0;
    } else {
        failed |= fclose(o->fp) != 0;
    }
    if (!failed)
        saved = 0;
    else if (errno)
        saved = errno;
    o->fp = NULL;
    if (o->kind == 0 && o->tmp_path) {
        if (!failed && rename(o->tmp_path, o->final_path) != 0) {
            failed = true;
            saved = errno;
        }
        if (failed)
            unlink(o->tmp_path);
    }
    forget_paths(o);
    if (o->kind == 2) {
        if (!failed && buf) {
            *buf = o->mem;
            if (len)
                *len = o->mem_len;
        } else {
            free(o->mem);
        }
        o->mem = NULL;
    }
    if (failed) {
        if (err && o->path)
            snprintf(err->file, sizeof(err->file), "%s", o->path);
        return rga_error_set(err, RGA_ERR_IO, "write failed: %s", saved ? strerror(saved) : "I/O error");
    }
    return RGA_OK;
}
