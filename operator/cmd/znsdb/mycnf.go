package main

import (
	"flag"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/zns-mysql/zns-mysql/operator/internal/mycnf"
)

// overrideFlags collects repeated --set key=value flags.
type overrideFlags map[string]string

func (o overrideFlags) String() string { return fmt.Sprint(map[string]string(o)) }

func (o overrideFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", v)
	}
	o[k] = val
	return nil
}

// mycnfCmd prints the configuration the operator generates for the same inputs, so that a lab without
// Kubernetes (or the demo) runs exactly the tuning the operator would.
func mycnfCmd(args []string, d deps) int {
	fs := flag.NewFlagSet("znsdb mycnf", flag.ContinueOnError)
	fs.SetOutput(d.stderr)
	in := mycnf.Input{Overrides: overrideFlags{}}
	var flavor, version, engine, profile, memory string
	var port, serverID int
	fs.StringVar(&flavor, "flavor", string(mycnf.FlavorPercona), "percona or mariadb")
	fs.StringVar(&version, "mysql-version", string(mycnf.Version80), "Percona Server series: 8.0 or 8.4 (mariadb: 8.0)")
	fs.StringVar(&engine, "engine", string(mycnf.EngineRocksDB), "rocksdb or innodb")
	fs.StringVar(&profile, "profile", string(mycnf.ProfileWorkload), "workload or bulkload")
	fs.StringVar(&in.ZenFSDevice, "zenfs-device", "", "zoned device kernel name for ZenFS (empty: conventional filesystem)")
	fs.StringVar(&memory, "memory", "2Gi", "memory available to mysqld (a Kubernetes quantity), sizes the caches")
	fs.StringVar(&in.DataDir, "datadir", "/var/lib/mysql/data", "datadir")
	fs.StringVar(&in.Socket, "socket", "/var/run/mysqld/mysqld.sock", "unix socket")
	fs.StringVar(&in.PidFile, "pid-file", "/var/run/mysqld/mysqld.pid", "pid file")
	fs.IntVar(&port, "port", 3306, "TCP port")
	fs.IntVar(&serverID, "server-id", 1, "server id (binary log)")
	fs.Var(overrideFlags(in.Overrides), "set", "option override key=value (repeatable)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	q, err := resource.ParseQuantity(memory)
	if err != nil {
		fmt.Fprintf(d.stderr, "znsdb mycnf: --memory: %v\n", err)
		return exitUsage
	}
	in.Flavor, in.Version = mycnf.Flavor(flavor), mycnf.Version(version)
	in.Engine, in.Profile = mycnf.Engine(engine), mycnf.Profile(profile)
	in.MemoryLimitBytes, in.Port, in.ServerID = q.Value(), int32(port), int32(serverID)
	out, err := mycnf.Generate(in)
	if err != nil {
		fmt.Fprintf(d.stderr, "znsdb mycnf: %v\n", err)
		return exitRefused
	}
	fmt.Fprint(d.stdout, out)
	return exitOK
}
