// Package applymemo lets a reconciler skip a server-side apply that would change nothing.
//
// A reconciler that applies its children on every reconcile sends the API server a patch for each, changed or
// not. The server answers a patch that changes nothing without writing, but only after decoding it and merging it
// into the object's managed fields, which is among the costliest things it does, and on the emulated zoned node
// (hack/qemu, TCG) the API server shares two slow vCPUs with everything else. The memo remembers, per
// object, a digest of what was last applied to it and the resourceVersion the server answered; while the desired
// configuration is the same and the object is still at that version (nobody has changed it since, as the
// informer's cache shows), there is nothing to send. An object someone else changed, deleted or that the memo
// does not know (a new operator process) is applied as before.
package applymemo

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
)

// Config is a typed apply configuration of client-go (applyconfigurations/...): it names its object.
type Config interface {
	IsApplyConfiguration()
	GetAPIVersion() *string
	GetKind() *string
	GetName() *string
	GetNamespace() *string
}

// Key names an object.
type Key struct {
	APIVersion, Kind, Namespace, Name string
}

// KeyOf is the object cfg describes.
func KeyOf(cfg Config) Key {
	return Key{APIVersion: deref(cfg.GetAPIVersion()), Kind: deref(cfg.GetKind()), Namespace: deref(cfg.GetNamespace()), Name: deref(cfg.GetName())}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Digest is what a configuration is compared by: the SHA-256 of its JSON, which is what is sent.
type Digest [sha256.Size]byte

// DigestOf is cfg's digest; encoding/json writes struct fields in order and map keys sorted, so equal
// configurations have equal digests.
func DigestOf(cfg Config) (Digest, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return Digest{}, err
	}
	return sha256.Sum256(raw), nil
}

// ResourceVersion is the resourceVersion in cfg, which an apply fills from the server's answer; "" if none.
func ResourceVersion(cfg Config) string {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return ""
	}
	var o struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return ""
	}
	return o.Metadata.ResourceVersion
}

// MaxEntries bounds the memo: the children of deleted objects are never forgotten one by one, so past this many
// the memo starts again empty, which costs one apply per object.
const MaxEntries = 20000

type entry struct {
	digest          Digest
	resourceVersion string
}

// Memo is safe for concurrent use; its zero value is empty and ready.
type Memo struct {
	mu   sync.Mutex
	last map[Key]entry
}

// Unchanged tells whether applying a configuration of digest d to the object k, which the cache shows at
// liveVersion ("" when it has none), would change nothing: the last apply was of the same configuration and
// produced that very version.
func (m *Memo) Unchanged(k Key, d Digest, liveVersion string) bool {
	if liveVersion == "" {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.last[k]
	return ok && e.digest == d && e.resourceVersion == liveVersion
}

// Record notes that a configuration of digest d was applied to k and the server answered with resourceVersion
// version; without a version, what was known of k is forgotten.
func (m *Memo) Record(k Key, d Digest, version string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if version == "" {
		delete(m.last, k)
		return
	}
	if m.last == nil || len(m.last) >= MaxEntries {
		m.last = map[Key]entry{}
	}
	m.last[k] = entry{digest: d, resourceVersion: version}
}

// Forget drops what is known of k: after a failed apply, the object's state is not known.
func (m *Memo) Forget(k Key) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.last, k)
}

// Len is the number of objects remembered.
func (m *Memo) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.last)
}
