package debugbundle

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// ErrSecret is what every attempt to read a Secret gets. The bundle is meant to be attached to public bug
// reports: the tool must not be able to put a password in it even by mistake, so it refuses to fetch one at all,
// rather than fetching and filtering.
var ErrSecret = errors.New("kubectl zns debug never reads Secrets")

// NoSecrets wraps a client.Reader so that any Get or List of Secrets, typed, unstructured or metadata-only,
// fails with ErrSecret before a request is made. scheme resolves typed objects to their kind.
func NoSecrets(r client.Reader, scheme *runtime.Scheme) client.Reader {
	return noSecrets{r: r, scheme: scheme}
}

type noSecrets struct {
	r      client.Reader
	scheme *runtime.Scheme
}

func (n noSecrets) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := n.refuse(obj); err != nil {
		return err
	}
	return n.r.Get(ctx, key, obj, opts...)
}

func (n noSecrets) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := n.refuse(list); err != nil {
		return err
	}
	return n.r.List(ctx, list, opts...)
}

func (n noSecrets) refuse(obj runtime.Object) error {
	gvk, err := apiutil.GVKForObject(obj, n.scheme)
	if err != nil {
		// An object the scheme does not know cannot be read through a typed client anyway; refusing it keeps
		// the guard from depending on what the caller registered.
		return fmt.Errorf("kubectl zns debug: reading %T: %w", obj, err)
	}
	if gvk.Group == "" && (gvk.Kind == "Secret" || gvk.Kind == "SecretList") {
		return ErrSecret
	}
	return nil
}

// RefuseSecrets wraps the transport of every client the plugin makes (objects, logs, events, discovery, exec):
// a request for the core group's secrets resource fails with ErrSecret and never reaches the API server. It is
// the second guard, for clients (client-go's typed clientset) that NoSecrets does not cover.
func RefuseSecrets(rt http.RoundTripper) http.RoundTripper {
	return refuseSecrets{rt: rt}
}

type refuseSecrets struct{ rt http.RoundTripper }

func (r refuseSecrets) RoundTrip(req *http.Request) (*http.Response, error) {
	if IsSecretsPath(req.URL.Path) {
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, ErrSecret)
	}
	return r.rt.RoundTrip(req)
}

// IsSecretsPath reports whether an API path addresses core Secrets: /api/v1/secrets,
// /api/v1/namespaces/NS/secrets[/NAME[/...]], and their legacy /watch/ forms. A namespace named "secrets" is not
// a Secret (/api/v1/namespaces/secrets/pods), nor is a resource of another group called secrets.
func IsSecretsPath(p string) bool {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	// Paths behind a proxy prefix (rest.Config.Host with a path) end in the API path: find "api/v1" in them.
	for i := 0; i+1 < len(segs); i++ {
		if segs[i] == "api" && segs[i+1] == "v1" {
			return coreResource(segs[i+2:]) == "secrets"
		}
	}
	return false
}

// coreResource is the resource named by the path segments after /api/v1.
func coreResource(segs []string) string {
	if len(segs) > 0 && segs[0] == "watch" {
		segs = segs[1:]
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		return segs[2]
	}
	if len(segs) == 0 {
		return ""
	}
	return segs[0]
}
