# The controller at fleet scale (e2e/bench/bench_controller.c): `make bench`
# runs bench-controller. It uses a private instance, "bench", so that 1,000
# HostedClusters and 3,000 NodePools disturb no other test, and deletes it
# afterwards. BENCH_STEADY_SECONDS (default 600) shortens the steady-state
# measurement for quick runs. bench-hosted is the same run with a hosted API
# server per HostedCluster (e2e/hostedsim, built with Go into $HCP_CACHE_DIR)
# and its kubeconfig Secret; it compares its convergence with the figure the
# last bench-controller run left in $(BENCH_CTL_DIR)/converged-without-hosted.
# BENCH_HOSTED_PERIOD (default 60) is the controller's --hosted-reassert-period.
# bench-boundary (BENCH_HELD=1) gives every HostedCluster and NodePool a change
# held until one shared boundary and reports the order of the boundary's writes
# and when the last held release was committed, against the same number of
# patches from a plain client beside the controller just before the boundary
# (the target; BENCH_WARM_UP=0 leaves it out), before the controller starts and
# after it stops, and beside a replica of the controller that only watches.
# bench-failover is the same
# boundary with two replicas whose leader is killed (SIGKILL) BENCH_FAILOVER
# seconds before it (default 3): when the standby commits the held releases.
# BENCH_STANDBY=1 with bench-boundary runs the second replica beside a leader
# left alone: the standby must write nothing, and the leader's figures compare
# with a run without it.
# BENCH_WAVES=1 with bench-boundary configures release waves (DESIGN.md 3.14):
# the first 1% of the HostedClusters form the canary wave, which ran the held
# release healthy a month before, every other is in the early wave with a
# soak of 48h; the boundary lets every release through as before, each
# decided through the waves, and the bench reports how many sums of an
# earlier wave the controller made. BENCH_WAVES=2: the same fleet (labels,
# the canaries' status) with no waves configured.

BENCH_E2E_TARGETS += bench-controller bench-hosted bench-boundary bench-failover

.PHONY: bench-controller bench-hosted bench-boundary bench-failover

BENCH_CTL_DIR := $(BUILD)/e2e/bench

$(BENCH_CTL_DIR)/bench_controller: e2e/bench/bench_controller.c e2e/bench/boundary.c \
		e2e/bench/boundary.h e2e/bench/gctrace.c e2e/bench/gctrace.h e2e/kube/hostedsim_driver.c \
		e2e/kube/hostedsim_driver.h e2e/kube/harness.c e2e/kube/harness.h $(BUILD)/libhcp.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Ie2e/kube -o $@ $< e2e/bench/boundary.c e2e/bench/gctrace.c e2e/kube/hostedsim_driver.c \
		e2e/kube/harness.c $(BUILD)/libhcp.a $(LIBS)

# $(1): BENCH_HOSTED (0 or 1); $(2): BENCH_HELD (0 or 1); $(3): BENCH_FAILOVER.
# The API server's own etcd compaction (every 5 minutes by default) is turned
# off: the bench compacts at instants of its choosing (after the cold start,
# before the baseline), so that neither a boundary nor a baseline runs beside
# one. It logs its garbage collections (GODEBUG=gctrace=1: its etcd's log
# too), which bench-boundary reports beside each burst of releases, and
# serves /debug/pprof, through which bench-boundary has it collect its heap
# before each burst, so that each starts from the same state: on two cores a
# collection of the API server's 0.6-1.6 GB heap marks for 0.6-1.6 s and
# slows every request meanwhile. BENCH_APISERVER_GOGC sets its GOGC (Go's
# default, 100, unless given: 400 makes collections rarer, at four times
# the memory); BENCH_APISERVER_GODEBUG adds to its GODEBUG (madvdontneed=0:
# the memory Go returns to the system stays mapped until the kernel needs
# it). BENCH_HEAP_DIR saves the heap profile each collection before a burst
# answers (DIR/NAME.pb.gz); BENCH_PROFILE_DIR the API server's CPU profile
# of each burst's first 5 s (DIR/NAME.cpu.pb.gz): `go tool pprof` reads both.
BENCH_APISERVER_GOGC ?= 100
bench_controller_run = @e2e/cluster.sh down bench >/dev/null 2>&1 || true; \
	rc=0; HCP_APISERVER_ARGS="--etcd-compaction-interval=0 --profiling=true $${HCP_APISERVER_ARGS:-}" \
	GODEBUG=gctrace=1$${BENCH_APISERVER_GODEBUG:+,$$BENCH_APISERVER_GODEBUG} GOGC=$(BENCH_APISERVER_GOGC) \
	e2e/cluster.sh with bench -- bash -c 'set -a; eval "$$(e2e/cluster.sh env bench)"; \
		set +a; BENCH_HOSTED=$(1) BENCH_HELD=$(or $(2),0) BENCH_FAILOVER=$(or $(3),0) BENCH_STANDBY=$${BENCH_STANDBY:-0} BENCH_COMPARE=$(abspath $(BENCH_CTL_DIR))/converged-without-hosted \
		$(abspath $(BENCH_CTL_DIR))/bench_controller $(abspath $(BUILD)/hcp-controller)' \
		|| rc=$$?; e2e/cluster.sh down bench >/dev/null 2>&1; exit $$rc

bench-controller: $(BENCH_CTL_DIR)/bench_controller $(BUILD)/hcp-controller
	$(call bench_controller_run,0)

bench-hosted: $(BENCH_CTL_DIR)/bench_controller $(BUILD)/hcp-controller
	$(call bench_controller_run,1)

bench-boundary: $(BENCH_CTL_DIR)/bench_controller $(BUILD)/hcp-controller
	$(call bench_controller_run,0,1)

bench-failover: $(BENCH_CTL_DIR)/bench_controller $(BUILD)/hcp-controller
	$(call bench_controller_run,0,1,$${BENCH_FAILOVER:-3})

# bench-notify (e2e/bench/bench_notify.sh): notifications at scale beside the
# behaviour model on the "main" instance: a simulated month of 50
# HostedClusters and 150 NodePools (a day in 10 s; BENCH_NOTIFY_DAYS,
# BENCH_NOTIFY_SCALE, BENCH_NOTIFY_SEED, BENCH_NOTIFY_HCS; the model's
# BENCH_NOTIFY_MODEL_WORKERS, default 10) with the receiver down for a day and
# the controller killed half way, the loop's window-open -> release latency
# with 10 endpoints that answer after 10 s, the same with 10 pre-start checks
# that answer after 10 s (BENCH_CHECK_SCALE, default 3600), and bad
# configurations refused. BENCH_NOTIFY_PARTS="config month loop checks"
# narrows it. BENCH_LOOP_REPEATS (2) runs each side of the loop and of the
# checks that often. About 21 minutes.
BENCH_E2E_TARGETS += bench-notify

.PHONY: bench-notify

bench-notify: $(BUILD)/hcp-controller e2e-model-bin
	@rm -rf $(BENCH_CTL_DIR)/notify
	@e2e/cluster.sh with main -- env HCP_BIN=$(abspath $(BUILD)/hcp-controller) \
		BENCH_NOTIFY_OUT=$(abspath $(BENCH_CTL_DIR))/notify e2e/bench/bench_notify.sh
