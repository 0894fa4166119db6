//go:build tools

// The programs this module builds: Cluster API's core manager and its Docker
// infrastructure provider, whose in-memory backend (DevCluster/DevMachine
// with spec.backend.inMemory) needs no container engine. The imports keep
// `go mod tidy` from dropping them.
package tools

import (
	_ "sigs.k8s.io/cluster-api/core"
	_ "sigs.k8s.io/cluster-api/test/infrastructure/docker"
)
