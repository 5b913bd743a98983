package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedmetrics"
)

// metricsFlags are the command line of `znsdb metrics`. They are a contract
// with the pod spec that runs the command as a sidecar: keep them.
type metricsFlags struct {
	listen        string
	device        string
	zenfs         bool
	datadir       string
	sysBlock      string
	zonesInterval time.Duration
	zenfsInterval time.Duration
	dfTimeout     time.Duration
}

// shutdownGrace bounds how long a scrape under way may delay the exit.
const shutdownGrace = 5 * time.Second

// metricsCmd serves the database's zoned figures for Prometheus on
// /metrics (and /healthz) until ctx ends. The zone report and zenfs df run
// in the background at most once per their interval; a scrape reads their
// last results plus the cheap sysfs and statfs figures.
func metricsCmd(ctx context.Context, args []string, d deps) int {
	var f metricsFlags
	fs := flag.NewFlagSet("metrics", flag.ContinueOnError)
	fs.StringVar(&f.listen, "listen", ":9105", "address of the HTTP server (/metrics, /healthz); port 0 picks one, "+
		"printed as \"listening on ADDR\"")
	fs.StringVar(&f.device, "device", "", "kernel name of the zoned device (nvme0n2, nullb0); none for a conventional database")
	fs.BoolVar(&f.zenfs, "zenfs", false, "the device holds ZenFS: serve the space zenfs df reports")
	fs.StringVar(&f.datadir, "datadir", "/var/lib/mysql", "MySQL datadir, whose file system's size and free space are served")
	fs.StringVar(&f.sysBlock, "sys-block", "/sys/block", "sysfs directory of block devices")
	fs.DurationVar(&f.zonesInterval, "zones-interval", 15*time.Second, "least time between two zone reports of the device")
	fs.DurationVar(&f.zenfsInterval, "zenfs-interval", time.Minute, "least time between two zenfs df runs")
	fs.DurationVar(&f.dfTimeout, "zenfs-df-timeout", 10*time.Second, "how long zenfs df may take before it is stopped")
	if code, ok := parseFlags(fs, args, d); !ok {
		return code
	}
	if err := f.validate(); err != nil {
		fmt.Fprintf(d.stderr, "znsdb metrics: %v\n", err)
		return exitUsage
	}

	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		fmt.Fprintf(d.stderr, "znsdb metrics: %v\n", err)
		return exitRefused
	}
	fmt.Fprintf(d.stdout, "listening on %s\n", ln.Addr())

	var logMu sync.Mutex // stderr is shared by the server and both sources
	logf := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		fmt.Fprintf(d.stderr, "znsdb metrics: "+format+"\n", args...)
	}
	c := zonedmetrics.New(zonedmetrics.Config{Device: f.device, SysBlock: f.sysBlock, Datadir: f.datadir,
		Logf: logf, Now: d.clock})

	bg, stopBackground := context.WithCancel(ctx)
	defer stopBackground()
	var wg sync.WaitGroup
	if f.device != "" {
		if info, err := zbd.Inspect(f.sysBlock, f.device); err == nil && info.Model == zbd.ModelNone {
			logf("%s is not zoned (sysfs queue/zoned says none): no zone report", f.device)
		} else {
			devPath := filepath.Join("/dev", f.device)
			wg.Go(func() {
				c.RunZones(bg, f.zonesInterval, func(context.Context) ([]zbd.Zone, error) {
					return d.devices.ReportZones(devPath)
				})
			})
		}
	}
	if f.zenfs {
		wg.Go(func() {
			c.RunZenFS(bg, f.zenfsInterval, f.dfTimeout, func(ctx context.Context) (zenfs.Df, error) {
				return zenfsDf(ctx, d.zenfsRunner(), zenfs.DefaultBinary, f.device)
			})
		})
	}

	mux := http.NewServeMux()
	mux.Handle("GET /metrics", c.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	code := exitOK
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		if err := srv.Shutdown(sctx); err != nil {
			logf("shutdown: %v", err)
		}
		cancel()
	case err := <-served:
		logf("serving: %v", err)
		code = exitRefused
	}
	// A zenfs df under way is stopped through its context; a zone report
	// (one ioctl per 1024 zones) ends by itself.
	stopBackground()
	wg.Wait()
	return code
}

func (f *metricsFlags) validate() error {
	if f.device != "" {
		if err := zbd.ValidateName(f.device); err != nil {
			return fmt.Errorf("--device: %w", err)
		}
	}
	if f.zenfs && f.device == "" {
		return errors.New("--zenfs needs --device, the device that holds ZenFS")
	}
	for _, x := range []struct {
		name string
		v    time.Duration
	}{{"--zones-interval", f.zonesInterval}, {"--zenfs-interval", f.zenfsInterval}, {"--zenfs-df-timeout", f.dfTimeout}} {
		if x.v <= 0 {
			return fmt.Errorf("%s must be positive, not %s", x.name, x.v)
		}
	}
	return nil
}

// zenfsDf runs `zenfs df --zbd=<dev>` through the runner and parses it. A
// failure is explained from zenfs's own words by zenfs.Classify, as the
// health probe's space refresh does.
func zenfsDf(ctx context.Context, r Runner, bin, dev string) (zenfs.Df, error) {
	args, err := zenfs.DfArgs(dev)
	if err != nil {
		return zenfs.Df{}, err
	}
	out, stderr, err := r.Run(ctx, bin, args...)
	if err != nil {
		return zenfs.Df{}, fmt.Errorf("zenfs df failed: %w", zenfs.Classify(dev, stderr, err))
	}
	return zenfs.ParseDf(out)
}
