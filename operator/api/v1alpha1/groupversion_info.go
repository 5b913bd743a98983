// Package v1alpha1 holds the zns-mysql.dev/v1alpha1 API: ZNSDatabase (one MySQL server bound to a
// zoned block device or a conventional volume) and, later, Benchmark.
//
// +kubebuilder:object:generate=true
// +groupName=zns-mysql.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "zns-mysql.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this package with a runtime.Scheme.
	//lint:ignore SA1019 kubebuilder's layout: the API package's one import beyond apimachinery
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
