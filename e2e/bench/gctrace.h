/*
 * The API server's garbage collections, from its log (GODEBUG=gctrace=1,
 * which the bench's instance runs with), on the bench's clock.
 *
 * A Go program with gctrace prints a line per collection: "gc N @S s P%:
 * A+B+C ms clock, ..., X->Y->Z MB, ...": it started S seconds after the
 * program did, and marked concurrently for B ms after A ms of stopping the
 * world. While it marks, every goroutine that allocates helps (mark assist)
 * and a quarter of the CPUs mark: on two cores a large heap's mark slows
 * the API server's request handling for as long as it lasts. gctrace_burst()
 * tells which of a burst's pauses fell into a mark phase.
 */
#ifndef E2E_BENCH_GCTRACE_H
#define E2E_BENCH_GCTRACE_H

#include <stddef.h>
#include <sys/types.h>

#include "boundary.h"

typedef struct gc_mark {
    double from, to; /* the mark phase, wall-clock seconds */
    double live_mb;  /* the heap marked live */
} gc_mark_t;

typedef struct gc_trace {
    gc_mark_t *v;
    size_t n;
} gc_trace_t;

/* Reads the collections of the program with pid `pid` from its log `log`
 * (every "gc " line; their instants from the process's start, read from
 * /proc). Returns 0, or -1 when the log or the process cannot be read. */
int gctrace_read(const char *log, pid_t pid, gc_trace_t *out);

void gctrace_free(gc_trace_t *t);

/* /proc/PID/stat read into buf: the fields after the command (the state
 * first), or NULL. */
const char *proc_stat(pid_t pid, char *buf, size_t len);

/* What the collections did to one burst of releases (boundary_figs_t's
 * first and last release and pauses). */
typedef struct gc_burst {
    int collections;   /* mark phases that overlap the burst */
    double marking;    /* their seconds inside it */
    int stalls_in_gc;  /* the burst's pauses that overlap a mark phase */
    double live_mb;    /* the largest live heap among them */
} gc_burst_t;

void gctrace_burst(const gc_trace_t *t, const boundary_figs_t *f, gc_burst_t *out);

#endif
