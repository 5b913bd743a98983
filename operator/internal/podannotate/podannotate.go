// Package podannotate sets one annotation on the pod the process runs in,
// through the Kubernetes API with the pod's own service account. The
// database-side helper uses it to hand the operator what only the pod can
// measure (ZenFS space), which the kubelet would otherwise never report
// for a running container.
//
// It is a plain HTTPS client on purpose: one merge patch does not justify
// client-go in the helper binary that ships inside the database image.
package podannotate

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ServiceAccountDir is where the kubelet mounts the pod's service account.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// PodNameEnv and PodNamespaceEnv carry the pod's identity (the downward API).
const (
	PodNameEnv      = "POD_NAME"
	PodNamespaceEnv = "POD_NAMESPACE"
)

// Client patches one pod's annotations.
type Client struct {
	// BaseURL is the API server, e.g. https://10.96.0.1:443.
	BaseURL   string
	Namespace string
	Pod       string
	// TokenFile is read at every call: projected tokens are rotated.
	TokenFile string
	HTTP      *http.Client
}

// InCluster builds a client from what the kubelet gives a pod: the API
// server's address in KUBERNETES_SERVICE_HOST/PORT, the service account's
// token and CA under ServiceAccountDir, and the pod's name and namespace in
// the environment (the namespace falls back to the service account's).
func InCluster(getenv func(string) string, saDir string) (*Client, error) {
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("not in a pod: KUBERNETES_SERVICE_HOST/PORT are unset")
	}
	pod := getenv(PodNameEnv)
	if pod == "" {
		return nil, fmt.Errorf("%s is unset: the pod spec must pass metadata.name", PodNameEnv)
	}
	ca, err := os.ReadFile(filepath.Join(saDir, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("no service account in the pod (automountServiceAccountToken?): %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s holds no certificate", filepath.Join(saDir, "ca.crt"))
	}
	ns := getenv(PodNamespaceEnv)
	if ns == "" {
		b, err := os.ReadFile(filepath.Join(saDir, "namespace"))
		if err != nil {
			return nil, fmt.Errorf("the pod's namespace: %s is unset and %w", PodNamespaceEnv, err)
		}
		ns = strings.TrimSpace(string(b))
	}
	return &Client{
		BaseURL:   "https://" + net.JoinHostPort(host, port),
		Namespace: ns,
		Pod:       pod,
		TokenFile: filepath.Join(saDir, "token"),
		HTTP: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		}},
	}, nil
}

// Annotate sets annotation key to value on the pod (a JSON merge patch, so
// the pod's other annotations stay).
func (c *Client) Annotate(ctx context.Context, key, value string) error {
	token, err := os.ReadFile(c.TokenFile)
	if err != nil {
		return fmt.Errorf("reading the service account token: %w", err)
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: value}}})
	if err != nil {
		return err
	}
	u := fmt.Sprintf("%s/api/v1/namespaces/%s/pods/%s", strings.TrimSuffix(c.BaseURL, "/"),
		url.PathEscape(c.Namespace), url.PathEscape(c.Pod))
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/merge-patch+json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("patching pod %s/%s: %w", c.Namespace, c.Pod, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		return fmt.Errorf("patching pod %s/%s: %s: %s", c.Namespace, c.Pod, resp.Status, apiMessage(msg))
	}
	return nil
}

// apiMessage is the message of a Kubernetes Status body, else the body.
func apiMessage(b []byte) string {
	var st struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &st) == nil && st.Message != "" {
		return st.Message
	}
	return strings.TrimSpace(string(b))
}
