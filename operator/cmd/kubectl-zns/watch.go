package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/report"
)

func (s *session) watchCmd() *cobra.Command {
	var interval time.Duration
	var once bool
	cmd := &cobra.Command{
		Use:   "watch BENCHMARK",
		Short: "Live phase, run, elapsed and estimated remaining time, last-interval TPS per target (until it ends)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			for {
				b, _, err := s.benchmark(ctx, args[0])
				if err != nil {
					return err
				}
				if !once {
					fmt.Fprintf(s.streams.Out, "--- %s\n", time.Now().Format(time.TimeOnly))
				}
				if err := report.Watch(s.streams.Out, b, time.Now()); err != nil {
					return err
				}
				if once || b.Status.Phase == v1alpha1.BenchmarkCompleted || b.Status.Phase == v1alpha1.BenchmarkFailed {
					return nil
				}
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(interval):
				}
			}
		},
	}
	cmd.Flags().DurationVar(&interval, "interval", 5*time.Second, "how often to read the Benchmark")
	cmd.Flags().BoolVar(&once, "once", false, "print the view once and exit")
	return cmd
}
