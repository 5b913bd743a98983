package sysbench

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func parsePrepareFile(t *testing.T, name string) *Prepare {
	t.Helper()
	p, err := ParsePrepare(strings.NewReader(readTestdata(t, name)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p
}

func TestParsePrepare(t *testing.T) {
	for _, tc := range []struct {
		file      string
		tables    int
		size      int64
		secondary []string
	}{
		{"prepare-rocksdb.txt", 2, 2000, nil}, // 2 threads: creates, then inserts
		{"prepare-innodb.txt", 2, 2000, nil},
		{"prepare-innodb-interleaved.txt", 2, 2000, nil}, // two messages on one line
		{"prepare-rocksdb-drop.txt", 2, 100, nil},        // 1 thread: create, insert, create, insert
		{"prepare-rocksdb-tiny.txt", 1, 10, nil},
		{"prepare-rocksdb-secondary.txt", 2, 100, []string{"sbtest1", "sbtest2"}},
	} {
		p := parsePrepareFile(t, tc.file)
		if p.Version != "1.0.20" {
			t.Errorf("%s: version %q", tc.file, p.Version)
		}
		if err := p.Check(tc.tables, tc.size); err != nil {
			t.Errorf("%s: Check(%d, %d): %v", tc.file, tc.tables, tc.size, err)
		}
		if len(p.Created) != tc.tables {
			t.Errorf("%s: created %q", tc.file, p.Created)
		}
		if d := cmp.Diff(tc.secondary, p.SecondaryIndexes); d != "" {
			t.Errorf("%s: secondary indexes (-want +got):\n%s", tc.file, d)
		}
		// Asked for more tables or rows than were prepared: caught.
		if err := p.Check(tc.tables+1, tc.size); err == nil || !strings.Contains(err.Error(), "not created") {
			t.Errorf("%s: Check with one table more: %v", tc.file, err)
		}
		if err := p.Check(tc.tables, tc.size*2); err == nil || !strings.Contains(err.Error(), "records announced") {
			t.Errorf("%s: Check with double size: %v", tc.file, err)
		}
		if tc.tables > 1 {
			if err := p.Check(tc.tables-1, tc.size); err == nil || !strings.Contains(err.Error(), "unexpected table sbtest") {
				t.Errorf("%s: Check with one table fewer: %v", tc.file, err)
			}
		}
	}
}

func TestParsePrepareFatal(t *testing.T) {
	// Preparing into existing tables: FATAL lines, and sysbench 1.0.20 exits
	// 0 all the same (captures.json records the exit status).
	p := parsePrepareFile(t, "fatal-prepare-exists.txt")
	if len(p.Created) != 2 || len(p.Inserted) != 0 {
		t.Errorf("created %q inserted %v", p.Created, p.Inserted)
	}
	err := p.Check(2, 2000)
	var fe *FatalError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "Table 'sbtest1' already exists") {
		t.Errorf("Check: %v, want FATAL about the existing table", err)
	}
}
