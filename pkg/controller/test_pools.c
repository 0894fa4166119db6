/* test_pools.c: the index of each HostedCluster's NodePools (pools.h)
 * against a walk of the same objects: added, moved to another cluster,
 * replaced by an update, removed, in another namespace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "controller/pools.h"
#include "decide/slim.h"

typedef struct seen {
    char names[16][16];
    int n;
} seen_t;

static void note(const kube_obj *o, void *ud)
{
    seen_t *s = ud;
    assert_true(s->n < 16);
    snprintf(s->names[s->n++], sizeof(s->names[0]), "%s", o->name);
}

/* The names found for ns/cluster, joined with spaces. */
static const char *pools_of(ctl_pools_t *p, const char *ns, const char *cluster)
{
    static char out[256];
    seen_t s = {0};
    ctl_pools_foreach(p, NULL, ns, cluster, note, &s);
    out[0] = '\0';
    for (int i = 0; i < s.n; i++)
        snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", i ? " " : "", s.names[i]);
    return out;
}

static void test_index(void **state)
{
    (void)state;
    ctl_pools_t p;
    decide_np_t a = {.cluster_name = "hc1"}, b = {.cluster_name = "hc1"},
                c = {.cluster_name = "hc2"}, moved = {.cluster_name = "hc2"},
                none = {.cluster_name = NULL};
    kube_obj oa = {"ns", "a", "", "1", &a}, ob = {"ns", "b", "", "1", &b},
             oc = {"ns", "c", "", "1", &c}, other = {"ns2", "a", "", "1", &a},
             ob2 = {"ns", "b", "", "2", &moved}, oa2 = {"ns", "a", "", "2", &a},
             onone = {"ns", "x", "", "1", &none}, nodata = {"ns", "y", "", "1", NULL};
    assert_int_equal(ctl_pools_init(&p), 0);
    ctl_pools_add(&p, &oa);
    ctl_pools_add(&p, &ob);
    ctl_pools_add(&p, &oc);
    ctl_pools_add(&p, &other);
    ctl_pools_add(&p, &onone);   /* no cluster: not indexed */
    ctl_pools_add(&p, &nodata);
    assert_string_equal(pools_of(&p, "ns", "hc1"), "a b");
    assert_string_equal(pools_of(&p, "ns", "hc2"), "c");
    assert_string_equal(pools_of(&p, "ns2", "hc1"), "a");
    assert_string_equal(pools_of(&p, "ns", "hc3"), "");
    /* an update in place keeps the order and names the new entry */
    ctl_pools_update(&p, &oa, &oa2);
    seen_t s = {0};
    ctl_pools_foreach(&p, NULL, "ns", "hc1", note, &s);
    assert_int_equal(s.n, 2);
    /* an update that moves b to hc2 */
    ctl_pools_update(&p, &ob, &ob2);
    assert_string_equal(pools_of(&p, "ns", "hc1"), "a");
    assert_string_equal(pools_of(&p, "ns", "hc2"), "c b");
    /* removing the last pool of a cluster drops its set */
    ctl_pools_remove(&p, &oa2);
    assert_string_equal(pools_of(&p, "ns", "hc1"), "");
    ctl_pools_remove(&p, &oa2); /* twice: nothing */
    ctl_pools_remove(&p, &oc);
    assert_string_equal(pools_of(&p, "ns", "hc2"), "b");
    ctl_pools_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
