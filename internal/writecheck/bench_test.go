package writecheck

import (
	"strings"
	"testing"
)

// BenchmarkCheckLongPipeline classifies a 40-stage pipeline with
// substitutions, redirections and an && list, as a model might write it.
func BenchmarkCheckLongPipeline(b *testing.B) {
	stages := []string{"cat /work/p/go.sum", "grep -v '^#'", "sed -n 's/ .*//p'", "sort -u", "awk '{print $1}'",
		"cut -d/ -f1-3", "tr a-z A-Z", "uniq -c", "sort -rn", "head -50"}
	var parts []string
	for i := 0; i < 4; i++ {
		parts = append(parts, stages...)
	}
	cmd := "cd /work/p && " + strings.Join(parts, " | ") + " > /tmp/report.txt 2>/dev/null && echo \"$(wc -l < /tmp/report.txt) lines\""
	c := testChecker()
	if got := c.Check(cmd, project); len(got) != 0 {
		b.Fatalf("the benchmark line asks: %+v", got)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		c.Check(cmd, project)
	}
}
