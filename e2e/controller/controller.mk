# End-to-end scenarios of the controller (e2e/controller/test_*.sh) against
# the "main" and "hosted" instances, with the simulated clock: `make e2e` runs e2e-controller.
# The instance is brought up when it is not running and stopped afterwards
# only if this target started it.

E2E_TARGETS += e2e-controller

.PHONY: e2e-controller e2e-svcproxy-bin

# The suites with actuation that run on real Cluster API
# (CAPI_E2E_CONTROLLER_TESTS, e2e/capi/capi.mk) run there only, in
# e2e-capi; the others run here, beside the model's own Cluster API half.
# CONTROLLER_E2E_TESTS="e2e/controller/test_x.sh ..." runs any of them here.
CONTROLLER_E2E_TESTS = $(filter-out $(CAPI_E2E_CONTROLLER_TESTS),$(sort $(wildcard e2e/controller/test_*.sh)))

E2E_SUITES_e2e-controller = $(CONTROLLER_E2E_TESTS)
E2E_INSTANCES_e2e-controller := main hosted
E2E_NEEDS_e2e-controller := model svcproxy

# test_rolling.sh plays the webhook Service with e2e/svcproxy (Go, built
# once per machine into the cache).
e2e-svcproxy-bin:
	@e2e/svcproxy/build.sh

# test_validate.sh applies the invalid cases of the policy unit tests
# (build/tests/test_policy --list-bad); the scenarios with actuation run
# beside the behaviour model, built (or found current) first.
e2e-controller: $(BUILD)/hcp-controller $(BUILD)/tests/test_policy e2e-model-bin e2e-svcproxy-bin
	@e2e/cluster.sh with main hosted -- bash -c 'HCP_BIN=$(abspath $(BUILD)/hcp-controller) \
		HCP_TEST_POLICY_BIN=$(abspath $(BUILD)/tests/test_policy) \
		scripts/run-tests.sh --tally $(TALLY) --label e2e $(call e2e_suites,e2e-controller)'
