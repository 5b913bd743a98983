package ftl

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestSnapshotGoesOnAsTheModel: a model read back from its snapshot is the model, field by field, and the
// same writes and discards afterwards leave both in the same state with the same counters.
func TestSnapshotGoesOnAsTheModel(t *testing.T) {
	c := Config{LogicalBytes: 64 * mib, OverProvisioning: 0.07, PagesPerBlock: 64}
	m := newModel(t, c)
	p, err := m.Precondition(PreconditionConfig{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.RoundWA) == 0 || m.Counters().GCPages == 0 {
		t.Fatalf("preconditioning did no garbage collection (%d rounds, %+v): the test would compare empty models", len(p.RoundWA), m.Counters())
	}
	var buf bytes.Buffer
	if err := m.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSnapshot(bytes.NewReader(buf.Bytes()), c)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, m) {
		t.Fatal("the model read back differs from the one written")
	}
	for _, x := range []*Model{m, back} {
		src := rand.NewPCG(1, 2)
		x.WriteRandomPages(20_000, src)
		if err := x.Discard(3*mib, 2*mib); err != nil {
			t.Fatal(err)
		}
		x.WriteRandomPages(20_000, src)
		checkInvariants(t, x)
	}
	if back.Counters() != m.Counters() || !reflect.DeepEqual(back, m) {
		t.Errorf("after the same writes: read back %+v, written %+v", back.Counters(), m.Counters())
	}
}

// TestSnapshotRefused: a damaged, cut or foreign snapshot, or one of another geometry, gives no model.
func TestSnapshotRefused(t *testing.T) {
	c := Config{LogicalBytes: 16 * mib, OverProvisioning: 0.28, PagesPerBlock: 64}
	m := newModel(t, c)
	m.WriteSequentialPass()
	var buf bytes.Buffer
	if err := m.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 1
	cases := map[string][]byte{
		"empty":     nil,
		"damaged":   flipped,
		"cut short": good[:len(good)-100],
		"foreign":   append([]byte("not a snapshot"), good[14:]...),
		"trailing":  append(bytes.Clone(good), 0),
	}
	for name, b := range cases {
		if got, err := ReadSnapshot(bytes.NewReader(b), c); err == nil || got != nil {
			t.Errorf("%s: read a model (%v)", name, err)
		}
	}
	other := c
	other.OverProvisioning = 0.07
	if _, err := ReadSnapshot(bytes.NewReader(good), other); !errors.Is(err, ErrSnapshotMismatch) {
		t.Errorf("a snapshot read as a model of another over-provisioning: %v, want ErrSnapshotMismatch", err)
	}
}
