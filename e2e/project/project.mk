# pkg/hosted (the ClusterVersion projection) against the local cluster: `make e2e` runs
# e2e-project, which needs the "main" (management) and "hosted" instances, and
# three servers of e2e/hostedsim (built with Go into $HCP_CACHE_DIR).
# Instances it had to start are stopped again afterwards.

E2E_TARGETS += e2e-project

.PHONY: e2e-project

PROJECT_E2E_DIR := $(BUILD)/e2e/project

E2E_SUITES_e2e-project := $(PROJECT_E2E_DIR)/e2e_project
E2E_INSTANCES_e2e-project := main hosted
E2E_NEEDS_e2e-project := hostedsim
E2E_BUILT += $(PROJECT_E2E_DIR)/e2e_project

$(PROJECT_E2E_DIR)/%: e2e/project/%.c e2e/kube/harness.c e2e/kube/harness.h e2e/kube/hostedsim_driver.c \
		e2e/kube/hostedsim_driver.h $(BUILD)/libhcp.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Ie2e/kube -o $@ $< e2e/kube/harness.c e2e/kube/hostedsim_driver.c \
		$(BUILD)/libhcp.a $(LIBS) $(TEST_LIBS)

# main's variables as they are, plus the hosted instance's kubeconfigs.
PROJECT_E2E_ENV = set -a; eval "$$(e2e/cluster.sh env main)"; set +a; \
	export HCP_E2E_HOSTED_KUBECONFIG="$$(eval "$$(e2e/cluster.sh env hosted)"; echo "$$HCP_E2E_KUBECONFIG")"; \
	export HCP_E2E_HOSTED_KUBECONFIG_CERT="$$(eval "$$(e2e/cluster.sh env hosted)"; echo "$$HCP_E2E_KUBECONFIG_CERT")"; \
	export HCP_E2E_HOSTED_AUDIT_LOG="$$(eval "$$(e2e/cluster.sh env hosted)"; echo "$$HCP_E2E_AUDIT_LOG")";

e2e-project: $(PROJECT_E2E_DIR)/e2e_project
	@e2e/cluster.sh with main hosted -- bash -c '$(PROJECT_E2E_ENV) \
		scripts/run-tests.sh --tally $(TALLY) --label e2e $(call e2e_suites,e2e-project)'
