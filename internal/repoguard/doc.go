// Package repoguard keeps git and Mercurial on the host from running what
// sandboxed commands plant in the repositories of the writable roots.
//
// # Threat model
//
// Commands run in the sandbox, but the user (and Synapse) run git and hg on
// the host, with the user's rights, in the same directories. Git runs a
// repository's hooks, its config's core.fsmonitor, core.hooksPath, aliases,
// filters and the like, takes objects or config from elsewhere through
// commondir, config.worktree or objects/info/alternates, and resumes a
// rebase's or cherry-pick's exec lines; it also takes a directory holding
// HEAD, objects and refs for a bare repository, and follows a `.git` file
// to any git directory. Mercurial reads .hg/hgrc (hooks, extensions,
// %include) on every command. So a command that can write a repository's
// control files, create a new repository, or point a `.git` file somewhere
// can make the user's next `git status` run a program outside the sandbox.
//
// What is covered, and when: the moments host git acts are the user's
// (any time, in any folder) and ours, so the checks cannot wait for them.
// A check runs after each command, before `!` lines and user hooks, while
// idle when a watched folder changes, and at the end of the session. Its
// cost is bounded whatever the size of the tree (a monorepo of 100 000
// folders costs what one of a few thousand does):
//
//   - the start-up scan (the sandbox's mount plan) is bounded and reads
//     the shallowest folders first; the repositories it finds have their
//     control files mounted read-only, as far as a budget of mounts goes
//     (each costs bubblewrap more than the last), and past it are guarded
//     here (Unmounted): fingerprinted at start, judged again after a
//     command that changed their control folders;
//   - at most MaxWatches inotify watches are held, on the shallowest
//     folders first: a repository made there, or in any new folder below
//     one (new folders are walked whole), is found by the check after the
//     command, or at once while idle;
//   - the rest of the tree (deep folders, node_modules, what lies past the
//     scan's bounds) is covered by a sweep that reads a bounded number of
//     folders per command, resuming where the last one stopped (the
//     idle watcher's look after a command reads it, DeferSweep; commands
//     back to back read it themselves, maxOwed); at the
//     session's end the rest of the pass is handed (Handoff) to a
//     background process that runs it whole (Finish: one read of every
//     folder, seconds in a tree of 100 000, which nobody waits for at
//     exit; no watch and no memory kept), or run before the end returns
//     (Exhaust) when no such process can start. A repository the sweep
//     finds whose control files all changed before the session started
//     (change times, which no command can set back) is the user's: what
//     would run in it is recorded, and it is judged again when that
//     changes. Any other is judged as a new one.
//
// So in a tree larger than the watches cover, a repository planted deep
// in an old folder is found within one pass of the sweep (folders / 256
// commands), not at the next check: git run by the user in that very folder
// before then would run it. Host git in the project (git status) reaches
// such a folder only through a gitlink of the index, which is the
// project's repository's and checked after each command that changed it.
//
// The sandbox (bubblewrap) mounts the control files of the repositories
// present at start read-only; this package covers the rest:
//
//   - Watch finds the repositories commands create later (or a new `.git`
//     file, a bare-repository shape) inside the writable roots, after each
//     command and, through control watches, while no command runs, and
//     disables one whose hooks or configuration would run anything (its
//     .git renamed aside with DisabledMark); a harmless one is checked
//     again after every later command.
//   - Guard stands in, under Landlock (which cannot take .git out of a
//     writable workspace), for the read-only mounts: it records the
//     protected paths when the sandbox starts and restores what a command
//     changed there.
//   - GitDanger, HgNamedPaths, ReadControlFile and their kin judge a
//     repository's control files for the mount plan.
//
// Every path these checks touch is one a command can change while they
// run: a folder can be swapped for a symlink to a repository elsewhere on
// the host, a file for a FIFO. So below a writable root no symlink is
// followed and nothing is opened that could block (beneath.go), and
// control files are read with a size bound.
package repoguard
