package deviceid

import "testing"

// The namespaces of one NVMe controller are one drive; anything else is its own.
func TestDrive(t *testing.T) {
	for _, tc := range []struct {
		id   ID
		want string
	}{
		{ID{Node: "n1", Device: "nvme0n1"}, "n1/nvme0"},
		{ID{Node: "n1", Device: "nvme0n2"}, "n1/nvme0"},
		{ID{Node: "n1", Device: "nvme12n3"}, "n1/nvme12"},
		{ID{Node: "n1", Device: "nvme1c0n1"}, "n1/nvme1"}, // a multipath namespace: the subsystem's number
		{ID{Node: "n2", Device: "nvme0n1"}, "n2/nvme0"},   // another node, another drive
		{ID{Node: "n1", Device: "nullb0"}, "n1/nullb0"},
		{ID{Node: "n1", Device: "sda"}, "n1/sda"},
		{ID{Node: "n1", Device: "nvme0"}, "n1/nvme0"}, // a controller's character device name, as given
		{ID{Device: "nvme3n1"}, "nvme3"},
		{ID{Node: "n1"}, ""},
	} {
		if got := tc.id.Drive(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.id, got, tc.want)
		}
	}
}
