# End-to-end check of `make demo` (e2e/demo/test_demo.sh): the simulated week
# in 120 s beside the behaviour model (e2e-model-bin builds it) in a namespace
# of its own, then a rerun stopped mid-week. `make e2e`
# runs e2e-demo; the "main" instance is started if needed and stopped
# afterwards only if this target started it.

E2E_TARGETS += e2e-demo

.PHONY: e2e-demo

E2E_SUITES_e2e-demo := e2e/demo/test_demo.sh
E2E_INSTANCES_e2e-demo := main
E2E_NEEDS_e2e-demo := model

e2e-demo: $(BUILD)/hcp-controller e2e-model-bin
	@e2e/cluster.sh with main -- bash -c 'HCP_BIN=$(abspath $(BUILD)/hcp-controller) \
		scripts/run-tests.sh --tally $(TALLY) --label e2e $(call e2e_suites,e2e-demo)'
