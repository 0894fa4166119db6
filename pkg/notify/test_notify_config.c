/* test_notify_config.c: the notifications' configuration and its refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "notify/config.h"

static int parse(const char *text, notify_config_t *cfg, char *err, size_t errlen)
{
    json_error_t je;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
    if (!v)
        fail_msg("bad test JSON: %s (%s)", je.text, text);
    err[0] = '\0';
    int rc = notify_config_parse(v, cfg, err, errlen);
    json_decref(v);
    return rc;
}

static void test_defaults(void **state)
{
    (void)state;
    notify_config_t c;
    char err[256];
    assert_int_equal(notify_config_parse(NULL, &c, err, sizeof(err)), 0);
    assert_int_equal(c.n_endpoints, 0);
    assert_int_equal(c.n_leads, 2);
    assert_true(c.leads[0] == 48 * 3600 && c.leads[1] == 3600);
    assert_int_equal(c.queue_size, NOTIFY_DEFAULT_QUEUE);
    assert_int_equal(parse("{}", &c, err, sizeof(err)), 0);
    assert_int_equal(c.n_leads, 2);
}

static void test_full(void **state)
{
    (void)state;
    notify_config_t c;
    char err[256];
    assert_int_equal(parse("{\"endpoints\":[{\"name\":\"ops\",\"url\":\"https://h.example/x\","
                           "\"tokenFile\":\"/etc/t/ops\"},{\"name\":\"chat-1\",\"url\":"
                           "\"http://127.0.0.1:9/\",\"format\":\"slack\"}],"
                           "\"leads\":[\"1h\",\"3d\",\"30m\"],\"queueSize\":50}",
                           &c, err, sizeof(err)),
                     0);
    assert_int_equal(c.n_endpoints, 2);
    assert_string_equal(c.endpoints[0].name, "ops");
    assert_int_equal(c.endpoints[0].format, NOTIFY_CLOUDEVENTS);
    assert_string_equal(c.endpoints[0].token_file, "/etc/t/ops");
    assert_int_equal(c.endpoints[1].format, NOTIFY_SLACK);
    assert_string_equal(c.endpoints[1].token_file, "");
    assert_int_equal(c.n_leads, 3); /* longest first */
    assert_true(c.leads[0] == 3 * 86400 && c.leads[1] == 3600 && c.leads[2] == 1800);
    assert_int_equal(c.queue_size, 50);
    /* A ConfigMap's data holds it as JSON text. */
    assert_int_equal(parse("\"{\\\"leads\\\":[\\\"2h\\\"]}\"", &c, err, sizeof(err)), 0);
    assert_int_equal(c.n_leads, 1);
    assert_true(c.leads[0] == 7200);
}

/* Every refusal names its key. */
static void test_errors_name_the_key(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"[]", "notifications: must be a mapping"},
        {"\"{nope\"", "notifications: not JSON"},
        {"{\"endpoint\":[]}", "notifications.endpoint: unknown key"},
        {"{\"endpoints\":{}}", "notifications.endpoints: must be a list"},
        {"{\"endpoints\":[1]}", "notifications.endpoints[0]: must be a mapping"},
        {"{\"endpoints\":[{\"url\":\"https://a\"}]}", "notifications.endpoints[0].name: required"},
        {"{\"endpoints\":[{\"name\":\"a\"}]}", "notifications.endpoints[0].url: required"},
        {"{\"endpoints\":[{\"name\":\"A\",\"url\":\"https://a\"}]}",
         "notifications.endpoints[0].name: \"A\" may hold only"},
        {"{\"endpoints\":[{\"name\":\"a\",\"url\":\"https://a\"},{\"name\":\"a\",\"url\":"
         "\"https://b\"}]}",
         "notifications.endpoints[1].name: \"a\" is used twice"},
        {"{\"endpoints\":[{\"name\":\"a\",\"url\":\"ftp://a\"}]}",
         "notifications.endpoints[0].url: must start with"},
        {"{\"endpoints\":[{\"name\":\"a\",\"url\":\"https:///x\"}]}",
         "notifications.endpoints[0].url: names no host"},
        {"{\"endpoints\":[{\"name\":\"a\",\"url\":\"https://a b\"}]}",
         "notifications.endpoints[0].url: only printable ASCII"},
        {"{\"endpoints\":[{\"name\":\"a\",\"url\":\"https://a\",\"format\":\"teams\"}]}",
         "notifications.endpoints[0].format: \"teams\" is not one of"},
        {"{\"endpoints\":[{\"name\":\"a\",\"url\":\"https://a\",\"tokenFile\":\"t\"}]}",
         "notifications.endpoints[0].tokenFile: must be an absolute path"},
        {"{\"endpoints\":[{\"name\":\"a\",\"url\":\"https://a\",\"token\":\"s3cret\"}]}",
         "notifications.endpoints[0].token: unknown key"},
        {"{\"leads\":[]}", "notifications.leads: must be a list of 1 to 4"},
        {"{\"leads\":[\"1x\"]}", "notifications.leads[0]: \"1x\" is not a duration"},
        {"{\"leads\":[\"0\"]}", "notifications.leads[0]: must be above 0"},
        {"{\"leads\":[\"31d\"]}", "notifications.leads[0]: must be above 0 and at most 30d"},
        {"{\"leads\":[\"1h\",\"60m\"]}", "notifications.leads[1]: the same lead twice"},
        {"{\"queueSize\":0}", "notifications.queueSize: must be an integer"},
        {"{\"queueSize\":\"5\"}", "notifications.queueSize: must be an integer"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        notify_config_t c;
        char err[512];
        assert_int_equal(parse(bad[i].text, &c, err, sizeof(err)), HCP_EINVAL);
        if (strncmp(err, bad[i].want, strlen(bad[i].want)) != 0)
            fail_msg("%s: got \"%s\", want \"%s...\"", bad[i].text, err, bad[i].want);
    }
}

/* Up to NOTIFY_MAX_CONFIGURED endpoints (ten slow ones are measured by
 * bench-notify); one more is refused naming the key. */
static void test_endpoint_count(void **state)
{
    (void)state;
    notify_config_t c;
    char err[256], text[4096] = "{\"endpoints\":[";
    size_t n = strlen(text);
    for (int i = 0; i <= NOTIFY_MAX_CONFIGURED; i++) {
        if (i == NOTIFY_MAX_CONFIGURED) {
            snprintf(text + n, sizeof(text) - n, "]}");
            assert_int_equal(parse(text, &c, err, sizeof(err)), 0);
            assert_int_equal(c.n_endpoints, NOTIFY_MAX_CONFIGURED);
            text[n] = '\0';
        }
        n += (size_t)snprintf(text + n, sizeof(text) - n, "%s{\"name\":\"e%d\",\"url\":\"http://h/%d\"}",
                              i ? "," : "", i, i);
    }
    snprintf(text + n, sizeof(text) - n, "]}");
    assert_int_equal(parse(text, &c, err, sizeof(err)), HCP_EINVAL);
    assert_non_null(strstr(err, "notifications.endpoints"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_endpoint_count),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_full),
        cmocka_unit_test(test_errors_name_the_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
