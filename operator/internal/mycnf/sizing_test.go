package mycnf

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestComputeSizes(t *testing.T) {
	tests := []struct {
		name string
		mem  int64
		want Sizes
	}{
		{
			name: "minimum pod",
			mem:  512 * MiB,
			want: Sizes{
				MemoryBytes: 512 * MiB, ReserveBytes: 384 * MiB, EngineBytes: 128 * MiB,
				BlockCacheBytes: 96 * MiB, WriteBufferBytes: 4 * MiB, MaxWriteBufferNumber: 8, MemtableBytes: 32 * MiB,
				MaxTotalWALBytes: 32 * MiB,
				BufferPoolBytes:  128 * MiB, BufferPoolInstances: 1, RedoLogBytes: 256 * MiB,
				MaxConnections: 151, TableOpenCache: 2048,
			},
		},
		{
			name: "1 GiB pod (the real-server test)",
			mem:  1 * GiB,
			want: Sizes{
				MemoryBytes: 1 * GiB, ReserveBytes: 384 * MiB, EngineBytes: 640 * MiB,
				BlockCacheBytes: 480 * MiB, WriteBufferBytes: 20 * MiB, MaxWriteBufferNumber: 8, MemtableBytes: 160 * MiB,
				MaxTotalWALBytes: 160 * MiB,
				BufferPoolBytes:  640 * MiB, BufferPoolInstances: 1, RedoLogBytes: 320 * MiB,
				MaxConnections: 151, TableOpenCache: 4096,
			},
		},
		{
			name: "no limit: 2 GiB fallback",
			mem:  0,
			want: Sizes{
				MemoryBytes: 2 * GiB, FallbackUsed: true, ReserveBytes: 512 * MiB, EngineBytes: 1536 * MiB,
				BlockCacheBytes: 1152 * MiB, WriteBufferBytes: 48 * MiB, MaxWriteBufferNumber: 8, MemtableBytes: 384 * MiB,
				MaxTotalWALBytes: 384 * MiB,
				BufferPoolBytes:  1536 * MiB, BufferPoolInstances: 1, RedoLogBytes: 768 * MiB,
				MaxConnections: 151, TableOpenCache: 8192,
			},
		},
		{
			name: "odd size rounds to MiB and pool unit",
			mem:  10*GiB + 12345,
			want: Sizes{
				MemoryBytes: 10*GiB + 12345, ReserveBytes: 2560 * MiB, EngineBytes: 7680 * MiB,
				BlockCacheBytes: 5760 * MiB, WriteBufferBytes: 240 * MiB, MaxWriteBufferNumber: 8, MemtableBytes: 1920 * MiB,
				MaxTotalWALBytes: 1920 * MiB,
				// 7 instances x 128 MiB = 896 MiB unit; 8 units fit.
				BufferPoolBytes: 7168 * MiB, BufferPoolInstances: 7, RedoLogBytes: 3584 * MiB,
				MaxConnections: 640, TableOpenCache: 40960,
			},
		},
		{
			name: "large pod keeps the seed's memtables and caps",
			mem:  128 * GiB,
			want: Sizes{
				MemoryBytes: 128 * GiB, ReserveBytes: 32 * GiB, EngineBytes: 96 * GiB,
				BlockCacheBytes: 92 * GiB, WriteBufferBytes: 512 * MiB, MaxWriteBufferNumber: 8, MemtableBytes: 4 * GiB,
				MaxTotalWALBytes: 4 * GiB,
				BufferPoolBytes:  96 * GiB, BufferPoolInstances: 8, RedoLogBytes: 4 * GiB,
				MaxConnections: 4096, TableOpenCache: 262144,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ComputeSizes(tt.mem)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// TestSizesInvariants sweeps limits and checks what must hold for any pod:
// the plan fits, sizes are MiB-aligned, the pool is a whole number of
// chunk x instances (so 8.0 does not round it up past the budget).
func TestSizesInvariants(t *testing.T) {
	for mem := MinMemoryBytes; mem <= 256*GiB; mem += 97 * MiB {
		s, err := ComputeSizes(mem)
		if err != nil {
			t.Fatalf("%d: %v", mem, err)
		}
		if s.BlockCacheBytes+s.MemtableBytes > s.EngineBytes {
			t.Errorf("%d: rocksdb caches %d exceed engine budget %d", mem, s.BlockCacheBytes+s.MemtableBytes, s.EngineBytes)
		}
		if s.EngineBytes+s.ReserveBytes > mem {
			t.Errorf("%d: plan exceeds the limit", mem)
		}
		if s.BufferPoolBytes > s.EngineBytes {
			t.Errorf("%d: buffer pool %d exceeds engine budget %d", mem, s.BufferPoolBytes, s.EngineBytes)
		}
		if s.BufferPoolBytes%(innodbChunkBytes*int64(s.BufferPoolInstances)) != 0 {
			t.Errorf("%d: pool %d not a multiple of %d instances x 128 MiB", mem, s.BufferPoolBytes, s.BufferPoolInstances)
		}
		for name, v := range map[string]int64{"block cache": s.BlockCacheBytes, "write buffer": s.WriteBufferBytes,
			"wal": s.MaxTotalWALBytes, "redo": s.RedoLogBytes} {
			if v <= 0 || v%MiB != 0 {
				t.Errorf("%d: %s %d not a positive MiB multiple", mem, name, v)
			}
		}
		if s.WriteBufferBytes > 512*MiB || s.MaxTotalWALBytes > 4*GiB || s.MaxConnections > 4096 || s.TableOpenCache > 262144 {
			t.Errorf("%d: a value exceeds the seed's: %+v", mem, s)
		}
	}
}

func TestSizesInGeneratedFile(t *testing.T) {
	for _, mem := range []int64{0, 1 * GiB, 3*GiB + 5*MiB, 64 * GiB} {
		s, err := ComputeSizes(mem)
		if err != nil {
			t.Fatal(err)
		}
		in := base(FlavorPercona, EngineRocksDB, ProfileWorkload)
		in.MemoryLimitBytes = mem
		m := parse(t, mustGenerate(t, in))
		if got, want := m["rocksdb_block_cache_size"], formatBytes(s.BlockCacheBytes); got != want {
			t.Errorf("mem %d: block cache %s, want %s", mem, got, want)
		}
		if got, want := m["rocksdb_max_total_wal_size"], formatBytes(s.MaxTotalWALBytes); got != want {
			t.Errorf("mem %d: wal %s, want %s", mem, got, want)
		}
		if !strings.Contains(m["rocksdb_default_cf_options"], "\"write_buffer_size="+formatBytes(s.WriteBufferBytes)+";") {
			t.Errorf("mem %d: cf options %s lack write_buffer_size=%s", mem, m["rocksdb_default_cf_options"], formatBytes(s.WriteBufferBytes))
		}
		in.Engine = EngineInnoDB
		m = parse(t, mustGenerate(t, in))
		if got, want := m["innodb_buffer_pool_size"], formatBytes(s.BufferPoolBytes); got != want {
			t.Errorf("mem %d: pool %s, want %s", mem, got, want)
		}
		if got, want := m["innodb_redo_log_capacity"], formatBytes(s.RedoLogBytes); got != want {
			t.Errorf("mem %d: redo %s, want %s", mem, got, want)
		}
		out := mustGenerate(t, in)
		if mem == 0 && !strings.Contains(out, "memory=2G (no limit set: fallback)") {
			t.Errorf("fallback not stated in header:\n%s", out)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{
		64 * GiB: "64G", 512 * MiB: "512M", 1536 * MiB: "1536M", 16 * KiB: "16K", 0: "0", 1000: "1000",
	} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
