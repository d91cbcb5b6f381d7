// Command mcptestserver runs the internal/mcp test server: on stdio by
// default, or over HTTP with -http ADDR (streamable HTTP at /mcp, SSE at /sse).
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"

	"github.com/synapse-agent/synapse/internal/mcp/mcptest"
)

func main() {
	addr := flag.String("http", "", "serve over HTTP on this address instead of stdio")
	resourceTools := flag.Bool("resource-tools", false, "add the tools that return structured content and resources and publish new ones (stdio)")
	flag.Parse()
	if *addr == "" {
		if err := mcptest.ServeStdio(context.Background(), *resourceTools); err != nil {
			fmt.Fprintln(os.Stderr, "mcptestserver:", err)
			os.Exit(1)
		}
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcptest.HTTPHandler(nil))
	mux.Handle("/sse", mcptest.SSEHandler(nil))
	fmt.Fprintf(os.Stderr, "mcptestserver: http://%s/mcp and http://%s/sse\n", *addr, *addr)
	if err := http.ListenAndServe(*addr, mux); err != nil {
		fmt.Fprintln(os.Stderr, "mcptestserver:", err)
		os.Exit(1)
	}
}
