/* calendars.c: the exclusion calendars of the policies (DESIGN.md 3.16,
 * `spec.exclusionCalendars`).
 *
 * A cache of the ConfigMaps labelled POLICY_CALENDAR_LABEL (a watch with
 * that selector: the controller never lists every ConfigMap's data) keeps
 * each one's `data`. A policy reads its calendars from it when it is parsed
 * (handlers.c, extract_policy()); when a labelled ConfigMap appears,
 * changes or goes, every policy of its namespace that names it reads them
 * again in place and, when what it permits may have changed, counts as a
 * changed policy (ctl_policy_changed(): resolutions forgotten, its status
 * and everything in its namespace decided again). A ConfigMap not (or no
 * longer) there holds what its calendar covers, as policy/calendars.c
 * says. */
#include "controller/internal.h"

#include "log/log.h"

static int extract_calendar(const json_t *obj, kube_intern *s, void **out, void *ud)
{
    (void)s;
    (void)ud;
    json_t *data = json_object_get(obj, "data");
    /* A ConfigMap without data is kept as an empty object: it exists. */
    *out = json_is_object(data) ? json_incref(data) : json_object();
    return *out ? 0 : HCP_ENOMEM;
}

static void release_calendar(void *data, kube_intern *s, void *ud)
{
    (void)s;
    (void)ud;
    json_decref(data);
}

const json_t *ctl_calendar_data(const char *ns, const char *name, void *ud)
{
    ctl_controller_t *c = ud;
    const kube_obj *o = kube_cache_get(&c->cals, ns, name);
    return o ? o->data : NULL;
}

typedef struct reread {
    ctl_controller_t *c;
    const char *ns, *name; /* the ConfigMap */
} reread_t;

static void reread(const kube_obj *o, void *ud)
{
    reread_t *x = ud;
    policy_entry_t *e = o->data;
    bool changed = false;

    if (!e || strcmp(o->ns, x->ns) != 0 || !policy_uses_calendar(e->p, x->name))
        return;
    if (policy_read_calendars(e->p, ctl_calendar_data, x->c,
                              ctl_clock_now(&x->c->opts.clock, x->c->loop), &changed) != 0) {
        log_kv(LOG_ERROR, "out of memory reading an exclusion calendar; the policy keeps what "
               "it read before", "namespace", o->ns, "policy", o->name, "configmap", x->name,
               NULL);
        return;
    }
    if (changed) {
        log_kv(LOG_INFO, "exclusion calendar read", "namespace", o->ns, "policy", o->name,
               "configmap", x->name, NULL);
        ctl_policy_changed(o, x->c);
    }
}

static void calendar_changed(const kube_obj *o, void *ud)
{
    reread_t x = {ud, o->ns, o->name};
    kube_cache_foreach(&x.c->policies, reread, &x);
}

static void cal_add(const kube_obj *o, void *ud) { calendar_changed(o, ud); }
static void cal_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    (void)old;
    calendar_changed(o, ud);
}
/* Called once the object is out of the cache: the policies read it as
 * missing. */
static void cal_delete(const kube_obj *o, void *ud) { calendar_changed(o, ud); }

const kube_cache_ops ctl_calendar_ops = {extract_calendar, release_calendar, cal_add,
                                         cal_update, cal_delete};
