// Package qemuguest checks the operator's zoned-device code against real
// zoned block devices inside the QEMU test guest (hack/qemu, test/qemu): the
// null_blk script, zoned-device inspection and judgement, zone reports, the
// znsdb helper's preflight, zoned fio runs parsed by package fio, and block
// traces captured by package blocktrace.
//
// It lives under operator/ because it imports operator/internal packages.
// The in-guest checks (guest_test.go) build only with the zns_guest tag:
// TestGuestSuite compiles them with `go test -c -tags zns_guest`, boots the
// guest once, runs the binary there and reports each in-guest test as its
// own subtest. TestRecordedGuestSysfs needs no guest: it judges the sysfs
// trees a guest run saved in testdata/.
//
// TestConventionalGuest does the same for conventional_test.go (tags
// zns_guest and zns_userland): a storage.device's preflight, precondition and
// format with the host's fio, blkid and mkfs, which only a guest booted with
// the host's userland (hack/qemu/run.sh --userland) has.
//
//	go test ./operator/internal/qemuguest -v                     # everything
//	ZNS_QEMU_UPDATE_TESTDATA=1 go test ./operator/internal/qemuguest -run TestGuestSuite
//	                                                              # re-record testdata
package qemuguest
