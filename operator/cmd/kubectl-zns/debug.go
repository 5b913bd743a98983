package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	//lint:ignore SA1019 k8s.io/streaming is not a dependency; these two error predicates are the same there
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/zns-mysql/zns-mysql/operator/internal/debugbundle"
)

// logLimitBytes bounds one log on top of --tail: a single runaway line (a binary dump) must not make the bundle
// too big to attach.
const logLimitBytes = 16 << 20

func (s *session) debugCmd() *cobra.Command {
	var out, benchmark string
	var opts debugbundle.Options
	cmd := &cobra.Command{
		Use:   "debug [NAME | benchmark/NAME] [-o FILE.tar.gz]",
		Short: "One tarball for a bug report: the resources, their children, events, logs, reports, device state, versions (never Secrets)",
		Long: `debug writes one gzip'd tarball about the ZNSDatabase NAME, the Benchmark NAME (benchmark/NAME or
--benchmark NAME, with the databases it targets), or every ZNSDatabase and Benchmark of the namespace: the custom
resources, the objects the operator made for them, the namespace's events about those, container logs, the
preflight and format reports, the zoned device as mysqld sees it, and the versions of everything involved.
It never reads a Secret. What could not be collected is listed in errors.txt inside the bundle.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				kind, name, found := strings.Cut(args[0], "/")
				switch {
				case !found:
					opts.Database = args[0]
				case benchmark != "":
					return fmt.Errorf("%s and --benchmark %s: name one", args[0], benchmark)
				case kind == "benchmark" || kind == "benchmarks":
					benchmark = name
				case kind == "znsdatabase" || kind == "znsdatabases":
					opts.Database = name
				default:
					return fmt.Errorf("%s: want NAME (a ZNSDatabase), znsdatabase/NAME or benchmark/NAME", args[0])
				}
			}
			if opts.Database != "" && benchmark != "" {
				return fmt.Errorf("a ZNSDatabase (%s) and --benchmark %s: name one", opts.Database, benchmark)
			}
			opts.Benchmark = benchmark
			return s.debug(cmd, opts, out)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the tarball to write (default zns-debug-NAMESPACE[-NAME]-TIME.tar.gz here)")
	cmd.Flags().StringVar(&benchmark, "benchmark", "", "collect this Benchmark and the ZNSDatabases it targets")
	cmd.Flags().Int64Var(&opts.TailLines, "tail", 2000, "lines of each container log, current and previous run (-1: all)")
	cmd.Flags().DurationVar(&opts.ExecTimeout, "exec-timeout", debugbundle.DefaultExecTimeout, "how long each command run in a mysqld container may take")
	return cmd
}

func (s *session) debug(cmd *cobra.Command, opts debugbundle.Options, out string) error {
	src, ns, err := s.debugSource()
	if err != nil {
		return err
	}
	opts.Namespace, opts.Now = ns, time.Now()
	opts.PluginVersion, opts.Command = pluginVersion(), commandLine(cmd)
	if out == "" {
		name := opts.Database + opts.Benchmark
		if name != "" {
			name = "-" + name
		}
		out = fmt.Sprintf("zns-debug-%s%s-%s.tar.gz", ns, name, opts.Now.UTC().Format("20060102T150405Z"))
	}
	// A temporary file beside the target, renamed at the end: an interrupted run leaves no half bundle under the
	// name a user would attach.
	tmp, err := os.CreateTemp(filepath.Dir(out), ".zns-debug-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	res, err := debugbundle.Collect(cmd.Context(), src, opts, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return err
	}
	fi, err := os.Stat(out)
	if err != nil {
		return err
	}
	note := ""
	if len(res.Failures) > 0 {
		note = " (see " + res.Root + "/" + debugbundle.ErrorsPath + ")"
	}
	fmt.Fprintf(s.streams.Out, "%s: %s, %d items, %d errors%s\n", out, size(fi.Size()), res.Items, len(res.Failures), note)
	return nil
}

// debugSource connects from kubectl's flags. Every client shares one transport that refuses Secrets, and the
// object reader refuses them too before asking: the bundle cannot hold a Secret because the tool cannot get one.
func (s *session) debugSource() (debugbundle.Source, string, error) {
	cfg, ns, err := s.connection()
	if err != nil {
		return nil, "", err
	}
	cfg.Wrap(debugbundle.RefuseSecrets)
	c, err := client.New(cfg, client.Options{Scheme: debugbundle.Scheme})
	if err != nil {
		return nil, "", err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, "", err
	}
	return &clusterSource{Reader: debugbundle.NoSecrets(c, debugbundle.Scheme), cs: cs, cfg: cfg}, ns, nil
}

// clusterSource is debugbundle.Source over a real cluster: objects through controller-runtime's client, the
// rest through client-go.
type clusterSource struct {
	client.Reader
	cs  kubernetes.Interface
	cfg *rest.Config
}

func (c *clusterSource) Events(ctx context.Context, namespace string) ([]corev1.Event, error) {
	l, err := c.cs.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

func (c *clusterSource) Logs(ctx context.Context, namespace, pod, container string, previous bool, tail int64) ([]byte, error) {
	limit := int64(logLimitBytes)
	opts := &corev1.PodLogOptions{Container: container, Previous: previous, LimitBytes: &limit, Timestamps: true}
	if tail >= 0 { // --tail -1: everything, as in kubectl logs
		opts.TailLines = &tail
	}
	raw, err := c.cs.CoreV1().Pods(namespace).GetLogs(pod, opts).DoRaw(ctx)
	if err != nil {
		// client-go words a failed log request by its status code alone ("could not find the requested
		// resource"); the Status in the body says what the API server could not find (the node, the container).
		var st metav1.Status
		if json.Unmarshal(raw, &st) == nil && st.Message != "" && !strings.Contains(err.Error(), st.Message) {
			err = fmt.Errorf("%w: %s", err, st.Message)
		}
		return nil, err
	}
	return raw, nil
}

// Exec runs a command as kubectl exec does: over WebSocket, falling back to SPDY for API servers (and proxies)
// that do not upgrade to it.
func (c *clusterSource) Exec(ctx context.Context, namespace, pod, container string, command []string) ([]byte, []byte, error) {
	u := c.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: command, Stdout: true, Stderr: true},
			clientgoscheme.ParameterCodec).URL()
	spdy, err := remotecommand.NewSPDYExecutor(c.cfg, "POST", u)
	if err != nil {
		return nil, nil, err
	}
	ws, err := remotecommand.NewWebSocketExecutor(c.cfg, "GET", u.String())
	if err != nil {
		return nil, nil, err
	}
	exec, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return nil, nil, err
	}
	var stdout, stderr bytes.Buffer
	err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
	return stdout.Bytes(), stderr.Bytes(), err
}

func (c *clusterSource) ServerVersion(context.Context) (string, error) {
	v, err := c.cs.Discovery().ServerVersion()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s (%s, %s, built %s)", v.GitVersion, v.Platform, v.GoVersion, v.BuildDate), nil
}

// pluginVersion is what the Go toolchain recorded in the binary: module version, VCS revision, Go version.
func pluginVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (no build information in the binary)"
	}
	v := []string{bi.Main.Path + " " + bi.Main.Version, bi.GoVersion}
	for _, st := range bi.Settings {
		switch st.Key {
		case "vcs.revision", "vcs.time", "vcs.modified":
			v = append(v, st.Key+"="+st.Value)
		}
	}
	return strings.Join(v, " ")
}

// commandLine is the command as run, for README.txt, with credential-like flags (--token) redacted.
func commandLine(cmd *cobra.Command) string {
	parts := []string{"kubectl zns debug"}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		v := f.Value.String()
		if debugbundle.SensitiveName(f.Name) {
			v = debugbundle.Redacted
		}
		parts = append(parts, "--"+f.Name+"="+v)
	})
	return strings.Join(append(parts, cmd.Flags().Args()...), " ")
}

// size is a file size as people read it.
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
