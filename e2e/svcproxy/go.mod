// The Service in front of the controller's replicas for the rolling update
// test (see main.go). Test infrastructure only; standard library only.
module hcp-controller/e2e/svcproxy

go 1.21
