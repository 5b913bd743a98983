package zonedmetrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
)

// BenchmarkScrape measures one GET /metrics of a ZenFS database on the
// captured nullb0 (sysfs tree, stat, zone report and zenfs df of the real
// guest) with both background sources running: the scrape reads sysfs
// (stat and the zone attributes), statfs of the datadir and the cached
// figures. zone-reports/op and df-runs/op show that scrapes start neither:
// both stay at the single run made before the timer started.
func BenchmarkScrape(b *testing.B) {
	c := New(Config{Device: "nullb0", SysBlock: testSysBlock, Datadir: b.TempDir()})
	zones := &step[[]zbd.Zone]{hold: true, answers: []func(context.Context) ([]zbd.Zone, error){
		ok(blkzoneReport(b, "capture/nullb0/25-blkzone-report-populated.stdout"))}}
	df := &step[zenfs.Df]{hold: true, answers: []func(context.Context) (zenfs.Df, error){
		ok(dfCapture(b, "wa/nullb0-df.stdout"))}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.RunZones(ctx, time.Hour, zones.call)
	go c.RunZenFS(ctx, time.Hour, time.Minute, df.call)
	waitFor(b, c, "both sources refreshed", func(s scrape) bool {
		_, z := s.value("znsdb_refresh_timestamp_seconds", "source", "zones")
		_, d := s.value("znsdb_refresh_timestamp_seconds", "source", "zenfs")
		return z && d
	})
	zonesBefore, _ := zones.count()
	dfBefore, _ := df.count()

	h := c.Handler()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	var size int
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		size = rec.Body.Len()
	}
	b.StopTimer()
	zonesAfter, _ := zones.count()
	dfAfter, _ := df.count()
	b.ReportMetric(float64(zonesAfter-zonesBefore)/float64(b.N), "zone-reports/op")
	b.ReportMetric(float64(dfAfter-dfBefore)/float64(b.N), "df-runs/op")
	b.ReportMetric(float64(size), "bytes/scrape")
}
