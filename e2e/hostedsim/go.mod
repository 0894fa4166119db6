// Many hosted API servers in one process, for the hosted ClusterVersion
// projection's e2e test and benchmark (see main.go). Test infrastructure
// only; standard library only.
module hcp-controller/e2e/hostedsim

go 1.21
