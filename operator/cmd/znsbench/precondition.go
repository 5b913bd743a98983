package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
)

// preconditionFile is the fio file, removed afterwards so that the database gets its space back.
const preconditionFile = "zns-precondition.fio"

// preconditionCmd is the seed methodology's preconditioning for a conventional drive, at the level a pod can
// reach: it fills the free space of the volume's filesystem with a sequential write, passes times, then
// removes the file. On a volume that spans its drive this brings the SSD's flash translation layer to the
// steady state that the drive's measurements should start from.
func preconditionCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("znsbench precondition", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "directory on the volume to precondition")
	passes := fs.Int("passes", fio.PreconditionPasses, "how many times the free space is written")
	fill := fs.Int("fill-percent", 90, "share of the free space written, in percent (the rest stays free for the database)")
	maxBytes := fs.Int64("max-bytes", 0, "write at most this many bytes per pass (0: no cap)")
	fioPath := fs.String("fio", "fio", "fio binary")
	target := fs.String("target", "", "target name, copied into the summary")
	termLog := fs.String("termination-log", "/dev/termination-log", "where to write the summary (skipped if not writable)")
	driveDir := fs.String("drive-dir", "", "directory shared with the drive sidecar: wait (bounded) until it has read the drive")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" || *passes < 1 || *fill < 1 || *fill > 99 {
		fmt.Fprintln(stderr, "znsbench precondition: --dir is required, --passes >= 1, --fill-percent in 1..99")
		return 2
	}
	if *driveDir != "" {
		awaitDrive(ctx, *driveDir, sleepCtx, func(format string, a ...any) { fmt.Fprintf(stderr, "znsbench: "+format+"\n", a...) })
	}
	sum := benchresult.Summary{Phase: benchresult.PhasePrecondition, Target: *target, StartTime: time.Now().UTC().Format(time.RFC3339)}
	written, err := precondition(ctx, *dir, *passes, *fill, *maxBytes, *fioPath, stdout, stderr)
	sum.EndTime = time.Now().UTC().Format(time.RFC3339)
	sum.OK = err == nil
	sum.DeviceWrittenBytes = written
	if err != nil {
		reason, cause := failreason.Classify(failreason.Failure{Text: err.Error(), Interrupted: ctx.Err() != nil})
		sum.Reason, sum.Error = reason, cause+"\n"+err.Error()
	}
	writeSummary(sum, *termLog, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "znsbench precondition: %v\n", err)
		return 1
	}
	return 0
}

func precondition(ctx context.Context, dir string, passes, fill int, maxBytes int64, fioPath string, stdout, stderr io.Writer) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	free := int64(st.Bavail) * st.Bsize
	size := free / 100 * int64(fill)
	if maxBytes > 0 && size > maxBytes {
		size = maxBytes
	}
	size = size / (1 << 20) * (1 << 20) // whole MiB
	if size < 1<<20 {
		return 0, fmt.Errorf("%s has %d bytes free: nothing to precondition", dir, free)
	}
	file := filepath.Join(dir, preconditionFile)
	defer os.Remove(file)
	job := fio.Job{Name: "precondition", Filename: file, RW: fio.SeqWrite, BlockSize: fio.DefaultBlockSize,
		IODepth: fio.DefaultIODepth, Size: size, Loops: passes}
	args, err := job.Args()
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(stdout, "znsbench: preconditioning %s: %d MiB of %d MiB free, %d pass(es)\n", dir, size>>20, free>>20, passes)
	cmd := exec.CommandContext(ctx, fioPath, args...)
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("fio: %w", err)
	}
	rep, err := fio.Parse(out)
	if err != nil {
		return 0, err
	}
	if err := rep.Err(); err != nil {
		return 0, err
	}
	return rep.Totals(fio.Write).IOBytes, nil
}

// writeSummary hands a summary to the operator the way the runner's other phases do.
func writeSummary(sum benchresult.Summary, termLog string, stdout, stderr io.Writer) {
	b, err := sum.Encode()
	if err != nil {
		b, _ = benchresult.Summary{Phase: sum.Phase, OK: sum.OK, Error: "summary too large: " + err.Error()}.Encode()
	}
	if termLog != "" {
		if werr := os.WriteFile(termLog, b, 0o644); werr != nil {
			fmt.Fprintf(stderr, "znsbench: termination log not written (%v); the summary is on stdout\n", werr)
		}
	}
	fmt.Fprintf(stdout, "%s%s\n", benchresult.SummaryPrefix, b)
}
