/* payload.c: CloudEvents 1.0 (structured) and Slack bodies. */
#include "notify/payload.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "base/error.h"
#include "policy/guard.h"

static const char *const names[NOTIFY_STEP_COUNT] = {
    "held", "window-soon", "initiated", "completed", "failed", "health-gate-skipped",
    "override-set", "override-expired", "withdrawn", "release-withdrawn",
    "unhealthy-after-change", "hold-aging", "post-change", "pre-start", "soak-waiting",
    "wave-halted", "wave-resumed"};

const char *notify_step_name(notify_step_t s)
{
    return s < NOTIFY_STEP_COUNT ? names[s] : "unknown";
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

void notify_event_id(const notify_event_t *ev, char *buf, size_t len)
{
    uint64_t a = 1469598103934665603ULL, b = 0x9e3779b97f4a7c15ULL;
    const char *uid = ev->uid ? ev->uid : "";
    int64_t parts[4] = {(int64_t)ev->step, (int64_t)ev->window,
                        ev->step == NOTIFY_WINDOW_SOON ? (int64_t)ev->lead : 0,
                        (int64_t)ev->request};
    size_t n = ev->request == SCHED_NEG_INF ? 3 * sizeof(parts[0]) : sizeof(parts);
    a = fnv(fnv(a, uid, strlen(uid) + 1), parts, n);
    b = fnv(fnv(b, parts, n), uid, strlen(uid) + 1);
    snprintf(buf, len, "%016" PRIx64 "%016" PRIx64, a, b);
}

static json_t *jtime(sched_time_t t)
{
    char buf[32];
    if (t == SCHED_NEG_INF || t == SCHED_POS_INF)
        return json_null();
    sched_format_utc(t, buf, sizeof(buf));
    return json_string(buf);
}

/* The step in a sentence for people. */
static void sentence(const notify_event_t *ev, char *buf, size_t len)
{
    char until[32] = "", lead[48] = "", late[96] = "";
    const char *what = ev->change ? ev->change : "a change";
    if (ev->until != SCHED_POS_INF && ev->until != SCHED_NEG_INF)
        sched_format_utc(ev->until, until, sizeof(until));
    if (ev->step == NOTIFY_WINDOW_SOON)
        snprintf(lead, sizeof(lead), "%" PRId64 "h%02" PRId64 "m", (int64_t)ev->lead / 3600,
                 ((int64_t)ev->lead % 3600) / 60);
    switch (ev->step) {
    case NOTIFY_HELD:
        snprintf(buf, len, "%s is held%s%s.", what, until[0] ? " until " : "", until);
        break;
    case NOTIFY_WINDOW_SOON:
        snprintf(buf, len, "a window opens at %s (in %s) with %s pending.", until, lead, what);
        break;
    case NOTIFY_INITIATED:
        if (ev->superseded_held)
            snprintf(late, sizeof(late), " (it opened before the held notice was sent)");
        else if (ev->superseded > 0)
            snprintf(late, sizeof(late),
                     " (it opened before the %" PRId64 "h%02" PRId64 "m notice was sent)",
                     (int64_t)ev->superseded / 3600, ((int64_t)ev->superseded % 3600) / 60);
        snprintf(buf, len, "%s is let through: the window is open%s.", what, late);
        break;
    case NOTIFY_COMPLETED:
        snprintf(buf, len, "%s completed.", what);
        break;
    case NOTIFY_FAILED:
        snprintf(buf, len, "%s failed.", what);
        break;
    case NOTIFY_GATE_SKIPPED:
        snprintf(buf, len, "the health gate keeps %s held in the window.", what);
        break;
    case NOTIFY_OVERRIDE_SET:
        snprintf(buf, len, "an override is set%s%s.", until[0] ? " until " : "", until);
        break;
    case NOTIFY_WITHDRAWN:
        snprintf(buf, len, "the request for %s is withdrawn: nothing of it starts at the window.",
                 ev->change ? ev->change : "a held change");
        break;
    case NOTIFY_RELEASE_WITHDRAWN:
        snprintf(buf, len,
                 "%s is no longer recommended for this cluster: it stays held in the window.",
                 what);
        break;
    case NOTIFY_UNHEALTHY_AFTER_CHANGE:
        snprintf(buf, len, "%s completed, and the %s is unhealthy after it.", what,
                 strcmp(ev->kind, "NodePool") == 0 ? "node pool" : "cluster");
        break;
    case NOTIFY_HOLD_AGING: {
        char since[32] = "", age[48];
        guard_format_duration(ev->request != SCHED_NEG_INF && ev->at > ev->request
                                  ? (ev->at - ev->request) / 60 * 60 : 0,
                              age, sizeof(age));
        if (ev->request != SCHED_NEG_INF)
            sched_format_utc(ev->request, since, sizeof(since));
        snprintf(buf, len, "%s has been held for %s%s%s%s: %s%s.", what, age,
                 since[0] ? " (since " : "", since, since[0] ? ")" : "",
                 until[0] ? "it waits for the window at " : "no window lets it through yet",
                 until);
        break;
    }
    case NOTIFY_POST_CHANGE:
        snprintf(buf, len, "%s completed; the %s is %s after it.", what,
                 strcmp(ev->kind, "NodePool") == 0 ? "node pool" : "cluster",
                 ev->verdict && strcmp(ev->verdict, "Unhealthy") == 0 ? "unhealthy" : "healthy");
        break;
    case NOTIFY_SOAK_WAITING:
        snprintf(buf, len, "%s waits for the release waves before it to soak: %s%s.", what,
                 until[0] ? "it may start from " : "no instant is known yet", until);
        break;
    case NOTIFY_WAVE_HALTED:
        snprintf(buf, len, "%s is halted: a cluster of an earlier wave runs it unhealthy.", what);
        break;
    case NOTIFY_WAVE_RESUMED:
        snprintf(buf, len, "%s is no longer halted by an earlier wave.", what);
        break;
    case NOTIFY_PRE_START:
        snprintf(buf, len, "%s is about to be let through%s%s: may it start?", what,
                 until[0] ? " at " : "", until);
        break;
    default:
        snprintf(buf, len, "the override expired.");
        break;
    }
}

int notify_payload(const notify_event_t *ev, notify_format_t f, char **body,
                   const char **content_type)
{
    char id[40], text[1536], subject[600], source[300], type[96], sup[48] = "";
    json_t *doc;

    *body = NULL;
    sentence(ev, text, sizeof(text));
    if (f == NOTIFY_SLACK) {
        char full[2560];
        snprintf(full, sizeof(full), "[hcp-controller] %s %s/%s: %s%s%s", ev->kind, ev->ns,
                 ev->name, text, ev->detail ? " " : "", ev->detail ? ev->detail : "");
        doc = json_pack("{s:s}", "text", full);
        *content_type = "application/json";
    } else {
        notify_event_id(ev, id, sizeof(id));
        snprintf(subject, sizeof(subject), "%s/%s/%s",
                 strcmp(ev->kind, "NodePool") == 0 ? "nodepools" : "hostedclusters", ev->ns,
                 ev->name);
        snprintf(source, sizeof(source), "/hcp-controller/namespaces/%s", ev->ns);
        snprintf(type, sizeof(type), "io.openshift.hypershift.changemanagement.%s.v1",
                 notify_step_name(ev->step));
        if (ev->step == NOTIFY_INITIATED && ev->superseded_held)
            snprintf(sup, sizeof(sup), "held");
        else if (ev->step == NOTIFY_INITIATED && ev->superseded > 0)
            snprintf(sup, sizeof(sup), "window-soon %" PRId64 "h%02" PRId64 "m",
                     (int64_t)ev->superseded / 3600, ((int64_t)ev->superseded % 3600) / 60);
        json_t *asked = ev->request == SCHED_NEG_INF ? NULL : jtime(ev->request);
        doc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:{s:s, s:s, s:s, s:s, s:s?, "
                        "s:o, s:o, s:s, s:s?, s:o?, s:s?, s:s*}}",
                        "specversion", "1.0", "id", id, "source", source, "type", type,
                        "subject", subject, "time", jtime(ev->at), "datacontenttype",
                        "application/json", "data", "kind", ev->kind, "namespace", ev->ns,
                        "name", ev->name, "step", notify_step_name(ev->step), "change",
                        ev->change, "until", jtime(ev->until), "window", jtime(ev->window),
                        "message", text, "detail", ev->detail, "requestedAt", asked,
                        "supersedes", sup[0] ? sup : NULL, "verdict", ev->verdict);
        *content_type = "application/cloudevents+json";
    }
    if (!doc)
        return HCP_ENOMEM;
    *body = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(doc);
    return *body ? 0 : HCP_ENOMEM;
}
