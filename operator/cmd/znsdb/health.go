package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"time"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
)

func healthCmd(ctx context.Context, args []string, d deps) int {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	socket := fs.String("socket", "/run/mysqld/mysqld.sock", "mysqld's unix socket")
	addr := fs.String("addr", "", "host:port of mysqld over TCP (instead of --socket)")
	timeout := fs.Duration("timeout", 2*time.Second, "how long to wait for the handshake")
	var sf spaceFlags
	fs.StringVar(&sf.device, "zenfs-device", "", "kernel name of the ZenFS device: when set, a healthy probe also "+
		"runs zenfs df (at most once per --zenfs-space-interval) and publishes the space on the pod for the operator")
	fs.StringVar(&sf.zenfsBin, "zenfs", zenfs.DefaultBinary, "zenfs utility")
	fs.StringVar(&sf.stateFile, "zenfs-space-state", v1alpha1.RunDir+"/zenfs-space.json",
		"file that remembers when zenfs df last ran, between probes")
	fs.DurationVar(&sf.interval, "zenfs-space-interval", time.Minute, "least time between two zenfs df runs")
	fs.DurationVar(&sf.timeout, "zenfs-df-timeout", 5*time.Second, "how long zenfs df may take")
	credentials := fs.String("mysql-credentials", defaultCredentials, "client option file ([client] user, password) "+
		"of the account that asks mysqld for rocksdb_fs_uri when --zenfs-device is set (else root with MYSQL_ROOT_PASSWORD)")
	if code, ok := parseFlags(fs, args, d); !ok {
		return code
	}
	network, address := "unix", *socket
	if *addr != "" {
		network, address = "tcp", *addr
	}
	version, err := checkHandshake(ctx, network, address, *timeout)
	if err != nil {
		fmt.Fprintf(d.stderr, "unhealthy: %s %s: %v\n", network, address, err)
		return exitRefused
	}
	if sf.device != "" {
		// A mysqld that answers but keeps MyRocks off the device is not
		// ready: clients would write to the datadir volume. A check that
		// could not ask does not fail the probe (see dbinit.FSURIUnverified).
		qctx, cancel := context.WithTimeout(ctx, *timeout)
		check := verifyFSURI(qctx, network, address, fsURICheckFlags{device: sf.device, credentials: *credentials,
			stateFile: filepath.Join(filepath.Dir(sf.stateFile), "zenfs-fs-uri.json"), interval: sf.interval}, d)
		cancel()
		switch check.Verdict {
		case dbinit.FSURINotOnZenFS:
			fmt.Fprintf(d.stderr, "unhealthy: %s %s: %s\n", network, address, check.Message)
			return exitRefused
		case dbinit.FSURIUnverified:
			fmt.Fprintf(d.stderr, "znsdb health: rocksdb_fs_uri not verified: %s\n", check.Message)
		}
	}
	fmt.Fprintf(d.stdout, "ok: %s\n", version)
	// The space is a side job of a healthy probe: its failure is reported
	// (on the pod, for the operator, and here) but never fails the probe.
	if sf.device != "" {
		if ran, err := refreshSpace(ctx, sf, d); err != nil {
			fmt.Fprintf(d.stderr, "znsdb health: zenfs space not refreshed: %v\n", err)
		} else if ran {
			fmt.Fprintln(d.stdout, "zenfs space refreshed")
		}
	}
	return exitOK
}

// checkHandshake connects and reads the server's first packet, which needs
// no credentials: a live mysqld sends its greeting before the client says
// anything. It returns the server version.
func checkHandshake(ctx context.Context, network, address string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, network, address)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	seq, payload, err := readPacket(conn)
	if err != nil {
		return "", err
	}
	if seq != 0 {
		return "", fmt.Errorf("first packet has sequence id %d, want 0", seq)
	}
	return parseHandshake(payload)
}

// maxGreeting bounds the packet a server may send first; real greetings are
// around 100 bytes, and anything claiming more is not MySQL.
const maxGreeting = 64 << 10

// readPacket reads one MySQL packet: a 3-byte little-endian payload length,
// a sequence id, then the payload.
func readPacket(r io.Reader) (seq byte, payload []byte, err error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, fmt.Errorf("reading packet header: %w", err)
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	if n == 0 || n > maxGreeting {
		return 0, nil, fmt.Errorf("packet length %d is not a server greeting", n)
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, fmt.Errorf("reading %d-byte packet: %w", n, err)
	}
	return hdr[3], payload, nil
}

const (
	protocolVersion  = 10
	errPacket        = 0xff
	clientProtocol41 = 0x200
)

// parseHandshake checks a Protocol::HandshakeV10 payload: protocol version,
// NUL-terminated server version, connection id (4), first scramble part (8),
// a zero filler, then the lower capability flags (2), which must include
// CLIENT_PROTOCOL_41 as every server since 4.1 sets. The rest varies by
// server and version and is not checked.
func parseHandshake(p []byte) (string, error) {
	if len(p) == 0 {
		return "", errors.New("empty greeting")
	}
	if p[0] == errPacket {
		return "", parseErrPacket(p)
	}
	if p[0] != protocolVersion {
		return "", fmt.Errorf("protocol version %d, want %d", p[0], protocolVersion)
	}
	end := bytes.IndexByte(p[1:], 0)
	if end < 0 {
		return "", errors.New("server version is not NUL-terminated")
	}
	version := string(p[1 : 1+end])
	rest := p[1+end+1:]
	if len(rest) < 4+8+1+2 {
		return "", fmt.Errorf("handshake ends after the server version %q", version)
	}
	if rest[12] != 0 {
		return "", fmt.Errorf("handshake filler byte is %#x, want 0", rest[12])
	}
	if binary.LittleEndian.Uint16(rest[13:15])&clientProtocol41 == 0 {
		return "", errors.New("server does not speak protocol 4.1")
	}
	return version, nil
}

// parseErrPacket explains an ERR packet sent instead of a greeting (too many
// connections, host blocked): the server is up but not accepting clients.
// Before the handshake there is no SQL state, but some servers send one.
func parseErrPacket(p []byte) error {
	if len(p) < 3 {
		return errors.New("server sent a truncated error packet")
	}
	code := binary.LittleEndian.Uint16(p[1:3])
	msg := p[3:]
	if len(msg) >= 6 && msg[0] == '#' {
		msg = msg[6:]
	}
	return fmt.Errorf("server refused the connection: ERROR %d: %s", code, msg)
}
