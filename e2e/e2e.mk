# End-to-end targets, included by the top-level Makefile: the local cluster
# (real kube-apiserver + etcd), the e2e tests, the e2e benchmarks and the demo.
#
#   make cluster-up      start (or reuse) the test instances and install the CRDs
#   make cluster-down    stop every instance under e2e/.local (except those a
#                        running `make e2e` uses) and delete their state
#   make e2e             run $(E2E_TARGETS) against the instances; instances this
#                        run had to start are stopped afterwards, unless
#                        `make cluster-up` pinned them or another run uses them
#   make bench-e2e       the same for $(BENCH_E2E_TARGETS)
#
# Test suites hook in with a fragment e2e/<suite>/<name>.mk that says
# `E2E_TARGETS += e2e-<suite>` (or `BENCH_E2E_TARGETS += ...`) and defines the
# target. Targets run one after another; a failing one does not stop the rest.
# The instances are described by `e2e/cluster.sh env <instance>`; the admin
# kubeconfig of the management instance is e2e/.local/kubeconfig.

.PHONY: e2e bench-e2e demo cluster-up cluster-down cluster-status cluster-crds e2e-cluster

# The instances the tests expect: "main" plays the management cluster, "hosted"
# a hosted cluster's API server.
E2E_INSTANCES ?= main hosted

E2E_TARGETS := e2e-cluster
BENCH_E2E_TARGETS :=
-include $(sort $(wildcard e2e/*/*.mk))

cluster-up:
	@e2e/cluster.sh up $(E2E_INSTANCES)

cluster-down:
	@e2e/cluster.sh down --all

cluster-status:
	@e2e/cluster.sh status

# Re-apply the CRDs (fixtures and crds/) to the running instances.
cluster-crds:
	@for i in $(E2E_INSTANCES); do e2e/cluster.sh install-crds $$i || exit 1; done

# run_targets: make each listed target in turn, then fail if any failed.
run_targets = rc=0; for t in $(1); do $(MAKE) --no-print-directory $$t || { echo "!! e2e: $$t failed" >&2; rc=1; }; done; exit $$rc

e2e:
	@e2e/cluster.sh with $(E2E_INSTANCES) -- \
		bash -c '$(call run_targets,$(E2E_TARGETS))'

bench-e2e:
	@if [ -n "$(strip $(BENCH_E2E_TARGETS))" ]; then \
		e2e/cluster.sh with $(E2E_INSTANCES) -- \
			bash -c '$(call run_targets,$(BENCH_E2E_TARGETS))'; \
	fi

# Smoke test of the local cluster itself.
e2e-cluster:
	@scripts/run-tests.sh --tally $(TALLY) --label e2e e2e/cluster/test_cluster.sh

# The demo (e2e/demo/demo.sh): sample objects on the "main" instance and a
# simulated week in about two minutes (DEMO_SECONDS) beside the behaviour
# model of HyperShift and Cluster API (e2e/model, built by e2e-model-bin),
# then a table of every object's state; then the act on Cluster API's own
# controllers (DEMO_SCENARIO=capi, built by e2e-capi-bin) on the "capi"
# instance, in about a minute. Starts each instance if needed and stops it
# afterwards unless someone else uses it.
demo: all e2e-model-bin e2e-capi-bin
	@e2e/cluster.sh with main -- env HCP_BIN=$(abspath $(BUILD)/hcp-controller) \
		DEMO_DIR=$(abspath $(BUILD))/demo-run e2e/demo/demo.sh
	@e2e/cluster.sh with capi -- env HCP_BIN=$(abspath $(BUILD)/hcp-controller) \
		DEMO_SCENARIO=capi DEMO_DIR=$(abspath $(BUILD))/demo-run-capi e2e/demo/demo.sh
