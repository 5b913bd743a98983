package ycsb

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Op is one operation type's line of go-ycsb's summary. go-ycsb prints latencies in microseconds; they are kept
// in milliseconds here, as everywhere else in the project.
type Op struct {
	// Name is go-ycsb's: READ, UPDATE, INSERT, SCAN, READ_MODIFY_WRITE (an _ERROR line is folded into Errors).
	Name string
	// TakesSec is how long the operation type was measured ("Takes(s)").
	TakesSec float64
	Count    int64
	OPS      float64
	AvgMS    float64
	MinMS    float64
	MaxMS    float64
	// Percentiles by what go-ycsb labels them: 50, 90, 95, 99, 99.9, 99.99.
	Percentiles map[float64]float64
	// Errors is the count of the matching <Name>_ERROR line: operations of this type that failed. Their
	// latencies are not in the figures above.
	Errors int64
}

// Result is what a go-ycsb load or run printed.
type Result struct {
	// Finished is set when go-ycsb printed "Run finished": the lines after it are the final summary.
	Finished bool
	// TookSec is the run's length as go-ycsb printed it after "Run finished, takes".
	TookSec float64
	// Ops are the final summary's operation types, sorted by name; an operation type that only failed has
	// Count 0 and its Errors.
	Ops []Op
	// Total is go-ycsb's TOTAL line: every successful database operation in one histogram (READ, UPDATE,
	// INSERT, SCAN; a READ_MODIFY_WRITE is its READ and its UPDATE there). nil when go-ycsb printed none.
	Total *Op
	// Intervals counts the periodic summaries before the final one (go-ycsb's --interval; each is cumulative).
	Intervals int
}

// totalName is the line go-ycsb adds over all operation types.
const totalName = "TOTAL"

// Op returns the named operation type of the final summary.
func (r *Result) Op(name string) (Op, bool) {
	for _, o := range r.Ops {
		if o.Name == name {
			return o, true
		}
	}
	return Op{}, false
}

// ErrNoSummary: go-ycsb ended without its final summary.
var ErrNoSummary = errors.New("no final summary (go-ycsb printed no \"Run finished\" line followed by operation lines)")

// Parser reads go-ycsb's stdout line by line, as the runner streams it.
type Parser struct {
	finished  bool
	tookSec   float64
	final     map[string]*Op
	errs      map[string]int64
	seen      map[string]bool // operation types of the interval summary being read
	intervals int
	bad       []string
}

// NewParser returns an empty parser.
func NewParser() *Parser {
	return &Parser{final: map[string]*Op{}, errs: map[string]int64{}, seen: map[string]bool{}}
}

const finishedPrefix = "Run finished, takes "

// Line takes one line of output.
func (p *Parser) Line(line string) {
	line = strings.TrimRight(line, "\r")
	if rest, ok := strings.CutPrefix(line, finishedPrefix); ok {
		p.finished = true
		if d, err := parseGoDuration(strings.TrimSpace(rest)); err == nil {
			p.tookSec = d
		}
		return
	}
	name, op, ok := parseOpLine(line)
	if !ok {
		return
	}
	if !p.finished {
		// Interval summaries repeat every operation type once; a type seen again starts the next one.
		if p.seen[name] || len(p.seen) == 0 {
			p.intervals++
			clear(p.seen)
		}
		p.seen[name] = true
		return
	}
	if base, isErr := strings.CutSuffix(name, "_ERROR"); isErr {
		p.errs[base] += op.Count
		return
	}
	if _, dup := p.final[name]; dup {
		p.bad = append(p.bad, fmt.Sprintf("operation %s printed twice in the final summary", name))
	}
	o := op
	p.final[name] = &o
}

// Result returns what was read; ErrNoSummary when go-ycsb never printed its final summary.
func (p *Parser) Result() (*Result, error) {
	r := &Result{Finished: p.finished, TookSec: p.tookSec, Intervals: p.intervals}
	names := map[string]bool{}
	for n := range p.final {
		names[n] = true
	}
	for n := range p.errs {
		names[n] = true
	}
	if t := p.final[totalName]; t != nil {
		total := *t
		r.Total = &total
		delete(names, totalName)
	}
	for n := range names {
		o := Op{Name: n}
		if f := p.final[n]; f != nil {
			o = *f
		}
		o.Errors = p.errs[n]
		r.Ops = append(r.Ops, o)
	}
	sort.Slice(r.Ops, func(i, j int) bool { return r.Ops[i].Name < r.Ops[j].Name })
	if !p.finished || len(r.Ops) == 0 {
		return r, ErrNoSummary
	}
	if len(p.bad) > 0 {
		return r, errors.New(strings.Join(p.bad, "; "))
	}
	return r, nil
}

// parseOpLine reads "<OP> - Takes(s): 10.0, Count: 5, OPS: 0.5, Avg(us): 12, ..." (go-ycsb's plain output
// style, the default). Fields are found by their labels, so their order does not matter.
func parseOpLine(line string) (string, Op, bool) {
	name, rest, ok := strings.Cut(line, " - ")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ToUpper(name) != name || strings.ContainsAny(name, " \t:") {
		return "", Op{}, false
	}
	o := Op{Name: name, Percentiles: map[float64]float64{}}
	found := 0
	for _, kv := range strings.Split(rest, ", ") {
		k, v, ok := strings.Cut(kv, ": ")
		if !ok {
			return "", Op{}, false
		}
		v = strings.TrimSpace(v)
		switch {
		case k == "Count":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return "", Op{}, false
			}
			o.Count = n
			found++
			continue
		case k == "Takes(s)":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return "", Op{}, false
			}
			o.TakesSec = f
			continue
		case k == "OPS":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return "", Op{}, false
			}
			o.OPS = f
			found++
			continue
		}
		label, isUS := strings.CutSuffix(k, "(us)")
		if !isUS {
			continue // a column a later go-ycsb adds
		}
		us, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "", Op{}, false
		}
		ms := us / 1000
		switch label {
		case "Avg":
			o.AvgMS = ms
		case "Min":
			o.MinMS = ms
		case "Max":
			o.MaxMS = ms
		default:
			pct, ok := strings.CutSuffix(label, "th")
			if !ok {
				continue
			}
			p, err := strconv.ParseFloat(pct, 64)
			if err != nil {
				continue
			}
			o.Percentiles[p] = ms
		}
	}
	if found < 2 {
		return "", Op{}, false
	}
	return name, o, true
}

// parseGoDuration reads the time.Duration go-ycsb prints ("1.234567891s", "2m3.4s", "850.1ms"), in seconds.
func parseGoDuration(s string) (float64, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	return d.Seconds(), nil
}
