// Command synapse is a terminal AI agent whose one tool is a shell.
package main

import (
	"os"

	"github.com/synapse-agent/synapse/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args)) }
