# pkg/kube against the local cluster: `make e2e` runs e2e-kube, `make bench`
# runs bench-kube. Both bring the "main" instance up when it is not running
# and stop it afterwards only if they started it.

E2E_TARGETS += e2e-kube
BENCH_E2E_TARGETS += bench-kube

.PHONY: e2e-kube bench-kube

KUBE_E2E_DIR := $(BUILD)/e2e/kube

E2E_SUITES_e2e-kube := $(KUBE_E2E_DIR)/e2e_kube
E2E_INSTANCES_e2e-kube := main
E2E_BUILT += $(KUBE_E2E_DIR)/e2e_kube

$(KUBE_E2E_DIR)/%: e2e/kube/%.c e2e/kube/harness.c e2e/kube/harness.h $(BUILD)/libhcp.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Ie2e/kube -o $@ $< e2e/kube/harness.c $(BUILD)/libhcp.a $(LIBS) $(TEST_LIBS)

# Exports the instance's variables (kubeconfigs, etcd URL, ...) plus the hooks
# the tests use to compact etcd and to restart the apiserver.
KUBE_E2E_ENV = set -a; eval "$$(e2e/cluster.sh env main)"; set +a; \
	export HCP_E2E_COMPACT="e2e/cluster.sh compact main"; \
	export HCP_E2E_RESTART="e2e/cluster.sh apiserver-restart main";

e2e-kube: $(KUBE_E2E_DIR)/e2e_kube
	@e2e/cluster.sh with main -- bash -c '$(KUBE_E2E_ENV) \
		scripts/run-tests.sh --tally $(TALLY) --label e2e $(call e2e_suites,e2e-kube)'

bench-kube: $(KUBE_E2E_DIR)/bench_kube
	@e2e/cluster.sh with main -- bash -c '$(KUBE_E2E_ENV) $(KUBE_E2E_DIR)/bench_kube'
