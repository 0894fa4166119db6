# The holds against real Cluster API (e2e/capi/test_capi.sh) on an instance
# of its own, "capi": Cluster API's own CRDs and webhooks and its core
# manager and in-memory infrastructure provider, built once per machine into
# the cache by e2e/capi/build.sh (a few minutes cold); then the controller
# suites of CAPI_E2E_CONTROLLER_TESTS there, their model's Cluster API half
# off (e2e/README.md, "Real Cluster API"). `make e2e` runs e2e-capi; `make
# e2e-capi-bin` only builds the managers.

E2E_TARGETS += e2e-capi

.PHONY: e2e-capi e2e-capi-bin

CAPI_E2E_TESTS := e2e/capi/test_capi.sh
# Controller suites with actuation that run on real Cluster API, here only
# (e2e-controller runs the others on "main", beside the model's own Cluster
# API half).
CAPI_E2E_CONTROLLER_TESTS := e2e/controller/test_windows.sh e2e/controller/test_minleft.sh \
	e2e/controller/test_gate.sh e2e/controller/test_backstop.sh e2e/controller/test_holds.sh \
	e2e/controller/test_pause.sh e2e/controller/test_inplace.sh e2e/controller/test_nodepool_hold.sh \
	e2e/controller/test_cp_first.sh e2e/controller/test_hc_fields.sh e2e/controller/test_figures.sh \
	e2e/controller/test_withdraw.sh e2e/controller/test_scoped_freeze.sh
# Suites that run on both instances: their scenarios with machines here,
# the others on "main" (each suite chooses by E_CAPI; test_demo.sh checks
# the demo's act on Cluster API here, its week on "main", e2e-demo).
CAPI_E2E_SHARED_TESTS := e2e/controller/test_notify.sh e2e/demo/test_demo.sh
# The controller binary the suite runs (another build, e.g. one without a
# change, to see a check fail); CAPI_E2E_SCENARIOS (the environment) narrows
# the suite to some of its scenarios (test_capi.sh).
CAPI_E2E_HCP_BIN = $(abspath $(BUILD)/hcp-controller)

E2E_SUITES_e2e-capi := $(CAPI_E2E_TESTS) $(CAPI_E2E_CONTROLLER_TESTS) $(CAPI_E2E_SHARED_TESTS)
E2E_INSTANCES_e2e-capi := capi
E2E_NEEDS_e2e-capi := model

e2e-capi-bin:
	@e2e/capi/build.sh

e2e-capi: $(BUILD)/hcp-controller e2e-model-bin e2e-capi-bin
	@e2e/cluster.sh with capi -- env HCP_BIN=$(CAPI_E2E_HCP_BIN) CTL_E2E_INSTANCE=capi \
		scripts/run-tests.sh --tally $(TALLY) --label e2e-capi $(call e2e_suites,e2e-capi)
