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
# target, and for an e2e target the variables the lanes read:
#
#   E2E_SUITES_<target>     its suites (the files run-tests.sh runs); the
#                           target runs $(call e2e_suites,<target>): all of
#                           them, or the one E2E_ONLY names
#   E2E_INSTANCES_<target>  the instances they run on
#   E2E_NEEDS_<target>      the builds they need beyond their instances' own
#                           (scripts/prebuild-e2e.sh names; the lanes add
#                           the API server's, Cluster API's and HyperShift's)
#
# `make e2e` runs every suite of every target side by side in E2E_JOBS lanes
# (default: the cores plus two), each lane on instances of its own, longest first
# (scripts/e2e-lanes.sh); suites in E2E_EXCLUSIVE run alone. A failing suite
# does not stop the rest. The instances are described by `e2e/cluster.sh env
# <instance>`; the admin kubeconfig of the management instance is
# e2e/.local/kubeconfig (lane N's: e2e/.local-laneN/kubeconfig).

.PHONY: e2e e2e-jobs bench-e2e demo cluster-up cluster-down cluster-status cluster-crds e2e-cluster

# The instances the tests expect: "main" plays the management cluster, "hosted"
# a hosted cluster's API server.
E2E_INSTANCES ?= main hosted

E2E_TARGETS := e2e-cluster
BENCH_E2E_TARGETS :=
# Suites whose figures time the controller at a boundary: they run alone,
# after the others (scripts/e2e-lanes.sh).
E2E_EXCLUSIVE := e2e/controller/test_figures.sh
# Programs of the suites' own that make builds (C harnesses), built before
# the lanes start.
E2E_BUILT :=
# e2e_suites,TARGET: the suites TARGET runs.
e2e_suites = $(or $(E2E_ONLY),$(E2E_SUITES_$(1)))
-include $(sort $(wildcard e2e/*/*.mk))

E2E_SUITES_e2e-cluster := e2e/cluster/test_cluster.sh
E2E_INSTANCES_e2e-cluster := main hosted

cluster-up:
	@e2e/cluster.sh up $(E2E_INSTANCES)

cluster-down:
	@e2e/cluster.sh down --all
	@for d in e2e/.local-lane*; do [ -d "$$d" ] && HCP_E2E_STATE_DIR=$(CURDIR)/$$d e2e/cluster.sh down --all; done; true

cluster-status:
	@e2e/cluster.sh status

# Re-apply the CRDs (fixtures and crds/) to the running instances.
cluster-crds:
	@for i in $(E2E_INSTANCES); do e2e/cluster.sh install-crds $$i || exit 1; done

# run_targets: make each listed target in turn, then fail if any failed.
run_targets = rc=0; for t in $(1); do $(MAKE) --no-print-directory $$t || { echo "!! e2e: $$t failed" >&2; rc=1; }; done; exit $$rc

# The suites as jobs for the lanes: target, suite, instances, builds needed,
# alone (1/0), tab-separated; an empty list is "-".
comma := ,
e2e_list = $(or $(subst $(eval) ,$(comma),$(strip $(1))),-)
e2e-jobs:
	@$(foreach t,$(E2E_TARGETS),$(foreach s,$(E2E_SUITES_$(t)),printf '%s\t%s\t%s\t%s\t%s\n' \
		'$(t)' '$(s)' '$(call e2e_list,$(E2E_INSTANCES_$(t)))' '$(call e2e_list,$(E2E_NEEDS_$(t)))' \
		'$(if $(filter $(s),$(E2E_EXCLUSIVE)),1,0)';))

# What the suites build (each builds it too when it starts, a second when
# current), first, so that two lanes never build the same file.
e2e: $(BUILD)/hcp-controller $(BUILD)/tests/test_policy $(E2E_BUILT)
	@$(MAKE) --no-print-directory -s e2e-jobs >$(BUILD)/e2e-jobs.tsv
	@BUILD=$(BUILD) TALLY=$(abspath $(TALLY)) scripts/e2e-lanes.sh $(BUILD)/e2e-jobs.tsv

bench-e2e:
	@if [ -n "$(strip $(BENCH_E2E_TARGETS))" ]; then \
		e2e/cluster.sh with $(E2E_INSTANCES) -- \
			bash -c '$(call run_targets,$(BENCH_E2E_TARGETS))'; \
	fi

# Smoke test of the local cluster itself.
e2e-cluster:
	@e2e/cluster.sh with main hosted -- \
		scripts/run-tests.sh --tally $(TALLY) --label e2e $(call e2e_suites,e2e-cluster)

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
