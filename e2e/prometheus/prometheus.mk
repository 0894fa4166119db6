# Prometheus checks, part of `make e2e`:
#   e2e/prometheus/test_alerts.sh  the alert rules with promtool (no cluster):
#                                  check, unit tests, runbook sections
#   e2e/prometheus/test_live.sh    a live /metrics through promtool and a
#                                  Prometheus server, on the "main" instance
# `make alerts-test` runs the first alone.

E2E_TARGETS += e2e-prometheus

.PHONY: e2e-prometheus alerts-test

alerts-test:
	@scripts/run-tests.sh --tally $(TALLY) --label cli e2e/prometheus/test_alerts.sh

e2e-prometheus: $(BUILD)/hcp-controller
	@rc=0; \
	scripts/run-tests.sh --tally $(TALLY) --label cli e2e/prometheus/test_alerts.sh || rc=1; \
	e2e/cluster.sh with main -- bash -c 'HCP_BIN=$(abspath $(BUILD)/hcp-controller) \
		scripts/run-tests.sh --tally $(TALLY) --label e2e e2e/prometheus/test_live.sh' || rc=1; \
	exit $$rc
