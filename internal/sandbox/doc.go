// Package sandbox decides what the commands Synapse runs may read, write and
// reach, and makes the operating system enforce it.
//
// A Manager owns one sandboxed persistent shell per agent. It builds a Policy
// (cwd + configured whitelist + runtime whitelist + the system temp directory,
// plus the default and configured blacklist), asks a Provider ("local") to
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
// # Git metadata
//
// Git on the host runs hooks, so inside writable roots the sandbox keeps
// each repository's hooks directory, config and commondir read-only, makes
// its .git directory (and the directories above it) mount points that
// cannot be renamed or replaced, keeps a worktree's .git file read-only, and
// removes a .git/commondir that a command plants (git refuses an empty one,
// so a missing one cannot be mounted over). Only repositories that exist
// when the sandbox starts are covered; git run by the user on a repository
// a command created (or on one with a submodule a command added) can still
// run what that command wrote. A missing hooks directory is created (so it
// can be mounted over) only in the workspace and whitelisted roots, never in
// repositories that merely sit in the shared temp dir. The workspace is
// scanned first, so the scan bound is spent on the project before /tmp.
//
// # On by default
//
// The sandbox is on by default wherever it can run. When sandbox.json does not
// say "enabled", the manager probes the platform once (on Linux: bwrap on PATH
// and able to create its namespaces); if the probe fails it runs unsandboxed
// and Status explains why and how to fix it (install bubblewrap, or allow
// unprivileged user namespaces), so a machine without bwrap still works. When
// sandbox.json says "enabled": true the manager is fail-closed: if the sandbox
// cannot be created, commands are refused with an error and never run
// unsandboxed. "enabled": false turns it off explicitly.
//
// # Grants
//
// AddRuntimeWhitelist and AddPermanentWhitelist grant exactly one path (the
// resource a blocked command named). Bubblewrap can only bind what exists,
// so a granted path that does not exist yet, in an existing directory, is
// created on the host as an empty file at grant time and bound read-write by
// the next sandbox; its directory stays read-only.
package sandbox
