package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ClientPlacement says which nodes a Benchmark's clients (its sysbench or YCSB Jobs) run on.
// +kubebuilder:validation:Enum=DatabaseNode;OtherNode;Selector
type ClientPlacement string

const (
	// ClientsOnDatabaseNode runs each target's clients on its database's node: the device's counters are read
	// in the client's own pod, and the clients' threads compete with mysqld for that node's CPUs.
	ClientsOnDatabaseNode ClientPlacement = "DatabaseNode"
	// ClientsOnOtherNode runs each target's clients on any node but its database's.
	ClientsOnOtherNode ClientPlacement = "OtherNode"
	// ClientsBySelector runs the clients on nodes matching spec.clients.nodeSelector.
	ClientsBySelector ClientPlacement = "Selector"
)

// BenchmarkClients places a Benchmark's clients. Away from the database's node, a client cannot see the
// database's device: an observer pod on the device's node then reads the device's counters (and the drive's,
// with spec.drive) around each phase, at the client's request.
// +kubebuilder:validation:XValidation:rule="(has(self.placement) && self.placement == 'Selector') == has(self.nodeSelector)",message="spec.clients.nodeSelector goes with placement Selector, and only with it"
type BenchmarkClients struct {
	// Placement is DatabaseNode (the default: each target's clients beside its mysqld), OtherNode (any node but
	// the database's, so that client threads do not take mysqld's CPUs) or Selector (nodes matching nodeSelector,
	// say a pool of client machines).
	// +kubebuilder:default=DatabaseNode
	// +optional
	Placement ClientPlacement `json:"placement,omitempty"`
	// NodeSelector picks the clients' nodes by their labels, with placement Selector.
	// +optional
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`
}

// ClientPlacement is where the Benchmark's clients run: spec.clients.placement, DatabaseNode when unset.
func (s *BenchmarkSpec) ClientPlacement() ClientPlacement {
	if s.Clients == nil || s.Clients.Placement == "" {
		return ClientsOnDatabaseNode
	}
	return s.Clients.Placement
}

// ClientsAway reports whether the clients may run away from their databases' nodes, so that an observer on the
// device's node reads its counters for them.
func (s *BenchmarkSpec) ClientsAway() bool { return s.ClientPlacement() != ClientsOnDatabaseNode }

// ClientNodes is where one target's clients ran.
type ClientNodes struct {
	// Placement is spec.clients.placement, copied so the status reads alone.
	Placement ClientPlacement `json:"placement"`
	// Nodes are the nodes the target's run clients ran on, sorted.
	// +optional
	Nodes []string `json:"nodes,omitempty"`
	// DatabaseNode is the node of the target's mysqld pod during its runs.
	// +optional
	DatabaseNode string `json:"databaseNode,omitempty"`
	// SharedNode is true when a run's client ran on the database's node: its threads competed with mysqld for
	// the node's CPUs, which lowers the database's figures on a busy node.
	// +optional
	SharedNode bool `json:"sharedNode,omitempty"`
}
