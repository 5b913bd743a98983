package main

import (
	"bytes"
	"strings"
	"testing"
)

func render(args ...string) (string, string, error) {
	var out, errs bytes.Buffer
	err := run(args, &out, &errs)
	return out.String(), errs.String(), err
}

// What make demo's zoned part asks for: the six databases and the Benchmark, placed and sized.
func TestDemoZonedPart(t *testing.T) {
	out, _, err := render("-scenario", "zoned-node", "-only",
		"myrocks-zoned,innodb-zoned,innodb-small-zones,innodb-zxfs,myrocks-zxfs,innodb-baseline,zoned-vs-conv",
		"-namespace", "zns-demo-zoned", "-memory", "1Gi", "-reformat-token", "demo-zns-demo-zoned", "-time-scale", "4",
		"-print", "benchmarks", "-benchmark-name", "demo-1", "-seconds", "30", "-report-interval", "1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: Benchmark\n", "  name: demo-1\n  namespace: zns-demo-zoned\n", "  startDelaySeconds: 60\n",
		"  targetTimeoutSeconds: 2400\n", "  durationSeconds: 30\n", "  reportIntervalSeconds: 1\n", "  - name: innodb-small-zones\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "kind: ZNSDatabase") || strings.Contains(out, "innodb-volume") {
		t.Errorf("-print benchmarks printed databases, or a target not selected:\n%s", out)
	}
	// -benchmark-name names the selection's Benchmark even when only its databases are printed
	dbs, _, err := render("-scenario", "zoned-node", "-only", "innodb-zxfs,innodb-baseline,zoned-vs-conv", "-memory", "1Gi",
		"-reformat-token", "demo-x", "-print", "databases", "-benchmark-name", "demo-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"      memory: 1Gi\n", "    reformatToken: demo-x\n", "    capSysAdmin: true\n", "      deviceName: nullb3\n"} {
		if !strings.Contains(dbs, want) {
			t.Errorf("missing %q in:\n%s", want, dbs)
		}
	}
}

func TestBadInputSaysWhatItWants(t *testing.T) {
	for want, args := range map[string][]string{
		`-scenario "lba": the scenarios are lab and zoned-node`:     {"-scenario", "lba"},
		`-flavor "mysql": percona or mariadb`:                       {"-flavor", "mysql"},
		`-memory "lots": a positive quantity such as 1Gi`:           {"-memory", "lots"},
		`-time-scale 0: from 1 to 100`:                              {"-time-scale", "0"},
		`a positive whole number, not "-3"`:                         {"-threads", "-3"},
		`DATABASE=DEVICE with the device's kernel name`:             {"-device", "tenant1=/dev/nullb0"},
		`-device: no ZNSDatabase "nope"`:                            {"-device", "nope=nullb0"},
		`-benchmark-name names one Benchmark; this selection has 3`: {"-benchmark-name", "x"},
		`-print "some": all, databases or benchmarks`:               {"-print", "some"},
		`unexpected arguments ["extra"]`:                            {"extra"},
		`no ZNSDatabase or Benchmark "tenant3" in the scenario`:     {"-only", "tenant1,tenant3"},
	} {
		out, stderr, err := render(args...)
		if err == nil || !strings.Contains(err.Error()+stderr, want) || out != "" {
			t.Errorf("%v: error %v (stderr %q), output %q; want an error with %q and no manifest", args, err, stderr, out, want)
		}
	}
}
