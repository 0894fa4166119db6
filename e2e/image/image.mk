# The container image, built and run (e2e/image/test_image.sh) against the
# "main" instance: `make e2e` runs e2e-image. Its base root file system comes
# from Debian's packages (debootstrap, then the Containerfile's runtime RUN),
# built once per machine into the cache by e2e/image/build-base.sh (3-6
# minutes and about 47 MB downloaded cold, nothing warm); `make
# e2e-image-base` only builds that.

E2E_TARGETS += e2e-image

.PHONY: e2e-image e2e-image-base

E2E_SUITES_e2e-image := e2e/image/test_image.sh
E2E_INSTANCES_e2e-image := main
E2E_NEEDS_e2e-image := image

e2e-image-base:
	@e2e/image/build-base.sh

e2e-image: $(BUILD)/hcp-controller e2e-image-base
	@e2e/cluster.sh with main -- env HCP_BIN=$(abspath $(BUILD)/hcp-controller) \
		scripts/run-tests.sh --tally $(TALLY) --label e2e-image $(call e2e_suites,e2e-image)
