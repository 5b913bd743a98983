package mycnf

import "fmt"

const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
)

const (
	// FallbackMemoryBytes is assumed when the pod has no memory limit. Without
	// a limit mysqld may grow into the whole node, whose size the spec does not
	// tell us; sizing for a small but workable pod keeps an unlimited database
	// from starving its neighbours. Users who want more set a limit.
	FallbackMemoryBytes = 2 * GiB

	// MinMemoryBytes is the smallest limit Generate accepts. Below it the fixed
	// part of mysqld (code, performance schema, per-thread stacks, allocator
	// slack) leaves no room for any engine cache and the pod is OOM-killed or
	// crawls, which would only produce misleading benchmark numbers.
	MinMemoryBytes = 512 * MiB

	// MaxMemoryBytes is the largest limit Generate accepts (the CRD refuses
	// more at admission too). Beyond the biggest machines sold, a limit is a
	// typo, and sizing caches from it would write absurd values such as
	// rocksdb_block_cache_size=6442450940G (from 8Ei).
	MaxMemoryBytes = 16 << 40

	// minReserveBytes is the floor of the non-engine share: mysqld's own
	// baseline is 100-300 MiB (Percona's performance schema alone is ~200 MiB
	// with autosizing) whatever the pod size.
	minReserveBytes = 384 * MiB

	// The seed's memtables: 512M x 8 = 4 GiB. Kept as the upper bound so
	// large pods run exactly the published tuning.
	seedWriteBufferBytes    = 512 * MiB
	seedMaxWriteBufferCount = 8
	seedMaxTotalWALBytes    = 4 * GiB

	// InnoDB resizes its buffer pool in chunks (MySQL 8.0 default chunk size
	// 128 MiB) and rounds the pool UP to chunk x instances; rounding down to
	// that unit ourselves keeps the pool inside the budget.
	innodbChunkBytes = 128 * MiB
	maxPoolInstances = 8

	// Per-connection peak: thread stack (~300 KiB), THD and net buffers, and
	// the on-demand sort/join/read buffers (MariaDB's sort_buffer_size
	// defaults to 2 MiB). Connections may take at most 1/8 of memory.
	perConnectionBytes = 2 * MiB
	minMaxConnections  = 151 // MySQL's default; enough for sysbench's usual 64 threads
	seedMaxConnections = 4096

	// A cached table costs a TABLE object with record buffers plus the
	// handler's own buffers; MyRocks' pack buffers put it in the tens of KiB
	// for wide keys, so 16 KiB is a middle estimate. The table cache may take
	// at most 1/16 of memory: the seed's 256K entries would be ~4 GiB.
	perTableBytes      = 16 * KiB
	minTableOpenCache  = 2000 // MariaDB's default
	seedTableOpenCache = 256 * 1024

	// Redo sizing bounds for InnoDB: below 256 MiB checkpoints dominate a
	// write benchmark; 4 GiB matches the seed's rocksdb_max_total_wal_size,
	// the MyRocks counterpart, so both engines may hold as much unflushed log.
	minRedoBytes = 256 * MiB
	maxRedoBytes = 4 * GiB
)

// Sizes is the memory plan behind a generated config. It is exported so that
// callers (and tests against a real server) can check what mysqld reports.
type Sizes struct {
	// MemoryBytes is the limit the plan was made for: the pod's limit, or
	// FallbackMemoryBytes when FallbackUsed.
	MemoryBytes  int64
	FallbackUsed bool
	// ReserveBytes is left to everything that is not an engine cache.
	ReserveBytes int64
	// EngineBytes = MemoryBytes - ReserveBytes, the storage engine's budget.
	EngineBytes int64

	// MyRocks: EngineBytes = BlockCacheBytes + MemtableBytes.
	BlockCacheBytes      int64
	WriteBufferBytes     int64 // write_buffer_size inside rocksdb_default_cf_options
	MaxWriteBufferNumber int
	MemtableBytes        int64 // WriteBufferBytes x MaxWriteBufferNumber
	MaxTotalWALBytes     int64

	// InnoDB: the pool takes the whole engine budget, rounded down.
	BufferPoolBytes     int64
	BufferPoolInstances int // emitted for Percona only: MariaDB 10.11 has no such option
	RedoLogBytes        int64

	MaxConnections int
	TableOpenCache int
}

// ComputeSizes plans memory for a container limit; 0 means no limit.
//
// A quarter of memory (at least minReserveBytes) is reserved for what is not
// an engine cache: connections (capped at 1/8), the table cache (capped at
// 1/16), performance schema, binlog caches and allocator slack. Going over a
// container limit means an OOM kill mid-benchmark, so the reserve errs high.
// Both engines get the same remainder, which keeps the comparison fair:
// MyRocks splits it between block cache and memtables, InnoDB's buffer pool
// (which also holds its dirty pages) takes all of it.
func ComputeSizes(memoryLimitBytes int64) (Sizes, error) {
	s := Sizes{MemoryBytes: memoryLimitBytes}
	switch {
	case memoryLimitBytes == 0:
		s.MemoryBytes = FallbackMemoryBytes
		s.FallbackUsed = true
	case memoryLimitBytes < 0:
		return Sizes{}, fmt.Errorf("mycnf: negative memory limit %d", memoryLimitBytes)
	case memoryLimitBytes < MinMemoryBytes:
		return Sizes{}, fmt.Errorf("mycnf: memory limit %d bytes is below the minimum of %s for mysqld with an engine cache",
			memoryLimitBytes, formatBytes(MinMemoryBytes))
	case memoryLimitBytes > MaxMemoryBytes:
		return Sizes{}, fmt.Errorf("mycnf: memory limit %d bytes is above the maximum of %s", memoryLimitBytes, humanBytes(MaxMemoryBytes))
	}
	mem := s.MemoryBytes

	s.ReserveBytes = max(roundDown(mem/4, MiB), minReserveBytes)
	s.EngineBytes = roundDown(mem-s.ReserveBytes, MiB)

	// Memtables get a quarter of the engine budget: enough for the seed's
	// 8 write buffers to absorb bursts while compaction catches up, capped at
	// the seed's 4 GiB so that large pods run the published settings. The
	// count stays 8 and the buffer size shrinks, because L0 file count (the
	// seed's compaction and slowdown triggers) is what the tuning is about.
	s.MaxWriteBufferNumber = seedMaxWriteBufferCount
	s.WriteBufferBytes = min(roundDown(s.EngineBytes/4/int64(s.MaxWriteBufferNumber), MiB), seedWriteBufferBytes)
	s.MemtableBytes = s.WriteBufferBytes * int64(s.MaxWriteBufferNumber)
	// More WAL than the memtables can hold buys nothing: RocksDB must flush
	// them to drop old WAL anyway. Tying the two bounds recovery time too.
	s.MaxTotalWALBytes = min(s.MemtableBytes, seedMaxTotalWALBytes)
	// MyRocks runs with direct reads (seed), so there is no OS page cache
	// behind the block cache: it gets everything the memtables do not.
	s.BlockCacheBytes = s.EngineBytes - s.MemtableBytes

	s.BufferPoolInstances = int(min(max(s.EngineBytes/GiB, 1), maxPoolInstances))
	unit := innodbChunkBytes * int64(s.BufferPoolInstances)
	s.BufferPoolBytes = max(roundDown(s.EngineBytes, unit), innodbChunkBytes)
	s.RedoLogBytes = min(max(roundDown(s.BufferPoolBytes/2, MiB), minRedoBytes), maxRedoBytes)

	s.MaxConnections = int(min(max(mem/8/perConnectionBytes, minMaxConnections), seedMaxConnections))
	s.TableOpenCache = int(min(max(mem/16/perTableBytes, minTableOpenCache), seedTableOpenCache))
	return s, nil
}

func roundDown(n, unit int64) int64 { return n / unit * unit }

// formatBytes writes sizes the way the seed does (64G, 512M) so that the
// generated file reads like the reference; RocksDB's option parser inside
// rocksdb_default_cf_options accepts the same suffixes.
func formatBytes(n int64) string {
	switch {
	case n != 0 && n%GiB == 0:
		return fmt.Sprintf("%dG", n/GiB)
	case n != 0 && n%MiB == 0:
		return fmt.Sprintf("%dM", n/MiB)
	case n != 0 && n%KiB == 0:
		return fmt.Sprintf("%dK", n/KiB)
	}
	return fmt.Sprintf("%d", n)
}
