package controller_test

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// TestHostile09ShortPassword: a root password too short to redact safely is refused with a condition and an
// Event that say why, before anything uses it; a long enough one is taken without touching the resource.
func TestHostile09ShortPassword(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "short-root"}, StringData: map[string]string{"password": "x"}}
	create(t, secret)
	db := volumeDB(ns, "shortpw", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona)
	db.Spec.RootPasswordSecretName = "short-root"
	create(t, db)
	cond := waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, "PasswordTooShort")
	if !strings.Contains(cond.Message, "has 1 character(s), at least 8 are required") || !strings.Contains(cond.Message, "remove spec.rootPasswordSecretName") {
		t.Errorf("message %q", cond.Message)
	}
	waitEvent(t, db, "PasswordTooShort")
	consistently(t, "no StatefulSet with a password that cannot be redacted", time.Second, func() error {
		return absent(client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{})
	})
	secret.StringData = map[string]string{"password": "long-enough-now"}
	if err := k8s.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{})
}
