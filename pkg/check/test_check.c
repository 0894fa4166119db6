/* test_check.c: the checks' configuration (every bad key refused, named)
 * and the answers' verdict (pure). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "check/check.h"
#include "notify/payload.h"

static int parse(const char *json, check_config_t *cfg, char *err, size_t len)
{
    json_error_t je;
    json_t *v = json_loads(json, 0, &je);
    assert_non_null(v);
    int rc = check_config_parse(v, cfg, err, len);
    json_decref(v);
    return rc;
}

static void test_config_defaults_and_full(void **state)
{
    (void)state;
    check_config_t cfg;
    char err[300] = "";

    assert_int_equal(check_config_parse(NULL, &cfg, err, sizeof(err)), 0);
    assert_int_equal((int)cfg.n, 0);
    assert_true(check_config_lead(&cfg, CHECK_CONTROL_PLANE) < 0);
    assert_int_equal(parse("[{\"name\":\"cab\",\"url\":\"https://cab.example.com/x\"},"
                           "{\"name\":\"deps\",\"url\":\"http://deps:8080\",\"tokenFile\":\"/t\","
                           "\"timeout\":\"30s\",\"failurePolicy\":\"Ignore\",\"steps\":[\"pre-start\"],"
                           "\"systems\":[\"worker-nodes\"],\"lead\":\"1h\"}]",
                           &cfg, err, sizeof(err)),
                     0);
    assert_int_equal((int)cfg.n, 2);
    assert_int_equal(cfg.checks[0].timeout, CHECK_DEFAULT_TIMEOUT);
    assert_false(cfg.checks[0].ignore);
    assert_int_equal(cfg.checks[0].systems, CHECK_CONTROL_PLANE | CHECK_WORKER_NODES);
    assert_true(cfg.checks[0].lead == CHECK_DEFAULT_LEAD);
    assert_string_equal(cfg.checks[1].token_file, "/t");
    assert_int_equal(cfg.checks[1].timeout, 30);
    assert_true(cfg.checks[1].ignore);
    assert_int_equal(cfg.checks[1].systems, CHECK_WORKER_NODES);
    assert_true(cfg.checks[1].lead == 3600);
    assert_true(check_config_lead(&cfg, CHECK_CONTROL_PLANE) == CHECK_DEFAULT_LEAD);
    assert_true(check_config_lead(&cfg, CHECK_WORKER_NODES) == 3600);
    /* a ConfigMap's value: the JSON text */
    json_t *s = json_string("[{\"name\":\"a\",\"url\":\"http://a\",\"lead\":\"0s\"}]");
    assert_int_equal(check_config_parse(s, &cfg, err, sizeof(err)), 0);
    json_decref(s);
    assert_int_equal((int)cfg.n, 1);
    assert_true(check_config_lead(&cfg, CHECK_WORKER_NODES) == 0);
    assert_int_equal(cfg.checks[0].steps, CHECK_PRE_START); /* the default */
    /* post-change alone: never asked before a change (no lead); told the
     * health after one as an endpoint of the notifications taking that
     * step alone, after those configured */
    assert_int_equal(parse("[{\"name\":\"soak\",\"url\":\"http://soak/x\",\"tokenFile\":\"/s\","
                           "\"steps\":[\"post-change\"]},{\"name\":\"cab\",\"url\":\"http://c\","
                           "\"steps\":[\"pre-start\",\"post-change\"],\"systems\":[\"worker-nodes\"]}]",
                           &cfg, err, sizeof(err)),
                     0);
    assert_int_equal(cfg.checks[0].steps, CHECK_POST_CHANGE);
    assert_true(check_config_lead(&cfg, CHECK_CONTROL_PLANE) < 0);
    assert_true(check_config_lead(&cfg, CHECK_WORKER_NODES) == CHECK_DEFAULT_LEAD);
    check_entry_t e;
    check_entry_reset(&e, 1, CHECK_WORKER_NODES);
    assert_false(check_entry_due(&e, &cfg, 0, 0)); /* post-change alone: not asked */
    assert_true(check_entry_due(&e, &cfg, 1, 0));
    notify_config_t n;
    notify_config_default(&n);
    n.n_endpoints = 1;
    check_post_change_endpoints(&cfg, &n);
    assert_int_equal((int)n.n_endpoints, 3);
    assert_string_equal(n.endpoints[1].name, "check/soak");
    assert_string_equal(n.endpoints[1].url, "http://soak/x");
    assert_string_equal(n.endpoints[1].token_file, "/s");
    assert_string_equal(n.endpoints[2].name, "check/cab");
    assert_true(notify_endpoint_takes(&n.endpoints[1], NOTIFY_POST_CHANGE));
    assert_false(notify_endpoint_takes(&n.endpoints[1], NOTIFY_HELD));
    assert_false(notify_endpoint_takes(&n.endpoints[0], NOTIFY_POST_CHANGE));
    assert_true(notify_endpoint_takes(&n.endpoints[0], NOTIFY_HELD));
    assert_false(notify_endpoint_takes(&n.endpoints[0], NOTIFY_PRE_START));
}

/* Every bad entry is refused with its key named. */
static void test_config_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *json, *want;
    } bad[] = {
        {"{}", "checks: must be a list"},
        {"[1]", "checks[0]: must be a mapping"},
        {"[{\"url\":\"http://a\"}]", "checks[0].name: required"},
        {"[{\"name\":\"a\"}]", "checks[0].url: required"},
        {"[{\"name\":\"A b\",\"url\":\"http://a\"}]", "checks[0].name: only printable"},
        {"[{\"name\":\"Ab\",\"url\":\"http://a\"}]", "checks[0].name: \"Ab\" may hold only"},
        {"[{\"name\":\"a\",\"url\":\"http://a\"},{\"name\":\"a\",\"url\":\"http://b\"}]",
         "checks[1].name: \"a\" is used twice"},
        {"[{\"name\":\"a\",\"url\":\"ftp://a\"}]", "checks[0].url: must start with"},
        {"[{\"name\":\"a\",\"url\":\"https:///x\"}]", "checks[0].url: names no host"},
        {"[{\"name\":\"a\",\"url\":\"http://a\",\"tokenFile\":\"t\"}]",
         "checks[0].tokenFile: must be an absolute path"},
        {"[{\"name\":\"a\",\"url\":\"http://a\",\"timeout\":\"0s\"}]",
         "checks[0].timeout: must be from 1s to 60s"},
        {"[{\"name\":\"a\",\"url\":\"http://a\",\"timeout\":\"2m\"}]",
         "checks[0].timeout: must be from 1s to 60s"},
        {"[{\"name\":\"a\",\"url\":\"http://a\",\"timeout\":10}]",
         "checks[0].timeout: must be a duration"},
        {"[{\"name\":\"a\",\"url\":\"http://a\",\"timeout\":\"soon\"}]", "checks[0].timeout"},
        {"[{\"name\":\"a\",\"url\":\"http://a\",\"lead\":\"8d\"}]",
         "checks[0].lead: must be from 0s to 604800s"},
        {"[{\"name\":\"a\",\"url\":\"http://a\",\"failurePolicy\":\"Fail\"}]",
         "checks[0].failurePolicy: \"Fail\" is not one of Hold, Ignore"},
        {"[{\"name\":\"a\",\"url\":\"http://a\",\"steps\":[\"after\"]}]",
         "checks[0].steps[0]: must be one of pre-start, post-change"},
        {"[{\"name\":\"a\",\"url\":\"http://a\",\"steps\":[]}]",
         "checks[0].steps: must be a non-empty list"},
        {"[{\"name\":\"a\",\"url\":\"http://a\",\"systems\":[\"nodes\"]}]",
         "checks[0].systems[0]: must be one of control-plane, worker-nodes"},
        {"[{\"name\":\"a\",\"url\":\"http://a\",\"color\":\"red\"}]",
         "checks[0].color: unknown key"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        check_config_t cfg;
        char err[300] = "";
        int rc = parse(bad[i].json, &cfg, err, sizeof(err));
        if (rc != HCP_EINVAL || strncmp(err, bad[i].want, strlen(bad[i].want)) != 0)
            fail_msg("%s: rc %d, \"%s\", want \"%s\"", bad[i].json, rc, err, bad[i].want);
        assert_int_equal((int)cfg.n, 0); /* nothing half-read */
    }
    json_t *s = json_string("[{");
    check_config_t cfg;
    char err[300];
    assert_int_equal(check_config_parse(s, &cfg, err, sizeof(err)), HCP_EINVAL);
    assert_non_null(strstr(err, "checks: not JSON"));
    json_decref(s);
}

static check_config_t two(void)
{
    check_config_t cfg;
    char err[200];
    json_t *v = json_loads("[{\"name\":\"cab\",\"url\":\"http://a\"},"
                           "{\"name\":\"deps\",\"url\":\"http://b\",\"failurePolicy\":\"Ignore\","
                           "\"systems\":[\"worker-nodes\"]}]",
                           0, NULL);
    assert_int_equal(check_config_parse(v, &cfg, err, sizeof(err)), 0);
    json_decref(v);
    return cfg;
}

/* The verdict: wait until every check that applies answered, fail on a
 * refusal under Hold (naming the check and the answer's first line),
 * pass with an ignored refusal; a refused check is due again after its
 * backoff, and stays refused while it is asked again. */
static void test_verdict(void **state)
{
    (void)state;
    check_config_t cfg = two();
    check_entry_t e;
    char why[300];
    uint64_t k = check_change_key("release 4.17.1", 1000);

    assert_true(k != check_change_key("release 4.17.1", 2000));
    assert_true(k != check_change_key("release 4.17.2", 1000));
    /* control plane: only cab applies */
    check_entry_reset(&e, k, CHECK_CONTROL_PLANE);
    assert_int_equal(check_entry_verdict(&e, &cfg, why, sizeof(why)), CHECK_WAIT);
    assert_string_equal(why, "waiting for the answer of check cab");
    assert_true(check_entry_due(&e, &cfg, 0, 0));
    e.a[0].state = CHECK_ASKING; /* asked the first time: waiting */
    assert_int_equal(check_entry_verdict(&e, &cfg, why, sizeof(why)), CHECK_WAIT);
    assert_string_equal(why, "waiting for the answer of check cab");
    e.a[0].state = CHECK_UNASKED;
    assert_false(check_entry_due(&e, &cfg, 1, 0)); /* deps is for nodes */
    const char body[] = "CAB meeting on Thursday\nsecond line";
    check_entry_answer(&e, &cfg, 0, 503, body, sizeof(body) - 1, NULL, 100.0);
    assert_int_equal(check_entry_verdict(&e, &cfg, why, sizeof(why)), CHECK_FAIL);
    assert_string_equal(why, "check cab refused it: HTTP 503: CAB meeting on Thursday");
    assert_false(check_entry_due(&e, &cfg, 0, 100.5));
    assert_true(check_entry_due(&e, &cfg, 0, 101.0)); /* 1 s backoff */
    e.a[0].state = CHECK_ASKING; /* asked again (check/call.c): still refused meanwhile */
    assert_int_equal(check_entry_verdict(&e, &cfg, why, sizeof(why)), CHECK_FAIL);
    assert_string_equal(why, "check cab refused it: HTTP 503: CAB meeting on Thursday");
    assert_false(check_entry_due(&e, &cfg, 0, 1e9)); /* not asked twice at once */
    check_entry_answer(&e, &cfg, 0, 0, NULL, 0, "Timeout was reached", 101.0);
    assert_int_equal(check_entry_verdict(&e, &cfg, why, sizeof(why)), CHECK_FAIL);
    assert_string_equal(why, "check cab refused it: no answer (Timeout was reached)");
    assert_false(check_entry_due(&e, &cfg, 0, 102.5)); /* 2 s now */
    assert_true(check_entry_due(&e, &cfg, 0, 103.0));
    const char ok[] = "{\"message\": \"approved by \\u0007 CAB-42\"}";
    check_entry_answer(&e, &cfg, 0, 204, ok, sizeof(ok) - 1, NULL, 103.0);
    assert_int_equal(check_entry_verdict(&e, &cfg, why, sizeof(why)), CHECK_PASS);
    assert_string_equal(why, "cab says: approved by ? CAB-42");
    assert_false(check_entry_due(&e, &cfg, 0, 1e9));

    /* nodes: both apply; deps refuses under Ignore */
    check_entry_reset(&e, k, CHECK_WORKER_NODES);
    check_entry_answer(&e, &cfg, 1, 500, "down", 4, NULL, 0);
    assert_int_equal(check_entry_verdict(&e, &cfg, why, sizeof(why)), CHECK_WAIT);
    assert_string_equal(why, "waiting for the answer of check cab");
    check_entry_answer(&e, &cfg, 0, 200, "", 0, NULL, 0);
    assert_int_equal(check_entry_verdict(&e, &cfg, why, sizeof(why)), CHECK_PASS);
    assert_string_equal(why, "deps (ignored): HTTP 500: down");
    assert_false(check_entry_due(&e, &cfg, 1, 1e9)); /* ignored: not asked again */

    /* no check for a system: none applies */
    cfg.checks[0].systems = CHECK_WORKER_NODES;
    check_entry_reset(&e, k, CHECK_CONTROL_PLANE);
    assert_int_equal(check_entry_verdict(&e, &cfg, why, sizeof(why)), CHECK_NONE);
}

static void test_backoff(void **state)
{
    (void)state;
    assert_true(check_backoff(1) == 1.0);
    assert_true(check_backoff(2) == 2.0);
    assert_true(check_backoff(3) == 4.0);
    assert_true(check_backoff(7) == 60.0);
    assert_true(check_backoff(1000) == CHECK_BACKOFF_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_defaults_and_full),
        cmocka_unit_test(test_config_refusals),
        cmocka_unit_test(test_verdict),
        cmocka_unit_test(test_backoff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
