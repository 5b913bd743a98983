package controller_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
)

// publishFSURI plays the readiness helper: it sets its rocksdb_fs_uri verdict on the database's pod.
func publishFSURI(t *testing.T, db *v1alpha1.ZNSDatabase, want string, got *string) {
	t.Helper()
	c := dbinit.FSURICheck{At: time.Now().UTC().Truncate(time.Second), Want: want, Got: got}
	c.Verdict, c.Message = dbinit.JudgeFSURI(want, got)
	v, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "annotate the pod", func() error {
		pod := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.PodName()}, pod); err != nil {
			return err
		}
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[dbinit.FSURIAnnotation] = v
		return k8s.Update(ctx, pod)
	})
}

// A ZenFS database whose running mysqld keeps MyRocks off the device (its MyRocks lacks ZenFS and ignored
// loose-rocksdb-fs-uri) is not Available, with the reason in the condition and a Warning Event; once the
// server runs on the device's URI it is Available again.
func TestNotOnZenFSIsNotAvailable(t *testing.T) {
	requireEnv(t)
	db, sts := zonedUpToPod(t, "fsuri")
	mysqlPod(t, db, sts)
	markReady(t, db)
	waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionTrue, "MySQLReady")

	want := dbinit.ZenFSURI("nullb0")
	publishFSURI(t, db, want, nil) // no rocksdb_fs_uri at all, as MariaDB's MyRocks answers
	c := waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, v1alpha1.ReasonNotOnZenFS)
	for _, m := range []string{db.PodName(), "no rocksdb_fs_uri", "datadir volume"} {
		if !strings.Contains(c.Message, m) {
			t.Errorf("condition message lacks %q: %s", m, c.Message)
		}
	}
	if msg := waitEvent(t, db, "NotOnZenFS"); !strings.Contains(msg, "loose-rocksdb-fs-uri="+want) {
		t.Errorf("event %q", msg)
	}

	// A verdict about another URI (not this configuration's) changes nothing; the server on the device's URI does.
	other := "zenfs://dev:nullb1"
	publishFSURI(t, db, other, nil)
	waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionTrue, "MySQLReady")
	publishFSURI(t, db, want, &other)
	waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, v1alpha1.ReasonNotOnZenFS)
	publishFSURI(t, db, want, &want)
	waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionTrue, "MySQLReady")
}
