// Package samples embeds the manifests of config/samples, the project's one description of each scenario: the
// top directory is a lab's comparison (`kubectl apply -k config/samples`), which `make demo`'s kind part and the
// conventional e2e flow also run; zoned-node/ is the QEMU zoned node's (hack/qemu/zoned-node.sh), which the
// demo's zoned part and stage 8's flow run; fleet/ places databases by requirements on a cluster's inventory. Load reads one, Select and Place adapt it to a run.
package samples

import "embed"

// FS holds every manifest: "." is the lab's scenario, "zoned-node" the zoned node's, "fleet" placement by
// requirements.
//
//go:embed *.yaml zoned-node/*.yaml fleet/*.yaml
var FS embed.FS

// The scenarios' directories in FS.
const (
	Lab       = "."
	ZonedNode = "zoned-node"
	Fleet     = "fleet"
)
