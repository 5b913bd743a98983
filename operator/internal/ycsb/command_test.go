package ycsb

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func studySpec() Spec {
	return Spec{Workload: "a", RecordCount: 1000, FieldCount: 1, FieldLength: 4096, Distribution: "uniform",
		Threads: 4, Host: "db.ns.svc", Port: 3306, User: "root", DB: "ycsb", Password: true}
}

// props returns the -p values of args, by key.
func props(t *testing.T, args []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for i := 0; i < len(args); i++ {
		if args[i] != "-p" {
			continue
		}
		k, v, ok := strings.Cut(args[i+1], "=")
		if !ok {
			t.Fatalf("-p %q has no '='", args[i+1])
		}
		if _, dup := m[k]; dup {
			t.Fatalf("property %s given twice in %q", k, args)
		}
		m[k] = v
		i++
	}
	return m
}

func TestArgsEveryWorkloadAndDistribution(t *testing.T) {
	for _, w := range Workloads {
		for _, d := range Distributions {
			s := studySpec()
			s.Workload, s.Distribution = w, d
			for _, phase := range []Phase{PhaseLoad, PhaseRun} {
				args, err := s.Args(phase)
				if err != nil {
					t.Fatalf("%s %s %s: %v", w, d, phase, err)
				}
				if args[0] != string(phase) || args[1] != "mysql" {
					t.Errorf("%s: args start %q, want %s mysql", w, args[:2], phase)
				}
				p := props(t, args)
				if p["requestdistribution"] != d || p["recordcount"] != "1000" || p["fieldcount"] != "1" || p["fieldlength"] != "4096" {
					t.Errorf("%s %s: properties %v", w, d, p)
				}
				var sum float64
				for _, k := range []string{"readproportion", "updateproportion", "scanproportion", "insertproportion", "readmodifywriteproportion"} {
					var f float64
					if v, ok := p[k]; ok {
						if _, err := fmt.Sscan(v, &f); err != nil {
							t.Fatalf("%s=%q: %v", k, v, err)
						}
					}
					sum += f
				}
				if sum < 0.999 || sum > 1.001 {
					t.Errorf("workload %s: proportions add up to %v, want 1", w, sum)
				}
				if phase == PhaseLoad && p["dropdata"] != "true" {
					t.Errorf("load of %s does not drop an earlier table: %v", w, p)
				}
				if phase == PhaseRun && p["operationcount"] == "" {
					t.Errorf("run of %s has no operationcount (go-ycsb exits when it is below the threads)", w)
				}
			}
		}
	}
}

func TestArgsCarryNoPassword(t *testing.T) {
	s := studySpec()
	args, err := s.Args(PhaseRun)
	if err != nil {
		t.Fatal(err)
	}
	p := props(t, args)
	if p["mysql.password"] != "${"+PasswordEnv+"}" {
		t.Errorf("mysql.password = %q, want a reference to $%s", p["mysql.password"], PasswordEnv)
	}
	if p["debug.pprof"] != "127.0.0.1:0" {
		t.Errorf("debug.pprof = %q: go-ycsb would listen on :6060 on every interface", p["debug.pprof"])
	}
	s.Password = false
	args, _ = s.Args(PhaseRun)
	if _, ok := props(t, args)["mysql.password"]; ok {
		t.Errorf("no password, yet mysql.password is set: %q", args)
	}
}

func TestArgsThreadsTargetInterval(t *testing.T) {
	s := studySpec()
	s.TargetOpsPerSec, s.ReportIntervalSec, s.OperationCount = 500, 5, 20000
	args, err := s.Args(PhaseRun)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range [][]string{{"--threads", "4"}, {"--target", "500"}, {"--interval", "5"}} {
		i := slices.Index(args, want[0])
		if i < 0 || args[i+1] != want[1] {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if props(t, args)["operationcount"] != "20000" {
		t.Errorf("operationcount: %v", props(t, args))
	}
	s.TargetOpsPerSec, s.ReportIntervalSec = 0, 0
	args, _ = s.Args(PhaseRun)
	if slices.Contains(args, "--target") || slices.Contains(args, "--interval") {
		t.Errorf("unthrottled run without interval: %q", args)
	}
}

func TestValidateRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		want string
	}{
		{"unknown workload", func(s *Spec) { s.Workload = "g" }, `unknown YCSB workload "g"`},
		{"upper-case workload", func(s *Spec) { s.Workload = "A" }, `unknown YCSB workload "A"`},
		{"unknown distribution", func(s *Spec) { s.Distribution = "hotspot" }, `unknown request distribution "hotspot"`},
		{"record of 0 bytes", func(s *Spec) { s.FieldLength = 0 }, "a record of 0 bytes"},
		{"no fields", func(s *Spec) { s.FieldCount = 0 }, "field count must be 1-1000"},
		{"one field above the row limit", func(s *Spec) { s.FieldLength = MaxFieldLength(1) + 1 }, "above the 65535"},
		{"ten fields above the row limit", func(s *Spec) { s.FieldCount, s.FieldLength = 10, 1632 }, "at most 1631 bytes per field with 10 fields"},
		{"fewer records than threads", func(s *Spec) { s.RecordCount = 3 }, "at least the threads"},
		{"no records", func(s *Spec) { s.RecordCount = 0 }, "record count must be >= 1"},
		{"no threads", func(s *Spec) { s.Threads = 0 }, "threads must be >= 1"},
		{"negative target", func(s *Spec) { s.TargetOpsPerSec = -1 }, "target rate"},
		{"host with a comma", func(s *Spec) { s.Host = "a,b" }, "host"},
		{"user with a colon", func(s *Spec) { s.User = "a:b" }, "user"},
		{"database with a quote", func(s *Spec) { s.DB = "y`csb" }, "database"},
		{"port", func(s *Spec) { s.Port = 0 }, "port 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := studySpec()
			tc.edit(&s)
			_, err := s.Args(PhaseLoad)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestRowLimit(t *testing.T) {
	// The study's records and the limits the CRD's message names all fit; one byte more does not.
	for _, fc := range []int64{1, 4, 10, 100, 1000} {
		n := MaxFieldLength(fc)
		if n < 1 {
			t.Fatalf("%d fields: no room", fc)
		}
		if RowBytes(fc, n) > MaxRowBytes || RowBytes(fc, n+1) <= MaxRowBytes {
			t.Errorf("%d fields: max length %d gives %d bytes, +1 gives %d", fc, n, RowBytes(fc, n), RowBytes(fc, n+1))
		}
	}
	for fc, want := range map[int64]int64{1: 16318, 4: 4079, 10: 1631} {
		if got := MaxFieldLength(fc); got != want {
			t.Errorf("MaxFieldLength(%d) = %d, want %d (the CRD's message and bound say so)", fc, got, want)
		}
	}
	if RowBytes(1, 4096) > MaxRowBytes || RowBytes(10, 400) > MaxRowBytes {
		t.Error("the study's 4 KiB records do not fit")
	}
}

func TestCheckPassword(t *testing.T) {
	if err := CheckPassword(`p w#'"x\y=$a`); err != nil {
		t.Errorf("a password with quotes, spaces and a lone $: %v", err)
	}
	if err := CheckPassword("abc${HOME}def"); err == nil {
		t.Error("a password with ${ accepted: go-ycsb would expand it")
	}
}
