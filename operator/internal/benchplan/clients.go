package benchplan

import (
	"slices"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// RecordClient adds where one run's client ran to the target's status: the nodes its clients ran on, the
// database's node, and whether a client shared it. An unknown node (a pod already gone) adds nothing.
func RecordClient(ts *v1alpha1.TargetStatus, placement v1alpha1.ClientPlacement, clientNode, databaseNode string) {
	if ts.Client == nil {
		ts.Client = &v1alpha1.ClientNodes{Placement: placement}
	}
	c := ts.Client
	if clientNode != "" && !slices.Contains(c.Nodes, clientNode) {
		c.Nodes = append(c.Nodes, clientNode)
		slices.Sort(c.Nodes)
	}
	if databaseNode != "" {
		c.DatabaseNode = databaseNode
	}
	if clientNode != "" && clientNode == databaseNode {
		c.SharedNode = true
	}
}
