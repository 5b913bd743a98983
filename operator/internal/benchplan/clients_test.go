package benchplan

import (
	"slices"
	"testing"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

func TestRecordClient(t *testing.T) {
	ts := &v1alpha1.TargetStatus{Name: "z"}
	RecordClient(ts, v1alpha1.ClientsOnOtherNode, "c2", "db1")
	RecordClient(ts, v1alpha1.ClientsOnOtherNode, "c1", "db1")
	RecordClient(ts, v1alpha1.ClientsOnOtherNode, "c2", "db1")
	c := ts.Client
	if c.Placement != v1alpha1.ClientsOnOtherNode || !slices.Equal(c.Nodes, []string{"c1", "c2"}) || c.DatabaseNode != "db1" || c.SharedNode {
		t.Errorf("three runs away from the database: %+v", c)
	}
	RecordClient(ts, v1alpha1.ClientsOnOtherNode, "db1", "db1")
	if !c.SharedNode {
		t.Errorf("a run on the database's node is not recorded as shared: %+v", c)
	}
	gone := &v1alpha1.TargetStatus{Name: "g"}
	RecordClient(gone, v1alpha1.ClientsOnDatabaseNode, "", "")
	if c := gone.Client; c == nil || len(c.Nodes) != 0 || c.SharedNode {
		t.Errorf("a run whose pod was gone: %+v", c)
	}
}
