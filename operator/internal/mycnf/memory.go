package mycnf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// globalCaches are options that each make mysqld allocate one server-wide
// buffer of that size, by normalised name. When a user overrides one, all of
// them together must fit the memory limit less mysqld's own baseline
// (minReserveBytes): past the container's limit mysqld is OOM-killed
// mid-benchmark. The generator itself keeps a quarter of memory back for
// connections; an override may spend part of that on purpose, but not more
// than there is. Per-session buffers (sort_buffer_size, join_buffer_size, ...)
// are multiplied by the connections in use and are not counted.
var globalCaches = []string{
	"rocksdb_block_cache_size",
	"innodb_buffer_pool_size",
	"innodb_log_buffer_size",
	"key_buffer_size",
	"query_cache_size",
	"aria_pagecache_buffer_size",
}

// checkMemory refuses overrides whose caches, with the generated ones they
// sit beside, need more memory than the limit allows. The generated config
// alone always fits (ComputeSizes), so only a user's value can trip it.
func checkMemory(o options, in Input, s Sizes, userSet map[string]string) error {
	touched := false
	for _, k := range append([]string{"rocksdb_default_cf_options"}, globalCaches...) {
		if _, ok := userSet[k]; ok {
			touched = true
		}
	}
	if !touched {
		return nil
	}
	var parts []string
	var total int64
	add := func(what string, n int64) {
		total = satAdd(total, n)
		parts = append(parts, what)
	}
	for _, k := range globalCaches {
		opt, present := o[k]
		_, byUser := userSet[k]
		if !present || opt.flag {
			continue
		}
		// A loose rocksdb_* option is ignored when MyRocks is not loaded.
		if strings.HasPrefix(k, "rocksdb_") && in.Engine != EngineRocksDB {
			continue
		}
		// InnoDB's pool exists beside MyRocks too (system tables), but the
		// generator counts it only for the InnoDB engine: its small default
		// lives in the reserve.
		if k == "innodb_buffer_pool_size" && in.Engine != EngineInnoDB && !byUser {
			continue
		}
		n, err := parseSize(opt.value)
		if err != nil {
			return fmt.Errorf("mycnf: override %q: %v", userSet[k], err)
		}
		origin := "generated"
		if byUser {
			origin = "override"
		}
		add(fmt.Sprintf("%s=%s (%s)", opt.key, opt.value, origin), n)
	}
	if in.Engine == EngineRocksDB {
		wb, count, err := memtables(o, s)
		if err != nil {
			return fmt.Errorf("mycnf: override %q: %v", userSet["rocksdb_default_cf_options"], err)
		}
		add(fmt.Sprintf("memtables %d x %s", count, humanBytes(wb)), satMul(wb, int64(count)))
	}
	budget := s.MemoryBytes - minReserveBytes
	if total <= budget {
		return nil
	}
	return fmt.Errorf("mycnf: the configured caches need %s (%s), more than the %s that the memory limit of %s leaves after %s for mysqld itself: lower the overrides or raise the memory limit",
		humanBytes(total), strings.Join(parts, " + "), humanBytes(budget), humanBytes(s.MemoryBytes), humanBytes(minReserveBytes))
}

// memtables reads write_buffer_size and max_write_buffer_number from the
// column family options in effect; the generated ones are used for keys the
// string does not set.
func memtables(o options, s Sizes) (int64, int, error) {
	wb, count := s.WriteBufferBytes, s.MaxWriteBufferNumber
	opt, ok := o["rocksdb_default_cf_options"]
	if !ok {
		return wb, count, nil
	}
	for _, kv := range strings.Split(opt.value, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "write_buffer_size":
			n, err := parseSize(v)
			if err != nil {
				return 0, 0, fmt.Errorf("write_buffer_size: %v", err)
			}
			wb = n
		case "max_write_buffer_number":
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 {
				return 0, 0, fmt.Errorf("max_write_buffer_number %q is not a positive integer", v)
			}
			count = n
		}
	}
	return wb, count, nil
}

// parseSize reads a size the way mysqld's option parser does: an unsigned
// integer with an optional suffix K, M, G, T, P or E (either case), powers of
// 1024.
func parseSize(v string) (int64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, fmt.Errorf("empty size")
	}
	mult := int64(1)
	if i := strings.IndexByte("kmgtpe", lower(v[len(v)-1])); i >= 0 {
		mult = 1 << (10 * (i + 1))
		v = v[:len(v)-1]
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a size (an integer with an optional K, M, G, T, P or E suffix)", v)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is larger than any memory", v)
	}
	return n * mult, nil
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if b != 0 && a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// humanBytes writes a size for a person: binary units, up to one decimal.
func humanBytes(n int64) string {
	units := []string{"", "K", "M", "G", "T", "P", "E"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	s := strconv.FormatFloat(f, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + units[i]
}
