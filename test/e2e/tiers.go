package e2e

import "strings"

// ZonedNodeTests are the e2e tests that need the zoned node (each calls zonedNode): make test's stage 7 skips
// them on its kind cluster and stage 8 runs them on the node hack/qemu/zoned-node.sh boots under QEMU
// (hack/testrun). TestZonedNodeTestsListed fails when a Test function that calls zonedNode is missing here, or
// one listed does not call it.
//
// TestZonedFioBenchmark first: a fio Job on nvme0n2 while the node is otherwise idle (about 2 minutes).
var ZonedNodeTests = []string{"TestZonedFioBenchmark", "TestZonedFilesystemFlow"}

// ZonedNodePattern is the anchored go test -run (or -skip) pattern that matches exactly ZonedNodeTests:
// ^(TestZonedFioBenchmark|TestZonedFilesystemFlow)$.
func ZonedNodePattern() string {
	return "^(" + strings.Join(ZonedNodeTests, "|") + ")$"
}
