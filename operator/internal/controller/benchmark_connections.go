package controller

import (
	"context"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/mycnf"
)

// A Benchmark opens up to its largest thread count of connections against each target at once, and a server
// refuses those past its max_connections ("Too many connections", 1040) in the middle of a prepare or a run.
// The generated max_connections follows the pod's memory (151 without a limit) and spec.config may set it, so
// the API cannot check it at admission: the Benchmark does, when it has taken its targets and before any Job,
// against each database's effective configuration, and refuses with the numbers. It never raises
// max_connections itself: that would change a database's configuration behind its owner's back.

// cnfMaxConnections reads max_connections from a my.cnf the way mysqld does: option names compared in mysqld's
// form (mycnf.NormalizeKey: '-' and '_' alike, loose- ignored), the last setting winning, a value with an
// optional K, M or G suffix (powers of 1024). ok is false when the file does not set it or sets it to something
// unreadable.
func cnfMaxConnections(cnf string) (n int64, ok bool) {
	value, found := "", false
	for _, line := range strings.Split(cnf, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.ContainsRune("#;[", rune(line[0])) {
			continue
		}
		key, v, hasValue := strings.Cut(line, "=")
		if hasValue && mycnf.NormalizeKey(strings.TrimSpace(key)) == "max_connections" {
			value, found = strings.Trim(strings.TrimSpace(v), `"'`), true
		}
	}
	if !found || value == "" {
		return 0, false
	}
	mult := int64(1)
	if i := strings.IndexByte("kmg", value[len(value)-1]|0x20); i >= 0 {
		mult, value = int64(1)<<(10*(i+1)), value[:len(value)-1]
	}
	n, err := strconv.ParseInt(value, 10, 32)
	if err != nil || n < 1 {
		return 0, false
	}
	return n * mult, true
}

// maxConnections is db's effective max_connections, read from the my.cnf ConfigMap its status names (what its
// mysqld runs with once it is Available), not derived again from its spec. ok is false when that cannot be
// read; the check is then skipped, and a server that refuses connections fails the step with ConnectionFailed.
func (r *BenchmarkReconciler) maxConnections(ctx context.Context, db *v1alpha1.ZNSDatabase) (int64, bool, error) {
	if db.Status.ConfigMapName == "" {
		return 0, false, nil
	}
	cm := &corev1.ConfigMap{}
	err := uncached(r.APIReader, r.Client).Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.Status.ConfigMapName}, cm)
	if apierrors.IsNotFound(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	n, ok := cnfMaxConnections(cm.Data[v1alpha1.ConfigFileName])
	return n, ok, nil
}

// maxConnectionsOf reads maxConnections for every database, keeping those it could read.
func (r *BenchmarkReconciler) maxConnectionsOf(ctx context.Context, dbs map[string]*v1alpha1.ZNSDatabase) (map[string]int64, error) {
	out := map[string]int64{}
	for name, db := range dbs {
		n, ok, err := r.maxConnections(ctx, db)
		if err != nil {
			return nil, err
		}
		if ok {
			out[name] = n
		}
	}
	return out, nil
}
