package e2e

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// zonedXFSDB is a database on zoned XFS on one of the zoned node's null_blk devices whose first 8 zones are
// conventional (nullb3, nullb4: XFS's metadata and log there, the realtime section on the sequential zones). Its
// format Job holds CAP_SYS_ADMIN because spec.format.capSysAdmin allows it (mkfs.xfs's BLKBSZSET), and its
// memory is a little smaller than the others': TestZonedFilesystemFlow runs seven databases on the node's 8 GiB.
func zonedXFSDB(ns, name, node, device string, engine v1alpha1.Engine) *v1alpha1.ZNSDatabase {
	db := zonedFSDB(ns, name, node, device, v1alpha1.FilesystemZonedXFS, engine)
	db.Spec.Format.CapSysAdmin = true
	db.Spec.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("768Mi")
	return db
}
