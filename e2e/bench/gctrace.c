/* gctrace.c: the API server's garbage collections (gctrace.h). */
#include "gctrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The wall-clock instant process `pid` started: its start in clock ticks
 * since boot (/proc/PID/stat, field 22) on the boot instant that
 * CLOCK_BOOTTIME gives (/proc/stat's btime is whole seconds). */
const char *proc_stat(pid_t pid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f || len < 2) {
        if (f)
            fclose(f);
        return NULL;
    }
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    return p && p[1] == ' ' ? p + 2 : NULL;
}

static int proc_start(pid_t pid, double *out)
{
    char buf[2048];
    const char *p = proc_stat(pid, buf, sizeof(buf));
    if (!p)
        return -1;
    unsigned long long ticks = 0;
    /* Fields 3..22 follow the command: the state is field 3, the start field 22. */
    if (sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
                      "%*d %llu", &ticks) != 1)
        return -1;
    struct timespec real, boot;
    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_BOOTTIME, &boot);
    double booted = (real.tv_sec - boot.tv_sec) + (real.tv_nsec - boot.tv_nsec) / 1e9;
    *out = booted + (double)ticks / (double)sysconf(_SC_CLK_TCK);
    return 0;
}

int gctrace_read(const char *log, pid_t pid, gc_trace_t *out)
{
    double start;
    *out = (gc_trace_t){0};
    if (proc_start(pid, &start) != 0)
        return -1;
    FILE *f = fopen(log, "r");
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0, room = 0;
    while (getline(&line, &cap, f) > 0) {
        double at, stw, mark, live;
        const char *arrow;
        if (strncmp(line, "gc ", 3) != 0 ||
            sscanf(line, "gc %*d @%lfs %*d%%: %lf+%lf+", &at, &stw, &mark) != 3)
            continue;
        /* "X->Y->Z MB": Z, the live heap */
        if (!(arrow = strstr(line, "->")) || !(arrow = strstr(arrow + 2, "->")) ||
            sscanf(arrow + 2, "%lf", &live) != 1)
            live = 0;
        if (out->n == room) {
            room = room ? 2 * room : 256;
            out->v = realloc(out->v, room * sizeof(*out->v));
            if (!out->v)
                abort();
        }
        double from = start + at + stw / 1000;
        out->v[out->n++] = (gc_mark_t){from, from + mark / 1000, live};
    }
    free(line);
    fclose(f);
    return 0;
}

void gctrace_free(gc_trace_t *t)
{
    free(t->v);
    *t = (gc_trace_t){0};
}

static double overlap(double a0, double a1, double b0, double b1)
{
    double lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi > lo ? hi - lo : 0;
}

void gctrace_burst(const gc_trace_t *t, const boundary_figs_t *f, gc_burst_t *out)
{
    *out = (gc_burst_t){0};
    for (size_t i = 0; i < t->n; i++) {
        const gc_mark_t *g = &t->v[i];
        double in = overlap(g->from, g->to, f->t_first, f->t_last);
        if (in <= 0)
            continue;
        out->collections++;
        out->marking += in;
        if (g->live_mb > out->live_mb)
            out->live_mb = g->live_mb;
    }
    int n = f->stalls < BOUNDARY_STALLS_MAX ? f->stalls : BOUNDARY_STALLS_MAX;
    for (int s = 0; s < n; s++)
        for (size_t i = 0; i < t->n; i++)
            if (overlap(t->v[i].from, t->v[i].to, f->stall[s][0], f->stall[s][1]) > 0) {
                out->stalls_in_gc++;
                break;
            }
}
