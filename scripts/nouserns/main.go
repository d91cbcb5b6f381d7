//go:build linux

// Command nouserns runs a program the way a default Docker/Podman container
// would: as an unprivileged user (nobody, when started as root) and inside
// a seccomp filter that refuses user namespaces (unshare/clone with
// CLONE_NEWUSER, setns; clone3 answers ENOSYS so the C library falls back to
// clone). bubblewrap cannot start there, so the sandbox tests it runs
// exercise the Landlock backend (scripts/test-landlock.sh).
//
// With -no-landlock the Landlock system calls answer ENOSYS too, as on a
// kernel without Landlock or under a profile that refuses it: then no
// sandbox backend can run and Synapse must refuse every command.
//
//	nouserns [-user nobody] [-no-landlock] -- PROGRAM [ARG...]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/sys/unix"
)

func main() {
	name := flag.String("user", "nobody", "the user to run as when started as root")
	noLandlock := flag.Bool("no-landlock", false, "refuse the Landlock system calls too (ENOSYS)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: nouserns [-user nobody] [-no-landlock] -- PROGRAM [ARG...]")
		os.Exit(2)
	}
	if err := run(*name, *noLandlock, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "nouserns:", err)
		os.Exit(1)
	}
}

func run(name string, noLandlock bool, argv []string) error {
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup(name)
		if err != nil {
			return fmt.Errorf("look up %s: %w", name, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		// Go applies these to every thread of the process.
		if err := syscall.Setgroups(nil); err != nil {
			return fmt.Errorf("setgroups: %w", err)
		}
		if err := syscall.Setgid(gid); err != nil {
			return fmt.Errorf("setgid: %w", err)
		}
		if err := syscall.Setuid(uid); err != nil {
			return fmt.Errorf("setuid: %w", err)
		}
	}
	filter := seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls: []seccomp.SyscallGroup{
				{Names: []string{"setns"}, Action: seccomp.ActionErrno},
				{NamesWithCondtions: []seccomp.NameWithConditions{
					{Name: "unshare", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: unix.CLONE_NEWUSER}}},
					{Name: "clone", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: unix.CLONE_NEWUSER}}},
				}, Action: seccomp.ActionErrno},
				{Names: []string{"clone3"}, Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS)},
			},
		},
	}
	if noLandlock {
		filter.Policy.Syscalls = append(filter.Policy.Syscalls, seccomp.SyscallGroup{
			Names:  []string{"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"},
			Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS),
		})
	}
	if err := seccomp.LoadFilter(filter); err != nil {
		return fmt.Errorf("install the seccomp filter: %w", err)
	}
	return syscall.Exec(prog, argv, os.Environ())
}
