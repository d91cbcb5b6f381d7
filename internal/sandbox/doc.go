// Package sandbox decides what the commands Synapse runs may read, write and
// reach, and makes the operating system enforce it.
//
// A Manager owns one sandboxed persistent shell per agent. It builds a Policy
// (cwd + configured whitelist + runtime whitelist, the session's private temp
// directory mounted as /tmp, plus the default and configured blacklist), asks a Provider ("local") to
// create a Backend for it, and rebuilds the backend when the policy changes or
// the sandboxed shell dies. The local backend wraps the shell with a platform
// adapter: bubblewrap on Linux (mounts enforced by the kernel), sandbox-exec on
// macOS (a generated Seatbelt profile). A text check of the command line gives
// a friendly early refusal; the mounts are the real guard.
//
// A ReadOnly manager (task:explore) mounts every whitelisted path read-only
// and gives the shell a private, empty tmpfs at /tmp (TMPDIR=/tmp) in place of
// the host temp directory, so nothing of the host is writable; CheckPath
// refuses every write. The shell's environment never holds the agent's own
// provider credentials (ProviderCredentials) nor the variables named in
// ManagerOptions.HideEnv (the app passes settings.json "env" names).
//
// # The agent's own configuration
//
// The directory holding sandbox.json ($SYNAPSE_HOME) is read-only to
// commands even when a writable root contains it (Synapse started in the
// home directory): a command that could change sandbox.json, settings.json,
// skills or MCP servers could widen the agent's permissions. Its credential
// files (settings.json, mcp/mcp_servers.json) are on the blacklist, since
// the keys they hold are kept out of the shell's environment too.
//
// # The private temp directory
//
// On Linux the host temp directory is not writable, nor even visible: each
// manager creates a private directory in it (os.MkdirTemp: exclusive, mode
// 0700, then checked with Lstat) and mounts it as /tmp with TMPDIR=/tmp;
// roots under the host /tmp (a workspace there) are bound on top. read,
// write, edit and skill:import map /tmp paths to it (HostPath), and
// CheckPath refuses the host /tmp paths the mount hides, also when reached
// through a link a command planted (hostTmpHidden). A sub-agent shares its
// parent's (ManagerOptions.PrivateTmp). Shutdown removes it. Repositories
// in the host temp dir are out of reach, and it is never scanned.
//
// # Git metadata
//
// Git on the host runs hooks, so inside writable roots the sandbox keeps
// each repository's control files read-only (hooks, config,
// config.worktree, commondir, objects/info/alternates, and those of its
// submodules' and linked worktrees' git directories), makes its .git
// directory (and the directories above it) mount points that cannot be
// renamed or replaced, keeps a worktree's .git file read-only, and removes
// a control file a command plants where there was none (bubblewrap binds
// only what exists). A repository a command creates later (or a new .git
// file) is found after each command by repoguard.Watch and disabled when its
// hooks or config would run anything; under Landlock, repoguard.Guard
// restores what the mounts would have kept. The threat model is stated
// once, in package repoguard.
//
// # On by default, fail-closed
//
// The sandbox is on unless sandbox.json says "enabled": false. On Linux the
// "local" provider probes bubblewrap, and where it cannot create its
// namespaces (Ubuntu's AppArmor rule, a container's seccomp profile) the
// Landlock + seccomp backend (landlock.go, launcher.go): the synapse binary
// re-executes itself as a launcher that restricts itself and execs the
// shell. When neither can run, every command is refused with the reason and
// the platform's fix; nothing degrades to running unsandboxed.
//
// # Grants
//
// AddRuntimeWhitelist and AddPermanentWhitelist grant exactly one path (the
// resource a blocked command named). Bubblewrap can only bind what exists,
// so a granted path that does not exist yet, in an existing directory, is
// created on the host as an empty file at grant time and bound read-write by
// the next sandbox; its directory stays read-only.
package sandbox
