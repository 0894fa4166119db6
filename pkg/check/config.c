/* config.c: the checks' configuration, every key checked (check.h). */
#include "check/check.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "notify/payload.h"
#include "policy/guard.h"

static int duration_field(const json_t *o, const char *key, const char *at, sched_time_t min,
                          sched_time_t max, sched_time_t *out, char *err, size_t errlen)
{
    const json_t *v = json_object_get(o, key);
    char what[96], e[256];

    if (!v)
        return 0;
    snprintf(what, sizeof(what), "%s.%s", at, key);
    if (!json_is_string(v) || json_string_length(v) != strlen(json_string_value(v)))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be a duration such as \"10s\"", what);
    if (guard_duration_parse(json_string_value(v), what, out, e, sizeof(e)))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s", e);
    if (*out < min || *out > max)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be from %llds to %llds", what,
                        (long long)min, (long long)max);
    return 0;
}

/* A list of names from known[] (bits[] each) into *out; absent: dflt. */
static int name_set(const json_t *o, const char *key, const char *at, const char *const known[],
                    const unsigned bits[], unsigned dflt, unsigned *out, char *err,
                    size_t errlen)
{
    const json_t *v = json_object_get(o, key), *x;
    size_t i;

    *out = dflt;
    if (!v)
        return 0;
    if (!json_is_array(v) || json_array_size(v) == 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s.%s: must be a non-empty list", at, key);
    *out = 0;
    json_array_foreach(v, i, x) {
        size_t k = 0;
        const char *s = json_is_string(x) ? json_string_value(x) : NULL;
        while (s && known[k] && strcmp(known[k], s) != 0)
            k++;
        if (!s || !known[k]) {
            char list[128] = "";
            for (k = 0; known[k]; k++)
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", k ? ", " : "",
                         known[k]);
            return hcp_errf(err, errlen, HCP_EINVAL, "%s.%s[%zu]: must be one of %s", at, key, i,
                            list);
        }
        *out |= bits[k];
    }
    return 0;
}

static int check_def(const json_t *o, size_t idx, check_config_t *cfg, char *err, size_t errlen)
{
    static const char *const keys[] = {"name",  "url",     "tokenFile", "timeout", "failurePolicy",
                                       "steps", "systems", "lead",      NULL};
    static const char *const steps[] = {"pre-start", "post-change", NULL};
    static const unsigned step_bits[] = {CHECK_PRE_START, CHECK_POST_CHANGE};
    static const char *const systems[] = {"control-plane", "worker-nodes", NULL};
    static const unsigned system_bits[] = {CHECK_CONTROL_PLANE, CHECK_WORKER_NODES};
    check_def_t *c = &cfg->checks[idx];
    static const char *const policies[] = {"Hold", "Ignore", NULL};
    char at[32];
    size_t policy;
    sched_time_t timeout = CHECK_DEFAULT_TIMEOUT;
    int rc;

    snprintf(at, sizeof(at), "checks[%zu]", idx);
    if ((rc = guard_mapping_check(o, at, keys, err, errlen)) != 0)
        return rc;
    c->lead = CHECK_DEFAULT_LEAD;
    if ((rc = guard_str_field(o, "name", at, true, c->name, sizeof(c->name), err, errlen)) ||
        (rc = guard_str_field(o, "url", at, true, c->url, sizeof(c->url), err, errlen)) ||
        (rc = guard_str_field(o, "tokenFile", at, false, c->token_file, sizeof(c->token_file),
                              err, errlen)) ||
        (rc = duration_field(o, "timeout", at, 1, CHECK_MAX_TIMEOUT, &timeout, err, errlen)) ||
        (rc = duration_field(o, "lead", at, 0, CHECK_MAX_LEAD, &c->lead, err, errlen)) ||
        (rc = name_set(o, "steps", at, steps, step_bits, CHECK_PRE_START, &c->steps, err,
                       errlen)) ||
        (rc = name_set(o, "systems", at, systems, system_bits,
                       CHECK_CONTROL_PLANE | CHECK_WORKER_NODES, &c->systems, err, errlen)))
        return rc;
    c->timeout = (int)timeout;
    if ((rc = guard_endpoint_check(at, c->name, c->url, c->token_file, cfg->checks[0].name,
                                   sizeof(cfg->checks[0]), idx, err, errlen)) != 0)
        return rc;
    if ((rc = guard_choice_field(o, "failurePolicy", at, 16, policies, &policy, err, errlen)))
        return rc;
    c->ignore = policy == 1;
    return 0;
}

int check_config_parse(const json_t *v, check_config_t *cfg, char *err, size_t errlen)
{
    json_t *owned = NULL;
    const json_t *x;
    size_t i;
    int rc = 0;

    memset(cfg, 0, sizeof(*cfg));
    if (v == NULL)
        return 0;
    if ((rc = guard_json_text(&v, "checks", &owned, err, errlen)) != 0)
        return rc;
    if (!json_is_array(v) || json_array_size(v) > CHECK_MAX) {
        rc = hcp_errf(err, errlen, HCP_EINVAL, "checks: must be a list of at most %d checks",
                      CHECK_MAX);
        goto done;
    }
    json_array_foreach(v, i, x) {
        if ((rc = check_def(x, i, cfg, err, errlen)) != 0) {
            memset(cfg, 0, sizeof(*cfg));
            goto done;
        }
        cfg->n = i + 1;
    }
done:
    json_decref(owned);
    return rc;
}

void check_post_change_endpoints(const check_config_t *cfg, notify_config_t *ncfg)
{
    for (size_t i = 0; i < cfg->n && ncfg->n_endpoints < NOTIFY_MAX_ENDPOINTS; i++) {
        const check_def_t *c = &cfg->checks[i];
        if (!(c->steps & CHECK_POST_CHANGE))
            continue;
        notify_endpoint_t *e = &ncfg->endpoints[ncfg->n_endpoints++];
        memset(e, 0, sizeof(*e));
        snprintf(e->name, sizeof(e->name), "check/%s", c->name);
        snprintf(e->url, sizeof(e->url), "%s", c->url);
        snprintf(e->token_file, sizeof(e->token_file), "%s", c->token_file);
        e->format = NOTIFY_CLOUDEVENTS;
        e->steps = 1u << NOTIFY_POST_CHANGE;
    }
}

sched_time_t check_config_lead(const check_config_t *cfg, unsigned system)
{
    sched_time_t lead = 0;
    bool any = false;
    for (size_t i = 0; cfg && i < cfg->n; i++)
        if ((cfg->checks[i].systems & system) && (cfg->checks[i].steps & CHECK_PRE_START)) {
            any = true;
            if (cfg->checks[i].lead > lead)
                lead = cfg->checks[i].lead;
        }
    return any ? lead : -1;
}
