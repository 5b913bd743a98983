// Command kubectl-zns is the kubectl plugin of zns-mysql (`kubectl zns ...` once it is on the PATH): it reads
// Benchmarks and the interval series kept in their ConfigMaps and prints what people compare.
//
//	kubectl zns report BENCHMARK                       the comparison table; failed targets with their reason
//	kubectl zns compare B1 B2 ...                      several Benchmarks side by side
//	kubectl zns export BENCHMARK --format csv|json     summaries and per-interval series (fio: device figures), for a notebook
//	kubectl zns plot BENCHMARK -o FILE.png|.svg        charts
//	kubectl zns watch BENCHMARK                        live phase, run, elapsed and remaining time, last TPS
//	kubectl zns debug [NAME|benchmark/NAME] -o F      one tar.gz for a bug report, never a Secret (docs/debug-bundle.md)
//
// --namespace, --context, --kubeconfig and the other kubectl connection flags work as in kubectl.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/report"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	cmd := newRoot(streams, nil)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "kubectl-zns:", err)
		os.Exit(1)
	}
}

// session is what every subcommand needs: a client and the namespace.
type session struct {
	flags *genericclioptions.ConfigFlags
	// newClient makes the client; tests replace it.
	newClient func() (client.Reader, string, error)
	streams   genericiooptions.IOStreams
}

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := corev1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// newRoot builds the command tree. newClient nil means: from the kubectl flags.
func newRoot(streams genericiooptions.IOStreams, newClient func() (client.Reader, string, error)) *cobra.Command {
	s := &session{flags: genericclioptions.NewConfigFlags(true), streams: streams, newClient: newClient}
	if s.newClient == nil {
		s.newClient = s.kubeClient
	}
	root := &cobra.Command{
		Use:           "kubectl-zns",
		Short:         "Read zns-mysql Benchmarks (reports, comparisons, exports, charts, live progress) and collect debug bundles",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	s.flags.AddFlags(root.PersistentFlags())
	root.AddCommand(s.reportCmd(), s.compareCmd(), s.exportCmd(), s.watchCmd(), s.plotCmd(), s.debugCmd())
	return root
}

func (s *session) kubeClient() (client.Reader, string, error) {
	cfg, ns, err := s.connection()
	if err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme()})
	return c, ns, err
}

// connection is what kubectl's flags say: the cluster's REST config (a copy, free to wrap) and the namespace.
func (s *session) connection() (*rest.Config, string, error) {
	cfg, err := s.flags.ToRESTConfig()
	if err != nil {
		return nil, "", err
	}
	ns, _, err := s.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", err
	}
	return rest.CopyConfig(cfg), ns, nil
}

func (s *session) benchmark(ctx context.Context, name string) (*v1alpha1.Benchmark, client.Reader, error) {
	c, ns, err := s.newClient()
	if err != nil {
		return nil, nil, err
	}
	b := &v1alpha1.Benchmark{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, b); err != nil {
		return nil, nil, fmt.Errorf("benchmark %s/%s: %w", ns, name, err)
	}
	return b, c, nil
}

// data reads a Benchmark and the ConfigMaps holding its series.
func (s *session) data(ctx context.Context, name string) (report.Data, error) {
	b, c, err := s.benchmark(ctx, name)
	if err != nil {
		return report.Data{}, err
	}
	cms := &corev1.ConfigMapList{}
	if err := c.List(ctx, cms, client.InNamespace(b.Namespace), client.MatchingLabels{resources.LabelBenchmark: b.Name}); err != nil {
		return report.Data{}, fmt.Errorf("series ConfigMaps of %s: %w", b.Name, err)
	}
	d, err := report.Collect(b, cms.Items)
	if err != nil {
		return d, err
	}
	for _, m := range d.Missing {
		fmt.Fprintf(s.streams.ErrOut, "kubectl-zns: series ConfigMap %s is gone; that run has figures but no intervals\n", m)
	}
	return d, nil
}

func (s *session) reportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "report BENCHMARK",
		Short: "The comparison table of one Benchmark; failed targets are marked with their reason",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, _, err := s.benchmark(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return report.Table(s.streams.Out, b)
		},
	}
}

func (s *session) compareCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "compare BENCHMARK BENCHMARK...",
		Short: "Several Benchmarks side by side (the same stacks at other thread counts, zone sizes or images)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var bs []*v1alpha1.Benchmark
			for _, name := range args {
				b, _, err := s.benchmark(cmd.Context(), name)
				if err != nil {
					return err
				}
				bs = append(bs, b)
			}
			return report.Compare(s.streams.Out, bs)
		},
	}
}

func (s *session) exportCmd() *cobra.Command {
	var format, data, out string
	cmd := &cobra.Command{
		Use:   "export BENCHMARK --format csv|json",
		Short: "Summaries and per-interval series, for a notebook (json: both; csv: --data summary, series, operations or fio)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := s.data(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			w, done, err := s.output(out)
			if err != nil {
				return err
			}
			switch {
			case format == "json":
				err = report.JSON(w, d)
			case format == "csv" && data == "summary":
				err = report.SummaryCSV(w, d)
			case format == "csv" && data == "series":
				err = report.SeriesCSV(w, d)
			case format == "csv" && data == "operations":
				err = report.OperationsCSV(w, d)
			case format == "csv" && data == "fio":
				err = report.FioCSV(w, d)
			case format == "csv":
				err = fmt.Errorf("--data %q: want summary, series, operations or fio", data)
			default:
				err = fmt.Errorf("--format %q: want csv or json", format)
			}
			return done(err)
		},
	}
	cmd.Flags().StringVar(&format, "format", "json", "csv or json")
	cmd.Flags().StringVar(&data, "data", "summary", "with --format csv: summary (one row per target and run, and the means), series (one row per interval), operations (a YCSB Benchmark's figures per operation type, per run and mean) or fio (a fio Benchmark's figures per target, run and direction)")
	cmd.Flags().StringVarP(&out, "output-file", "f", "", "write to this file instead of stdout")
	return cmd
}

// output opens the file to write to, or stdout; done closes it and keeps the first error.
func (s *session) output(path string) (io.Writer, func(error) error, error) {
	if path == "" || path == "-" {
		return s.streams.Out, func(err error) error { return err }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	return f, func(err error) error {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}
