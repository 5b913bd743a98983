package resources

import (
	"strings"
	"testing"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// TestImage: the default image follows the flavor and, for percona, the series; the mariadb stand-in has one
// image whatever mysqlVersion says; spec.image wins; a series without a default is an error that names it.
func TestImage(t *testing.T) {
	defaults := map[ImageKey]string{
		{Flavor: v1alpha1.FlavorPercona, Version: v1alpha1.MySQL80}: "p80",
		{Flavor: v1alpha1.FlavorPercona, Version: v1alpha1.MySQL84}: "p84",
		{Flavor: v1alpha1.FlavorMariaDB}:                            "maria",
	}
	db := func(f v1alpha1.Flavor, v v1alpha1.MySQLVersion, image string) *v1alpha1.ZNSDatabase {
		return &v1alpha1.ZNSDatabase{Spec: v1alpha1.ZNSDatabaseSpec{Flavor: f, MySQLVersion: v, Image: image}}
	}
	for _, tc := range []struct {
		db   *v1alpha1.ZNSDatabase
		want string
	}{
		{db(v1alpha1.FlavorPercona, v1alpha1.MySQL80, ""), "p80"},
		{db(v1alpha1.FlavorPercona, "", ""), "p80"}, // never defaulted by the API server: 8.0
		{db(v1alpha1.FlavorPercona, v1alpha1.MySQL84, ""), "p84"},
		{db(v1alpha1.FlavorMariaDB, v1alpha1.MySQL80, ""), "maria"},
		{db(v1alpha1.FlavorPercona, v1alpha1.MySQL84, "mine:1"), "mine:1"},
	} {
		got, err := Image(tc.db, defaults)
		if err != nil || got != tc.want {
			t.Errorf("%s %q image %q: got %q, %v; want %q", tc.db.Spec.Flavor, tc.db.Spec.MySQLVersion, tc.db.Spec.Image, got, err, tc.want)
		}
	}
	delete(defaults, ImageKey{Flavor: v1alpha1.FlavorPercona, Version: v1alpha1.MySQL84})
	if _, err := Image(db(v1alpha1.FlavorPercona, v1alpha1.MySQL84, ""), defaults); err == nil || !strings.Contains(err.Error(), `mysqlVersion "8.4"`) {
		t.Errorf("no 8.4 default: error %v, want one naming mysqlVersion \"8.4\"", err)
	}
}
