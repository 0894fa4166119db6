# End-to-end targets, included by the top-level Makefile: the local cluster
# (real kube-apiserver + etcd), the e2e tests, the e2e benchmarks and the demo.

.PHONY: e2e bench-e2e demo cluster-up cluster-down

e2e:
	@echo "e2e: no end-to-end tests yet"

bench-e2e:
	@true

cluster-up:
	@echo "cluster-up: not implemented yet" >&2; exit 1

cluster-down:
	@true

demo: all
	@echo "demo: not implemented yet" >&2; exit 1
