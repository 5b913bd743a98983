package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
)

// The readiness probe of a ZenFS database asks the running mysqld for its
// rocksdb_fs_uri. The configuration sets it as loose-rocksdb-fs-uri, and
// with the loose- prefix a server whose MyRocks lacks ZenFS starts without
// it and writes to the small datadir volume: only the server can say which
// happened. Reading a system variable needs no privilege, but the protocol
// needs an account: the probe logs in as the zns_exporter account the
// image's entrypoint (re)makes at every start, before mysqld accepts
// connections, from a client option file beside the datadir
// (resources.ExporterCredentials); failing that, as root with the
// container's MYSQL_ROOT_PASSWORD.

// defaultCredentials is resources.ExporterCredentials (a test checks they
// agree); the helper does not link the package that builds pod specs.
const defaultCredentials = v1alpha1.DataMountPath + "/.zns-exporter.cnf"

// unknownSystemVariable is ER_UNKNOWN_SYSTEM_VARIABLE, the same in MySQL and MariaDB.
const unknownSystemVariable = 1193

// account is who the probe logs in as.
type account struct {
	user, password string
	// from says where the account came from, for messages.
	from string
}

// fsURIAsker asks a running server for rocksdb_fs_uri over network/address;
// nil (and no error) when the server has no such variable.
type fsURIAsker func(ctx context.Context, network, address string, a account) (*string, error)

// fsURICheckFlags are the probe's settings of the check.
type fsURICheckFlags struct {
	device      string
	credentials string
	stateFile   string
	// interval is how long a verdict that the server is on ZenFS stands
	// before it is asked again (the variable is read-only: only a restart
	// with another configuration or image changes it, and that is a new pod).
	interval time.Duration
}

// fsURIState is what the state file keeps between probes.
type fsURIState struct {
	Check     dbinit.FSURICheck `json:"check"`
	Published bool              `json:"published"`
}

// verifyFSURI returns the verdict on the running server's rocksdb_fs_uri,
// asking the server unless an on-ZenFS verdict younger than the interval
// stands, and publishes it on the pod when it changed or aged.
func verifyFSURI(ctx context.Context, network, address string, f fsURICheckFlags, d deps) dbinit.FSURICheck {
	now := d.clock()
	var prev fsURIState
	if b, err := os.ReadFile(f.stateFile); err == nil {
		_ = json.Unmarshal(b, &prev) // a state that does not parse is none: the server is asked
	}
	want := dbinit.ZenFSURI(f.device)
	fresh := !prev.Check.At.IsZero() && !now.Before(prev.Check.At) && now.Sub(prev.Check.At) < f.interval
	if fresh && prev.Published && prev.Check.Verdict == dbinit.FSURIOnZenFS && prev.Check.Want == want {
		return prev.Check
	}

	check := dbinit.FSURICheck{At: now, Want: want}
	if a, err := readAccount(f.credentials, d.getenv); err != nil {
		check.Verdict, check.Message = dbinit.FSURIUnverified, err.Error()
	} else if got, err := d.fsURIAsker()(ctx, network, address, a); err != nil {
		check.Verdict = dbinit.FSURIUnverified
		check.Message = fmt.Sprintf("asking mysqld for rocksdb_fs_uri as %s failed: %v", a.from, err)
	} else {
		check.Got = got
		check.Verdict, check.Message = dbinit.JudgeFSURI(want, got)
	}

	// The same verdict again within the interval is not published again: a
	// failing probe runs every few seconds.
	published := fresh && prev.Published && prev.Check.Verdict == check.Verdict && prev.Check.Message == check.Message
	if published {
		check.At = prev.Check.At
	} else if v, err := check.Encode(); err != nil {
		fmt.Fprintf(d.stderr, "znsdb health: encoding the rocksdb_fs_uri check: %v\n", err)
	} else if err := d.annotator().Annotate(ctx, dbinit.FSURIAnnotation, v); err != nil {
		fmt.Fprintf(d.stderr, "znsdb health: publishing the rocksdb_fs_uri check: %v\n", err)
	} else {
		published = true
	}
	if err := writeJSON(f.stateFile, fsURIState{Check: check, Published: published}); err != nil {
		fmt.Fprintf(d.stderr, "znsdb health: keeping the rocksdb_fs_uri check: %v\n", err)
	}
	return check
}

// readAccount reads the user and password of a client option file's
// [client] group (as the entrypoint writes it: key=value lines), else
// takes root with MYSQL_ROOT_PASSWORD.
func readAccount(path string, getenv func(string) string) (account, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		a := account{from: fmt.Sprintf("the account of %s", path)}
		group := ""
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
				group = strings.TrimSpace(line[1 : len(line)-1])
				continue
			}
			k, v, ok := strings.Cut(line, "=")
			if !ok || group != "client" {
				continue
			}
			v = strings.Trim(strings.TrimSpace(v), `"'`)
			switch strings.TrimSpace(k) {
			case "user":
				a.user = v
			case "password":
				a.password = v
			}
		}
		if a.user == "" {
			return account{}, fmt.Errorf("%s names no user in its [client] group", path)
		}
		return a, nil
	}
	if pw := getenv("MYSQL_ROOT_PASSWORD"); pw != "" {
		return account{user: "root", password: pw, from: "root (MYSQL_ROOT_PASSWORD)"}, nil
	}
	return account{}, fmt.Errorf("no account to ask mysqld with: %v, and MYSQL_ROOT_PASSWORD is not set", err)
}

// askFSURI logs in and reads @@GLOBAL.rocksdb_fs_uri. A NULL value (the
// option never given) reads as "".
func askFSURI(ctx context.Context, network, address string, a account) (*string, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = a.user, a.password, network, address
	cfg.Logger = quietLogger{} // the driver's own log lines would repeat the error returned here
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = left, left, left
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	var v sql.NullString
	err = db.QueryRowContext(ctx, "SELECT @@GLOBAL.rocksdb_fs_uri").Scan(&v)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == unknownSystemVariable {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &v.String, nil
}

type quietLogger struct{}

func (quietLogger) Print(...any) {}

func (d deps) fsURIAsker() fsURIAsker {
	if d.askFSURI == nil {
		return askFSURI
	}
	return d.askFSURI
}

// writeJSON replaces path with v in one rename.
func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
