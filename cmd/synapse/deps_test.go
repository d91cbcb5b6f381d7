package main

import (
	"os/exec"
	"strings"
	"testing"
)

// heavy are import paths no package of the binary may come from: gRPC,
// OpenCensus and OpenTelemetry's SDK and instrumentation came in with
// Google's SDKs and cost every run ~15 MB of memory and tens of
// milliseconds of package init (issue 30), Gemini or Vertex or neither.
// (The OpenTelemetry API, go.opentelemetry.io/otel, comes with the
// Anthropic SDK and is small.)
var heavy = []string{
	"google.golang.org/grpc",
	"go.opencensus.io",
	"go.opentelemetry.io/otel/sdk",
	"go.opentelemetry.io/contrib",
	"google.golang.org/genai",
	"cloud.google.com/go/auth",
	// A second YAML library: the Anthropic SDK links go.yaml.in/yaml/v4,
	// which the skills use too.
	"gopkg.in/yaml.v3",
}

func TestNoHeavyDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to list the dependencies")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, h := range heavy {
			if pkg == h || strings.HasPrefix(pkg, h+"/") {
				t.Errorf("synapse links %s: keep gRPC, OpenCensus, telemetry SDKs and second libraries for one job out of the binary (issue 30); "+
					"find who imports it with `go mod why %s`", pkg, pkg)
			}
		}
	}
}
