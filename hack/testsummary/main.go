// Command testsummary reads `go test -json` on stdin, prints each package's result, the output of every
// failed test, the reason of every skipped test, and closes with "N passed, N failed, N skipped". It exits
// non-zero when a test or a package failed, so a skipped suite can never pass for a run one.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

type key struct{ pkg, test string }

func main() {
	var (
		output                  = map[key]*strings.Builder{}
		failedTests, skips      []string
		failedPkgs              []string
		passed, failed, skipped int
	)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Println(string(line)) // build errors and other plain output
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "output":
			b := output[k]
			if b == nil {
				b = &strings.Builder{}
				output[k] = b
			}
			b.WriteString(e.Output)
		case "pass", "fail", "skip":
			if e.Test == "" {
				label := strings.ToUpper(e.Action)
				if e.Action == "skip" {
					label = "----" // go test reports a package without test files as skipped
				}
				fmt.Printf("%-4s %s (%.1fs)\n", label, e.Package, e.Elapsed)
				if e.Action == "fail" {
					failedPkgs = append(failedPkgs, e.Package)
					if b := output[k]; b != nil {
						fmt.Print(indent(b.String()))
					}
				}
				continue
			}
			if strings.Contains(e.Test, "/") && e.Action != "fail" {
				// Subtests count through their parents, except that a skipped subtest's reason is shown.
				if e.Action == "skip" {
					skips = append(skips, fmt.Sprintf("%s %s: %s", short(e.Package), e.Test, reason(output[k])))
				}
				continue
			}
			switch e.Action {
			case "pass":
				passed++
			case "fail":
				if !strings.Contains(e.Test, "/") {
					failed++
				}
				failedTests = append(failedTests, fmt.Sprintf("--- FAIL %s %s\n%s", short(e.Package), e.Test, indent(text(output[k]))))
			case "skip":
				skipped++
				skips = append(skips, fmt.Sprintf("%s %s: %s", short(e.Package), e.Test, reason(output[k])))
			}
		}
	}
	if len(failedTests) > 0 {
		fmt.Println("\nFailures:")
		for _, f := range failedTests {
			fmt.Print(f)
		}
	}
	if len(skips) > 0 {
		sort.Strings(skips)
		fmt.Println("\nSkipped (each names what it needs):")
		for _, s := range skips {
			fmt.Println("  " + s)
		}
	}
	fmt.Printf("\n%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	if failed > 0 || len(failedPkgs) > 0 || passed == 0 {
		if len(failedPkgs) > 0 {
			fmt.Printf("failed packages: %s\n", strings.Join(failedPkgs, " "))
		}
		os.Exit(1)
	}
}

func text(b *strings.Builder) string {
	if b == nil {
		return ""
	}
	return b.String()
}

// reason is the skip message: the output lines other than the === / --- framing.
func reason(b *strings.Builder) string {
	var out []string
	for _, l := range strings.Split(text(b), "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		out = append(out, t)
	}
	return strings.Join(out, " ")
}

func short(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/zns-mysql/zns-mysql/")
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if l != "" {
			b.WriteString("    " + l + "\n")
		}
	}
	return b.String()
}
