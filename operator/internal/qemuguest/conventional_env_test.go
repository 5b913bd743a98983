package qemuguest

import "fmt"

// The devices of the conventional in-guest tests (conventional_test.go), shared with TestConventionalGuest, which
// has run.sh make them before the tests: `nullblk-zoned.sh create` loads the guest's modules, which the host's
// userland, where the tests run, cannot.
const (
	convFirst = 20
	convDev   = "nullb20" // nullb<convFirst>
	convPath  = "/dev/" + convDev
	// convMiB is above the conventional minimum (zonedfs.MinConventionalBytes), and the guest's RAM holds it.
	convMiB = 512
	// convZonedDev is a zoned device, to be refused as storage.device (by conventional_test.go, of the guest's build).
	//lint:ignore U1000 used by the zns_guest build
	convZonedDev = "nullb21" // nullb<convFirst+1>
)

// conventionalNullBlk are run.sh's --nullblk arguments for them.
//
//lint:ignore U1000 used by the host's build (TestConventionalGuest), not the guest's
var conventionalNullBlk = []string{
	fmt.Sprintf("--first %d --conventional --memory-backed --size %d", convFirst, convMiB),
	fmt.Sprintf("--first %d --size 256 --zone-size 16", convFirst+1),
}
