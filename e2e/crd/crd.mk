# The shipped CRD (crds/) as the API server enforces it, no webhook: every
# invalid policy of the policy unit tests is refused with the controller's
# own message (build/tests/test_policy --list-bad), every CEL rule refuses an
# object that breaks it, and one object of every recurrence kind is accepted
# and previewed (e2e/crd/test_crd.sh).
# `make e2e` runs e2e-crd.

E2E_TARGETS += e2e-crd

.PHONY: e2e-crd

E2E_SUITES_e2e-crd := e2e/crd/test_crd.sh
E2E_INSTANCES_e2e-crd := main

e2e-crd: $(BUILD)/hcp-controller $(BUILD)/tests/test_policy
	@e2e/cluster.sh with main -- bash -c 'HCP_BIN=$(abspath $(BUILD)/hcp-controller) \
		HCP_TEST_POLICY_BIN=$(abspath $(BUILD)/tests/test_policy) \
		scripts/run-tests.sh --tally $(TALLY) --label e2e $(call e2e_suites,e2e-crd)'
