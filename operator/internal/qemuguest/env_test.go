package qemuguest

// Environment set by TestGuestSuite (suite_test.go).
const (
	envGuest   = "ZNS_QEMU_GUEST"  // 1 inside the guest (run.sh sets it)
	envCapture = "ZNS_CAPTURE_DIR" // where real outputs are saved for testdata
	envZnsdb   = "ZNS_ZNSDB"       // the znsdb binary
	envZbdTest = "ZNS_ZBD_TEST"    // the zbd package's test binary
	// envZnsbench is the znsbench binary (its drive sidecar).
	envZnsbench = "ZNS_ZNSBENCH"
	// envZloopModuleError says why make test could not build zloop.ko (hack/qemu/build-zloop-module.sh's
	// failure, with its step): the zloop tests skip with it.
	envZloopModuleError = "ZNS_ZLOOP_MODULE_ERROR"
)

// sharedNamespaceSpec is run.sh's --zns for a second namespace on nvme0n1's controller, with smaller zones
// (TestSharedDrive).
const sharedNamespaceSpec = "controller=previous,zone_size=16M,zone_capacity=16M,size=1G"

// kernelSkip starts the reason of an in-guest skip that the guest's kernel causes (a feature it lacks, such
// as zloop on Debian's kernels without ZLOOP_MODULE): TestGuestSuite reports such a skip as a skip, any
// other in-guest skip as a failure.
const kernelSkip = "guest kernel lacks it: "
