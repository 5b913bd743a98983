// Command manager runs the zns-mysql operator: the ZNSDatabase, Benchmark and ZonedDevice holder reconcilers.
// `manager inventory` runs the device inventory's node agent instead (inventory.go).
package main

import (
	"flag"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/controller"
	"github.com/zns-mysql/zns-mysql/operator/internal/opmetrics"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// The secure metrics endpoint asks the API server who a scraper is and whether it may read /metrics.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

func main() {
	if len(os.Args) > 1 && os.Args[1] == "inventory" {
		os.Exit(runInventory(os.Args[2:]))
	}
	var (
		metricsAddr, probeAddr                    string
		leaderElect, metricsSecure                bool
		perconaImage, mariadbImage                string
		percona84Image                            string
		benchImage                                string
		preflightRetry, blockedWait, probePeriod  time.Duration
		leaseDuration, renewDeadline, retryPeriod time.Duration
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8443", "address the metrics endpoint binds to; 0 disables it")
	flag.BoolVar(&metricsSecure, "metrics-secure", true, "serve metrics over HTTPS to clients the API server authenticates "+
		"(TokenReview) and authorizes (SubjectAccessReview: get on the non-resource URL /metrics); false serves plain HTTP to anyone")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address the health probes bind to")
	flag.BoolVar(&leaderElect, "leader-elect", false, "elect a leader so that only one replica reconciles")
	// Longer than client-go's 15s/10s/2s: the leader gives up when it cannot renew within the deadline, and on a slow
	// API server (the zoned node under emulation answered a lease update in more than 5 s) the operator restarted
	// every minute. A failover then takes up to the lease duration, which an operator of slow jobs can afford.
	flag.DurationVar(&leaseDuration, "leader-elect-lease-duration", 137*time.Second, "how long a non-leader waits after the last renewal before it takes the lease")
	flag.DurationVar(&renewDeadline, "leader-elect-renew-deadline", 107*time.Second, "how long the leader keeps trying to renew before it stops (less than the lease duration)")
	flag.DurationVar(&retryPeriod, "leader-elect-retry-period", 26*time.Second, "wait between attempts to take or renew the lease")
	flag.StringVar(&perconaImage, "percona-image", "zns-mysql/percona-zenfs:latest", "default MySQL image for flavor percona, mysqlVersion 8.0 (with ZenFS)")
	flag.StringVar(&percona84Image, "percona-8.4-image", "zns-mysql/percona-84:latest", "default MySQL image for flavor percona, mysqlVersion 8.4 (no ZenFS)")
	flag.StringVar(&mariadbImage, "mariadb-image", "zns-mysql/mariadb-myrocks:latest", "default MySQL image for flavor mariadb")
	flag.StringVar(&benchImage, "bench-image", "zns-mysql/bench:latest", "default image of Benchmark Jobs (sysbench and znsbench)")
	flag.DurationVar(&preflightRetry, "preflight-retry", time.Minute, "wait before a refused device is inspected again")
	flag.DurationVar(&probePeriod, "database-probe-period", resources.DefaultProbePeriodSeconds*time.Second,
		"period of mysqld's readiness probe, whole seconds (each probe starts a process in the container: under emulation, raise it)")
	flag.DurationVar(&blockedWait, "blocked-retry", 30*time.Second, "wait before a database blocked on a missing object looks again")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	setupLog := ctrl.Log.WithName("setup")
	if probePeriod < time.Second || probePeriod%time.Second != 0 {
		setupLog.Error(nil, "--database-probe-period must be whole seconds, at least 1s", "given", probePeriod.String())
		os.Exit(2)
	}

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))

	metricsOpts := metricsserver.Options{BindAddress: metricsAddr}
	if metricsSecure {
		// controller-runtime makes a self-signed certificate when given none; Prometheus scrapes it with
		// insecure_skip_verify and its ServiceAccount token, as in every kubebuilder project.
		metricsOpts.SecureServing = true
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}

	managed := labels.SelectorFromSet(labels.Set{v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue})
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsOpts,
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         leaderElect,
		LeaderElectionID:       "zns-mysql-operator.zns-mysql.dev",
		LeaseDuration:          &leaseDuration,
		RenewDeadline:          &renewDeadline,
		RetryPeriod:            &retryPeriod,
		// A replica that stops (a rollout, a scale-down) hands the lease over at once instead of leaving the next
		// one to wait out the longer lease duration.
		LeaderElectionReleaseOnCancel: true,
		Client:                        client.Options{Cache: &client.CacheOptions{DisableFor: controller.UncachedObjects()}},
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			// Only our own pods are of interest; caching every pod of a big cluster would cost memory.
			&corev1.Pod{}: {Label: managed},
		}},
	})
	if err != nil {
		setupLog.Error(err, "cannot create the manager")
		os.Exit(1)
	}
	if err := controller.SetupZNSDatabase(mgr, controller.Options{
		Images: map[resources.ImageKey]string{
			{Flavor: v1alpha1.FlavorPercona, Version: v1alpha1.MySQL80}: perconaImage,
			{Flavor: v1alpha1.FlavorPercona, Version: v1alpha1.MySQL84}: percona84Image,
			{Flavor: v1alpha1.FlavorMariaDB}:                            mariadbImage,
		},
		BenchImage:     benchImage,
		PreflightRetry: preflightRetry,
		BlockedRetry:   blockedWait,
		ProbePeriod:    probePeriod,
	}); err != nil {
		setupLog.Error(err, "cannot set up the ZNSDatabase controller")
		os.Exit(1)
	}
	if err := controller.SetupBenchmark(mgr, benchImage, nil); err != nil {
		setupLog.Error(err, "cannot set up the Benchmark controller")
		os.Exit(1)
	}
	if err := controller.SetupZonedDeviceHolder(mgr); err != nil {
		setupLog.Error(err, "cannot set up the ZonedDevice holder controller")
		os.Exit(1)
	}
	if err := opmetrics.Register(crmetrics.Registry, mgr.GetClient()); err != nil {
		setupLog.Error(err, "cannot register the operator's metrics")
		os.Exit(1)
	}
	utilruntime.Must(mgr.AddHealthzCheck("healthz", healthz.Ping))
	utilruntime.Must(mgr.AddReadyzCheck("readyz", healthz.Ping))

	setupLog.Info("starting the manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "the manager stopped")
		os.Exit(1)
	}
}
