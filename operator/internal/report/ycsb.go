package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// A YCSB Benchmark (spec.tool ycsb) has, beside the figures every Benchmark has (TPS is then all operations per
// second), each operation type's figures: the study's read and update latency apart, and with a thread sweep
// their tail latency against the throughput.

func isYCSB(b *v1alpha1.Benchmark) bool {
	return b.Spec.Tool == v1alpha1.ToolYCSB && b.Spec.YCSB != nil
}

// ycsbHeadline is the Headline of a YCSB Benchmark.
func ycsbHeadline(b *v1alpha1.Benchmark) string {
	y := b.Spec.YCSB
	s := b.Spec
	line := fmt.Sprintf("benchmark %s/%s: YCSB workload %s, %s records of %d x %d bytes, %s, %s threads", b.Namespace, b.Name,
		y.Workload, y.RecordCount.String(), y.FieldCount, y.FieldLength, y.RequestDistribution, threadsLabel(b))
	if y.TargetOpsPerSecond > 0 {
		line += fmt.Sprintf(" at %d ops/s", y.TargetOpsPerSecond)
	}
	line += fmt.Sprintf(", %d x %d s; %s", s.Runs(), s.DurationSeconds, dash(string(b.Status.Phase)))
	if b.Status.Progress != "" && b.Status.Phase != v1alpha1.BenchmarkCompleted {
		line += " (" + b.Status.Progress + ")"
	}
	return line
}

// ycsbTable writes each target's figures per operation type (means over its runs) and, with a thread sweep, at
// each thread count.
func ycsbTable(w io.Writer, b *v1alpha1.Benchmark) error {
	if !isYCSB(b) {
		return nil
	}
	var rows, sweep []string
	for _, ts := range b.Status.Targets {
		if ts.State == v1alpha1.TargetFailed || ts.YCSB == nil {
			continue
		}
		for _, o := range ts.YCSB.Operations {
			rows = append(rows, fmt.Sprintf("%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", ts.Name, ts.YCSB.RecordCount, o.Operation,
				dash(o.OpsPerSec), dash(o.LatencyAvgMs), dash(o.LatencyP50Ms), dash(o.LatencyP95Ms), dash(o.LatencyP99Ms),
				dash(o.LatencyP999Ms), dash(o.LatencyMaxMs), o.Errors))
		}
		for _, p := range ts.Sweep {
			for _, o := range p.Operations {
				sweep = append(sweep, fmt.Sprintf("%s\t%d\t%s\t%s\t%s\t%s\t%s\n", ts.Name, p.Threads, o.Operation,
					dash(o.OpsPerSec), dash(o.LatencyP95Ms), dash(o.LatencyP99Ms), dash(o.LatencyP999Ms)))
			}
		}
	}
	if len(rows) > 0 {
		fmt.Fprintln(w, "YCSB operations (means over the runs; latencies in ms; errors are failed operations per run):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "TARGET\tRECORDS\tOPERATION\tOPS/S\tAVG MS\tP50 MS\tP95 MS\tP99 MS\tP99.9 MS\tMAX MS\tERRORS\n")
		for _, r := range rows {
			fmt.Fprint(tw, r)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(sweep) > 0 {
		fmt.Fprintln(w, "YCSB operations by thread count (tail latency against throughput):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "TARGET\tTHREADS\tOPERATION\tOPS/S\tP95 MS\tP99 MS\tP99.9 MS\n")
		for _, r := range sweep {
			fmt.Fprint(tw, r)
		}
		return tw.Flush()
	}
	return nil
}

// OperationsCSV writes a YCSB Benchmark's figures per operation type: one row per target, run and operation
// type, then one "mean" row per target and operation type (per thread count of a sweep). Tidy data, one header.
func OperationsCSV(w io.Writer, d Data) error {
	b := d.Benchmark
	if err := notForFio(b, "YCSB operations"); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"benchmark", "target", "threads", "iteration", "operation", "count", "ops_per_sec", "latency_avg_ms",
		"latency_p50_ms", "latency_p90_ms", "latency_p95_ms", "latency_p99_ms", "latency_p999_ms", "latency_max_ms", "errors"})
	row := func(target string, threads int32, iteration string, o v1alpha1.YCSBOperation) {
		_ = cw.Write([]string{b.Name, target, strconv.Itoa(int(threads)), iteration, o.Operation, strconv.FormatInt(o.Count, 10),
			o.OpsPerSec, o.LatencyAvgMs, o.LatencyP50Ms, o.LatencyP90Ms, o.LatencyP95Ms, o.LatencyP99Ms, o.LatencyP999Ms,
			o.LatencyMaxMs, strconv.FormatInt(o.Errors, 10)})
	}
	for _, r := range d.Runs {
		for _, o := range r.Figures.Operations {
			row(r.Target, r.Threads, strconv.Itoa(int(r.Iteration)), o)
		}
	}
	for _, ts := range b.Status.Targets {
		if ts.State == v1alpha1.TargetFailed {
			continue
		}
		if len(ts.Sweep) > 0 {
			for _, p := range ts.Sweep {
				for _, o := range p.Operations {
					row(ts.Name, p.Threads, "mean", o)
				}
			}
			continue
		}
		if ts.YCSB != nil {
			th, _ := b.Spec.RunThreads(1)
			for _, o := range ts.YCSB.Operations {
				row(ts.Name, th, "mean", o)
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
