package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serve accepts connections on l and answers each with greet.
func serve(t *testing.T, l net.Listener, greet func(net.Conn)) {
	t.Helper()
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			greet(c)
			c.Close()
		}
	}()
}

func writes(b []byte) func(net.Conn) { return func(c net.Conn) { c.Write(b) } }

func tcpServer(t *testing.T, greet func(net.Conn)) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serve(t, l, greet)
	return l.Addr().String()
}

func captured(t *testing.T) []byte {
	b, err := os.ReadFile("testdata/handshake-mariadb-10.11.bin")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func packet(seq byte, payload []byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

func health(t *testing.T, args ...string) result {
	t.Helper()
	return runZnsdb(t, nil, nil, nil, append([]string{"health", "--timeout", "500ms"}, args...)...)
}

func TestHealthRealHandshake(t *testing.T) {
	addr := tcpServer(t, writes(captured(t)))
	res := health(t, "--addr", addr)
	if res.code != exitOK || res.stdout != "ok: 5.5.5-10.11.19-MariaDB-0+deb12u1\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
}

func TestHealthUnixSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "mysqld.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	serve(t, l, writes(captured(t)))
	if res := health(t, "--socket", sock); res.code != exitOK {
		t.Errorf("exit %d, stderr %q", res.code, res.stderr)
	}
	if res := health(t, "--socket", filepath.Join(t.TempDir(), "absent.sock")); res.code != exitRefused {
		t.Errorf("absent socket: exit %d", res.code)
	}
}

// A greeting built field by field, to break one field at a time.
func greeting(version string, filler byte, caps uint16) []byte {
	p := append([]byte{10}, version...)
	p = append(p, 0)
	p = append(p, 1, 0, 0, 0)    // connection id
	p = append(p, "abcdefgh"...) // scramble, part 1
	p = append(p, filler)        // filler
	p = append(p, byte(caps), byte(caps>>8))
	return packet(0, p)
}

func TestHealthRefusesWhatIsNotAGreeting(t *testing.T) {
	good := captured(t)
	v9 := append([]byte(nil), good...)
	v9[4] = 9
	tests := map[string]struct {
		greet func(net.Conn)
		want  string
	}{
		"http server":       {writes([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")), "not a server greeting"},
		"closes at once":    {func(net.Conn) {}, "EOF"},
		"cut short":         {writes(good[:40]), "unexpected EOF"},
		"says nothing":      {func(c net.Conn) { time.Sleep(time.Second) }, "timeout"},
		"protocol 9":        {writes(v9), "protocol version 9"},
		"wrong sequence id": {writes(packet(1, good[4:])), "sequence id 1"},
		"too many connections": {writes(packet(0, append([]byte{0xff, 0x10, 0x04}, "Too many connections"...))),
			"ERROR 1040: Too many connections"},
		"error with sql state": {writes(packet(0, append([]byte{0xff, 0x6a, 0x04}, "#HY000Host '10.0.0.1' is not allowed to connect"...))),
			"ERROR 1130: Host '10.0.0.1' is not allowed"},
		"no NUL after version": {writes(packet(0, []byte("\x0a8.0.36"))), "not NUL-terminated"},
		"ends after version":   {writes(packet(0, []byte("\x0a8.0.36\x00\x01\x00\x00\x00"))), "ends after the server version"},
		"bad filler":           {writes(greeting("8.0.36", 7, 0xffff)), "filler"},
		"pre-4.1 server":       {writes(greeting("4.0.30", 0, 0x0001)), "protocol 4.1"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			res := health(t, "--addr", tcpServer(t, tt.greet))
			if res.code != exitRefused || !strings.Contains(res.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q, want it to mention %q", res.code, res.stderr, tt.want)
			}
		})
	}
	// The builder itself yields a greeting the check accepts.
	if res := health(t, "--addr", tcpServer(t, writes(greeting("8.0.36", 0, 0xf7ff)))); res.code != exitOK {
		t.Errorf("well-formed greeting refused: %s", res.stderr)
	}
}

func TestHealthNothingListening(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	if res := health(t, "--addr", addr); res.code != exitRefused || !strings.Contains(res.stderr, "unhealthy: tcp "+addr) {
		t.Errorf("exit %d, stderr %q", res.code, res.stderr)
	}
}
