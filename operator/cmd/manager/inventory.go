package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/inventoryagent"
)

// runInventory is `manager inventory`, the node agent of the device inventory. It lives in the operator's binary
// so that the DaemonSet runs the operator's image and no other image has to be built, shipped and pinned.
func runInventory(args []string) int {
	fs := flag.NewFlagSet("manager inventory", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: manager inventory [flags]\n\n"+
			"Publishes this node's zoned block devices, and the conventional ones its Node's %s annotation names,\n"+
			"as ZonedDevice objects. Reads sysfs only; needs NODE_NAME (the downward API's spec.nodeName).\n\n", v1alpha1.AnnotationConventionalCandidates)
		fs.PrintDefaults()
	}
	interval := fs.Duration("interval", time.Minute, "time between two scans of sysfs (and one at start)")
	sysfs := fs.String("sysfs", "/sys", "where sysfs is mounted")
	node := fs.String("node-name", os.Getenv("NODE_NAME"), "the node the agent runs on (default: $NODE_NAME)")
	opts := zap.Options{}
	opts.BindFlags(fs)
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return 2
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("inventory")
	if *interval <= 0 {
		log.Error(nil, "--interval must be positive", "given", interval.String())
		return 2
	}
	if *node == "" {
		log.Error(nil, "no node name: set NODE_NAME from the downward API (fieldRef spec.nodeName) or pass --node-name")
		return 2
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	cfg, err := ctrl.GetConfig()
	if err != nil {
		log.Error(err, "no Kubernetes API configuration")
		return 1
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		log.Error(err, "cannot create the API client")
		return 1
	}
	agent := &inventoryagent.Agent{Client: c, NodeName: *node, SysRoot: *sysfs, Log: log}
	log.Info("publishing this node's devices", "node", *node, "sysfs", *sysfs, "interval", interval.String())
	if err := agent.Run(ctrl.SetupSignalHandler(), *interval); err != nil {
		log.Error(err, "the agent stopped")
		return 1
	}
	return 0
}
