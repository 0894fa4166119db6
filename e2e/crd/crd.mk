# The shipped CRD (crds/) as the API server enforces it: every CEL rule
# refuses an object that breaks it with the rule's message, and one object of
# every recurrence kind is accepted and previewed (e2e/crd/test_crd.sh).
# `make e2e` runs e2e-crd.

E2E_TARGETS += e2e-crd

.PHONY: e2e-crd

e2e-crd: $(BUILD)/hcp-controller
	@e2e/cluster.sh with main -- bash -c 'HCP_BIN=$(abspath $(BUILD)/hcp-controller) \
		scripts/run-tests.sh --tally $(TALLY) --label e2e e2e/crd/test_crd.sh'
