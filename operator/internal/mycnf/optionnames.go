package mycnf

import (
	_ "embed"
	"sort"
	"strings"
)

// mariadbOptionList is every option name mariadbd 10.11 accepts, with the MyRocks plugin loaded, in
// NormalizeKey's form, one a line and sorted. It is parsed from the server's own `--help --verbose`
// (testdata/mariadbd-10.11-help.txt, testdata/README.md says how it was made) by `go generate`, and
// TestMariaDBOptionListMatchesCapture fails when the two drift apart.
//
//go:generate go test -run ^TestMariaDBOptionListMatchesCapture$ . -args -update-option-list
//go:embed mariadb_options.txt
var mariadbOptionList string

// mariadbOptions is mariadbOptionList split and sorted, for binary search.
var mariadbOptions = parseOptionList(mariadbOptionList)

func parseOptionList(s string) []string {
	var names []string
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			names = append(names, line)
		}
	}
	sort.Strings(names)
	return names
}

// optionModifiers are the words mysqld's option reader strips from the front of a name it does not know:
// skip-X and disable-X set X off, enable-X sets it on, maximum-X bounds it, loose-X tolerates an unknown X.
// Both MariaDB and MySQL 8.0 strip them again and again until a name matches ("skip-loose-chroot" is chroot,
// with the value given: only the last word's meaning applies), so a name is checked at every stage.
var optionModifiers = []string{"skip_", "disable_", "enable_", "maximum_", "loose_"}

// optionStages are the names mysqld may look a normalised key up under, the key itself first.
func optionStages(norm string) []string {
	stages := []string{norm}
	for {
		stripped := false
		for _, m := range optionModifiers {
			if rest, ok := strings.CutPrefix(norm, m); ok && rest != "" {
				norm, stripped = rest, true
				stages = append(stages, norm)
				break
			}
		}
		if !stripped {
			return stages
		}
	}
}

// mariadbAbbreviates returns the options mariadbd would take a normalised key for when the key is not a full
// option name but a prefix of some: mariadbd accepts any unambiguous prefix of an option name ("chroo" sets
// chroot), and refuses to start on an ambiguous one. It looks the key up as the server does: the full name
// first, then the names starting with it, then the same after stripping a modifier word. nil means the key
// is a full name, or no option at all.
func mariadbAbbreviates(norm string) []string {
	for s := norm; ; {
		i := sort.SearchStrings(mariadbOptions, s)
		if i < len(mariadbOptions) && mariadbOptions[i] == s {
			return nil
		}
		var matches []string
		for ; i < len(mariadbOptions) && strings.HasPrefix(mariadbOptions[i], s); i++ {
			matches = append(matches, mariadbOptions[i])
		}
		if len(matches) > 0 {
			return matches
		}
		stages := optionStages(s)
		if len(stages) < 2 {
			return nil
		}
		s = stages[1]
	}
}
