package controller_test

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// TestMySQLVersionAdmission: the API server itself refuses what Percona Server 8.4 cannot do (ZenFS, which
// Percona removed in 8.1.0-1) and what the mariadb stand-in cannot be (8.4), says why, and keeps the series
// fixed once the database exists.
func TestMySQLVersionAdmission(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	zenfsWhy := []string{"ZenFS needs mysqlVersion 8.0", "8.1.0-1", "2023-11-27", "btrfs, f2fs or xfs"}

	// filesystem unset: a zoned device defaults to zenfs, so this is ZenFS with 8.4.
	defaultFS := zonedDB(ns, "v84-default-fs", "v84-node", "nullb0")
	defaultFS.Spec.MySQLVersion = v1alpha1.MySQL84
	explicit := zonedDB(ns, "v84-zenfs", "v84-node", "nullb1")
	explicit.Spec.MySQLVersion = v1alpha1.MySQL84
	explicit.Spec.Storage.ZonedDevice.Filesystem = v1alpha1.FilesystemZenFS
	claim := zonedDB(ns, "v84-claim", "", "")
	claim.Spec.MySQLVersion = v1alpha1.MySQL84
	claim.Spec.Storage = v1alpha1.StorageSpec{ZonedClaim: &v1alpha1.ZonedClaimSource{ClaimName: "zns", DeviceName: "nvme0n2"}}
	maria84 := volumeDB(ns, "v84-mariadb", v1alpha1.EngineRocksDB, v1alpha1.FlavorMariaDB)
	maria84.Spec.MySQLVersion = v1alpha1.MySQL84
	unknown := volumeDB(ns, "v90", v1alpha1.EngineInnoDB, v1alpha1.FlavorPercona)
	unknown.Spec.MySQLVersion = "9.0"
	for _, tc := range []struct {
		db   *v1alpha1.ZNSDatabase
		want []string
	}{
		{defaultFS, zenfsWhy},
		{explicit, zenfsWhy},
		{claim, zenfsWhy},
		{maria84, []string{"mysqlVersion 8.4 needs flavor percona", "MariaDB 10.11"}},
		{unknown, []string{"spec.mysqlVersion", `"8.0", "8.4"`}},
	} {
		err := k8s.Create(ctx, tc.db)
		if err == nil || !apierrors.IsInvalid(err) {
			t.Errorf("%s: got %v, want an Invalid error", tc.db.Name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", tc.db.Name, err, w)
			}
		}
	}

	// What 8.4 can do is admitted: zoned btrfs and f2fs, and conventional volumes, with either engine.
	var admitted []*v1alpha1.ZNSDatabase
	for _, fs := range []v1alpha1.ZonedFilesystem{v1alpha1.FilesystemBtrfs, v1alpha1.FilesystemF2FS} {
		db := zonedDB(ns, "v84-"+string(fs), "v84-node", "nullb"+string(fs[0]))
		db.Spec.MySQLVersion, db.Spec.Engine = v1alpha1.MySQL84, v1alpha1.EngineInnoDB
		db.Spec.Storage.ZonedDevice.Filesystem = fs
		admitted = append(admitted, db)
	}
	vol := volumeDB(ns, "v84-volume", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona)
	vol.Spec.MySQLVersion = v1alpha1.MySQL84
	admitted = append(admitted, vol)
	for _, db := range admitted {
		if err := k8s.Create(ctx, db); err != nil {
			t.Errorf("%s refused: %v", db.Name, err)
		}
	}

	// Unset means 8.0, stored as such (an operator default that changed later must not move a database to 8.4),
	// for the mariadb stand-in too, which takes 8.0.
	for _, f := range []v1alpha1.Flavor{v1alpha1.FlavorPercona, v1alpha1.FlavorMariaDB} {
		db := volumeDB(ns, "v-default-"+string(f), v1alpha1.EngineInnoDB, f)
		create(t, db)
		if got := get(t, db).Spec.MySQLVersion; got != v1alpha1.MySQL80 {
			t.Errorf("%s: stored mysqlVersion %q, want the default 8.0", f, got)
		}
	}

	// Immutable: 8.0 to 8.4 would upgrade the datadir one way at the next start.
	var updateErr error
	eventually(t, "an update that is not a conflict", func() error {
		cur := get(t, &v1alpha1.ZNSDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "v-default-percona"}})
		cur.Spec.MySQLVersion = v1alpha1.MySQL84
		updateErr = k8s.Update(ctx, cur)
		if apierrors.IsConflict(updateErr) {
			return updateErr
		}
		return nil
	})
	if updateErr == nil || !strings.Contains(updateErr.Error(), "mysqlVersion cannot change") {
		t.Errorf("changing mysqlVersion: got %v, want 'mysqlVersion cannot change'", updateErr)
	}
}

// TestMySQL84Database: an 8.4 database runs the operator's 8.4 image with the 8.4 my.cnf (no option 8.4 removed,
// TLS off through tls_version), and an override 8.4 removed is refused with InvalidConfig before any pod exists.
func TestMySQL84Database(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := volumeDB(ns, "v84", v1alpha1.EngineInnoDB, v1alpha1.FlavorPercona)
	db.Spec.MySQLVersion = v1alpha1.MySQL84
	create(t, db)
	sts := &appsv1.StatefulSet{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, sts)
	if img := sts.Spec.Template.Spec.Containers[0].Image; img != percona84TestImage {
		t.Errorf("image %q, want the operator's 8.4 default %q", img, percona84TestImage)
	}
	db = get(t, db)
	cm := &corev1.ConfigMap{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.Status.ConfigMapName}, cm)
	cnf := cm.Data[v1alpha1.ConfigFileName]
	for _, want := range []string{"mysql=8.4", "\ntls_version=''\n", "\nmysql_native_password=ON\n"} {
		if !strings.Contains(cnf, want) {
			t.Errorf("8.4 my.cnf lacks %q:\n%s", want, cnf)
		}
	}
	if strings.Contains(cnf, "\nssl=") {
		t.Errorf("8.4 my.cnf sets ssl, which 8.4 removed:\n%s", cnf)
	}

	bad := volumeDB(ns, "v84-expire", v1alpha1.EngineInnoDB, v1alpha1.FlavorPercona)
	bad.Spec.MySQLVersion = v1alpha1.MySQL84
	bad.Spec.Config = map[string]string{"expire_logs_days": "7"}
	create(t, bad)
	cond := waitCondition(t, bad, v1alpha1.ConditionConfigReady, metav1.ConditionFalse, "InvalidConfig")
	for _, want := range []string{"expire_logs_days", "MySQL 8.4", "binlog_expire_logs_seconds"} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("InvalidConfig message %q does not say %q", cond.Message, want)
		}
	}
	consistently(t, "no StatefulSet for a config 8.4 would refuse", time.Second, func() error {
		return absent(client.ObjectKey{Namespace: ns, Name: bad.StatefulSetName()}, &appsv1.StatefulSet{})
	})
}
