package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zns-mysql/zns-mysql/operator/internal/chart"
)

func (s *session) plotCmd() *cobra.Command {
	var out string
	var kinds []string
	cmd := &cobra.Command{
		Use:   "plot BENCHMARK -o FILE.png|FILE.svg",
		Short: "Charts: TPS and percentile latency over time per target, bars of mean TPS and latency with their deviation, latency against throughput for a thread sweep",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("-o FILE.png or FILE.svg is required")
			}
			format := strings.TrimPrefix(strings.ToLower(filepath.Ext(out)), ".")
			if format != "png" && format != "svg" {
				return fmt.Errorf("-o %s: the extension picks the format, .png or .svg", out)
			}
			var ks []chart.Kind
			for _, k := range kinds {
				ks = append(ks, chart.Kind(k))
			}
			d, err := s.data(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			w, done, err := s.output(out)
			if err != nil {
				return err
			}
			drawn, err := chart.Figure(w, d, format, ks)
			if err = done(err); err != nil {
				return err
			}
			var names []string
			for _, k := range drawn {
				names = append(names, string(k))
			}
			fmt.Fprintf(s.streams.ErrOut, "wrote %s (%s)\n", out, strings.Join(names, ", "))
			return nil
		},
	}
	all := make([]string, 0, len(chart.Kinds))
	for _, k := range chart.Kinds {
		all = append(all, string(k))
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the image to write; its extension picks the format: .png or .svg")
	cmd.Flags().StringSliceVar(&kinds, "charts", all, "which charts, one panel each (those the Benchmark has no data for are left out)")
	return cmd
}
