#include "recorded.h"

#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "decide/companion.h"
#include "decide/slim.h"

void recorded_read(recorded_t *r, int nodepool, const char *ns, const char *name,
                   recorded_get_fn get, void *ctx)
{
    char path[1024];
    kube_error e;
    if (decide_companion_name(nodepool ? DECIDE_NP : DECIDE_HC, name, r->name,
                              sizeof r->name) != 0) {
        r->name[0] = '\0';
        return;
    }
    kube_path(path, sizeof path, "changemanagement.hypershift.openshift.io", "v1alpha1",
              DECIDE_COMPANION_RESOURCE, ns, r->name, NULL);
    if ((r->obj = get(ctx, path, &e)) == NULL) {
        r->http_status = e.http_status ? e.http_status : -1;
        snprintf(r->error, sizeof r->error, "%.64s%s%.180s", e.http_status ? e.reason : "",
                 e.http_status ? ": " : "", e.message);
    }
}

static const char *or_dash(const char *s) { return s && *s ? s : "-"; }

static int covers(const json_t *cur, sched_time_t at)
{
    sched_time_t from, to = SCHED_POS_INF;
    const char *start = hcp_json_str(cur, "startTime"), *end = hcp_json_str(cur, "endTime");
    if (!start || sched_parse_rfc3339(start, &from) || (end && sched_parse_rfc3339(end, &to)))
        return 0;
    return from <= at && at < to;
}

int recorded_differs(const recorded_t *r, int permitted, sched_time_t at)
{
    const json_t *cur = hcp_json_path(r->obj, "status.behavior.current");
    const char *state = hcp_json_str(cur, "state");
    return r->obj && state && covers(cur, at) &&
           (strcmp(state, "ChangesUnpaused") == 0) != (permitted != 0);
}

void recorded_text(const recorded_t *r, int permitted, sched_time_t at)
{
    const json_t *st = json_object_get(r->obj, "status");
    const json_t *beh = json_object_get(st, "behavior"), *cur = json_object_get(beh, "current");
    const json_t *held = json_object_get(st, "heldChange"), *h;
    const char *state = hcp_json_str(cur, "state");
    size_t i;

    if (!r->obj) {
        if (r->http_status == 404 || !r->name[0])
            printf("  %-11s no HostedChangeManagementStatus %s: the controller has not "
                   "recorded this object (not running or not leading, or no stanza applies)\n",
                   "Recorded:", r->name[0] ? r->name : "(name too long)");
        else
            printf("  %-11s cannot read HostedChangeManagementStatus %s: %s\n", "Recorded:",
                   r->name, r->error);
        return;
    }
    const char *end = hcp_json_str(cur, "endTime");
    printf("  %-11s HostedChangeManagementStatus %s: %s since %s, until %s; strategy in force "
           "%s\n", "Recorded:", r->name, or_dash(state),
           or_dash(hcp_json_str(cur, "startTime")), end ? end : "no end",
           or_dash(hcp_json_str(st, "strategyInForce")));
    if (held && json_is_object(held))
        printf("  %-11s %s held since %s\n", "", or_dash(hcp_json_str(held, "summary")),
               or_dash(hcp_json_str(held, "since")));
    /* The release waves' verdict on the held change (DESIGN.md 3.14): the
     * fleet's waves are the controller's configuration, so only its record
     * knows them. */
    const json_t *w = json_object_get(st, "wave");
    const char *until = hcp_json_str(w, "until");
    if (w && json_is_true(json_object_get(w, "skipped")))
        printf("  %-11s wave %s: the override in force lets the held change past the waves "
               "(%s: %s)\n", "Waves:", or_dash(hcp_json_str(w, "name")),
               or_dash(hcp_json_str(w, "state")), or_dash(hcp_json_str(w, "message")));
    else if (w)
        printf("  %-11s wave %s: %s%s%s: %s\n", "Waves:", or_dash(hcp_json_str(w, "name")),
               or_dash(hcp_json_str(w, "state")), until ? ", may go from " : "",
               until ? until : "", or_dash(hcp_json_str(w, "message")));
    const char *skipped = hcp_json_str(json_object_get(json_object_get(st, "audit"), "override"),
                                       "skipped");
    if (skipped)
        printf("  %-11s the override let a change past %s\n", "Skipped:", skipped);
    json_array_foreach(json_object_get(beh, "history"), i, h) {
        end = hcp_json_str(h, "endTime");
        printf("  %-11s %s %s - %s (%s)\n", i == 0 ? "History:" : "",
               or_dash(hcp_json_str(h, "state")), or_dash(hcp_json_str(h, "startTime")),
               end ? end : "ongoing", or_dash(hcp_json_str(h, "strategy")));
    }
    if (recorded_differs(r, permitted, at))
        printf("  %-11s the controller's record says %s but changes are %s now: it has not "
               "acted on this yet (not running, not leading, or behind)\n", "Differs:", state,
               permitted ? "permitted" : "NOT permitted");
}

json_t *recorded_json(const recorded_t *r, int permitted, sched_time_t at)
{
    if (!r->obj)
        return json_pack("{s:s, s:b, s:s?}", "name", r->name, "found", 0, "error",
                         r->http_status == 404 || !r->name[0] ? NULL : r->error);
    return json_pack("{s:s, s:b, s:O?, s:b}", "name", r->name, "found", 1, "status",
                     json_object_get(r->obj, "status"), "differs",
                     recorded_differs(r, permitted, at));
}
