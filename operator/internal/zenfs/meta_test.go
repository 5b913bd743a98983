package zenfs

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs/zenfscapture"
)

// A ZenFS the real zenfs wrote is never taken for foreign data: every
// captured device, after its first mkfs, after the last one and after a
// RocksDB session rolled the log into the second meta zone. A false alarm
// here would refuse a database its own data.
func TestRealZenFSHasNoForeignMetaZone(t *testing.T) {
	reports := map[string]string{"after-mkfs": "04b-blkzone-report-after-mkfs", "formatted": "16-blkzone-report-formatted",
		"populated": "25-blkzone-report-populated"}
	for _, dev := range []string{"nullb0", "nullb1", "nullb4", "nvme0n1"} {
		for state, report := range reports {
			dir := "capture/" + dev + "/"
			meta := MetaZones(parseBlkzoneReport(t, dir+report+".stdout"))
			img := sparseDevice{}
			for i, z := range meta {
				img[z.Start] = readHexdump(t, fmt.Sprintf("%s%s-metazone%d.first4k.hex.txt", dir, state, i))
			}
			m, err := ReadMeta(img, meta)
			if err != nil || m.Superblock == nil || m.Unsafe() {
				t.Errorf("%s %s: ReadMeta = %+v, %v; want a superblock and no foreign zone", dev, state, m, err)
			}
		}
	}
}

// The random blocks written over nullb1's first meta zone (followup/
// B-garbage: the first 8 bytes of each are recorded, the rest were random
// too) are foreign, whatever zenfs did with them: ls-uuid aborted on four
// (length word 2 GiB or more) and survived two, but only by the luck of the
// word and the guest's memory. So are the crafted block of the same run (CRC
// word 0, length word 0xfffffff0, as its README describes it) and the 16
// random blocks of capture/garbage, whose df found "No valid superblock".
func TestRealGarbageIsForeign(t *testing.T) {
	type sample struct {
		name    string
		block   []byte
		zenfsRC string // how zenfs ls-uuid ended on it, "" when not recorded
	}
	var samples []sample
	for i := 1; i <= 6; i++ {
		stem := fmt.Sprintf("followup/B-garbage/10-random%d", i)
		block := make([]byte, 4096)
		copy(block, zenfscapture.Od(t, stem+"-first8.txt"))
		samples = append(samples, sample{stem, block, strings.TrimSpace(readCapture(t, stem+"-ls-uuid.rc"))})
	}
	crafted := make([]byte, 4096)
	binary.LittleEndian.PutUint32(crafted[4:8], 0xfffffff0)
	samples = append(samples, sample{"crafted", crafted, strings.TrimSpace(readCapture(t, "followup/B-garbage/02-ls-uuid.rc"))})

	aborted := 0
	for _, s := range samples {
		// One block written at the start of zone 0 moved its write pointer past it.
		zone := seqZone(0, zbd.ZoneCondImpOpen, int64(len(s.block)))
		m, err := ReadMeta(sparseDevice{0: s.block}, []zbd.Zone{zone, seqZone(1, zbd.ZoneCondEmpty, 0)})
		if err != nil || m.Superblock != nil || !m.Unsafe() || len(m.Foreign) != 1 {
			t.Fatalf("%s: ReadMeta = %+v, %v; want one foreign zone", s.name, m, err)
		}
		f := m.Foreign[0]
		if want := binary.LittleEndian.Uint32(s.block[4:8]); f.Start != 0 || f.LengthWord != want {
			t.Errorf("%s: foreign zone %+v, want start 0 and length word %#x", s.name, f, want)
		}
		if s.zenfsRC == "134" {
			aborted++
		}
	}
	if aborted != 5 {
		t.Errorf("%d of the recorded garbage blocks aborted zenfs ls-uuid, want 5", aborted)
	}

	// capture/garbage: 16 random blocks from byte 0; the report says how far they went.
	zones := parseBlkzoneReport(t, "capture/garbage/blkzone-report.stdout")
	if zones[0].WritePointer-zones[0].Start != 16*4096 {
		t.Fatalf("capture/garbage: zone 0 %+v, want 16 blocks written", zones[0])
	}
	if rc := strings.TrimSpace(readCapture(t, "capture/garbage/df.rc")); rc == "0" {
		t.Fatalf("capture/garbage: df exit %s", rc)
	}
	// Their bytes were not kept: any that are not a superblock record stand for them.
	m, err := ReadMeta(sparseDevice{}, MetaZones(zones))
	if err != nil || m.Superblock != nil || len(m.Foreign) != 1 || m.Foreign[0].Start != 0 {
		t.Errorf("capture/garbage: ReadMeta = %+v, %v", m, err)
	}
}

// A live ZenFS whose other meta zone was overwritten is still found, and is
// still unsafe for zenfs: its log reader reads every written meta zone
// before it picks the newest superblock.
func TestForeignZoneBesideLiveSuperblock(t *testing.T) {
	meta := MetaZones(parseBlkzoneReport(t, "capture/nullb0/25-blkzone-report-populated.stdout"))
	meta[0].WritePointer = meta[0].Start + 4096
	img := sparseDevice{
		meta[0].Start: []byte{0x3e, 0xad, 0x15, 0x9a, 0xdd, 0x5b, 0x35, 0x80}, // random1's first bytes
		meta[1].Start: readHexdump(t, "capture/nullb0/populated-metazone1.first4k.hex.txt"),
	}
	m, err := ReadMeta(img, meta)
	if err != nil || m.Superblock == nil || m.Superblock.Sequence != 2 || len(m.Foreign) != 1 ||
		m.Foreign[0] != (ForeignZone{Start: meta[0].Start, LengthWord: 0x80355bdd}) {
		t.Errorf("ReadMeta = %+v, %v", m, err)
	}
}
