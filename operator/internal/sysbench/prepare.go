package sysbench

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Prepare is what the OLTP scripts' prepare command reported. It tells that
// sysbench attempted every table; whether the rows arrived is for a row
// count to say (MyRocks' bulk load can drop rows while sysbench exits 0).
type Prepare struct {
	Version string
	// Created lists the tables sysbench created, in the order printed.
	Created []string
	// Inserted maps a table to the records sysbench said it would insert.
	Inserted map[string]int64
	// SecondaryIndexes lists tables that got the secondary index on k
	// (absent with --create_secondary=off).
	SecondaryIndexes []string
	Fatal            []string
}

var (
	// Not anchored: with --threads > 1 the prepare threads share stdout and
	// sysbench writes a message and its newline separately, so two messages
	// can land on one line (captured: "Creating table 'sbtest1'...Creating
	// table 'sbtest2'...", testdata/prepare-innodb-interleaved.txt).
	createdRE  = regexp.MustCompile(`Creating table '([^']+)'\.\.\.`)
	insertRE   = regexp.MustCompile(`Inserting (\d+) records into '([^']+)'`)
	secondRE   = regexp.MustCompile(`Creating a secondary index on '([^']+)'\.\.\.`)
	sbtableRE  = regexp.MustCompile(`^sbtest(\d+)$`)
	fatalStart = "FATAL: "
)

// ParsePrepare reads the stdout of "sysbench <oltp script> prepare".
func ParsePrepare(r io.Reader) (*Prepare, error) {
	p := &Prepare{Inserted: map[string]int64{}}
	fatal := NewParser() // reuses FATAL continuation handling
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		fatal.Line(line)
		if strings.HasPrefix(line, fatalStart) {
			continue
		}
		if m := headerRE.FindStringSubmatch(line); m != nil && p.Version == "" {
			p.Version = m[1]
			continue
		}
		for _, m := range createdRE.FindAllStringSubmatch(line, -1) {
			p.Created = append(p.Created, m[1])
		}
		for _, m := range insertRE.FindAllStringSubmatch(line, -1) {
			n, err := strconv.ParseInt(m[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("sysbench prepare: %q: %v", line, err)
			}
			p.Inserted[m[2]] += n
		}
		for _, m := range secondRE.FindAllStringSubmatch(line, -1) {
			p.SecondaryIndexes = append(p.SecondaryIndexes, m[1])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	res, _ := fatal.Result()
	p.Fatal = res.Fatal
	return p, nil
}

// Check reports whether sysbench created sbtest1..sbtest<tables> and
// announced tableSize records for each, and printed no FATAL line.
func (p *Prepare) Check(tables int, tableSize int64) error {
	if len(p.Fatal) > 0 {
		return &FatalError{Lines: p.Fatal}
	}
	created := map[string]bool{}
	for _, t := range p.Created {
		created[t] = true
	}
	var problems []string
	for i := 1; i <= tables; i++ {
		name := fmt.Sprintf("sbtest%d", i)
		if !created[name] {
			problems = append(problems, name+" not created")
		}
		if n := p.Inserted[name]; n != tableSize {
			problems = append(problems, fmt.Sprintf("%s: %d records announced, want %d", name, n, tableSize))
		}
	}
	var extra []string
	for t := range p.Inserted {
		if m := sbtableRE.FindStringSubmatch(t); m == nil {
			extra = append(extra, t)
		} else if i, _ := strconv.Atoi(m[1]); i < 1 || i > tables {
			extra = append(extra, t)
		}
	}
	sort.Strings(extra)
	for _, t := range extra {
		problems = append(problems, "unexpected table "+t)
	}
	if len(problems) > 0 {
		return fmt.Errorf("sysbench prepare incomplete: %s", strings.Join(problems, "; "))
	}
	return nil
}
