package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
)

// The usable capacity sources, as the operator names them.
const (
	UsableStatfs = benchresult.UsableStatfs
	UsableZenFS  = benchresult.UsableZenFS
)

// usableScrapeTimeout bounds the scrape: the sidecar answers from memory, so a slow answer means it is not there.
const usableScrapeTimeout = 10 * time.Second

// maxMetricsBytes bounds what is read of an answer; the sidecar serves a few KiB.
const maxMetricsBytes = 1 << 20

// measureUsable records, after the rows were verified, how much the database's storage leaves for data, read
// from the database pod's metrics sidecar. It never fails the phase: a figure it cannot read is left out, with
// the reason in the log.
func (r *runner) measureUsable(ctx context.Context) {
	c := r.cfg
	if c.metricsURL == "" {
		return
	}
	n, err := scrapeUsable(ctx, http.DefaultClient, c.metricsURL, c.usableSource)
	if err != nil {
		r.logf("usable capacity not measured: %v", err)
		return
	}
	r.sum.UsableBytes, r.sum.UsableSource = n, c.usableSource
	r.logf("usable capacity: %d bytes (%s)", n, c.usableSource)
}

// scrapeUsable reads the usable capacity of source from the metrics endpoint at rawURL.
func scrapeUsable(ctx context.Context, client *http.Client, rawURL, source string) (int64, error) {
	if source != UsableStatfs && source != UsableZenFS {
		return 0, fmt.Errorf("--usable-source %q is neither %s nor %s", source, UsableStatfs, UsableZenFS)
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return 0, fmt.Errorf("--metrics-url %q is not an http(s) URL", rawURL)
	}
	ctx, cancel := context.WithTimeout(ctx, usableScrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, err
	}
	// The text format: the sidecar offers it by default, and the parser below reads only it.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("scraping the database's metrics sidecar: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("scraping the database's metrics sidecar: %s answered %s", u.Redacted(), resp.Status)
	}
	return usableFromMetrics(io.LimitReader(resp.Body, maxMetricsBytes), source)
}

// usableFromMetrics reads the usable capacity of source from a scrape of `znsdb metrics` (Prometheus text
// format).
func usableFromMetrics(in io.Reader, source string) (int64, error) {
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(in)
	if err != nil {
		return 0, fmt.Errorf("the metrics do not parse: %w", err)
	}
	if source == UsableStatfs {
		return gaugeBytes(fams, "znsdb_datadir_size_bytes")
	}
	var total int64
	for _, name := range []string{"znsdb_zenfs_free_bytes", "znsdb_zenfs_used_bytes", "znsdb_zenfs_reclaimable_bytes"} {
		n, err := gaugeBytes(fams, name)
		if errors.Is(err, errAbsent) {
			return 0, fmt.Errorf("%w%s", err, zenfsRefreshState(fams))
		}
		if err != nil {
			return 0, err
		}
		total += n
	}
	if total <= 0 {
		return 0, errors.New("ZenFS reports no space at all (free, used and reclaimable are 0)")
	}
	return total, nil
}

var errAbsent = errors.New("absent")

// gaugeBytes is the one sample of a gauge family, as whole bytes.
func gaugeBytes(fams map[string]*dto.MetricFamily, name string) (int64, error) {
	mf, ok := fams[name]
	if !ok || len(mf.GetMetric()) == 0 {
		return 0, fmt.Errorf("the sidecar serves no %s: %w", name, errAbsent)
	}
	if n := len(mf.GetMetric()); n != 1 {
		return 0, fmt.Errorf("%s has %d samples, want one", name, n)
	}
	if mf.GetType() != dto.MetricType_GAUGE {
		return 0, fmt.Errorf("%s is a %s, want a gauge", name, mf.GetType())
	}
	v := mf.GetMetric()[0].GetGauge().GetValue()
	// Byte counts up to 2^53 are exact in a float64; beyond is petabytes, and the conversion must not wrap.
	if math.IsNaN(v) || v < 0 || v > 1<<53 || v != math.Trunc(v) {
		return 0, fmt.Errorf("%s = %v is not a byte count", name, v)
	}
	return int64(v), nil
}

// zenfsRefreshState explains absent ZenFS figures from the sidecar's own refresh series: zenfs df has not
// succeeded yet, or the sidecar was not started for ZenFS.
func zenfsRefreshState(fams map[string]*dto.MetricFamily) string {
	for _, m := range fams["znsdb_refresh_errors_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "source" && l.GetValue() == "zenfs" {
				return fmt.Sprintf(" (zenfs df has not succeeded yet: %v failed refresh(es); the sidecar's log says why)", m.GetCounter().GetValue())
			}
		}
	}
	var names []string
	for n := range fams {
		if strings.HasPrefix(n, "znsdb_") {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return " (the endpoint serves no znsdb_* series: is it the database's zns-metrics port?)"
	}
	return " (the sidecar does not run zenfs df: it was not started with --zenfs)"
}
