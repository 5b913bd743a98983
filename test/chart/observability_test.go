package chart

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

var monitoring = valuesCase{name: "monitoring", file: "values-monitoring.yaml"}

// TestDashboardConfigMap: the dashboard ships as files/dashboard.json, unchanged, in a ConfigMap with the label
// Grafana's sidecar watches (operator/internal/opmetrics checks the series it queries).
func TestDashboardConfigMap(t *testing.T) {
	objs := render(t, monitoring, "monitoring")
	cm := find(objs, "ConfigMap", "zns-mysql-dashboard")
	if cm == nil {
		t.Fatalf("no dashboard ConfigMap among %v", kindNames(objs))
	}
	if cm.GetLabels()["grafana_dashboard"] != "1" {
		t.Errorf("labels %v lack grafana_dashboard: \"1\" (what Grafana's sidecar watches)", cm.GetLabels())
	}
	got, _, _ := unstructured.NestedString(cm.Object, "data", "zns-mysql.json")
	want, err := os.ReadFile(filepath.Join(chartDir, "files", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(got) != strings.TrimSpace(string(want)) {
		t.Error("the ConfigMap's dashboard differs from files/dashboard.json")
	}
	var dash map[string]any
	if err := json.Unmarshal([]byte(got), &dash); err != nil || dash["uid"] != "zns-mysql" {
		t.Errorf("the dashboard does not parse (%v) or has uid %v", err, dash["uid"])
	}
}

// TestMonitorsSelectWhatTheOperatorMakes: the PodMonitor selects the labels the operator puts on database pods and
// scrapes the sidecars' port names; the ServiceMonitor selects the metrics Service and scrapes it as it is served.
func TestMonitorsSelectWhatTheOperatorMakes(t *testing.T) {
	objs := render(t, monitoring, "monitoring")
	pm := find(objs, "PodMonitor", "zns-mysql-databases")
	sm := find(objs, "ServiceMonitor", "zns-mysql")
	svc := find(objs, "Service", "zns-mysql-metrics")
	if pm == nil || sm == nil || svc == nil {
		t.Fatalf("objects %v", kindNames(objs))
	}
	db := &v1alpha1.ZNSDatabase{}
	db.Name = "tenant1"
	podLabels := db.Labels("database") // resources.ComponentDatabase
	sel, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
	if len(sel) == 0 {
		t.Fatal("the PodMonitor selects nothing")
	}
	for k, v := range sel {
		if podLabels[k] != v {
			t.Errorf("the PodMonitor selects %s=%s; database pods carry %v", k, v, podLabels)
		}
	}
	endpoints, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	var ports []string
	for _, e := range endpoints {
		ports = append(ports, e.(map[string]any)["port"].(string))
	}
	if strings.Join(ports, ",") != v1alpha1.MySQLExporterPortName+","+v1alpha1.ZonedMetricsPortName {
		t.Errorf("PodMonitor ports %v", ports)
	}
	if ns, _, _ := unstructured.NestedStringSlice(pm.Object, "spec", "namespaceSelector", "matchNames"); strings.Join(ns, ",") != "zns-demo" {
		t.Errorf("namespaceSelector %v", ns)
	}

	ssel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	for k, v := range ssel {
		if svc.GetLabels()[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%s; the Service has %v", k, v, svc.GetLabels())
		}
	}
	if sm.GetLabels()["release"] != "kube-prometheus-stack" {
		t.Errorf("extra labels missing: %v", sm.GetLabels())
	}
	eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(eps) != 1 {
		t.Fatalf("endpoints %v", eps)
	}
	ep := eps[0].(map[string]any)
	if ep["scheme"] != "https" || ep["port"] != "metrics" || ep["bearerTokenFile"] == nil {
		t.Errorf("the ServiceMonitor does not scrape the secure endpoint as it is served: %v", ep)
	}
}
