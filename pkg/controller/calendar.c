/* calendar.c: the calendar feed of a namespace or a HostedCluster
 * (controller.h, ctl_calendar_render()): each object's effective timeline,
 * planned as the scrape plans, written by policy/ics. */
#include <stdio.h>
#include <string.h>

#include "controller/internal.h"
#include "policy/ics.h"

#define PREFIX "/calendar/"
#define NAMELEN CTL_CALENDAR_NAMELEN

typedef struct feed {
    ics_t *ics;
    sched_time_t now;
    int rc;        /* first engine error */
    size_t n;      /* timelines rendered */
} feed_t;

/* A DNS-1123 name of at most 253 bytes, copied into out. */
static int name_part(const char *s, size_t len, char *out)
{
    size_t i;

    if (len == 0 || len >= NAMELEN)
        return 0;
    for (i = 0; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
              s[i] == '.'))
            return 0;
    memcpy(out, s, len);
    out[len] = '\0';
    return 1;
}

int ctl_calendar_path(const char *path, char *ns, char *hc)
{
    size_t len;
    const char *rest, *slash;

    if (strncmp(path, PREFIX, strlen(PREFIX)) != 0)
        return 0;
    rest = path + strlen(PREFIX);
    len = strlen(rest);
    if (len <= 4 || strcmp(rest + len - 4, ".ics") != 0)
        return 0;
    len -= 4;
    hc[0] = '\0';
    if ((slash = memchr(rest, '/', len)) == NULL)
        return name_part(rest, len, ns);
    return name_part(rest, (size_t)(slash - rest), ns) &&
           name_part(slash + 1, len - (size_t)(slash - rest) - 1, hc);
}

static void add_timeline(const ctl_timeline_t *t, void *ud)
{
    feed_t *f = ud;
    char uid[600], summary[800];
    int rc;

    snprintf(uid, sizeof uid, "%s.%s.%s", t->system, t->ns, t->name);
    if (strcmp(t->kind, "HostedCluster") == 0)
        snprintf(summary, sizeof summary, "%s/%s control plane", t->ns, t->name);
    else
        snprintf(summary, sizeof summary, "%s/%s worker nodes (HostedCluster %s)", t->ns,
                 t->name, t->hostedcluster);
    ics_timeline_t tl = {.uid = uid, .summary = summary, .sched = t->sched,
                         .policies = t->policies, .n_policies = t->n_policies, .from = f->now,
                         .until = f->now + (sched_time_t)ICS_FEED_DAYS * 86400,
                         .max_windows = ICS_FEED_MAX_WINDOWS, .min_left = t->min_left,
                         .held_from = t->held_from, .held_why = t->held_why};
    if ((rc = ics_timeline(f->ics, &tl, f->now)) < 0 && f->rc == 0)
        f->rc = rc;
    f->n++;
}

int ctl_calendar_render(ctl_controller_t *c, const char *path, ics_t *out)
{
    char ns[NAMELEN], hc[NAMELEN], name[2 * NAMELEN + 40];
    feed_t f = {.ics = out};

    if (!ctl_calendar_path(path, ns, hc))
        return 404;
    snprintf(name, sizeof name, "Change management windows: %s%s%s", ns, hc[0] ? "/" : "", hc);
    ics_begin(out, name);
    f.now = ctl_now(c);
    ctl_foreach_timeline(c, ns, hc[0] ? hc : NULL, f.now, add_timeline, &f);
    if (hc[0] && f.n == 0)
        return 404;
    if (f.rc < 0 || ics_end(out) < 0)
        return 500;
    return 200;
}
