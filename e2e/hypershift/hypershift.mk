# The holds beside HyperShift's own NodePool reconciler
# (e2e/hypershift/test_hypershift.sh) on an instance of its own, "hypershift",
# which serves HyperShift's own CRDs: the reconciler is HyperShift v0.1.70,
# imported unmodified and built once per machine into the cache by
# e2e/hypershift/build.sh (a few minutes cold). e2e-hypershift-capi runs the
# same test beside real Cluster API too ("capi-hypershift": Cluster API's own
# CRDs and managers, e2e/capi), which turns HyperShift's MachineDeployment
# into Machines. `make e2e` runs both; `make e2e-hypershift-bin` only builds
# the reconciler.

E2E_TARGETS += e2e-hypershift e2e-hypershift-capi

.PHONY: e2e-hypershift e2e-hypershift-capi e2e-hypershift-bin

HYPERSHIFT_E2E_TESTS := e2e/hypershift/test_hypershift.sh
# The drift scenario (test_drift.sh) needs real Cluster API's machines.
HYPERSHIFT_E2E_CAPI_TESTS := $(HYPERSHIFT_E2E_TESTS) e2e/hypershift/test_drift.sh
# The controller binary the suite runs (another build, e.g. one without a
# change, to see a check fail).
HYPERSHIFT_E2E_HCP_BIN = $(abspath $(BUILD)/hcp-controller)

E2E_SUITES_e2e-hypershift := $(HYPERSHIFT_E2E_TESTS)
E2E_INSTANCES_e2e-hypershift := hypershift
E2E_SUITES_e2e-hypershift-capi := $(HYPERSHIFT_E2E_CAPI_TESTS)
E2E_INSTANCES_e2e-hypershift-capi := capi-hypershift

e2e-hypershift-bin:
	@e2e/hypershift/build.sh

e2e-hypershift: $(BUILD)/hcp-controller e2e-hypershift-bin
	@e2e/cluster.sh with hypershift -- env HCP_BIN=$(HYPERSHIFT_E2E_HCP_BIN) \
		scripts/run-tests.sh --tally $(TALLY) --label e2e-hypershift $(call e2e_suites,e2e-hypershift)

e2e-hypershift-capi: $(BUILD)/hcp-controller e2e-hypershift-bin e2e-capi-bin
	@e2e/cluster.sh with capi-hypershift -- env HCP_BIN=$(HYPERSHIFT_E2E_HCP_BIN) CTL_E2E_INSTANCE=capi-hypershift \
		scripts/run-tests.sh --tally $(TALLY) --label e2e-hypershift-capi $(call e2e_suites,e2e-hypershift-capi)
