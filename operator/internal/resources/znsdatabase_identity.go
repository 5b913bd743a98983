package resources

import (
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// A zoned database's pod has its own service account, allowed one thing: to read and patch its own pod, so
// that its readiness helper can publish the ZenFS space it measures (annotation
// v1alpha1.AnnotationZenFSSpace). The kubelet reports nothing a running container measures, and running
// zenfs df from the operator would need another pod on the device. The Role names the pod: no other pod of
// the namespace can be touched.

// ServiceAccount is the zoned database pod's identity.
func ServiceAccount(db *v1alpha1.ZNSDatabase) *corev1ac.ServiceAccountApplyConfiguration {
	return corev1ac.ServiceAccount(db.ServiceAccountName(), db.Namespace).
		WithLabels(db.Labels(ComponentDatabase)).
		WithOwnerReferences(OwnerReference(db))
}

// PodRole lets the service account get and patch the database's own pod, by name.
func PodRole(db *v1alpha1.ZNSDatabase) *rbacv1ac.RoleApplyConfiguration {
	return rbacv1ac.Role(db.ServiceAccountName(), db.Namespace).
		WithLabels(db.Labels(ComponentDatabase)).
		WithOwnerReferences(OwnerReference(db)).
		WithRules(rbacv1ac.PolicyRule().
			WithAPIGroups("").
			WithResources("pods").
			WithResourceNames(db.PodName()).
			WithVerbs("get", "patch"))
}

// PodRoleBinding grants PodRole to ServiceAccount.
func PodRoleBinding(db *v1alpha1.ZNSDatabase) *rbacv1ac.RoleBindingApplyConfiguration {
	return rbacv1ac.RoleBinding(db.ServiceAccountName(), db.Namespace).
		WithLabels(db.Labels(ComponentDatabase)).
		WithOwnerReferences(OwnerReference(db)).
		WithRoleRef(rbacv1ac.RoleRef().
			WithAPIGroup("rbac.authorization.k8s.io").
			WithKind("Role").
			WithName(db.ServiceAccountName())).
		WithSubjects(rbacv1ac.Subject().
			WithKind("ServiceAccount").
			WithName(db.ServiceAccountName()).
			WithNamespace(db.Namespace))
}
