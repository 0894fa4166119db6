/* test_withdraw.c: a write's intent for the held fields it leaves as they
 * run (withdraw.h): each signal, each write that carries a field along
 * without one, malformed managedFields, last-applied text and options,
 * and every kind of held field. The managedFields and options have the
 * shapes kube-apiserver v1.33 hands a webhook (UpdateOptions for an apply
 * too), as recorded from kubectl apply --server-side, kubectl apply,
 * kubectl patch, label and replace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "decide/slim.h"
#include "decide/testutil_decide.h"
#include "decide/withdraw.h"

#define R0 "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"
#define R1 "quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64"
#define LA "kubectl.kubernetes.io/last-applied-configuration"

static const char *const exempt[] = {"system:serviceaccount:hypershift:operator", NULL};

/* A NodePool at release `image` with the annotations and managedFields
 * given (JSON members / array text). */
static json_t *np(const char *image, const char *annotations, const char *managed)
{
    char buf[8192];
    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"np\",\"annotations\":{%s},\"managedFields\":%s},"
             "\"spec\":{\"clusterName\":\"a\",\"replicas\":2,\"release\":{\"image\":\"%s\"},"
             "\"config\":[{\"name\":\"tuned-1\"}],\"platform\":{\"aws\":{\"instanceType\":"
             "\"m5.large\",\"rootVolume\":{\"size\":120}}}}}",
             annotations, managed, image);
    return tu_doc(buf);
}

/* An Apply entry of manager m owning spec fields `fields` (fieldsV1 members
 * under f:spec), as the API server writes it. */
#define APPLY(m, fields)                                                                  \
    "{\"manager\":\"" m "\",\"operation\":\"Apply\",\"apiVersion\":\"hypershift.openshift.io/" \
    "v1beta1\",\"time\":\"2026-03-03T10:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":"  \
    "{\"f:spec\":{" fields "}}}"
#define UPDATE(m, t)                                                                      \
    "{\"manager\":\"" m "\",\"operation\":\"Update\",\"apiVersion\":\"hypershift.openshift.io/" \
    "v1beta1\",\"time\":\"" t "\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{"     \
    "\"f:replicas\":{}}}}"
#define OWNS_IMAGE "\"f:release\":{\"f:image\":{}}"
#define OPTS(m) "{\"kind\":\"UpdateOptions\",\"apiVersion\":\"meta.k8s.io/v1\",\"fieldManager\":\"" m "\"}"

/* The signal of one write of field from old to new by user with options
 * (JSON text or NULL). */
static decide_signal_t signal_of(const json_t *old, const json_t *new_obj, const char *opts,
                                 const char *user, const char *field)
{
    json_t *o = opts ? tu_doc(opts) : NULL;
    decide_intent_t in;
    decide_intent_read(old, new_obj, o, user, exempt, &in);
    decide_signal_t s = decide_intent_field(&in, old, new_obj, field);
    decide_intent_free(&in);
    json_decref(o);
    return s;
}

/* Server-side apply of the running release by a GitOps tool's manager (a
 * no-op on the stored object: the same managedFields before and after, as
 * the API server puts the apply's timestamp back) withdraws; so does the
 * apply of a second manager (kubectl's) that shares the field. */
static void test_ssa_running_value(void **state)
{
    (void)state;
    json_t *old = np(R0, "", "[" APPLY("kustomize-controller", OWNS_IMAGE) "]");
    json_t *new_obj = np(R0, "", "[" APPLY("kustomize-controller", OWNS_IMAGE) "]");
    assert_int_equal(signal_of(old, new_obj, OPTS("kustomize-controller"), "flux", "release"),
                     DECIDE_SIGNAL_SSA);
    assert_int_equal(signal_of(old, new_obj, OPTS("kustomize-controller"), "flux",
                               "release.image"),
                     DECIDE_SIGNAL_SSA);
    json_decref(new_obj);
    new_obj = np(R0, "", "[" APPLY("kustomize-controller", OWNS_IMAGE) "," APPLY("kubectl", OWNS_IMAGE) "]");
    assert_int_equal(signal_of(old, new_obj, OPTS("kubectl"), "alice", "release"), DECIDE_SIGNAL_SSA);
    json_decref(old);
    json_decref(new_obj);
}

/* What does not say "I meant the running value": an apply whose
 * configuration lacks the field, another manager's apply entry, a merge
 * patch of the same manager (its Update entry changed in this write), a
 * write that asks for another value, an entry of a subresource, and no
 * options at all. */
static void test_ssa_negatives(void **state)
{
    (void)state;
    json_t *old = np(R0, "", "[" APPLY("flux", OWNS_IMAGE) "]");
    json_t *cfg_only = np(R0, "", "[" APPLY("flux", "\"f:config\":{}") "]");
    assert_int_equal(signal_of(old, cfg_only, OPTS("flux"), "u", "release"), DECIDE_SIGNAL_NONE);
    assert_int_equal(signal_of(old, cfg_only, OPTS("flux"), "u", "config"), DECIDE_SIGNAL_SSA);

    json_t *same = np(R0, "", "[" APPLY("flux", OWNS_IMAGE) "]");
    assert_int_equal(signal_of(old, same, OPTS("kubectl-patch"), "u", "release"),
                     DECIDE_SIGNAL_NONE);
    assert_int_equal(signal_of(old, same, NULL, "u", "release"), DECIDE_SIGNAL_NONE);
    assert_int_equal(signal_of(old, same, "{\"kind\":\"UpdateOptions\"}", "u", "release"),
                     DECIDE_SIGNAL_NONE);

    /* flux's merge patch: its Update entry is new in this write. */
    json_t *patched = np(R0, "", "[" APPLY("flux", OWNS_IMAGE) "," UPDATE("flux", "2026-03-03T11:00:00Z") "]");
    assert_int_equal(signal_of(old, patched, OPTS("flux"), "u", "release"), DECIDE_SIGNAL_NONE);
    /* ... and changed in this write; an Update entry left as it was is not
     * this write's. */
    json_t *old_u = np(R0, "", "[" APPLY("flux", OWNS_IMAGE) "," UPDATE("flux", "2026-03-03T09:00:00Z") "]");
    assert_int_equal(signal_of(old_u, patched, OPTS("flux"), "u", "release"), DECIDE_SIGNAL_NONE);
    json_t *kept_u = np(R0, "", "[" APPLY("flux", OWNS_IMAGE) "," UPDATE("flux", "2026-03-03T09:00:00Z") "]");
    assert_int_equal(signal_of(old_u, kept_u, OPTS("flux"), "u", "release"), DECIDE_SIGNAL_SSA);

    /* Asking for another release is a request, not a revert. */
    json_t *asks = np(R1, "", "[" APPLY("flux", OWNS_IMAGE) "]");
    assert_int_equal(signal_of(old, asks, OPTS("flux"), "u", "release"), DECIDE_SIGNAL_NONE);

    /* The status subresource's entry is not the object's apply. */
    json_t *status = np(R0, "",
                        "[{\"manager\":\"flux\",\"operation\":\"Apply\",\"subresource\":\"status\","
                        "\"fieldsV1\":{\"f:spec\":{" OWNS_IMAGE "}}}]");
    assert_int_equal(signal_of(old, status, OPTS("flux"), "u", "release"), DECIDE_SIGNAL_NONE);

    json_decref(old);
    json_decref(cfg_only);
    json_decref(same);
    json_decref(patched);
    json_decref(old_u);
    json_decref(kept_u);
    json_decref(asks);
    json_decref(status);
}

/* The last-applied annotation of the configuration `spec` (JSON members). */
#define LAST(spec)                                                                          \
    "\"" LA "\":\"{\\\"apiVersion\\\":\\\"hypershift.openshift.io/v1beta1\\\",\\\"kind\\\":"  \
    "\\\"NodePool\\\",\\\"spec\\\":{" spec "}}\""
#define LA_REL(img) "\\\"release\\\":{\\\"image\\\":\\\"" img "\\\"}"

/* Client-side apply of the old manifest: last-applied now holds the running
 * release where it held the requested one, or did not hold it at all. */
static void test_csa_running_value(void **state)
{
    (void)state;
    json_t *old = np(R0, LAST(LA_REL(R1)), "[]");
    json_t *new_obj = np(R0, LAST(LA_REL(R0)), "[]");
    assert_int_equal(signal_of(old, new_obj, OPTS("kubectl-client-side-apply"), "argocd", "release"),
                     DECIDE_SIGNAL_CSA);
    assert_int_equal(signal_of(old, new_obj, OPTS("kubectl-client-side-apply"), "argocd",
                               "release.image"),
                     DECIDE_SIGNAL_CSA);
    json_t *none = np(R0, LAST("\\\"replicas\\\":2"), "[]");
    assert_int_equal(signal_of(none, new_obj, NULL, "argocd", "release"), DECIDE_SIGNAL_CSA);
    json_t *bare = np(R0, "", "[]");
    assert_int_equal(signal_of(bare, new_obj, NULL, "argocd", "release"), DECIDE_SIGNAL_CSA);
    json_decref(old);
    json_decref(new_obj);
    json_decref(none);
    json_decref(bare);
}

/* last-applied that does not change, changes elsewhere only, or names a
 * value that is not the running one, says nothing of the release. */
static void test_csa_negatives(void **state)
{
    (void)state;
    json_t *old = np(R0, LAST(LA_REL(R0)), "[]");
    json_t *same = np(R0, LAST(LA_REL(R0)), "[]");
    assert_int_equal(signal_of(old, same, NULL, "u", "release"), DECIDE_SIGNAL_NONE);
    json_t *other = np(R0, LAST(LA_REL(R0) ",\\\"replicas\\\":3"), "[]");
    assert_int_equal(signal_of(old, other, NULL, "u", "release"), DECIDE_SIGNAL_NONE);
    json_t *old1 = np(R0, LAST(LA_REL(R1)), "[]");
    json_t *asks = np(R0, LAST(LA_REL(R1) ",\\\"replicas\\\":3"), "[]");
    assert_int_equal(signal_of(old, asks, NULL, "u", "release"), DECIDE_SIGNAL_NONE);
    assert_int_equal(signal_of(old1, asks, NULL, "u", "release"), DECIDE_SIGNAL_NONE);
    /* the annotation removed: nothing applied */
    json_t *gone = np(R0, "", "[]");
    assert_int_equal(signal_of(old1, gone, NULL, "u", "release"), DECIDE_SIGNAL_NONE);
    json_decref(old);
    json_decref(same);
    json_decref(other);
    json_decref(old1);
    json_decref(asks);
    json_decref(gone);
}

/* HyperShift's own writes never withdraw, whatever they carry. */
static void test_exempt_user(void **state)
{
    (void)state;
    json_t *old = np(R0, LAST(LA_REL(R1)), "[" APPLY("hypershift", OWNS_IMAGE) "]");
    json_t *new_obj = np(R0, LAST(LA_REL(R0)), "[" APPLY("hypershift", OWNS_IMAGE) "]");
    assert_int_equal(signal_of(old, new_obj, OPTS("hypershift"), exempt[0], "release"),
                     DECIDE_SIGNAL_NONE);
    assert_int_equal(signal_of(old, new_obj, OPTS("hypershift"), "someone", "release"),
                     DECIDE_SIGNAL_SSA);
    assert_true(decide_user_exempt(exempt[0], exempt));
    assert_false(decide_user_exempt("", exempt));
    assert_false(decide_user_exempt(NULL, exempt));
    assert_false(decide_user_exempt(exempt[0], NULL));
    assert_false(decide_user_exempt("system:serviceaccount:hypershift:operator2", exempt));
    json_decref(old);
    json_decref(new_obj);
}

/* Outside bytes of every wrong shape read as no signal. */
static void test_malformed(void **state)
{
    (void)state;
    static const char *const managed[] = {
        "{}", "\"x\"", "[1, null, \"a\"]", "[{\"manager\":7,\"operation\":\"Apply\"}]",
        "[{\"manager\":\"m\",\"operation\":\"Apply\",\"fieldsV1\":[]}]",
        "[{\"manager\":\"m\",\"operation\":\"Apply\",\"fieldsV1\":{\"f:spec\":\"x\"}}]",
        "[{\"manager\":\"m\",\"operation\":\"Apply\",\"fieldsV1\":{\"f:spec\":{\"f:release\":1}}}]",
        "[{\"manager\":\"m\",\"operation\":\"Apply\",\"subresource\":5,\"fieldsV1\":{}}]",
        "null"};
    static const char *const last[] = {
        "\"" LA "\":\"not json\"", "\"" LA "\":\"[1,2]\"", "\"" LA "\":\"{\\\"spec\\\":7}\"",
        "\"" LA "\":\"{\\\"spec\\\":{\\\"release\\\":null}}\"", "\"" LA "\":7",
        "\"" LA "\":\"{\\\"a\\\":1,\\\"a\\\":2}\""};
    static const char *const opts[] = {"{\"fieldManager\":7}", "[]", "[\"m\"]",
                                       "{\"fieldManager\":\"m\"}"};
    json_t *old = np(R0, LAST(LA_REL(R1)), "[]");

    for (size_t i = 0; i < sizeof(managed) / sizeof(managed[0]); i++)
        for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
            json_t *n = np(R0, "", managed[i]);
            assert_int_equal(signal_of(old, n, opts[k], "u", "release"), DECIDE_SIGNAL_NONE);
            json_decref(n);
        }
    for (size_t i = 0; i < sizeof(last) / sizeof(last[0]); i++) {
        json_t *n = np(R0, last[i], "[]");
        assert_int_equal(signal_of(old, n, NULL, "u", "release"), DECIDE_SIGNAL_NONE);
        json_decref(n);
    }
    /* Objects that are not objects. */
    json_t *arr = tu_doc("[]"), *str = json_string("x");
    assert_int_equal(signal_of(arr, str, OPTS("m"), "u", "release"), DECIDE_SIGNAL_NONE);
    assert_int_equal(signal_of(NULL, NULL, NULL, NULL, "release"), DECIDE_SIGNAL_NONE);
    /* A field path longer than any held one. */
    char longf[300];
    memset(longf, 'a', sizeof(longf) - 1);
    longf[sizeof(longf) - 1] = '\0';
    assert_int_equal(signal_of(old, old, NULL, "u", longf), DECIDE_SIGNAL_NONE);
    json_decref(arr);
    json_decref(str);
    json_decref(old);
}

/* Every held field of a NodePool and of a HostedCluster, as a mask: the
 * ones the apply's configuration holds at their running values, and no
 * other. */
static void test_every_field_kind(void **state)
{
    (void)state;
    /* NodePool: release (object), config (list), platform.aws.instanceType
     * (scalar), platform.aws.rootVolume (object) applied; tuningConfig not. */
    const char *owns = "\"f:release\":{\"f:image\":{}},\"f:config\":{},\"f:platform\":{\"f:aws\":"
                       "{\"f:instanceType\":{},\"f:rootVolume\":{\"f:size\":{}}}}";
    char managed[1024];
    snprintf(managed, sizeof(managed),
             "[{\"manager\":\"work-agent\",\"operation\":\"Apply\",\"fieldsV1\":{\"f:spec\":{%s}}}]",
             owns);
    json_t *old = np(R0, "", "[]"), *new_obj = np(R0, "", managed);
    json_t *o = tu_doc(OPTS("work-agent"));
    uint64_t mask = decide_withdrawn(old, new_obj, o, "system:serviceaccount:ocm:work", exempt,
                                     decide_np_held_fields);
    uint64_t want = 0;
    for (size_t i = 0; decide_np_held_fields[i]; i++) {
        const char *f = decide_np_held_fields[i];
        if (!strcmp(f, "release") || !strcmp(f, "config") ||
            !strcmp(f, "platform.aws.instanceType") || !strcmp(f, "platform.aws.rootVolume"))
            want |= (uint64_t)1 << i;
    }
    assert_int_equal(mask, want);
    assert_int_equal(decide_withdrawn(old, new_obj, o, exempt[0], exempt, decide_np_held_fields),
                     0);
    json_decref(old);
    json_decref(new_obj);
    json_decref(o);

    /* HostedCluster: its fields that roll every NodePool (pullSecret an
     * object, imageContentSources a list, configuration.proxy nested) by
     * client-side apply; the release fields by server-side apply. */
    json_t *hc_old = tu_doc(
        "{\"metadata\":{\"annotations\":{\"" LA "\":\"{}\"}},\"spec\":{\"release\":{\"image\":\"" R0 "\"},"
        "\"pullSecret\":{\"name\":\"ps\"},\"imageContentSources\":[{\"source\":\"a\"}],"
        "\"configuration\":{\"proxy\":{\"httpProxy\":\"p\"}}}}");
    json_t *hc_new = tu_doc(
        "{\"metadata\":{\"annotations\":{\"" LA "\":\"{\\\"spec\\\":{\\\"pullSecret\\\":{\\\"name\\\":"
        "\\\"ps\\\"},\\\"imageContentSources\\\":[{\\\"source\\\":\\\"a\\\"}],\\\"configuration\\\":"
        "{\\\"proxy\\\":{\\\"httpProxy\\\":\\\"p\\\"}}}}\"},\"managedFields\":[{\"manager\":\"m\","
        "\"operation\":\"Apply\",\"fieldsV1\":{\"f:spec\":{\"f:release\":{\"f:image\":{}}}}}]},"
        "\"spec\":{\"release\":{\"image\":\"" R0 "\"},"
        "\"pullSecret\":{\"name\":\"ps\"},\"imageContentSources\":[{\"source\":\"a\"}],"
        "\"configuration\":{\"proxy\":{\"httpProxy\":\"p\"}}}}");
    o = tu_doc(OPTS("m"));
    mask = decide_withdrawn(hc_old, hc_new, o, "u", exempt, decide_hc_held_fields);
    want = 0;
    for (size_t i = 0; decide_hc_held_fields[i]; i++) {
        const char *f = decide_hc_held_fields[i];
        if (!strcmp(f, "pullSecret") || !strcmp(f, "imageContentSources") ||
            !strcmp(f, "configuration.proxy"))
            want |= (uint64_t)1 << i;
    }
    assert_int_equal(mask, want);
    static const char *const rel[] = {"release.image", "controlPlaneRelease.image", NULL};
    assert_int_equal(decide_withdrawn(hc_old, hc_new, o, "u", exempt, rel), 1);
    json_decref(hc_old);
    json_decref(hc_new);
    json_decref(o);
}

/* The requests and running values in words. */
static void test_words(void **state)
{
    (void)state;
    char buf[256];
    json_t *img = json_string(R1), *rel = tu_doc("{\"image\":\"" R0 "\"}");
    json_t *dig = json_string("quay.io/x@sha256:abc"), *cfg = tu_doc("[{\"name\":\"t\"}]");

    decide_request_words("release.image", img, buf, sizeof(buf));
    assert_string_equal(buf, "release 4.17.1");
    decide_request_words("controlPlaneRelease.image", img, buf, sizeof(buf));
    assert_string_equal(buf, "control-plane release 4.17.1");
    decide_request_words("release", rel, buf, sizeof(buf));
    assert_string_equal(buf, "release 4.17.0");
    decide_request_words("release", json_null(), buf, sizeof(buf));
    assert_string_equal(buf, "release (removed)");
    decide_request_words("release.image", dig, buf, sizeof(buf));
    assert_string_equal(buf, "release quay.io/x@sha256:abc");
    decide_request_words("config", cfg, buf, sizeof(buf));
    assert_string_equal(buf, "spec.config");
    decide_request_words("platform.aws.instanceType", cfg, buf, sizeof(buf));
    assert_string_equal(buf, "spec.platform.aws.instanceType");

    decide_running_words("release", rel, buf, sizeof(buf));
    assert_string_equal(buf, "4.17.0");
    decide_running_words("controlPlaneRelease.image", NULL, buf, sizeof(buf));
    assert_string_equal(buf, "(none)");
    decide_running_words("config", cfg, buf, sizeof(buf));
    assert_string_equal(buf, "value");
    json_decref(img);
    json_decref(rel);
    json_decref(dig);
    json_decref(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ssa_running_value),
        cmocka_unit_test(test_ssa_negatives),
        cmocka_unit_test(test_csa_running_value),
        cmocka_unit_test(test_csa_negatives),
        cmocka_unit_test(test_exempt_user),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_every_field_kind),
        cmocka_unit_test(test_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
