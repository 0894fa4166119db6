# The controller at fleet scale (e2e/bench/bench_controller.c): `make bench`
# runs bench-controller. It uses a private instance, "bench", so that 1,000
# HostedClusters and 3,000 NodePools disturb no other test, and deletes it
# afterwards. BENCH_STEADY_SECONDS (default 600) shortens the steady-state
# measurement for quick runs.

BENCH_E2E_TARGETS += bench-controller

.PHONY: bench-controller

BENCH_CTL_DIR := $(BUILD)/e2e/bench

$(BENCH_CTL_DIR)/bench_controller: e2e/bench/bench_controller.c e2e/kube/harness.c \
		e2e/kube/harness.h $(BUILD)/libhcp.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Ie2e/kube -o $@ $< e2e/kube/harness.c $(BUILD)/libhcp.a $(LIBS)

bench-controller: $(BENCH_CTL_DIR)/bench_controller $(BUILD)/hcp-controller
	@e2e/cluster.sh down bench >/dev/null 2>&1 || true
	@rc=0; e2e/cluster.sh with bench -- bash -c 'set -a; eval "$$(e2e/cluster.sh env bench)"; \
		set +a; $(abspath $(BENCH_CTL_DIR))/bench_controller $(abspath $(BUILD)/hcp-controller)' \
		|| rc=$$?; e2e/cluster.sh down bench >/dev/null 2>&1; exit $$rc
