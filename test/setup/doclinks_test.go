package setup

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestMarkdownLinksResolve: every relative link of every tracked Markdown file (README.md, DEVELOP.md, docs/,
// the chart's and the testdata READMEs) names a file or directory that exists, and a link with a fragment to a
// Markdown file names one of its headings, as GitHub makes their anchors. Links with a scheme (https:, mailto:)
// are not followed; links inside code (fenced blocks, `spans`) are not links.
func TestMarkdownLinksResolve(t *testing.T) {
	root := repoRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "--", "*.md").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout)", err)
	}
	files := strings.Fields(string(out))
	if len(files) == 0 {
		t.Fatal("git ls-files found no Markdown file")
	}
	anchors := map[string]map[string]bool{} // by absolute path
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		a := headingAnchors(proseLines(string(b)))
		anchors[path] = a
		return a
	}
	links := 0
	for _, rel := range files {
		path := filepath.Join(root, rel)
		b, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet in the index
		}
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range proseLines(string(b)) {
			line = codeSpan.ReplaceAllString(line, "")
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if hasScheme.MatchString(target) {
					continue
				}
				links++
				file, frag, _ := strings.Cut(target, "#")
				dest := path
				if file != "" {
					dest = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s:%d: link %q: no such file or directory", rel, i+1, target)
					continue
				}
				if frag != "" && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[frag] {
					t.Errorf("%s:%d: link %q: %s has no heading with that anchor", rel, i+1, target,
						strings.TrimPrefix(dest, root+string(filepath.Separator)))
				}
			}
		}
	}
	if links == 0 {
		t.Fatal("found no relative link at all: the link pattern is broken")
	}
}

var (
	// mdLink is an inline link or image: [text](target) or [text](target "title").
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpan  = regexp.MustCompile("`[^`]*`")
	hasScheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	fence     = regexp.MustCompile("^\\s*(```|~~~)")
	heading   = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	linkText  = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// proseLines is the file's lines with those of fenced code blocks blanked (so that line numbers stay).
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	in := false
	for i, l := range lines {
		if fence.MatchString(l) {
			in = !in
			lines[i] = ""
		} else if in {
			lines[i] = ""
		}
	}
	return lines
}

// headingAnchors is the set of anchors GitHub gives the headings: lower case, every character but letters,
// digits, spaces, '-' and '_' dropped, spaces made '-'; a repeated anchor gets -1, -2, ...
func headingAnchors(lines []string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range lines {
		m := heading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		text := strings.ToLower(linkText.ReplaceAllString(m[1], "$1"))
		var b strings.Builder
		for _, r := range text {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}
