package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// DriveSources is printed under the write-amplification table: where its two kinds of figures come from, and
// what emulation cannot show.
const DriveSources = "DRIVE: measured by the drive's own NVMe logs (SMART, OCP C0h, FDP). MODELLED: a page-mapped FTL " +
	"with greedy GC fed the device's block trace, not a measurement.\n" +
	"Emulated drives (QEMU, null_blk) have no FTL: their measured media bytes equal host bytes."

// smartResolution is added when a measured ratio takes its host bytes from SMART.
const smartResolution = "SMART counts host bytes in steps of 512000, rounded up at each reading: over a short phase a smart+ocp ratio is off by up to a step either way."

// Reasons the report gives itself for figures the status cannot have.
const (
	zonedModelNote    = "zoned: a ZNS drive does no garbage collection of its own, so the model's answer is 1: each host byte written once"
	zonedRawNote      = "zoned: a ZNS drive exports its flash as zones; its raw flash is not modelled"
	notSteadyNote     = "the model stopped preconditioning at its round limit before its write amplification settled: the figure flatters the drive"
	noDriveNote       = "no drive figures for this target's runs"
	noCountersNote    = "the drive's counters were not asked for (spec.drive.counters)"
	zonedDeviceNote   = "the ZNSDatabase's status.device has no zone count or zone capacity"
	volumeDeviceNote  = "a volume's device size comes from the drive sidecar (spec.drive) of a local PersistentVolume's device"
	usableMissingNote = "the verify read no usable capacity from the database's metrics sidecar (spec.metrics off, or the verify's log says why)"
)

// maxNoteRunes shortens a footnote; the whole reason stays in status.
const maxNoteRunes = 150

// footnotes numbers the reasons of missing or qualified figures, each reason once.
type footnotes struct {
	text []string
	num  map[string]int
}

// mark is the footnote mark of reason, "[n]"; "" for no reason.
func (f *footnotes) mark(reason string) string {
	if reason == "" {
		return ""
	}
	reason = shorten(reason, maxNoteRunes)
	if f.num == nil {
		f.num = map[string]int{}
	}
	n, ok := f.num[reason]
	if !ok {
		f.text = append(f.text, reason)
		n = len(f.text)
		f.num[reason] = n
	}
	return fmt.Sprintf("[%d]", n)
}

// missing is a missing figure: "-" and the mark of its reason.
func (f *footnotes) missing(reason string) string { return "-" + f.mark(reason) }

func (f *footnotes) write(w io.Writer) {
	for i, t := range f.text {
		fmt.Fprintf(w, "[%d] %s\n", i+1, t)
	}
}

// shorten cuts s to at most n runes, at the end of a clause when one ends in the second half, else at a word,
// marking the cut.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := string(r[:n-3])
	if i := strings.LastIndex(cut, "; "); i > len(cut)/2 {
		cut = cut[:i]
	} else if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "..."
}

// ModelOPs are the over-provisioning factors a Benchmark's figures are modelled at: spec.drive's, in its order,
// then any other the status holds.
func ModelOPs(b *v1alpha1.Benchmark) []int32 {
	var ops []int32
	if d := b.Spec.Drive; d != nil {
		ops = append(ops, d.ModelOverProvisioningPercent...)
	}
	var extra []int32
	add := func(op int32) {
		if !slices.Contains(ops, op) && !slices.Contains(extra, op) {
			extra = append(extra, op)
		}
	}
	for _, ts := range b.Status.Targets {
		if ts.DriveMean != nil {
			for _, m := range ts.DriveMean.Modelled {
				add(m.OverProvisioningPercent)
			}
		}
		if ts.Capacity != nil {
			for _, m := range ts.Capacity.Modelled {
				add(m.OverProvisioningPercent)
			}
		}
	}
	slices.Sort(extra)
	return append(ops, extra...)
}

// driveTables writes, when any target has them, the drive's half of write amplification (means over the runs)
// and the usable capacity, then the footnotes of both.
func driveTables(w io.Writer, b *v1alpha1.Benchmark) error {
	var targets []v1alpha1.TargetStatus
	wa, capacity := false, false
	for _, ts := range b.Status.Targets {
		if ts.State == v1alpha1.TargetFailed {
			continue
		}
		targets = append(targets, ts)
		wa = wa || ts.DriveMean != nil
		capacity = capacity || ts.Capacity != nil
	}
	if !wa && !capacity {
		return nil
	}
	ops := ModelOPs(b)
	var notes footnotes
	if wa {
		if err := waTable(w, targets, ops, &notes); err != nil {
			return err
		}
		fmt.Fprintln(w, DriveSources)
		for _, ts := range targets {
			if d := ts.DriveMean; d != nil && d.Counters != nil && strings.HasPrefix(d.Counters.MediaSource, "smart") {
				fmt.Fprintln(w, smartResolution)
				break
			}
		}
	}
	if capacity {
		if err := capacityTable(w, targets, ops, &notes); err != nil {
			return err
		}
	}
	notes.write(w)
	return nil
}

func opLabel(op int32) string { return fmt.Sprintf("OP %d%%", op) }

// waTable writes per target the bytes per transaction the block layer counted, those the drive counted
// (measured) and, in their own columns, those the FTL model estimates at each over-provisioning factor.
func waTable(w io.Writer, targets []v1alpha1.TargetStatus, ops []int32, notes *footnotes) error {
	fmt.Fprintln(w, "drive write amplification (B/TX: bytes per transaction over the runs; BLOCK: what the kernel sent the device):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"TARGET", "STACK", "BLOCK B/TX", "DRIVE HOST B/TX", "DRIVE MEDIA B/TX", "DRIVE WA"}
	for _, op := range ops {
		head = append(head, "MODELLED WA "+opLabel(op), "MODELLED MEDIA B/TX "+opLabel(op))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, ts := range targets {
		block := "-"
		if ts.Mean != nil {
			block = dash(ts.Mean.BytesPerTransaction)
		}
		row := append([]string{ts.Name, Stack(ts), block}, measuredCells(ts.DriveMean, ts.Iterations, notes)...)
		for _, op := range ops {
			row = append(row, modelledCells(ts, op, notes)...)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// measuredCells are the drive's own figures: host and media bytes per transaction and the write amplification
// with the logs it comes from.
func measuredCells(d *v1alpha1.DriveFigures, its []v1alpha1.IterationResult, notes *footnotes) []string {
	if d == nil {
		m := notes.missing(noDriveNote)
		return []string{m, m, m}
	}
	c := d.Counters
	if c == nil {
		reason := d.CountersUnavailable
		if reason == "" {
			reason = noCountersNote
		}
		m := notes.missing(reason)
		return []string{m, m, m}
	}
	host := dash(c.HostBytesPerTransaction)
	if c.MediaWrittenBytes == "" {
		m := notes.missing(mediaReason(c, its))
		return []string{host, m, m}
	}
	wa := dash(c.WriteAmplification)
	if c.WriteAmplification != "" && c.MediaSource != "" {
		wa += " (" + c.MediaSource + ")"
	}
	return []string{host, dash(c.MediaBytesPerTransaction), wa}
}

// mediaReason says why the mean has no media bytes: its own reason, or that of the first run without them (the
// mean of the runs keeps none).
func mediaReason(c *v1alpha1.DriveCounters, its []v1alpha1.IterationResult) string {
	if c.MediaUnavailable != "" {
		return c.MediaUnavailable
	}
	for _, it := range its {
		if d := it.Drive; d != nil && d.Counters != nil && d.Counters.MediaUnavailable != "" {
			return d.Counters.MediaUnavailable
		}
	}
	return "not every run has the drive's media bytes from the same log"
}

// modelledCells are the model's write amplification and media bytes per transaction at one factor. A zoned
// target's write amplification is 1 by what the status says of it (a zoned device, and so no garbage collection
// in the drive), marked as such.
func modelledCells(ts v1alpha1.TargetStatus, op int32, notes *footnotes) []string {
	d := ts.DriveMean
	if d == nil {
		m := notes.missing(noDriveNote)
		return []string{m, m}
	}
	for _, m := range d.Modelled {
		if m.OverProvisioningPercent != op {
			continue
		}
		mark := ""
		if !m.SteadyState {
			mark = notes.mark(notSteadyNote)
		}
		return []string{dash(m.WriteAmplification) + mark, dash(m.MediaBytesPerTransaction) + mark}
	}
	if ts.Storage == "zoned" {
		mark := notes.mark(zonedModelNote)
		return []string{"1 (ZNS)" + mark, "-" + mark}
	}
	reason := d.ModelUnavailable
	if reason == "" {
		reason = "not every run was modelled at " + opLabel(op)
	}
	m := notes.missing(reason)
	return []string{m, m}
}

// capacityTable writes per target what its device exports and what its stack leaves for data (both measured),
// and for a conventional drive the share of its modelled raw flash that is usable at each factor.
func capacityTable(w io.Writer, targets []v1alpha1.TargetStatus, ops []int32, notes *footnotes) error {
	fmt.Fprintln(w, "usable capacity (GiB; device and usable measured, raw flash modelled):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"TARGET", "STACK", "DEVICE", "USABLE", "SOURCE", "USABLE/DEVICE"}
	for _, op := range ops {
		head = append(head, "MODELLED RAW "+opLabel(op), "USABLE/RAW "+opLabel(op))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, ts := range targets {
		c := ts.Capacity
		if c == nil {
			c = &v1alpha1.TargetCapacity{}
		}
		deviceReason := volumeDeviceNote
		if ts.Storage == "zoned" {
			deviceReason = zonedDeviceNote
		}
		device, deviceOK := bytesNum(c.DeviceBytes)
		usable, usableOK := bytesNum(c.UsableBytes)
		row := []string{ts.Name, Stack(ts), gib(device, deviceOK, deviceReason, notes), gib(usable, usableOK, usableMissingNote, notes), dash(c.UsableSource)}
		switch {
		case !usableOK:
			row = append(row, notes.missing(usableMissingNote))
		case !deviceOK:
			row = append(row, notes.missing(deviceReason))
		default:
			row = append(row, fmt.Sprintf("%.3f", float64(usable)/float64(device)))
		}
		for _, op := range ops {
			row = append(row, rawCells(ts, c, op, deviceOK, deviceReason, notes)...)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

func rawCells(ts v1alpha1.TargetStatus, c *v1alpha1.TargetCapacity, op int32, deviceOK bool, deviceReason string, notes *footnotes) []string {
	for _, m := range c.Modelled {
		if m.OverProvisioningPercent == op {
			raw, ok := bytesNum(m.RawBytes)
			return []string{gib(raw, ok, "status has no raw flash figure at "+opLabel(op), notes), dash(m.UsableShare)}
		}
	}
	reason := deviceReason
	switch {
	case ts.Storage == "zoned":
		reason = zonedRawNote
	case deviceOK:
		reason = "not modelled at " + opLabel(op) + " (spec.drive.modelOverProvisioningPercent)"
	}
	m := notes.missing(reason)
	return []string{m, m}
}

func bytesNum(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0
}

// gib formats bytes in GiB with two decimals, or a missing figure with its reason.
func gib(n int64, ok bool, reason string, notes *footnotes) string {
	if !ok {
		return notes.missing(reason)
	}
	return fmt.Sprintf("%.2f", float64(n)/(1<<30))
}
