//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The Landlock launcher's Linux half: Landlock, seccomp, capabilities
// (launcher.go holds the spec and the entry point; launcher_other.go the
// stubs of other systems).

// Landlock access rights by ABI (see the kernel's landlock.h).
const (
	llFSv1     = 1<<13 - 1 // EXECUTE … MAKE_SYM
	llFileMask = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	llReadMask = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
)

// handledFS is the set of file system rights the ABI lets us restrict.
func handledFS(abi int) uint64 {
	h := uint64(llFSv1)
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= llMinTrunc {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= llMinIoctl {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	if abi >= llMinUnix {
		h |= unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
	}
	return h
}

// kindAccess is what a rule kind grants under the ABI.
func kindAccess(kind string, abi int) (uint64, error) {
	h := handledFS(abi)
	switch kind {
	case accessRead:
		return llReadMask & h, nil
	case accessWrite:
		return h &^ (unix.LANDLOCK_ACCESS_FS_IOCTL_DEV | unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX), nil
	case accessDev:
		return (unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV) & h, nil
	}
	return 0, fmt.Errorf("unknown rule kind %q", kind)
}

// landlockABI is the kernel's Landlock ABI version, or why there is none.
func landlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case errno == unix.EPERM || errno == unix.EACCES:
		// A seccomp filter (a container's) refuses the call: the kernel may well have Landlock.
		return 0, fmt.Errorf("a seccomp filter refuses the Landlock system calls (%w)", errno)
	case errno != 0:
		return 0, fmt.Errorf("the kernel has no Landlock (%w): it needs Linux 5.13 or newer with landlock in the lsm= boot list", errno)
	}
	return int(v), nil
}

func launch(args []string) error {
	if len(args) < 3 || args[1] != "--" {
		return errors.New("usage: " + LauncherCommand + " SPEC -- PROGRAM [ARG...]")
	}
	var spec landlockSpec
	if err := json.Unmarshal([]byte(args[0]), &spec); err != nil {
		return fmt.Errorf("bad policy: %w", err)
	}
	argv := args[2:]
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("find %s: %w", argv[0], err)
	}
	abi, err := landlockABI()
	if err != nil {
		return err
	}
	// Landlock and seccomp bind this thread and what it executes: the
	// thread is never handed back to the Go scheduler.
	runtime.LockOSThread()
	if !spec.TTY {
		// No controlling terminal: TIOCSTI cannot push keystrokes into the
		// user's terminal (bwrap's --new-session). A session leader (the
		// shell starts us with Setsid) has none already.
		if _, err := unix.Setsid(); err != nil && !sessionLeader() {
			return fmt.Errorf("start a new session: %w", err)
		}
	}
	// Descriptors inherited past stdio are not the command's business.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("mark inherited descriptors close-on-exec: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if err := restrictLandlock(spec, abi); err != nil {
		return err
	}
	if err := loadSeccomp(spec.Network, abi); err != nil {
		return err
	}
	if spec.Dir != "" {
		if err := os.Chdir(spec.Dir); err != nil {
			return fmt.Errorf("enter %s: %w", spec.Dir, err)
		}
	}
	env := os.Environ()
	env = append(env, spec.Setenv...) // later entries win (dedupEnv keeps the last)
	return fmt.Errorf("run %s: %w", prog, syscall.Exec(prog, argv, dedupEnv(env)))
}

// dedupEnv keeps the last value of each variable.
func dedupEnv(env []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(env))
	for i := len(env) - 1; i >= 0; i-- {
		name := env[i]
		if j := indexByte(name, '='); j >= 0 {
			name = name[:j]
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, env[i])
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// dropCapabilities leaves the process no capability now or after execve:
// as root, the bounding and inheritable sets are emptied too, or bash run
// as uid 0 would get them all back (bwrap's --cap-drop ALL).
func dropCapabilities() error {
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	if os.Geteuid() == 0 {
		for c := 0; c <= 63; c++ {
			err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
			if errors.Is(err, unix.EINVAL) {
				break // past the last capability
			}
			if err != nil {
				return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
			}
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}

// restrictLandlock builds the ruleset and enforces it on this thread.
// Rule paths were planned without symlinks; one that has become a symlink
// since (or vanished) is left out, which only denies more.
func restrictLandlock(spec landlockSpec, abi int) error {
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handledFS(abi)}
	if !spec.Network && abi >= llMinNet {
		attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		if abi >= llMinNetUDP {
			attr.Handled_access_net |= unix.LANDLOCK_ACCESS_NET_BIND_UDP | unix.LANDLOCK_ACCESS_NET_CONNECT_SEND_UDP
		}
	}
	if abi >= llMinScope {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	// Fields this kernel does not know stay zero, which it accepts.
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("create the Landlock ruleset: %w", errno)
	}
	rfd := int(fd)
	defer unix.Close(rfd)
	for _, r := range spec.Rules {
		access, err := kindAccess(r.Kind, abi)
		if err != nil {
			return err
		}
		pfd, err := unix.Openat2(unix.AT_FDCWD, r.Path, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW,
			Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("open %s for a Landlock rule: %w", r.Path, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(pfd, &st); err != nil {
			unix.Close(pfd)
			return fmt.Errorf("stat %s: %w", r.Path, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			access &= llFileMask
		}
		rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(pfd)}
		_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rfd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
		unix.Close(pfd)
		if errno != 0 {
			return fmt.Errorf("add the Landlock rule for %s: %w", r.Path, errno)
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rfd), 0, 0); errno != 0 {
		return fmt.Errorf("enforce the Landlock ruleset: %w", errno)
	}
	return nil
}

// Namespace flags of clone(2) and unshare(2). CLONE_NEWTIME shares its bit
// with clone's exit-signal field, so it is refused for unshare only.
const (
	nsCloneFlags   = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP
	nsUnshareFlags = nsCloneFlags | unix.CLONE_NEWTIME
)

// deniedSyscalls are refused outright (EPERM): what Landlock does not
// cover and a command has no business with — other processes' memory,
// namespaces and mounts, kernel-side programs and keys, io_uring (its
// operations bypass this filter), modules, the machine's state.
var deniedSyscalls = []string{
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
	"setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsmount",
	"fsconfig", "fspick", "mount_setattr",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"bpf", "perf_event_open", "userfaultfd", "fanotify_init",
	"keyctl", "add_key", "request_key",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"reboot", "swapon", "swapoff", "acct", "quotactl", "open_by_handle_at", "iopl", "ioperm", "vhangup",
	// Every process stays in the shell's session, which is ended whole
	// (no PID namespace dies with the shell, as under bwrap).
	"setsid",
}

// seccompPolicy is the filter the launcher installs after Landlock.
// socket(2) is allowed for AF_UNIX only where Landlock restricts
// connecting to a foreign socket by path (ABI 9: otherwise a host daemon's
// socket, docker's included, would be reachable), for NETLINK_ROUTE (reads
// the interfaces; changing them needs a capability), and for AF_INET and
// AF_INET6 only with the network allowed. socketpair(2) stays: it reaches
// nothing outside.
func seccompPolicy(network bool, abi int) (seccomp.Policy, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return seccomp.Policy{}, fmt.Errorf("seccomp: %w", err)
	}
	var names []string
	for _, n := range deniedSyscalls {
		if _, ok := info.SyscallNames[n]; ok {
			names = append(names, n)
		}
	}
	if abi < llMinTrunc {
		names = append(names, "truncate") // Landlock before ABI 3 does not handle it
	}
	allowed := []uint64{unix.AF_NETLINK}
	if abi >= llMinUnix {
		allowed = append(allowed, unix.AF_UNIX)
	}
	if network {
		allowed = append(allowed, unix.AF_INET, unix.AF_INET6)
	}
	var notAllowed seccomp.ArgumentConditions
	for _, af := range allowed {
		notAllowed = append(notAllowed, seccomp.Condition{Argument: 0, Operation: seccomp.NotEqual, Value: af})
	}
	cond := []seccomp.NameWithConditions{
		{Name: "socket", Conditions: notAllowed},
		{Name: "socket", Conditions: seccomp.ArgumentConditions{
			{Argument: 0, Operation: seccomp.Equal, Value: unix.AF_NETLINK},
			{Argument: 2, Operation: seccomp.NotEqual, Value: unix.NETLINK_ROUTE},
		}},
		{Name: "clone", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: nsCloneFlags}}},
		{Name: "unshare", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: nsUnshareFlags}}},
	}
	return seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Names: names, Action: seccomp.ActionErrno},
			{NamesWithCondtions: cond, Action: seccomp.ActionErrno},
			// clone3 passes its flags in memory the filter cannot read:
			// ENOSYS makes the C library fall back to clone(2), checked above.
			{Names: []string{"clone3"}, Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS)},
		},
	}, nil
}

// loadSeccomp installs the guard filter and the policy on this thread.
func loadSeccomp(network bool, abi int) error {
	if err := loadGuardFilter(); err != nil {
		return err
	}
	pol, err := seccompPolicy(network, abi)
	if err != nil {
		return err
	}
	if err := seccomp.LoadFilter(seccomp.Filter{Policy: pol}); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

// loadGuardFilter installs a small hand-written filter: a system call of
// another architecture (32-bit int 0x80 on amd64) is refused, since the
// policy filter lets any foreign one through; and ioctl TIOCSTI/TIOCLINUX,
// compared on the low 32 bits the kernel reads, are refused.
func loadGuardFilter() error {
	info, err := arch.GetInfo("")
	if err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	const (
		retAllow = unix.SECCOMP_RET_ALLOW
		retPerm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		retNoSys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	)
	argLo := uint32(16 + 8) // args[1], low half on little-endian machines
	if !littleEndian() {
		argLo += 4
	}
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: retNoSys},
		bpf.LoadAbsolute{Off: 0, Size: 4}, // nr
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.SyscallNames["ioctl"]) | uint32(info.SeccompMask), SkipFalse: 4},
		bpf.LoadAbsolute{Off: argLo, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.TIOCSTI, SkipTrue: 1},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.TIOCLINUX, SkipFalse: 1},
		bpf.RetConstant{Val: retPerm},
		bpf.RetConstant{Val: retAllow},
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return fmt.Errorf("seccomp guard: %w", err)
	}
	filt := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filt[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filt)), Filter: &filt[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("seccomp guard: %w", err)
	}
	return nil
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// sessionLeader reports whether this process leads its session.
func sessionLeader() bool {
	sid, err := unix.Getsid(0)
	return err == nil && sid == unix.Getpid()
}

// idlePriority makes the process pid (a child just started: the threads
// its runtime starts next inherit it) run only when nothing else wants the
// CPU (SCHED_IDLE): the background sweep's start-up would otherwise take
// a core from the session ending and the person's next command.
func idlePriority(pid int) {
	_ = unix.SchedSetAttr(pid, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}, 0)
}
