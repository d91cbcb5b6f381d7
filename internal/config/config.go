// Package config resolves Synapse's paths and numeric limits once, from the
// environment and settings files, into one value that is passed down. No other
// package reads the environment for paths or limits on its own.
package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Defaults for the SYNAPSE_* integer settings. An unset, invalid or
// non-positive value falls back to these (the seeds' rule).
const (
	DefaultReadLimit              = 2000
	DefaultTodoMaxItems           = 50
	DefaultTodoMaxContent         = 500
	DefaultMaxParallelTasks       = 5
	DefaultMaxToolIterations      = 200
	DefaultMaxConsecutiveFailures = 3
	DefaultMaxRecentTools         = 5
	DefaultOutputCap              = 30000
	// DefaultCommandTimeout is ten minutes: long enough for a cold `go test ./...`
	// or `npm install`, short enough that a hung command does not stall a turn forever.
	DefaultCommandTimeout = 10 * time.Minute
	// DefaultTaskTimeout bounds one sub-agent run.
	DefaultTaskTimeout = 15 * time.Minute
	// DefaultSkillMaxVersions is how many snapshots the skill store keeps per skill.
	DefaultSkillMaxVersions = 20
	// DefaultSkillSubagentTimeout bounds one auto-enhance run after a turn.
	DefaultSkillSubagentTimeout = 5 * time.Minute
	// DefaultStreamIdleTimeout is how long a model server may stay silent
	// (llm.DefaultStreamIdleTimeout says why five minutes).
	DefaultStreamIdleTimeout = 5 * time.Minute
	// DefaultMaxSessions is how many sessions retention keeps: a few weeks
	// of daily use, a bounded directory.
	DefaultMaxSessions = 100
	// DefaultMaxEnhanceContextChars bounds the transcript the skill-enhance
	// sub-agent reads; DefaultToolResultSummaryLimit each tool result in it.
	DefaultMaxEnhanceContextChars = 16000
	DefaultToolResultSummaryLimit = 600
	// DefaultMaxRoundsKept is how many per-round usage entries a session keeps.
	DefaultMaxRoundsKept = 100
)

// Getenv looks up one environment variable; tests pass a map-backed one.
type Getenv func(string) string

// Config is the resolved configuration. Build it once with Load.
type Config struct {
	Home        string // $SYNAPSE_HOME, default ~/.synapse
	UserHome    string // $HOME
	SessionsDir string // $SYNAPSE_SESSIONS_DIR, default Home/sessions
	SkillsDir   string // Home/skills
	LogsDir     string // Home/logs
	MCPDir      string // Home/mcp

	ReadDefaultLimit       int           // SYNAPSE_READ_DEFAULT_LIMIT
	TodoMaxItems           int           // SYNAPSE_TODO_MAX_ITEMS
	TodoMaxContent         int           // SYNAPSE_TODO_MAX_CONTENT_LENGTH, characters per todo text
	MaxParallelTasks       int           // SYNAPSE_MAX_PARALLEL_TASKS
	MaxToolIterations      int           // SYNAPSE_MAX_TOOL_ITERATIONS
	MaxConsecutiveFailures int           // SYNAPSE_MAX_CONSECUTIVE_TOOL_FAILURES
	MaxRecentTools         int           // SYNAPSE_MAX_RECENT_TOOLS
	ShowThinking           bool          // SYNAPSE_SHOW_THINKING=1: the model's whole thinking, not its first lines
	Debug                  bool          // SYNAPSE_DEBUG=1: write the debug log in LogsDir
	OutputCap              int           // SYNAPSE_MAX_OUTPUT_CHARS
	CommandTimeout         time.Duration // SYNAPSE_COMMAND_TIMEOUT (milliseconds)
	TaskTimeout            time.Duration // SYNAPSE_TASK_TIMEOUT (milliseconds)
	// MCPStartTimeout (SYNAPSE_MCP_START_TIMEOUT, milliseconds) overrides how
	// long start-up waits for MCP servers; 0 leaves each command's default.
	MCPStartTimeout time.Duration
	// SkillMaxVersions (SYNAPSE_SKILL_MAX_VERSIONS) bounds the snapshots kept per skill.
	SkillMaxVersions int
	// SkillSubagentTimeout (SYNAPSE_SKILL_SUBAGENT_TIMEOUT, milliseconds)
	// bounds the auto-enhance sub-agent that runs after a turn.
	SkillSubagentTimeout time.Duration
	// StreamIdleTimeout (SYNAPSE_STREAM_IDLE_TIMEOUT, seconds) is how long
	// a model request may wait for headers or the next stream data.
	StreamIdleTimeout time.Duration

	// ContextWindow (SYNAPSE_MAX_CONTEXT_WINDOW), OffloadThreshold
	// (SYNAPSE_OFFLOAD_THRESHOLD) and CompactThreshold
	// (SYNAPSE_COMPACT_THRESHOLD) are in tokens; 0 follows the model's window.
	ContextWindow, OffloadThreshold, CompactThreshold int
	// CompactModel (SYNAPSE_COMPACT_MODEL) writes compaction summaries; "" uses the conversation's model.
	CompactModel string
	// MaxSessions (SYNAPSE_MAX_SESSIONS) is how many sessions are kept.
	MaxSessions int
	// MaxEnhanceContextChars (SYNAPSE_MAX_ENHANCE_CONTEXT_CHARS) bounds the
	// transcript given to the skill-enhance sub-agent, and
	// ToolResultSummaryLimit (SYNAPSE_TOOL_RESULT_SUMMARY_LIMIT) each tool
	// result in it, in characters.
	MaxEnhanceContextChars, ToolResultSummaryLimit int
	// MaxRoundsKept (SYNAPSE_MAX_ROUNDS_KEPT) is how many per-round usage
	// entries a session keeps (the totals count every round).
	MaxRoundsKept int

	// Warnings name settings that were set but unusable, with the default
	// used instead; shown once at start-up.
	Warnings []string

	// Getenv is the environment the configuration was resolved from; kept so
	// that provider selection (keys, base URLs) reads the same source.
	Getenv Getenv
}

// SettingsPath is $SYNAPSE_HOME/settings.json.
func (c Config) SettingsPath() string { return filepath.Join(c.Home, "settings.json") }

// SandboxPath is $SYNAPSE_HOME/sandbox.json.
func (c Config) SandboxPath() string { return filepath.Join(c.Home, "sandbox.json") }

// PricingPath is $SYNAPSE_HOME/pricing.json.
func (c Config) PricingPath() string { return filepath.Join(c.Home, "pricing.json") }

// MCPServersPath is $SYNAPSE_HOME/mcp/mcp_servers.json.
func (c Config) MCPServersPath() string { return filepath.Join(c.MCPDir, "mcp_servers.json") }

// MCPApprovalsPath records the project MCP files the user approved.
func (c Config) MCPApprovalsPath() string { return filepath.Join(c.MCPDir, "approved_projects.json") }

// Load resolves the configuration from getenv (nil means os.Getenv).
func Load(getenv Getenv) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	userHome := getenv("HOME")
	if userHome == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return Config{}, fmt.Errorf("cannot find the home directory: set HOME or SYNAPSE_HOME: %w", err)
		}
		userHome = h
	}
	home := getenv("SYNAPSE_HOME")
	if home == "" {
		home = filepath.Join(userHome, ".synapse")
	}
	home = ExpandHome(home, userHome)
	sessions := getenv("SYNAPSE_SESSIONS_DIR")
	if sessions == "" {
		sessions = filepath.Join(home, "sessions")
	}
	c := Config{
		Home:                   home,
		UserHome:               userHome,
		SessionsDir:            ExpandHome(sessions, userHome),
		SkillsDir:              filepath.Join(home, "skills"),
		LogsDir:                filepath.Join(home, "logs"),
		MCPDir:                 filepath.Join(home, "mcp"),
		ReadDefaultLimit:       PositiveInt(getenv, "SYNAPSE_READ_DEFAULT_LIMIT", DefaultReadLimit),
		TodoMaxItems:           PositiveInt(getenv, "SYNAPSE_TODO_MAX_ITEMS", DefaultTodoMaxItems),
		TodoMaxContent:         PositiveInt(getenv, "SYNAPSE_TODO_MAX_CONTENT_LENGTH", DefaultTodoMaxContent),
		MaxParallelTasks:       PositiveInt(getenv, "SYNAPSE_MAX_PARALLEL_TASKS", DefaultMaxParallelTasks),
		MaxToolIterations:      PositiveInt(getenv, "SYNAPSE_MAX_TOOL_ITERATIONS", DefaultMaxToolIterations),
		MaxConsecutiveFailures: PositiveInt(getenv, "SYNAPSE_MAX_CONSECUTIVE_TOOL_FAILURES", DefaultMaxConsecutiveFailures),
		MaxRecentTools:         PositiveInt(getenv, "SYNAPSE_MAX_RECENT_TOOLS", DefaultMaxRecentTools),
		ShowThinking:           getenv("SYNAPSE_SHOW_THINKING") == "1",
		Debug:                  getenv("SYNAPSE_DEBUG") == "1",
		OutputCap:              PositiveInt(getenv, "SYNAPSE_MAX_OUTPUT_CHARS", DefaultOutputCap),
		CommandTimeout:         time.Duration(PositiveInt(getenv, "SYNAPSE_COMMAND_TIMEOUT", int(DefaultCommandTimeout/time.Millisecond))) * time.Millisecond,
		TaskTimeout:            time.Duration(PositiveInt(getenv, "SYNAPSE_TASK_TIMEOUT", int(DefaultTaskTimeout/time.Millisecond))) * time.Millisecond,
		MCPStartTimeout:        time.Duration(PositiveInt(getenv, "SYNAPSE_MCP_START_TIMEOUT", 0)) * time.Millisecond,
		SkillMaxVersions:       PositiveInt(getenv, "SYNAPSE_SKILL_MAX_VERSIONS", DefaultSkillMaxVersions),
		SkillSubagentTimeout:   time.Duration(PositiveInt(getenv, "SYNAPSE_SKILL_SUBAGENT_TIMEOUT", int(DefaultSkillSubagentTimeout/time.Millisecond))) * time.Millisecond,
		Getenv:                 getenv,
	}
	c.StreamIdleTimeout = time.Duration(c.positive(getenv, "SYNAPSE_STREAM_IDLE_TIMEOUT", int(DefaultStreamIdleTimeout/time.Second), "seconds", "")) * time.Second
	fromModel := "the model's own figure"
	c.ContextWindow = c.positive(getenv, "SYNAPSE_MAX_CONTEXT_WINDOW", 0, "tokens", fromModel)
	c.OffloadThreshold = c.positive(getenv, "SYNAPSE_OFFLOAD_THRESHOLD", 0, "tokens", "60% of the context window")
	c.CompactThreshold = c.positive(getenv, "SYNAPSE_COMPACT_THRESHOLD", 0, "tokens", "80% of the context window")
	c.CompactModel = strings.TrimSpace(getenv("SYNAPSE_COMPACT_MODEL"))
	c.MaxSessions = c.positive(getenv, "SYNAPSE_MAX_SESSIONS", DefaultMaxSessions, "sessions", "")
	c.MaxEnhanceContextChars = c.positive(getenv, "SYNAPSE_MAX_ENHANCE_CONTEXT_CHARS", DefaultMaxEnhanceContextChars, "characters", "")
	c.ToolResultSummaryLimit = c.positive(getenv, "SYNAPSE_TOOL_RESULT_SUMMARY_LIMIT", DefaultToolResultSummaryLimit, "characters", "")
	c.MaxRoundsKept = c.positive(getenv, "SYNAPSE_MAX_ROUNDS_KEPT", DefaultMaxRoundsKept, "rounds", "")
	return c, nil
}

// ApplySettings fills the context settings from settings.json "context"
// where their environment variable is unset: the environment beats the
// file (an invalid variable still falls back to the default, with its
// warning). ParseSettings has validated the values.
func (c *Config) ApplySettings(s Settings) {
	if s.Context == nil {
		return
	}
	unset := func(name string) bool { return c.Getenv == nil || strings.TrimSpace(c.Getenv(name)) == "" }
	if unset("SYNAPSE_MAX_CONTEXT_WINDOW") && s.Context.Window > 0 {
		c.ContextWindow = s.Context.Window
	}
	if unset("SYNAPSE_OFFLOAD_THRESHOLD") && s.Context.OffloadThreshold > 0 {
		c.OffloadThreshold = s.Context.OffloadThreshold
	}
	if unset("SYNAPSE_COMPACT_THRESHOLD") && s.Context.CompactThreshold > 0 {
		c.CompactThreshold = s.Context.CompactThreshold
	}
	if unset("SYNAPSE_COMPACT_MODEL") && s.Context.CompactModel != "" {
		c.CompactModel = s.Context.CompactModel
	}
}

// PositiveInt parses name as a positive integer; unset, invalid or ≤ 0 gives def.
func PositiveInt(getenv Getenv, name string, def int) int {
	v := getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return def
	}
	return n
}

// positive is PositiveInt that also records a warning when the variable is
// set but unusable, so a typo does not silently keep the default.
// defDesc describes the default when def (0) stands for "derived".
func (c *Config) positive(getenv Getenv, name string, def int, unit, defDesc string) int {
	v := getenv(name)
	n := PositiveInt(getenv, name, def)
	if v != "" && n == def && strings.TrimSpace(v) != strconv.Itoa(def) {
		if defDesc == "" {
			defDesc = strconv.Itoa(def)
		}
		c.Warnings = append(c.Warnings, fmt.Sprintf("%s=%q is not a positive whole number of %s: using the default, %s", name, v, unit, defDesc))
	}
	return n
}

// ExpandHome turns "~" and "~/x" into paths under home; other paths are returned unchanged.
func ExpandHome(p, home string) string {
	if p == "~" {
		return home
	}
	if len(p) >= 2 && p[0] == '~' && p[1] == '/' {
		return filepath.Join(home, p[2:])
	}
	return p
}
