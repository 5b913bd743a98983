// Package logtail keeps the end of a program's output for a one-line message: a status condition, an Event, an
// error. The reason a tool failed is in its last lines.
package logtail

import "strings"

// Last is the last n lines of s, joined by " | ", surrounding blank space trimmed.
func Last(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
