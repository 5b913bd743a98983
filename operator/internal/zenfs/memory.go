package zenfs

// MemoryLimitBytes bounds the data memory of every zenfs command the helper
// runs (RLIMIT_DATA: heap, anonymous and other private writable mappings,
// thread stacks). ZenFS's log reader allocates whatever length word it finds
// at the start of a written meta zone before checking anything (see
// ForeignZone): on a device holding other data that was up to 4 GiB, and one
// such device took `zenfs ls-uuid` to 2.8 GB resident and a global OOM kill.
// Under this bound the allocation fails inside zenfs instead (std::bad_alloc,
// SIGABRT, which Classify names); nothing is killed and no neighbour is at risk.
//
// Why RLIMIT_DATA and not RLIMIT_AS: the address-space limit also counts
// mapped libraries and reserved-but-unused regions (glibc's per-thread malloc
// arenas reserve 64 MiB each), so it would have to be set loosely or would
// fail zenfs for reasons unrelated to the memory it uses.
//
// Why 1 GiB: the captures record no memory figure of a normal run, so the
// size rests on what zenfs allocates. Besides a fixed base (its libraries'
// data, one thread), that is the metadata log replay: records and the file
// table they describe. The largest log captured, after a RocksDB session of
// 20,000 puts (capture/nullb0/25-blkzone-report-populated), is 536 sectors
// (268 KiB) into its meta zone; a log cannot outgrow its zone, and ZenFS
// rolls it into a compact snapshot before it does. 1 GiB is thousands of
// times that, and still stops every length word the captures show aborting
// or exhausting memory (2 GiB and above). The assumption, not measured here:
// no real ZenFS needs more than 1 GiB to mount read-only; one that did would
// fail with ZenFSAborted naming std::bad_alloc, not lose data.
const MemoryLimitBytes = 1 << 30
