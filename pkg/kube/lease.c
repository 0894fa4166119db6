/*
 * kube/lease.c - leader election with a coordination.k8s.io/v1 Lease.
 */
#include "kube/lease.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void micro_time(double t, char *buf, size_t len)
{
    time_t s = (time_t)t;
    struct tm tm;
    gmtime_r(&s, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%06ldZ", (long)((t - floor(t)) * 1e6));
}

static void set_leading(kube_lease *l, bool leading)
{
    if (l->leading == leading)
        return;
    l->leading = leading;
    if (l->opts.on_change)
        l->opts.on_change(l, leading, l->opts.ud);
}

static void schedule(kube_lease *l, double after)
{
    ev_timer_stop(l->loop, &l->tick);
    ev_timer_set(&l->tick, after, 0.);
    ev_timer_start(l->loop, &l->tick);
}

/* The Lease document naming holder (NULL: nobody) at time now. */
static json_t *lease_doc(kube_lease *l, const char *holder, const char *rv, int transitions,
                         double now, int duration)
{
    char ts[40];
    micro_time(now, ts, sizeof(ts));
    json_t *doc = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:i, s:s, s:s, s:i}}", "apiVersion",
                            "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name",
                            l->opts.name, "namespace", l->opts.ns, "spec",
                            "leaseDurationSeconds", duration, "acquireTime", ts, "renewTime", ts,
                            "leaseTransitions", transitions);
    if (!doc)
        return NULL;
    json_t *spec = json_object_get(doc, "spec");
    if (holder)
        json_object_set_new(spec, "holderIdentity", json_string(holder));
    if (rv)
        json_object_set_new(json_object_get(doc, "metadata"), "resourceVersion", json_string(rv));
    return doc;
}

/* Sends one request about the Lease, keeping its handle so that stop and
 * release can cancel it. doc may be NULL (GET). Returns 0 or negative. */
static int call(kube_lease *l, kube_verb verb, const char *path, const json_t *doc,
                kube_done_cb cb)
{
    kube_error e;
    char *body = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    if (doc && !body)
        return HCP_ENOMEM;
    kube_call k = {.verb = verb, .path = path, .body = body, .body_len = body ? strlen(body) : 0,
                   .on_done = cb, .ud = l};
    int rc = kube_client_call(l->c, &k, &l->req, &e);
    free(body);
    return rc;
}

static void written(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    (void)c;
    (void)obj;
    kube_lease *l = ud;
    double now = ev_now(l->loop);
    l->req = NULL;
    if (!err) {
        l->last_renew = now;
        set_leading(l, true);
    } else if (l->leading && now - l->last_renew > l->opts.renew_deadline) {
        set_leading(l, false);
    }
    schedule(l, l->opts.retry_period);
}

static void got(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    (void)c;
    kube_lease *l = ud;
    double now = ev_now(l->loop);
    l->req = NULL;
    if (err && err->http_status == 404) {
        json_t *doc = lease_doc(l, l->opts.identity, NULL, 0, now, (int)l->opts.lease_duration);
        if (doc && call(l, KUBE_VERB_CREATE, l->collection, doc, written) == 0) {
            json_decref(doc);
            return; /* `written` reschedules */
        }
        json_decref(doc);
        schedule(l, l->opts.retry_period);
        return;
    }
    if (err) {
        if (l->leading && now - l->last_renew > l->opts.renew_deadline)
            set_leading(l, false);
        schedule(l, l->opts.retry_period);
        return;
    }
    const char *rv = json_string_value(json_object_get(json_object_get(obj, "metadata"),
                                                       "resourceVersion"));
    json_t *spec = json_object_get(obj, "spec");
    const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
    json_t *dur = json_object_get(spec, "leaseDurationSeconds");
    double duration = json_is_integer(dur) ? (double)json_integer_value(dur) : l->opts.lease_duration;
    json_t *tr = json_object_get(spec, "leaseTransitions");
    int transitions = json_is_integer(tr) ? (int)json_integer_value(tr) : 0;
    if (!rv) {
        schedule(l, l->opts.retry_period);
        return;
    }
    if (strcmp(rv, l->observed_rv) != 0) {
        snprintf(l->observed_rv, sizeof(l->observed_rv), "%s", rv);
        l->observed_at = now;
    }
    bool mine = holder && strcmp(holder, l->opts.identity) == 0;
    bool vacant = !holder || !*holder;
    bool expired = now - l->observed_at > duration;
    if (!mine && !vacant && !expired) {
        set_leading(l, false);
        schedule(l, l->opts.retry_period);
        return;
    }
    json_t *doc = lease_doc(l, l->opts.identity, rv, mine ? transitions : transitions + 1, now,
                            (int)l->opts.lease_duration);
    if (doc && mine) {
        /* Keep the acquisition time of the current term. */
        json_t *acq = json_object_get(spec, "acquireTime");
        if (json_is_string(acq))
            json_object_set(json_object_get(doc, "spec"), "acquireTime", acq);
    }
    if (doc && call(l, KUBE_VERB_UPDATE, l->path, doc, written) == 0) {
        json_decref(doc);
        return;
    }
    json_decref(doc);
    schedule(l, l->opts.retry_period);
}

static void tick(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    kube_lease *l = w->data;
    if (l->releasing || l->req)
        return;
    if (l->leading && ev_now(l->loop) - l->last_renew > l->opts.renew_deadline)
        set_leading(l, false);
    if (call(l, KUBE_VERB_GET, l->path, NULL, got) != 0)
        schedule(l, l->opts.retry_period);
}

static char *dup_opt(const char *s)
{
    return s ? strdup(s) : NULL;
}

int kube_lease_start(kube_lease *l, kube_client *c, const kube_lease_opts *opts,
                     kube_error *err)
{
    memset(l, 0, sizeof(*l));
    if (!opts->ns || !opts->name || !opts->identity || !*opts->identity)
        return kube_error_set(err, HCP_EINVAL, 0, NULL,
                              "leader election needs a namespace, a name and an identity");
    l->c = c;
    l->loop = c->http->loop;
    l->opts = *opts;
    if (l->opts.lease_duration <= 0)
        l->opts.lease_duration = 15;
    if (l->opts.renew_deadline <= 0)
        l->opts.renew_deadline = 10;
    if (l->opts.retry_period <= 0)
        l->opts.retry_period = 2;
    if (kube_path(l->path, sizeof(l->path), "coordination.k8s.io", "v1", "leases", opts->ns,
                  opts->name, NULL) ||
        kube_path(l->collection, sizeof(l->collection), "coordination.k8s.io", "v1", "leases",
                  opts->ns, NULL, NULL))
        return kube_error_set(err, HCP_EINVAL, 0, NULL, "invalid lease namespace or name");
    l->opts.ns = dup_opt(opts->ns);
    l->opts.name = dup_opt(opts->name);
    l->opts.identity = dup_opt(opts->identity);
    if (!l->opts.ns || !l->opts.name || !l->opts.identity) {
        kube_lease_stop(l);
        return kube_error_set(err, HCP_ENOMEM, 0, NULL, "out of memory");
    }
    ev_timer_init(&l->tick, tick, 0., 0.);
    l->tick.data = l;
    ev_timer_start(l->loop, &l->tick);
    return 0;
}

static void released(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    (void)c;
    (void)err;
    (void)obj;
    kube_lease *l = ud;
    l->req = NULL;
    set_leading(l, false);
    if (l->released)
        l->released(l->released_ud);
}

static void release_got(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    (void)c;
    kube_lease *l = ud;
    l->req = NULL;
    const char *rv = err ? NULL
                         : json_string_value(json_object_get(json_object_get(obj, "metadata"),
                                                             "resourceVersion"));
    const char *holder = err ? NULL
                             : json_string_value(json_object_get(json_object_get(obj, "spec"),
                                                                 "holderIdentity"));
    json_t *tr = err ? NULL : json_object_get(json_object_get(obj, "spec"), "leaseTransitions");
    if (rv && holder && strcmp(holder, l->opts.identity) == 0) {
        json_t *doc = lease_doc(l, NULL, rv, json_is_integer(tr) ? (int)json_integer_value(tr) : 0,
                                ev_now(l->loop), 1);
        if (doc && call(l, KUBE_VERB_UPDATE, l->path, doc, released) == 0) {
            json_decref(doc);
            return;
        }
        json_decref(doc);
    }
    released(c, NULL, NULL, l);
}

void kube_lease_release(kube_lease *l, void (*done)(void *ud), void *ud)
{
    l->releasing = true;
    l->released = done;
    l->released_ud = ud;
    ev_timer_stop(l->loop, &l->tick);
    if (l->req) {
        kube_request_cancel(l->req);
        l->req = NULL;
    }
    if (!l->leading || call(l, KUBE_VERB_GET, l->path, NULL, release_got) != 0) {
        set_leading(l, false);
        if (done)
            done(ud);
    }
}

void kube_lease_kick(kube_lease *l)
{
    if (l->loop == NULL || l->releasing || l->req)
        return;
    schedule(l, 0.);
}

void kube_lease_stop(kube_lease *l)
{
    if (l->req) {
        kube_request_cancel(l->req);
        l->req = NULL;
    }
    if (l->loop)
        ev_timer_stop(l->loop, &l->tick);
    free((char *)l->opts.ns);
    free((char *)l->opts.name);
    free((char *)l->opts.identity);
    l->opts.ns = l->opts.name = l->opts.identity = NULL;
}
