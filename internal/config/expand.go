package config

import (
	"errors"
	"fmt"
	"strings"
)

// ExpandVars expands `$VAR` and `${VAR}` in a path entry of sandbox.json
// or settings.json (`~` and `~/…` are left for the caller, so messages can
// keep naming it as written). A variable that is unset or empty is an
// error: the entry would otherwise name some other path (or none) and
// silently protect or allow nothing the user meant.
func ExpandVars(e string, lookup func(string) (string, bool)) (string, error) {
	e = strings.TrimSpace(e)
	if !strings.Contains(e, "$") {
		return e, nil
	}
	var b strings.Builder
	for i := 0; i < len(e); i++ {
		if e[i] != '$' {
			b.WriteByte(e[i])
			continue
		}
		rest := e[i+1:]
		var name string
		switch {
		case strings.HasPrefix(rest, "{"):
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return "", errors.New("${ has no closing }")
			}
			name = rest[1:end]
			i += end + 1
		default:
			n := 0
			for n < len(rest) && (rest[n] == '_' || rest[n] >= 'A' && rest[n] <= 'Z' || rest[n] >= 'a' && rest[n] <= 'z' || n > 0 && rest[n] >= '0' && rest[n] <= '9') {
				n++
			}
			name = rest[:n]
			i += n
		}
		if !validEnvName(name) {
			return "", fmt.Errorf("%q is not a variable reference (write $NAME or ${NAME})", "$"+name)
		}
		v, ok := lookup(name)
		if !ok || v == "" {
			return "", fmt.Errorf("$%s is not set", name)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range s {
		if c != '_' && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
