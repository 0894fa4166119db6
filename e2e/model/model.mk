# The behaviour model of HyperShift and Cluster API (e2e/model): built once
# per machine into the cache by e2e/model/build.sh, and its own end-to-end
# test against an instance of its own, "model" (Cluster API's own CRDs and
# webhooks, none of its controllers acting: e2e/capi/lib.sh; the test works
# in a namespace of its own, so concurrent runs can share it), without
# hcp-controller. `make e2e` runs e2e-model; `make e2e-model-bin` only builds.

E2E_TARGETS += e2e-model

.PHONY: e2e-model e2e-model-bin

E2E_SUITES_e2e-model := e2e/model/test_model.sh
E2E_INSTANCES_e2e-model := model
E2E_NEEDS_e2e-model := model

e2e-model-bin:
	@e2e/model/build.sh

# The instance serves HyperShift's HostedControlPlane and AWS kinds (staged
# by e2e/hypershift/build.sh --crds when it starts) and runs Cluster API's
# core manager (e2e-capi-bin).
e2e-model: e2e-model-bin e2e-capi-bin
	@e2e/cluster.sh with model -- env MODEL_E2E_INSTANCE=model \
		scripts/run-tests.sh --tally $(TALLY) --label e2e-model $(call e2e_suites,e2e-model)
