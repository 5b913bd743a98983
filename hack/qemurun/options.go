package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// usage is what --help prints: every option and knob of a run, in one place.
const usage = `hack/qemu/run.sh: boot the QEMU test guest, run one command in it, exit with its status.

  hack/qemu/run.sh [options] -- CMD [ARG...]

Options:
  --share DIR        share the host directory DIR with the guest over 9p, at the same path (and at /host);
                     CMD starts there, or in the current directory when that lies inside DIR. The guest caches
                     it: leave it alone on the host while the guest runs
  --nullblk 'ARGS'   before CMD, run 'hack/nullblk-zoned.sh create ARGS' in the guest (repeatable; e.g.
                     --nullblk '--count 2 --zone-size 64'); what it prints goes to stderr
  --zns SPEC         add an emulated NVMe ZNS namespace on a controller of its own (repeatable). SPEC is
                     'default' or comma-separated key=value over the defaults zone_size=64M,zone_capacity=60M,
                     max_open=14,max_active=14,size=2560M (40 zones),lbs=4096,controller=own;
                     controller=previous puts the namespace on the controller of the --zns before it instead,
                     as its next namespace (nvme0n2 after nvme0n1): two namespaces of one drive. Its image is a
                     fresh sparse file each run.
  --nvme SPEC        add a conventional emulated NVMe namespace on a controller of its own (repeatable). SPEC
                     is 'default' or comma-separated key=value over the defaults size=1G,lbs=4096,ocp=on,
                     fdp=off: ocp=on gives the controller the OCP datacenter SMART log (C0h); fdp=on puts it in
                     an nvme-subsys with Flexible Data Placement (endurance group 1, one reclaim group, 8
                     reclaim unit handles of 96 MiB units, all 8 on the namespace). Needs a QEMU with both
                     (10.0 has them, Debian bookworm's 7.2 neither: versions.mk). The namespaces of --zns and
                     --nvme are nvme0n1, nvme1n1, ... in the order of the options on the command line (each on
                     the controller nvme0, nvme1, ... with serial zns<N>, conv<N> or fdp<N>; a
                     controller=previous namespace is nvme<N>n2, n3, ...); the command starts once all are there.
  --disk FILE[,snapshot]
                     attach FILE (raw) as a virtio disk: /dev/vda, /dev/vdb, ... in the order given
                     (repeatable). With ,snapshot the guest's writes go to a temporary file and FILE is left
                     unchanged
  --env NAME=VALUE   export in the guest (repeatable); ZNS_QEMU_GUEST=1 always is
  --mem MIB          guest memory (default 1024; memory-backed null_blk data lives there)
  --smp N            guest CPUs (default 1)
  --accel tcg|kvm    the accelerator (default tcg: KVM is not usable on every machine, and a nested KVM guest
                     has been seen to hang)
  --timeout SECONDS  stop QEMU after this long (default 300): TERM, then KILL 10 s later; exit 124
  --console FILE     save the guest's console (kernel messages) to FILE
  --monitor SOCKET   QEMU's human monitor on a unix socket at SOCKET (for 'info jit', 'info cpus', ...)
  --guest-dir DIR    use this built guest instead of running build-guest.sh
  --kernel current|6.1
                     which pinned guest kernel build-guest.sh builds (ZNS_QEMU_KERNEL; default current:
                     Debian's newest packaged kernel, versions.mk's QEMU_GUEST_KERNEL_CURRENT_*; 6.1 is
                     bookworm's, the opt-in tier)
  --append PARAMS    extra kernel command-line parameters
  --hostfwd HOSTPORT:GUESTPORT
                     give the guest a network interface (QEMU user networking, restricted: no way out) at
                     10.0.2.15/24, gateway 10.0.2.2, and forward 127.0.0.1:HOSTPORT on the host to GUESTPORT in
                     the guest (repeatable; TCP)
  --guestfwd 10.0.2.N:PORT=COMMAND
                     give the guest that network interface, and start COMMAND on the host (sh -c) for each
                     connection the guest opens to 10.0.2.N:PORT, its stdin and stdout the connection
                     (repeatable; TCP): the one way out of the restricted network
  --userland         run CMD in the host's own userland: the host's root is shared read-only over 9p and CMD
                     runs in it, with the guest's /proc, /sys, /dev, /run and /tmp, a writable tmpfs at /mnt
                     and /var/tmp, and the --share directory writable. What the host has installed (MariaDB,
                     sysbench, mkfs.btrfs, mkfs.f2fs) runs on the guest's kernel; the btrfs, f2fs, xfs and ext4
                     modules are loaded first (modprobe cannot find the guest's modules from there), and the
                     loopback interface is up

Environment:
  ZNS_QEMU_CPU       the guest's CPU model (-cpu; default Westmere-v2: SSE4.2, AES-NI and PCLMULQDQ, no AVX and
                     no ERMS, whose emulation under TCG is slow: in a 2-vCPU guest on this machine, openssl's
                     AES-128-GCM ran at 151 MB/s against 8.3 MB/s with -cpu max, reading 3 GB of /dev/zero took
                     0.46 s against 5.2 s, 5 mariadbd starts 1.38 s against 1.32 s; TLS in the zoned node's
                     control plane and the kernel's page clearing are the gain)
  ZNS_QEMU_TB_SIZE   under TCG, the translated code cache in MiB (-accel tcg,tb-size; QEMU's default 1024).
                     Once it is full QEMU throws every translation away and translates again
                     ('info jit' on --monitor counts those flushes)
  ZNS_QEMU_VERBOSE=1 streams the guest's console to stderr as it runs
  ZNS_QEMU_DATADIR=DIR[:DIR...]
                     passes each DIR to QEMU as -L (firmware and option ROMs). Unset, a qemu-system-x86_64
                     found outside /usr (a newer Debian package unpacked with dpkg -x into PREFIX,
                     PREFIX/usr/bin first on PATH) gets -L PREFIX/usr/share/qemu and -L PREFIX/usr/share/seabios,
                     so that it boots with its own firmware rather than the installed QEMU's.

CMD runs under bash in the guest, as root, with stdin from /dev/null; its stdout and stderr (one stream) are
printed on stdout once QEMU has exited. The guest has busybox, bash, fio, blkzone, the project's
nullblk-zoned.sh and zloop-zoned.sh (on PATH), null_blk, nvme and configfs modules (zloop where the kernel has
it), and ZNS_QEMU_GUEST=1 (and with --userland, everything the host has).

Exit status: CMD's; 124 when the timeout stopped the guest; 125 when the guest did not run CMD (build or boot
failure, a --nullblk set-up that failed): the reason and the console's last lines go to stderr.
`

// Exit statuses of a run that are not the command's own.
const (
	exitTimeout = 124
	exitNoRun   = 125
)

// Config is one run, as the command line gives it.
type Config struct {
	Share      string
	Nullblk    []string
	Namespaces []Namespace
	Disks      []Disk
	Env        []string
	MemMiB     int
	SMP        int
	Accel      string
	TimeoutS   int
	Console    string
	Monitor    string
	GuestDir   string
	Kernel     string
	Append     string
	HostFwd    []PortForward
	GuestFwd   []GuestForward
	Userland   bool
	Command    []string
}

// Disk is a --disk.
type Disk struct {
	File     string
	Snapshot bool
}

// PortForward is a --hostfwd.
type PortForward struct{ Host, Guest int }

// GuestForward is a --guestfwd: the guest's connections to Addr:Port each start Command on the host, whose
// stdin and stdout are the connection.
type GuestForward struct {
	Addr    string
	Port    int
	Command string
}

var errHelp = errors.New("help")

func defaults() Config {
	return Config{MemMiB: 1024, SMP: 1, Accel: "tcg", TimeoutS: 300}
}

var (
	hostfwdPattern  = regexp.MustCompile(`^([0-9]+):([0-9]+)$`)
	guestfwdPattern = regexp.MustCompile(`^(10\.0\.2\.[0-9]+):([0-9]+)=(.+)$`)
)

// parseArgs reads run.sh's command line. Errors say which option and what it takes.
func parseArgs(args []string) (Config, error) {
	c := defaults()
	value := func(i int) (string, error) {
		if i+1 >= len(args) {
			return "", fmt.Errorf("%s needs a value (see --help)", args[i])
		}
		return args[i+1], nil
	}
	number := func(i int) (int, error) {
		v, err := value(i)
		if err != nil {
			return 0, err
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || strconv.Itoa(n) != v {
			return 0, fmt.Errorf("--mem, --smp and --timeout take whole numbers, not %s %q", args[i], v)
		}
		return n, nil
	}
	i := 0
	for ; i < len(args); i++ {
		opt := args[i]
		if opt == "--" {
			i++
			break
		}
		var v string
		var n int
		var err error
		switch opt {
		case "-h", "--help":
			return c, errHelp
		case "--userland":
			c.Userland = true
			continue
		case "--mem", "--smp", "--timeout":
			n, err = number(i)
		default:
			v, err = value(i)
		}
		if err != nil {
			return c, err
		}
		i++
		switch opt {
		case "--share":
			if v == "" {
				return c, errors.New("--share needs a directory")
			}
			c.Share = v
		case "--nullblk":
			c.Nullblk = append(c.Nullblk, v)
		case "--zns", "--nvme":
			ns, err := parseNamespace(opt, v, c.Namespaces)
			if err != nil {
				return c, err
			}
			c.Namespaces = append(c.Namespaces, ns)
		case "--disk":
			d, err := parseDisk(v)
			if err != nil {
				return c, err
			}
			c.Disks = append(c.Disks, d)
		case "--env":
			if !strings.Contains(v, "=") {
				return c, fmt.Errorf("--env needs NAME=VALUE, not %q", v)
			}
			c.Env = append(c.Env, v)
		case "--mem":
			c.MemMiB = n
		case "--smp":
			c.SMP = n
		case "--timeout":
			c.TimeoutS = n
		case "--accel":
			if err := oneOf(opt, v, "tcg", "kvm"); err != nil {
				return c, err
			}
			c.Accel = v
		case "--console":
			c.Console = v
		case "--monitor":
			if v == "" {
				return c, errors.New("--monitor needs a socket path")
			}
			c.Monitor = v
		case "--guest-dir":
			c.GuestDir = v
		case "--kernel":
			if err := oneOf(opt, v, "current", "6.1"); err != nil {
				return c, err
			}
			c.Kernel = v
		case "--append":
			c.Append = v
		case "--hostfwd":
			m := hostfwdPattern.FindStringSubmatch(v)
			if m == nil {
				return c, fmt.Errorf("--hostfwd needs HOSTPORT:GUESTPORT (e.g. 16443:6443), not %q", v)
			}
			host, _ := strconv.Atoi(m[1])
			guest, _ := strconv.Atoi(m[2])
			c.HostFwd = append(c.HostFwd, PortForward{host, guest})
		case "--guestfwd":
			m := guestfwdPattern.FindStringSubmatch(v)
			if m == nil {
				return c, fmt.Errorf("--guestfwd needs 10.0.2.N:PORT=COMMAND (e.g. 10.0.2.100:6443=nc 127.0.0.1 6443), not %q", v)
			}
			port, _ := strconv.Atoi(m[2])
			c.GuestFwd = append(c.GuestFwd, GuestForward{m[1], port, m[3]})
		default:
			return c, fmt.Errorf("unknown option '%s' (CMD goes after --; see --help)", opt)
		}
	}
	c.Command = args[i:]
	if len(c.Command) == 0 {
		return c, errors.New("no command: hack/qemu/run.sh [options] -- CMD [ARG...]")
	}
	if len(c.Disks) > 26 {
		return c, errors.New("at most 26 --disk")
	}
	return c, nil
}

func oneOf(opt, v string, allowed ...string) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return fmt.Errorf("%s takes %s, not %q", opt, strings.Join(allowed, " or "), v)
}

func parseDisk(v string) (Disk, error) {
	if v == "" {
		return Disk{}, errors.New("--disk needs FILE or FILE,snapshot")
	}
	d := Disk{File: v}
	if f, ok := strings.CutSuffix(v, ",snapshot"); ok {
		d = Disk{File: f, Snapshot: true}
	}
	if strings.Contains(d.File, ",") {
		return d, fmt.Errorf("--disk '%s': a file name without commas, then ,snapshot or nothing", v)
	}
	return d, nil
}

// checkFiles checks what the command line names on the host, and makes --share absolute.
func (c *Config) checkFiles() error {
	for _, d := range c.Disks {
		if !regularAndReadable(d.File) {
			return fmt.Errorf("--disk '%s': %s is not a readable file", d.File, d.File)
		}
	}
	if c.Share == "" {
		return nil
	}
	if st, err := os.Stat(c.Share); err != nil || !st.IsDir() {
		return fmt.Errorf("--share %s: not a directory", c.Share)
	}
	abs, err := filepath.Abs(c.Share)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return fmt.Errorf("--share %s: %v", c.Share, err)
	}
	if abs == "/" {
		return errors.New("--share /: share a directory, not the host's root")
	}
	c.Share = abs
	return nil
}

func regularAndReadable(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}
