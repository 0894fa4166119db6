# Prometheus checks, part of `make e2e`:
#   e2e/prometheus/test_alerts.sh  the alert rules with promtool (no cluster):
#                                  check, unit tests, runbook sections
#   e2e/prometheus/test_live.sh    a live /metrics through promtool and a
#                                  Prometheus server, on the "main" instance
# `make alerts-test` runs the first alone (e2e-alerts in `make e2e`).

E2E_TARGETS += e2e-alerts e2e-prometheus

.PHONY: e2e-alerts e2e-prometheus alerts-test

E2E_SUITES_e2e-alerts := e2e/prometheus/test_alerts.sh
E2E_SUITES_e2e-prometheus := e2e/prometheus/test_live.sh
E2E_INSTANCES_e2e-prometheus := main

alerts-test:
	@scripts/run-tests.sh --tally $(TALLY) --label cli e2e/prometheus/test_alerts.sh

e2e-alerts:
	@scripts/run-tests.sh --tally $(TALLY) --label cli $(call e2e_suites,e2e-alerts)

e2e-prometheus: $(BUILD)/hcp-controller
	@e2e/cluster.sh with main -- bash -c 'HCP_BIN=$(abspath $(BUILD)/hcp-controller) \
		scripts/run-tests.sh --tally $(TALLY) --label e2e $(call e2e_suites,e2e-prometheus)'
