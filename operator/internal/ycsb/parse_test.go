package ycsb

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func parseFile(t *testing.T, name string) (*Result, error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := NewParser()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		p.Line(sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return p.Result()
}

// finalLines are the capture's lines after "Run finished", by operation name: what the parser must agree with,
// read here with a regular expression of its own rather than the parser's splitting.
func finalLines(t *testing.T, name string) map[string]map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "Run finished, takes ")
	if !ok {
		t.Fatalf("%s has no final summary", name)
	}
	field := regexp.MustCompile(`([A-Za-z0-9.()]+): ([0-9.]+)`)
	out := map[string]map[string]string{}
	for _, line := range strings.Split(after, "\n")[1:] {
		name, rest, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		m := map[string]string{}
		for _, f := range field.FindAllStringSubmatch(rest, -1) {
			m[f[1]] = f[2]
		}
		out[strings.TrimSpace(name)] = m
	}
	return out
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestParseEveryWorkload reads the run of each core workload and checks every figure of every operation type
// against the capture's own text, and the types against the workload's mix.
func TestParseEveryWorkload(t *testing.T) {
	ops := map[string][]string{
		"run-a-4k.txt":  {OpRead, OpUpdate},
		"run-b.txt":     {OpRead, OpUpdate},
		"run-c.txt":     {OpRead},
		"run-d.txt":     {OpInsert, OpRead},
		"run-e.txt":     {OpInsert, OpScan},
		"run-f.txt":     {OpRead, OpReadModifyWrite, OpUpdate},
		"load-a-4k.txt": {OpInsert},
	}
	for file, want := range ops {
		t.Run(file, func(t *testing.T) {
			r, err := parseFile(t, file)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range r.Ops {
				got = append(got, o.Name)
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("operation types %v, want %v", got, want)
			}
			lines := finalLines(t, file)
			check := func(o Op) {
				l := lines[o.Name]
				if o.Count != int64(num(t, l["Count"])) || o.OPS != num(t, l["OPS"]) || o.TakesSec != num(t, l["Takes(s)"]) {
					t.Errorf("%s: count %d ops %v takes %v; the line says %v", o.Name, o.Count, o.OPS, o.TakesSec, l)
				}
				for label, got := range map[string]float64{"Avg(us)": o.AvgMS, "Min(us)": o.MinMS, "Max(us)": o.MaxMS,
					"50th(us)": o.Percentiles[50], "90th(us)": o.Percentiles[90], "95th(us)": o.Percentiles[95],
					"99th(us)": o.Percentiles[99], "99.9th(us)": o.Percentiles[99.9], "99.99th(us)": o.Percentiles[99.99]} {
					if want := num(t, l[label]) / 1000; got != want {
						t.Errorf("%s %s = %v ms, the line says %v us", o.Name, label, got, l[label])
					}
				}
				if o.Count <= 0 || o.OPS <= 0 || o.Percentiles[50] > o.Percentiles[99] || o.MinMS > o.MaxMS {
					t.Errorf("%s: implausible %+v", o.Name, o)
				}
			}
			for _, o := range r.Ops {
				check(o)
				if o.Errors != 0 {
					t.Errorf("%s: %d errors in a clean run", o.Name, o.Errors)
				}
			}
			if r.Total == nil {
				t.Fatal("no TOTAL line read")
			}
			check(*r.Total)
			if !r.Finished || r.TookSec <= 0 {
				t.Errorf("finished %v, took %v s", r.Finished, r.TookSec)
			}
		})
	}
}

// TestTotalIsTheDatabaseOperations pins what go-ycsb's TOTAL counts, which Sum relies on: every successful
// database operation, where a READ_MODIFY_WRITE shows as its READ and its UPDATE.
func TestTotalIsTheDatabaseOperations(t *testing.T) {
	for _, file := range []string{"run-a-4k.txt", "run-e.txt", "run-f.txt"} {
		r, err := parseFile(t, file)
		if err != nil {
			t.Fatal(err)
		}
		typed := sumTypes(r)
		if typed.Count != r.Total.Count {
			t.Errorf("%s: the types other than READ_MODIFY_WRITE add up to %d, TOTAL is %d", file, typed.Count, r.Total.Count)
		}
		s := Sum(r)
		if !s.FromTotal || s.Count != r.Total.Count || s.P99MS != r.Total.Percentiles[99] {
			t.Errorf("%s: Sum %+v does not take TOTAL's figures", file, s)
		}
	}
	f, _ := parseFile(t, "run-f.txt")
	rmw, _ := f.Op(OpReadModifyWrite)
	upd, _ := f.Op(OpUpdate)
	if rmw.Count != upd.Count {
		t.Errorf("workload F: %d read-modify-writes but %d updates; every update of F is a read-modify-write's", rmw.Count, upd.Count)
	}
}

// TestParseErrorLines: a load that MyRocks' bulk load partly refused exits 0, and only the INSERT_ERROR line
// says so.
func TestParseErrorLines(t *testing.T) {
	r, err := parseFile(t, "load-a-ordered-4threads-bulkload.txt")
	if err != nil {
		t.Fatal(err)
	}
	ins, ok := r.Op(OpInsert)
	if !ok || ins.Errors == 0 || ins.Count == 0 {
		t.Fatalf("INSERT %+v: want successes and errors", ins)
	}
	l := finalLines(t, "load-a-ordered-4threads-bulkload.txt")
	if ins.Errors != int64(num(t, l["INSERT_ERROR"]["Count"])) || ins.Count+ins.Errors != 1000 {
		t.Errorf("INSERT %d ok + %d errors, want the capture's %v errors and 1000 in all", ins.Count, ins.Errors, l["INSERT_ERROR"]["Count"])
	}
	if _, ok := r.Op("INSERT_ERROR"); ok {
		t.Error("INSERT_ERROR kept as an operation type of its own")
	}
	// A run that lost an update or two while it was stopped.
	r, err = parseFile(t, "run-a-interrupted.txt")
	if err != nil {
		t.Fatal(err)
	}
	upd, _ := r.Op(OpUpdate)
	if want := int64(num(t, finalLines(t, "run-a-interrupted.txt")["UPDATE_ERROR"]["Count"])); upd.Errors != want {
		t.Errorf("UPDATE errors %d, want %d", upd.Errors, want)
	}
}

// TestParseIntervals: the periodic summaries before "Run finished" are counted, not taken for the result.
func TestParseIntervals(t *testing.T) {
	r, err := parseFile(t, "run-a-interrupted.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join("testdata", "run-a-interrupted.txt"))
	before, _, _ := strings.Cut(string(b), "Run finished")
	if want := strings.Count(before, "\nTOTAL  - "); r.Intervals != want || want < 2 {
		t.Errorf("%d intervals, the capture has %d TOTAL lines before the end", r.Intervals, want)
	}
	read, _ := r.Op(OpRead)
	if want := int64(num(t, finalLines(t, "run-a-interrupted.txt")["READ"]["Count"])); read.Count != want {
		t.Errorf("READ count %d is not the final summary's %d", read.Count, want)
	}
}

// TestParseFailures: every captured failure ends without a final summary (go-ycsb's own errors are on stderr).
func TestParseFailures(t *testing.T) {
	for _, file := range []string{"fail-wrong-password.txt", "fail-no-database.txt", "fail-bad-workload.txt",
		"fail-bad-distribution.txt", "fail-server-down.txt", "fail-server-gone.txt"} {
		r, err := parseFile(t, file)
		if !errors.Is(err, ErrNoSummary) {
			t.Errorf("%s: error %v, want ErrNoSummary", file, err)
		}
		if file == "fail-server-gone.txt" && (r.Intervals == 0 || r.Finished) {
			t.Errorf("%s: %d intervals, finished %v; the capture has interval lines and no end", file, r.Intervals, r.Finished)
		}
	}
}

// TestPropertiesDumpHasNoPassword: go-ycsb prints its properties at start; the password's reference is what it
// shows, never the value (the capture's password is in the runner's environment only).
func TestPropertiesDumpHasNoPassword(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "run-a-4k.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"mysql.password"="${`+PasswordEnv+`}"`) {
		t.Errorf("the properties dump does not show the reference ${%s}", PasswordEnv)
	}
	matches, _ := filepath.Glob(filepath.Join("testdata", "*"))
	for _, m := range matches {
		if strings.HasSuffix(m, "captures.json") || strings.HasSuffix(m, ".go") {
			continue
		}
		b, _ := os.ReadFile(m)
		if strings.Contains(string(b), "ycsb-capture-pw") {
			t.Errorf("%s holds the password", m)
		}
	}
}
