// Command scenario prints part of one of the project's scenarios (config/samples) placed on a cluster, as a
// manifest for kubectl apply: make demo applies its databases and Benchmarks through it, so that the demo runs
// the objects the samples and the e2e flows describe, with only the namespace, node, sizes and run length its
// own.
//
//	go run ./hack/scenario -scenario zoned-node -only innodb-zoned,innodb-baseline,zoned-vs-conv \
//	    -namespace demo -time-scale 4 | kubectl apply -f -
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/zns-mysql/zns-mysql/config/samples"
	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

var scenarios = map[string]string{"lab": samples.Lab, "zoned-node": samples.ZonedNode}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "scenario:", err)
		}
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("scenario", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var (
		name          = fl.String("scenario", "lab", "lab (config/samples) or zoned-node (config/samples/zoned-node)")
		only          = fl.String("only", "", "comma-separated databases and Benchmarks to print (default: all); a Benchmark keeps its targets among them")
		benchmarkName = fl.String("benchmark-name", "", "name of the one Benchmark printed (default: the sample's)")
		memory        = fl.String("memory", "", "memory limit of every database (default: the samples')")
		volumeSize    = fl.String("volume-size", "", "size of every volume (default: the samples')")
		print         = fl.String("print", "all", "all, databases or benchmarks: which of the selected objects to print")
		p             = samples.Placement{Devices: map[string]string{}}
		flavor        string
		timeScale     int
	)
	fl.StringVar(&p.Namespace, "namespace", "", "namespace of every object (default: none, kubectl's)")
	fl.StringVar(&p.Node, "node", "", "node of every database and fio target on a node's device (default: the samples')")
	fl.StringVar(&flavor, "flavor", "", "flavor of every database: percona or mariadb (default: the samples')")
	fl.Func("device", "DATABASE=DEVICE: the device of that database (repeatable; default: the samples')", func(v string) error {
		db, dev, ok := strings.Cut(v, "=")
		if !ok || db == "" || dev == "" || strings.Contains(dev, "/") {
			return fmt.Errorf("DATABASE=DEVICE with the device's kernel name (nullb0), not %q", v)
		}
		p.Devices[db] = dev
		return nil
	})
	fl.StringVar(&p.StorageClass, "storage-class", "", "storage class of every volume (default: the samples')")
	fl.StringVar(&p.ReformatToken, "reformat-token", "", "reformat token of every database whose sample sets one")
	fl.IntVar(&timeScale, "time-scale", 1, "multiplies the Benchmarks' start delay and target timeout (an emulated node's)")
	fl.StringVar(&p.Run.Workload, "workload", "", "the Benchmarks' sysbench workload (default: the samples')")
	int32Flag(fl, &p.Run.Tables, "tables", "tables")
	fl.Func("table-size", "rows per table of every Benchmark (default: the samples')", func(v string) error {
		n, err := positive(v, 62)
		p.Run.TableSize = n
		return err
	})
	int32Flag(fl, &p.Run.Threads, "threads", "client threads")
	int32Flag(fl, &p.Run.DurationSeconds, "seconds", "run seconds")
	int32Flag(fl, &p.Run.Iterations, "iterations", "iterations")
	int32Flag(fl, &p.Run.Every, "report-interval", "seconds between sysbench's reports")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (every setting is a flag; -h lists them)", fl.Args())
	}
	dir, ok := scenarios[*name]
	if !ok {
		return fmt.Errorf("-scenario %q: the scenarios are lab and zoned-node", *name)
	}
	switch v1alpha1.Flavor(flavor) {
	case "", v1alpha1.FlavorPercona, v1alpha1.FlavorMariaDB:
		p.Flavor = v1alpha1.Flavor(flavor)
	default:
		return fmt.Errorf("-flavor %q: percona or mariadb", flavor)
	}
	if timeScale < 1 || timeScale > 100 {
		return fmt.Errorf("-time-scale %d: from 1 to 100", timeScale)
	}
	p.TimeScale = int32(timeScale)
	var err error
	if p.Memory, err = quantity("-memory", *memory); err != nil {
		return err
	}
	if p.VolumeSize, err = quantity("-volume-size", *volumeSize); err != nil {
		return err
	}
	s, err := samples.Load(dir)
	if err != nil {
		return err
	}
	if *only != "" {
		if s, err = s.Select(strings.Split(*only, ",")...); err != nil {
			return err
		}
	}
	for db := range p.Devices {
		if _, err := s.Database(db); err != nil {
			return fmt.Errorf("-device: %w", err)
		}
	}
	s.Place(p)
	if *benchmarkName != "" {
		if len(s.Benchmarks) != 1 {
			return fmt.Errorf("-benchmark-name names one Benchmark; this selection has %d", len(s.Benchmarks))
		}
		s.Benchmarks[0].Name = *benchmarkName
	}
	switch *print {
	case "all":
	case "databases":
		s.Benchmarks = nil
	case "benchmarks":
		s.Databases = nil
	default:
		return fmt.Errorf("-print %q: all, databases or benchmarks", *print)
	}
	out, err := s.YAML()
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}

func quantity(flagName, v string) (*resource.Quantity, error) {
	if v == "" {
		return nil, nil
	}
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() <= 0 {
		return nil, fmt.Errorf("%s %q: a positive quantity such as 1Gi", flagName, v)
	}
	return &q, nil
}

// int32Flag is a flag of a positive count; 0, the default, keeps the samples' value.
func int32Flag(fl *flag.FlagSet, to *int32, name, what string) {
	fl.Func(name, what+" of every Benchmark (default: the samples')", func(v string) error {
		n, err := positive(v, 31)
		*to = int32(n)
		return err
	})
}

func positive(v string, bits int) (int64, error) {
	n, err := strconv.ParseInt(v, 10, bits+1)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("a positive whole number, not %q", v)
	}
	return n, nil
}
