/* config.c: the notifications' configuration, every key checked. */
#include "notify/config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "notify/payload.h"
#include "policy/guard.h"

#define MAX_LEAD ((sched_time_t)30 * 86400)

bool notify_endpoint_takes(const notify_endpoint_t *e, int step)
{
    if (step < 0 || step >= NOTIFY_STEP_COUNT)
        return false;
    if (e->steps)
        return (e->steps & (1u << step)) != 0;
    return step != NOTIFY_PRE_START && step != NOTIFY_POST_CHANGE;
}

bool notify_config_takes(const notify_config_t *cfg, int step)
{
    for (size_t i = 0; i < cfg->n_endpoints; i++)
        if (notify_endpoint_takes(&cfg->endpoints[i], step))
            return true;
    return false;
}

void notify_config_default(notify_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->leads[0] = 48 * 3600;
    cfg->leads[1] = 3600;
    cfg->n_leads = 2;
    cfg->queue_size = NOTIFY_DEFAULT_QUEUE;
}

static int endpoint(const json_t *o, size_t idx, notify_config_t *cfg, char *err, size_t errlen)
{
    static const char *const known[] = {"name", "url", "format", "tokenFile", NULL};
    notify_endpoint_t *e = &cfg->endpoints[idx];
    static const char *const formats[] = {"cloudevents", "slack", NULL};
    char at[64];
    size_t fmt;
    int rc;

    snprintf(at, sizeof(at), "notifications.endpoints[%zu]", idx);
    if ((rc = guard_mapping_check(o, at, known, err, errlen)) != 0)
        return rc;
    if ((rc = guard_str_field(o, "name", at, true, e->name, sizeof(e->name), err, errlen)) ||
        (rc = guard_str_field(o, "url", at, true, e->url, sizeof(e->url), err, errlen)) ||
        (rc = guard_str_field(o, "tokenFile", at, false, e->token_file, sizeof(e->token_file),
                              err, errlen)))
        return rc;
    if ((rc = guard_endpoint_check(at, e->name, e->url, e->token_file, cfg->endpoints[0].name,
                                   sizeof(cfg->endpoints[0]), idx, err, errlen)) != 0)
        return rc;
    if ((rc = guard_choice_field(o, "format", at, 32, formats, &fmt, err, errlen)))
        return rc;
    e->format = fmt == 1 ? NOTIFY_SLACK : NOTIFY_CLOUDEVENTS;
    return 0;
}

static int leads(const json_t *v, notify_config_t *cfg, char *err, size_t errlen)
{
    size_t i;
    const json_t *x;

    if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > NOTIFY_MAX_LEADS)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "notifications.leads: must be a list of 1 to %d durations",
                        NOTIFY_MAX_LEADS);
    cfg->n_leads = 0;
    json_array_foreach(v, i, x) {
        char what[48], e[256];
        sched_time_t d;
        snprintf(what, sizeof(what), "notifications.leads[%zu]", i);
        if (!json_is_string(x))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be a duration such as \"48h\"",
                            what);
        if (guard_duration_parse(json_string_value(x), what, &d, e, sizeof(e)))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s", e);
        if (d <= 0 || d > MAX_LEAD)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be above 0 and at most 30d", what);
        for (size_t k = 0; k < cfg->n_leads; k++)
            if (cfg->leads[k] == d)
                return hcp_errf(err, errlen, HCP_EINVAL, "%s: the same lead twice", what);
        /* kept longest first */
        size_t k = cfg->n_leads++;
        while (k > 0 && cfg->leads[k - 1] < d) {
            cfg->leads[k] = cfg->leads[k - 1];
            k--;
        }
        cfg->leads[k] = d;
    }
    return 0;
}

int notify_config_parse(const json_t *v, notify_config_t *cfg, char *err, size_t errlen)
{
    json_t *owned = NULL;
    const char *key;
    const json_t *x;
    int rc = 0;

    notify_config_default(cfg);
    if (v == NULL)
        return 0;
    if ((rc = guard_json_text(&v, "notifications", &owned, err, errlen)) != 0)
        return rc;
    if (!json_is_object(v)) {
        rc = hcp_errf(err, errlen, HCP_EINVAL, "notifications: must be a mapping");
        goto done;
    }
    json_object_foreach((json_t *)v, key, x) {
        if (strcmp(key, "endpoints") == 0) {
            size_t i;
            const json_t *e;
            if (!json_is_array(x) || json_array_size(x) > NOTIFY_MAX_CONFIGURED) {
                rc = hcp_errf(err, errlen, HCP_EINVAL,
                              "notifications.endpoints: must be a list of at most %d endpoints",
                              NOTIFY_MAX_CONFIGURED);
                goto done;
            }
            json_array_foreach(x, i, e) {
                if ((rc = endpoint(e, i, cfg, err, errlen)) != 0)
                    goto done;
                cfg->n_endpoints = i + 1;
            }
        } else if (strcmp(key, "leads") == 0) {
            if ((rc = leads(x, cfg, err, errlen)) != 0)
                goto done;
        } else if (strcmp(key, "queueSize") == 0) {
            json_int_t n = json_is_integer(x) ? json_integer_value(x) : -1;
            if (n < 1 || n > NOTIFY_MAX_QUEUE) {
                rc = hcp_errf(err, errlen, HCP_EINVAL,
                              "notifications.queueSize: must be an integer from 1 to %d",
                              NOTIFY_MAX_QUEUE);
                goto done;
            }
            cfg->queue_size = (size_t)n;
        } else {
            rc = hcp_errf(err, errlen, HCP_EINVAL,
                          "notifications.%.64s: unknown key (endpoints, leads, queueSize)", key);
            goto done;
        }
    }
done:
    json_decref(owned);
    return rc;
}
