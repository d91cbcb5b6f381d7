package archtest

import (
	"strings"
	"testing"
)

// Every package says what it is for, in a package comment (go doc shows it).
func TestEveryPackageHasADoc(t *testing.T) {
	for path, p := range listPackages(t) {
		if strings.TrimSpace(p.Doc) == "" {
			t.Errorf("%s has no package comment: add a doc.go (or a comment above `package`) that says what it is for", path)
		}
	}
}
